"""What the agent did on a run: its trace, spans and model calls, and the transcript kept for the views."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agent_eval_action.models.questions import Question, ReferenceData, ToolInteraction, TrajectoryStep, Turn
from agent_eval_action.models.stored import Stored, constructed
from agent_eval_action.text.jsonish import dumps_sorted_any


class SubAgentResponse(Stored):
    agent_name: str
    text_response: str


class LlmCall(Stored):
    """Token usage of one model call."""

    model: str | None = None
    agent: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    thoughts_tokens: int = 0
    # Tokens of the prompts of the model's own tool use (Google Search grounding, code execution):
    # apart from ``input_tokens`` in Gemini's usage, in its total and billed as input.
    tool_use_prompt_tokens: int = 0
    # Grounding chunks (citations) the response's grounding metadata lists.
    grounding_chunks: int = 0
    duration_s: float | None = None
    # False when the source shows the call but not its token counts (the counts above are then 0).
    usage_recorded: bool = True

    @property
    def total_tokens(self) -> int:
        """The call's tokens as Gemini totals them: prompt, response, thinking and tool-use prompt."""
        return self.input_tokens + self.output_tokens + self.thoughts_tokens + self.tool_use_prompt_tokens


class SpanStats(Stored):
    """What a run's OpenTelemetry spans show that its events do not: time spent in model calls and
    tools, the first response, agent handoffs. Times are None where the spans' times are not
    measurements (``timing_note`` says why)."""

    llm_time_s: float | None = None
    tool_time_s: float | None = None
    first_response_s: float | None = None
    agent_handoffs: int = 0
    handoff_agents: list[str] = Field(default_factory=list)
    timing_note: str | None = None


class Span(Stored):
    """An OpenTelemetry span as recorded (times in nanoseconds since the epoch)."""

    name: str
    span_id: str | None = None
    trace_id: str | None = None
    parent_span_id: str | None = None
    start_time: int | None = None
    end_time: int | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)


class Trace(Stored):
    """What the agent did for one question run. ``None`` means "not recorded", never "zero"."""

    app_name: str | None = None
    root_agent: str | None = None
    turns: list[Turn] = Field(default_factory=list)
    tool_interactions: list[ToolInteraction] | None = None
    trajectory: list[TrajectoryStep] | None = None
    sub_agent_trace: list[SubAgentResponse] = Field(default_factory=list)
    final_response: str | None = None
    final_state: dict[str, Any] | None = None
    llm_calls: list[LlmCall] | None = None
    spans: list[Span] = Field(default_factory=list)
    # Figures read from the spans (kept when the spans themselves are not).
    span_stats: SpanStats | None = None
    # Total wall time and where it came from ("spans", "latency_data", "metric.duration_sec", ...).
    latency_s: float | None = None
    latency_source: str | None = None
    # Producer-computed figures (``metric.*`` columns), used when nothing better is recorded.
    recorded_metrics: dict[str, float] = Field(default_factory=dict)
    # Per-turn scores the producer recorded, by metric (ADK's eval history scores each invocation;
    # None where it did not score one): what ``adk_agreement`` compares turn by turn.
    recorded_turn_scores: dict[str, list[float | None]] = Field(default_factory=dict)
    # Why a fact the metrics need is not recorded, by fact ("llm_calls", "tokens", "timing",
    # "tool_calls"): the unscored reason instead of a guess.
    missing: dict[str, str] = Field(default_factory=dict)
    error: str | None = None
    # Where the error was raised (agent_worker/protocol.py's ORIGINS: "model", "agent", "outside"),
    # as the runner knew it; None: it did not say (a recorded run, an agent served over HTTP).
    error_origin: str | None = None
    # Model calls answered from the model-call cache instead of the model (None: no cache).
    replayed_model_calls: int | None = None
    # Model calls the agent's worker handed to the model, counted there (an AgentTool's runner and
    # a callback's calls included; each try of a throttled call too); None: not counted.
    live_model_calls: int | None = None
    # The run did not happen, and why (a conversation scenario without the simulator's credentials).
    skipped: str | None = None
    # Per turn, what its model requests said of the app, as ADK's eval records it for its judged
    # criteria (``AppDetails`` JSON: each agent's system instruction and tool declarations);
    # None: not recorded (agent_worker/app_details.py).
    app_details: list[dict[str, Any] | None] | None = None
    # What the agent read for this run, as its worker observed it: kind ("file", "listed",
    # "searched") -> absolute paths (agent_worker/observe.py); None: not observed.
    observed: dict[str, list[str]] | None = None


# A transcript keeps each text and each tool result or state value to this many characters:
# the report needs to show what happened, and results files must not grow with a tool's payloads.
TRANSCRIPT_TEXT_LIMIT = 4000


def _cut_text(text: str | None) -> str | None:
    if text is None or len(text) <= TRANSCRIPT_TEXT_LIMIT:
        return text
    return f"{text[:TRANSCRIPT_TEXT_LIMIT]}… ({len(text) - TRANSCRIPT_TEXT_LIMIT:,} more characters)"


def _cut_value(value: Any) -> Any:
    """A JSON value as recorded, or its JSON text cut to size when that is too long."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return _cut_text(value)
    text = dumps_sorted_any(value)
    return value if len(text) <= TRANSCRIPT_TEXT_LIMIT else _cut_text(text)


class TranscriptTurn(Stored):
    user: str | None = None
    response: str | None = None


class Transcript(Stored):
    """What the agent did in one question run, as the report shows it beside the reference:
    the conversation, the tool calls with their results and errors, the steps, the final state.
    Long texts and values are cut (``TRANSCRIPT_TEXT_LIMIT``); run-specific ids are dropped."""

    turns: list[TranscriptTurn] = Field(default_factory=list)
    tool_calls: list[ToolInteraction] | None = None
    trajectory: list[TrajectoryStep] | None = None
    final_response: str | None = None
    final_state: dict[str, Any] | None = None
    error: str | None = None
    reference: ReferenceData = Field(default_factory=ReferenceData)

    @classmethod
    def of(cls, question: Question, trace: Trace) -> Transcript:
        # Constructed, not validated: the parts were validated when the trace was made, and this runs per question.
        turns = [constructed(TranscriptTurn, user=_cut_text(t.user_input), response=_cut_text(t.response)) for t in trace.turns]
        if not turns and question.user_inputs:
            turns = [constructed(TranscriptTurn, user=_cut_text(text), response=None) for text in question.user_inputs]
        calls = None
        if trace.tool_interactions is not None:
            calls = [
                constructed(
                    ToolInteraction,
                    tool_name=c.tool_name,
                    input_arguments={k: _cut_value(v) for k, v in c.input_arguments.items()},
                    output_result=_cut_value(c.output_result),
                    agent=c.agent,
                    error=_cut_text(c.error),
                    call_id=None,
                )
                for c in trace.tool_interactions
            ]
        state = None if trace.final_state is None else {k: _cut_value(v) for k, v in trace.final_state.items()}
        return constructed(
            cls,
            turns=turns,
            tool_calls=calls,
            trajectory=list(trace.trajectory) if trace.trajectory is not None else None,
            final_response=_cut_text(trace.final_response),
            final_state=state,
            error=_cut_text(trace.error),
            reference=question.reference_data.model_copy(update={"custom": {}}),
        )
