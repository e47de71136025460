"""What a dataset asks: questions, their turns and references (the datasets stage's types)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agent_eval_action.models.stored import Stored

# The formats a dataset is read in ("unknown": a file refused whole, its problem says why).
DatasetFormat = Literal["golden", "jsonl", "csv", "adk_test", "adk_evalset", "adk_history", "unknown"]


class ToolInteraction(Stored):
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


class ReferenceToolCall(Stored):
    """A tool call the agent is expected to make; only the listed arguments are checked."""

    tool_name: str
    input_arguments: dict[str, Any] = Field(default_factory=dict)


class ReferenceData(Stored):
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


class Question(Stored):
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


class AdkTurnUsage(Stored):
    """One turn as ADK's efficiency reports read it: the events ADK's eval keeps for the
    invocation (``EvaluationGenerator.convert_events_to_eval_invocations``: an agent's event with
    a function call or response, text, inline data or grounding), their function calls, the model
    calls among them (usage or a model version), and their tokens as ADK's ``TokenUsage`` sums
    them (input: prompt and tool-use prompt; output: candidates and thinking). A token count is
    None when no call of the turn reported it, never 0; ``model_calls`` is None where the source
    lists the turn's tool calls only (an older eval history's bare ``tool_uses``), as ADK's is."""

    tool_calls: int = 0
    model_calls: int | None = 0
    input_tokens: int | None = None
    output_tokens: int | None = None


class IntermediateText(Stored):
    """Text the agent said in a turn before its final response (before a tool call, or a
    sub-agent's words before the root answers), where ADK's eval sees it: ``at`` is how many of
    the turn's tool calls came before it; ``with_call``: said in the same event as the next call."""

    texts: list[str]  # the event's text parts, as ADK reads them (thoughts included)
    at: int = 0
    with_call: bool = False
    author: str | None = None


class Turn(Stored):
    user_input: str | None = None
    response: str | None = None
    # The text parts of the turn's final response as ADK reads them (thought parts included),
    # for ADK's own response metric; None when only ``response`` is known.
    response_parts: list[str] | None = None
    start_time: float | None = None  # epoch seconds
    duration_s: float | None = None
    # What ADK's efficiency reports read of this turn; None where the run's session events are not known.
    adk_usage: AdkTurnUsage | None = None
    # The turn's intermediate texts, in order, for ADK's criteria that judge them
    # (``include_intermediate_responses_in_final``, ``evaluate_intermediate_nl_responses``);
    # None where the run's session events are not known.
    intermediate: list[IntermediateText] | None = None


class TrajectoryStep(Stored):
    kind: Literal["agent", "tool"]
    name: str
