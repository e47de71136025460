"""Pydantic models shared by every layer: questions, traces, scores, results.

Every input format is loaded into :class:`Question` (what is asked and expected) and,
for recorded runs, :class:`Trace` (what the agent did). Metrics map both to a
:class:`Score`; :class:`Results` is what ``results.json`` and baseline files hold.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

from agent_eval_action.core.plan import CheckPlan

# 2: gate failures are objects and the gate has an outcome. Version-1 files are still read.
SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)
# Which way is better for a metric (config, registry and results all say it so).
Direction = Literal["higher", "lower", "neutral"]
# What a metric's figures are, which every view shows them in (declared where the metric is
# registered, or by a custom metric's ``unit``): "ratio" a share of 0..1 (a percentage, changes
# in points), "count" a number of things (tokens, calls), "seconds", "usd", "number" any other
# figure (shown as it is).
Unit = Literal["ratio", "count", "seconds", "usd", "number"]

# The formats a dataset is read in ("unknown": a file refused whole, its problem says why).
DatasetFormat = Literal["golden", "jsonl", "csv", "adk_test", "adk_evalset", "adk_history", "unknown"]

# Stored figures keep 6 decimals: reruns write identical files, and no metric needs more.
DIGITS = 6


def _round(value: Any) -> Any:
    """A stored figure rounded; one that is not finite is unknown (None): results are JSON, which
    has no NaN or Infinity, and the figures are computed so that none arises."""
    if isinstance(value, float):
        return round(value, DIGITS) if math.isfinite(value) else None
    if isinstance(value, tuple):
        rounded = tuple(_round(v) for v in value)
        return None if None in rounded else rounded
    return value


class _Model(BaseModel):
    # Our own models refuse unknown fields: a typo in a stored file must not pass silently.
    model_config = ConfigDict(extra="forbid")


class ToolInteraction(_Model):
    """One tool call: what was asked of the tool and what it answered."""

    tool_name: str
    input_arguments: dict[str, Any] = Field(default_factory=dict)
    output_result: Any = None
    agent: str | None = None
    error: str | None = None
    call_id: str | None = None
    # 0-based index of the user turn (ADK invocation) the call was made in; None when the
    # source does not say.
    turn: int | None = None


class ReferenceToolCall(_Model):
    """A tool call the agent is expected to make; only the listed arguments are checked."""

    tool_name: str
    input_arguments: dict[str, Any] = Field(default_factory=dict)


class ReferenceData(_Model):
    """The ground truth of a question. A field left ``None`` has no reference (unscored)."""

    reference_tool_interactions: list[ReferenceToolCall] | None = None
    reference_trajectory: list[str] | None = None
    reference_state_variables: dict[str, Any] | None = None
    reference_response: str | None = None
    # Per-turn expected responses (ADK eval sets carry one per invocation); None where absent.
    turn_references: list[str | None] | None = None
    # Per-turn expected tool calls (ADK eval sets and histories), which ADK's
    # tool_trajectory_avg_score compares turn by turn; None where the source has none.
    turn_tool_calls: list[list[ReferenceToolCall]] | None = None
    # The user's own keys, kept for judges and reports.
    custom: dict[str, Any] = Field(default_factory=dict)


class Question(_Model):
    """One test session: the turns a user sends and what should happen."""

    id: str
    user_inputs: list[str]
    agents_evaluated: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    reference_data: ReferenceData = Field(default_factory=ReferenceData)
    initial_state: dict[str, Any] = Field(default_factory=dict)
    # 1-based line of the question in its dataset file, for annotations.
    line: int | None = None
    # An ADK conversation scenario ({starting_prompt, conversation_plan, user_persona?}): the
    # turns after the first come from ADK's user simulator. ``user_inputs`` holds the starting prompt.
    conversation_scenario: dict[str, Any] | None = None
    # User-simulator settings the dataset's files give (ADK's LlmBackedUserSimulatorConfig keys);
    # the run's [user-simulator] config is laid over them.
    user_simulator: dict[str, Any] = Field(default_factory=dict)


class Turn(_Model):
    user_input: str | None = None
    response: str | None = None
    # The text parts of the turn's final response as ADK reads them (thought parts included),
    # for ADK's own response metric; None when only ``response`` is known.
    response_parts: list[str] | None = None
    start_time: float | None = None  # epoch seconds
    duration_s: float | None = None


class TrajectoryStep(_Model):
    kind: Literal["agent", "tool"]
    name: str


class SubAgentResponse(_Model):
    agent_name: str
    text_response: str


class LlmCall(_Model):
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


class SpanStats(_Model):
    """What a run's OpenTelemetry spans show that its events do not: time spent in model calls and
    tools, the first response, agent handoffs. Times are None where the spans' times are not
    measurements (``timing_note`` says why)."""

    llm_time_s: float | None = None
    tool_time_s: float | None = None
    first_response_s: float | None = None
    agent_handoffs: int = 0
    handoff_agents: list[str] = Field(default_factory=list)
    timing_note: str | None = None


class Span(_Model):
    """An OpenTelemetry span as recorded (times in nanoseconds since the epoch)."""

    name: str
    span_id: str | None = None
    trace_id: str | None = None
    parent_span_id: str | None = None
    start_time: int | None = None
    end_time: int | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)


class Trace(_Model):
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
    # Model calls answered from the model-call cache instead of the model (None: no cache).
    replayed_model_calls: int | None = None
    # The run did not happen, and why (a conversation scenario without the simulator's credentials).
    skipped: str | None = None
    # What the agent read for this run, as its worker observed it: kind ("file", "listed",
    # "searched") -> absolute paths (agent_worker/observe.py); None: not observed.
    observed: dict[str, list[str]] | None = None


class Score(_Model):
    """A metric's verdict on one question. ``value=None`` is unscored, with the reason in ``explanation``."""

    value: float | None
    explanation: str = ""
    details: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, **data: Any) -> None:
        # Rounded where a score is made, not by a validator: results files and worker payloads
        # hold rounded values already, and parsing thousands of them must not call Python per score.
        value = data.get("value")
        if isinstance(value, float):
            if math.isfinite(value):
                data["value"] = round(value, DIGITS)
            else:  # a metric's NaN or infinity is no score: unscored, saying what it gave
                data["value"] = None
                data["explanation"] = f"not a finite number ({value}): {data.get('explanation') or 'no explanation'}"
        super().__init__(**data)


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
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return value if len(text) <= TRANSCRIPT_TEXT_LIMIT else _cut_text(text)


class TranscriptTurn(_Model):
    user: str | None = None
    response: str | None = None


class Transcript(_Model):
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
        # model_construct: the parts were validated when the trace was made, and this runs per question.
        turns = [TranscriptTurn.model_construct(user=_cut_text(t.user_input), response=_cut_text(t.response)) for t in trace.turns]
        if not turns and question.user_inputs:
            turns = [TranscriptTurn.model_construct(user=_cut_text(text), response=None) for text in question.user_inputs]
        calls = None
        if trace.tool_interactions is not None:
            calls = [
                ToolInteraction.model_construct(
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
        return cls.model_construct(
            turns=turns,
            tool_calls=calls,
            trajectory=list(trace.trajectory) if trace.trajectory is not None else None,
            final_response=_cut_text(trace.final_response),
            final_state=state,
            error=_cut_text(trace.error),
            reference=question.reference_data.model_copy(update={"custom": {}}),
        )


class QuestionResult(_Model):
    id: str
    # "skipped": the question could not be run here (``skip_reason`` says why); never a zero.
    status: Literal["ok", "error", "skipped"] = "ok"
    error: str | None = None
    skip_reason: str | None = None
    run: int = 0
    scores: dict[str, Score] = Field(default_factory=dict)
    # Of questions the agent ran: a hash of what was asked and expected (question_hash), so a
    # later run can tell the question is unchanged; and whether these scores were taken from the
    # baseline instead of a new run (question-level reuse).
    content_hash: str | None = None
    # The same hash without the question's id (question_key): a question the PR gave a new id is
    # paired with the baseline's by it.
    content_key: str | None = None
    reused: bool = False
    # What the agent read for this run (repo/observed.py): repository path -> its blob hash,
    # "missing", or a folder's names' hash; None: not observed (an older file, a recorded run).
    # With the dataset's ``environment``, what a later run must find unchanged to reuse it.
    inputs: dict[str, str] | None = None
    # What the run did (for the report, and as the base run a later PR is shown beside); absent
    # in files written before it was recorded.
    transcript: Transcript | None = None
    # The metrics whose pass threshold this run missed, judged once when its dataset is summarized
    # (scoring/scorer.py), with the threshold the summary records; every view reads it. Written
    # only when one was missed: absent, it is unset (a run that missed none, or an older file).
    failed_thresholds: list[str] = Field(default_factory=list, exclude_if=lambda failed: not failed)


class MetricSummary(_Model):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    mean: float | None
    n: int
    unscored: int
    stdev: float | None = None
    ci95: tuple[float, float] | None = None
    direction: Direction = "higher"
    # "reference", "trace" or "judge": which gate rules apply by default. Stored so compare and
    # gate need only the results (None in files written before it was).
    kind: Literal["reference", "trace", "judge"] | None = None
    # The metric's unit, stored so that every view of the results shows its figures so (None in
    # files written before it was: the registry's unit, else a ratio).
    unit: Unit | None = None
    unscored_reasons: dict[str, int] = Field(default_factory=dict)
    p50: float | None = None
    p90: float | None = None
    max: float | None = None
    # With a pass threshold: the share of scored runs that pass, and (runs > 1) the share of
    # questions whose every run passes, pass^k.
    pass_rate: float | None = None
    pass_hat_k: float | None = None
    # The threshold the pass rate was judged with (config, dataset criteria or default): every view
    # names the failing runs by it, from the results alone.
    pass_threshold: float | None = None
    runs: int = 1

    _round_figures = field_validator("mean", "stdev", "ci95", "p50", "p90", "max", "pass_rate", "pass_hat_k")(
        classmethod(lambda cls, v: _round(v))
    )


class JudgeUsage(_Model):
    """What judging cost, apart from the agent's own tokens."""

    calls: int = 0
    cached: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class ModelCalls(_Model):
    live: int = 0
    replayed: int = 0


class BudgetUse(_Model):
    """A spending limit of the run and what was spent against it."""

    max_calls: int | None = None
    max_cost_usd: float | None = None
    calls: int = 0
    cost_usd: float = 0.0
    # Question runs (or judge scores) not started because the budget was reached.
    skipped: int = 0
    # Why the budget stopped the run ("max-model-calls 10 reached (10 ...)"); None: it did not.
    reached: str | None = None


class RunStats(_Model):
    """How the agent's questions were run: the concurrency asked for ("auto" or a number), the
    highest limit reached, the limit at the end, how many were in flight at most, the 429 /
    RESOURCE_EXHAUSTED / deadline signals heard and the times the limit was halved for them."""

    concurrency: str = "auto"
    ceiling: int = 0
    reached: int = 0
    final: int = 0
    max_in_flight: int = 0
    congestion: int = 0
    decreases: int = 0
    # Model calls the API answered 429 and that were asked again inside their question (the
    # judges' too), and the rates the calls were paced to ("" when none was known or learnt).
    throttled: int = 0
    paced: str | None = None
    budget: BudgetUse | None = None
    judge_budget: BudgetUse | None = None


class DatasetResult(_Model):
    path: str
    name: str
    format: DatasetFormat
    summary: dict[str, MetricSummary] = Field(default_factory=dict)
    questions: list[QuestionResult] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    judge_usage: JudgeUsage | None = None
    # A hash of the agent's code (agent paths at the commit) the runs were made with; None when
    # unknown (a dirty working tree, no repository) or when no agent ran.
    agent_fingerprint: str | None = None
    # The agent's environment fingerprint (run/fingerprint.py: interpreter, installed
    # distributions, agent reference, agent-python, agent-env) the runs were made in; None when
    # not taken (an older file, no agent run here): then no question's inputs were observed.
    environment: str | None = None
    # The module names the agent imported (or tried to): which names in a folder an import
    # searched could shadow a module (repo/observed.py). None: not observed.
    imports: list[str] | None = None
    # Question runs whose scores were taken from the baseline (unchanged question, unchanged agent).
    reused: int = 0
    # With the model-call cache: the agent's model calls that went to the model, and those replayed.
    model_calls: ModelCalls | None = None
    # Thresholds that came with the dataset (ADK test_config.json criteria, or the criteria an
    # ADK eval history recorded): pass thresholds and gate minimums unless the config sets its own.
    criteria: dict[str, float] = Field(default_factory=dict)


class Problem(_Model):
    """An input problem reported without stopping the run."""

    path: str
    message: str


class QuestionDrop(_Model):
    """A question whose score fell by at least ``max_question_drop``: listed even when the mean holds."""

    id: str
    metric: str
    baseline: float
    current: float
    # With several runs a side: the larger of the ranges (highest - lowest score) of its runs on
    # the two sides; None when every run on each side scored the same. The gate counts a drop of
    # a question whose runs disagree only beyond this spread.
    spread: float | None = None
    # The fewer of its scored runs on the two sides: with several on both, a complete fall counts
    # only beyond what the questions' flakiness explains (``MetricComparison.chance_falls``).
    runs: int = 1

    _round_figures = field_validator("spread")(classmethod(lambda cls, v: _round(v)))


class FlakyQuestion(_Model):
    """A question whose runs on one side disagree on a metric's pass threshold: some pass, some fail."""

    id: str
    metric: str
    threshold: float
    # The share of its scored runs that pass on each side, and how many were scored there
    # (None and 0: not scored on that side).
    baseline_pass_rate: float | None = None
    baseline_runs: int = 0
    current_pass_rate: float | None = None
    current_runs: int = 0

    _round_figures = field_validator("baseline_pass_rate", "current_pass_rate")(classmethod(lambda cls, v: _round(v)))


class MetricComparison(_Model):
    metric: str
    direction: Direction
    # The base's and this run's means over the ``n_shared`` questions both scored, so that
    # ``delta`` is their difference; over all their questions when they share none (and in
    # files written before the means were paired).
    baseline: float | None
    current: float | None
    # Mean paired difference (current - baseline) over the questions both runs scored;
    # the difference of means when they share none.
    delta: float | None
    ci95: tuple[float, float] | None = None
    n_shared: int = 0
    # Questions only the base scored (removed, or an error / unscored now) and only this run
    # scored (added, or unscored on the base): left out of the means above.
    baseline_only: int = 0
    current_only: int = 0
    verdict: Literal["improved", "unchanged", "regressed", "new", "removed"]
    drops: list[QuestionDrop] = Field(default_factory=list)
    # With a pass threshold, over the questions with several runs on both sides: how many would
    # fall from passing every base run to failing every run here by chance alone, at each one's
    # own pass rate over both sides' runs; the gate counts their hard drops only beyond it.
    # None: no question has several runs on both sides.
    chance_falls: float | None = None

    _round_figures = field_validator("baseline", "current", "delta", "ci95", "chance_falls")(classmethod(lambda cls, v: _round(v)))


class DatasetComparison(_Model):
    dataset: str
    path: str
    # "compared"; "new": no baseline on the base branch; "removed": the dataset file was deleted.
    status: Literal["compared", "new", "removed"]
    baseline_path: str | None = None
    # The dataset's path at the merge-base when this PR renamed it.
    renamed_from: str | None = None
    added_questions: list[str] = Field(default_factory=list)
    removed_questions: list[str] = Field(default_factory=list)
    # Question id now -> its id in the baseline: questions whose id changed and whose content did
    # not, compared with their own baseline runs.
    paired_by_content: dict[str, str] = Field(default_factory=dict)
    baseline_errors: int = 0
    current_errors: int = 0
    metrics: list[MetricComparison] = Field(default_factory=list)
    # Questions whose runs disagree on a side (with several runs per question), per metric with
    # a pass threshold, with their pass rate on each side. Kept here, not on the question runs:
    # flakiness is a statement about a question's K runs and both sides, which only the comparison sees.
    flaky: list[FlakyQuestion] = Field(default_factory=list)
    # The per-question pass test (verdict/noise.py): None where no metric has a pass threshold.
    pass_test: PassTest | None = None


class QuestionTest(_Model):
    """One question's runs on each side under the per-question test, and what it concluded:
    "failed" (Holm rejects "it passes as often as on the base"), "inconclusive" (a fall the
    re-runs could not confirm or clear), "cleared" (it failed a run, as the base does too)."""

    id: str
    runs: int
    passes: int
    baseline_runs: int
    baseline_passes: int
    # The one-sided Fisher exact p-value, and the level it had to reach (its share of alpha).
    p: float
    level: float
    decision: Literal["failed", "inconclusive", "cleared"]
    # Runs of it that ended in a model/API error: not run, not counted.
    not_run: int = 0
    # The base holds too few runs of it to test by (an older baseline of one run): decided by the
    # per-question guard's rule (every base run passed, every run here failed).
    short: bool = False
    # The metrics (of those it meets on the base) that some run of it here missed.
    fell_on: list[str] = Field(default_factory=list)
    # A plain-words line: "q26: 0 of 6 runs pass, 5 of 5 on the base: p = 0.002".
    said: str = ""


class PassTest(_Model):
    """The per-question test of a dataset: a question run passes when every metric in ``metrics``
    meets its pass threshold. Questions whose every PR run passed are not listed."""

    metrics: list[str]
    alpha: float
    # Tarone's count: how many questions share alpha (those that could show a fall at all).
    m: int
    # Questions the test saw, and the runs each side made of them (re-runs included).
    questions: int = 0
    runs: int = 0
    passes: int = 0
    baseline_runs: int = 0
    baseline_passes: int = 0
    # The dataset-wide Cochran-Mantel-Haenszel p-value (falls spread thin over many questions).
    spread_p: float = 1.0
    tested: list[QuestionTest] = Field(default_factory=list)


class SelectedDataset(_Model):
    # Repository-relative POSIX path, whatever directory the run started in.
    path: str
    reason: str
    # Its path at the merge-base when this PR renamed it: the baseline is looked up there too.
    renamed_from: str | None = None


class Selection(_Model):
    """Which datasets a run evaluated and why."""

    base_ref: str | None = None
    merge_base: str | None = None
    mode: Literal["all", "changed"] = "all"
    selected: list[SelectedDataset] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    agent_changes: list[str] = Field(default_factory=list)


# The rule a gate failure broke ("legacy": read from a version-1 file, which kept only the message).
GateRule = Literal[
    "min",
    "max",
    "max_regression",
    "question_drop",
    "question_fall",
    "pass_rate",
    "new_errors",
    "max_errors",
    "nothing_scored",
    "drift",
    "legacy",
]


class GateFailure(_Model):
    """One reason the gate failed. ``question`` is None for a dataset-level rule.

    The gate's decision is stored whole, so the views only display it: ``message`` is
    "``subject``: ``detail``" (the dataset's name, then what happened)."""

    dataset: str | None = None  # the dataset's repository path
    metric: str | None = None
    question: str | None = None
    rule: GateRule
    baseline: float | None = None
    current: float | None = None
    message: str
    # The dataset named first in ``message``, and the message without it (None in older files: read from the message).
    subject: str | None = None
    detail: str | None = None
    # The figure of the rule as configured: the minimum or maximum, or max_regression (0.05, or "20%" of the baseline).
    limit: float | str | None = None
    # max_regression: whether the change's 95% CI lies wholly on the worse side (None: no CI, too few shared questions).
    significant: bool | None = None

    _round_figures = field_validator("baseline", "current")(classmethod(lambda cls, v: _round(v)))

    @model_validator(mode="after")
    def _parts(self) -> GateFailure:
        """Files written before the parts were stored: the gate wrote every message as "name: detail"."""
        if self.detail is None:
            subject, sep, rest = self.message.partition(": ")
            self.subject, self.detail = (subject, rest) if sep else (None, self.message)
        return self


Outcome = Literal["passed", "failed", "inconclusive", "unchecked"]


class GateResult(_Model):
    """The verdict. ``unchecked``: bad input, an unreadable baseline or an infrastructure failure
    kept part of the check from happening, so it is neither a pass nor only a failure."""

    outcome: Outcome = "passed"
    failures: list[GateFailure] = Field(default_factory=list)
    # Found but not failing (a judged metric's question drops, missing baselines).
    notes: list[str] = Field(default_factory=list)
    # Regressions beyond max_regression that the gate did not count (their CI includes no change):
    # the notes that name them, as records the views show.
    within_noise: list[GateFailure] = Field(default_factory=list)
    # Why the check is unchecked: the first problems' messages.
    unchecked: list[str] = Field(default_factory=list)
    # Unchecked for no input's fault (the model/API failed, a budget or an interrupt skipped
    # questions it needed, the base's side was disturbed): the cause, said once (exit 3).
    infrastructure: str | None = None
    # The questions the per-question test could not decide within the re-runs' cap or budget,
    # each in plain words with what would decide it; with on-inconclusive = "fail", exit 1.
    inconclusive: list[str] = Field(default_factory=list)
    on_inconclusive: Literal["pass", "fail"] = "pass"
    # Where the gate's rules came from, and what this PR changes in them (applies after merge).
    rules_from: str | None = None
    config_changes: list[str] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """Written to results.json for its readers; the outcome says it (an inconclusive check
        passes unless on-inconclusive = "fail")."""
        return self.outcome == "passed" or (self.outcome == "inconclusive" and self.on_inconclusive == "pass")

    @model_validator(mode="before")
    @classmethod
    def _version_1(cls, data: Any) -> Any:
        """Version-1 files: failures were strings, and there was no outcome. Every file has
        ``passed``, which the outcome gives."""
        if isinstance(data, dict):
            data = dict(data)
            failures = data.get("failures")
            if isinstance(failures, list):
                data["failures"] = [{"rule": "legacy", "message": f} if isinstance(f, str) else f for f in failures]
            passed = data.pop("passed", None)
            if "outcome" not in data and isinstance(passed, bool):
                data["outcome"] = "passed" if passed else "failed"
        return data


class BaseRun(_Model):
    """What re-running the merge-base's agent beside the PR cost (compare-with = "base")."""

    # The merge-base commit the base's agent was checked out at.
    commit: str | None = None
    datasets: list[str] = Field(default_factory=list)
    # Distinct questions run on the base side, each ``runs`` times, and its model calls.
    questions: int = 0
    runs: int = 1
    model_calls: int = 0


class Results(_Model):
    schema_version: int = SCHEMA_VERSION
    tool_version: str = ""
    selection: Selection | None = None
    # "i/n" when this run evaluated one shard of the questions.
    shard: str | None = None
    datasets: list[DatasetResult] = Field(default_factory=list)
    problems: list[Problem] = Field(default_factory=list)
    comparison: list[DatasetComparison] | None = None
    gate: GateResult | None = None
    # How the agent ran (concurrency reached, budgets); None when nothing ran the agent.
    run: RunStats | None = None
    # What the PR was compared with: "baseline" (stored on the base branch) or "base" (the
    # merge-base's agent run in the same job); None in files written before it was recorded.
    compare_with: Literal["baseline", "base"] | None = None
    # The check's plan (core/plan.py), made once before the agent ran; None for a run that was no
    # check (evaluate). Files written before it was saved get one from ``compare_with`` when read.
    plan: CheckPlan | None = None
    # compare-with = "base": what the base's re-run cost, and the fresh base run compared with
    # the stored baseline (same code, another time: the model's drift).
    base_run: BaseRun | None = None
    drift: list[DatasetComparison] | None = None
    # What the check says of model drift, a line each: with compare-with = "base", each dataset whose
    # base run moved from its stored baseline; else the hint that drift is the likely cause.
    drift_notes: list[str] = Field(default_factory=list)
