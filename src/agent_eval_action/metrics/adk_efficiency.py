"""ADK's efficiency reports under ADK's names, aggregated as ADK aggregates them
(google-adk 2.x ``evaluation/_efficiency_evaluators.py``).

Each is computed per turn (ADK's invocation) and the question's figure is the mean of the turns'
figures, never their sum: ``tool_call_count_v1`` is tool calls a turn where our ``tool_calls`` is
the question's total. They are informational in ADK (it refuses a threshold on them) and here:
never gated, and a threshold on one is a config error (``INFORMATIONAL``).

- ``tool_call_count_v1``: the function calls of the turn's events (``transfer_to_agent`` too);
  the mean over the turns.
- ``inference_call_count_v1``: the turn's events with usage metadata or a model version; the
  mean over the turns.
- ``token_usage_v1``: the turn's input (prompt and tool-use prompt) plus output (candidates and
  thinking) tokens, None for a turn where no call reported either; the sum of the turns' figures
  over all the turns (a turn without usage counts in the denominator), None when none reported.
- ``invocation_duration_v1``: the turn's measured seconds; the mean over the timed turns, to the
  millisecond. ADK times a turn only while it runs it: a run read back from a file has the turn
  durations its producer recorded, or none.

The turns' figures are :class:`~agent_eval_action.models.questions.AdkTurnUsage`, read from the
session's events where they are read (``traces.adk_usage``).
"""

from __future__ import annotations

from collections.abc import Callable

from agent_eval_action.metrics.registry import MetricContext, register, unscored
from agent_eval_action.models.questions import AdkTurnUsage, Question
from agent_eval_action.models.scores import Score, scored
from agent_eval_action.models.traces import Trace

TOOL_CALL_COUNT = "tool_call_count_v1"
INFERENCE_CALL_COUNT = "inference_call_count_v1"
TOKEN_USAGE = "token_usage_v1"
INVOCATION_DURATION = "invocation_duration_v1"
# ADK refuses a threshold on these (``_reject_threshold``): they report, never pass or fail.
INFORMATIONAL = frozenset({TOOL_CALL_COUNT, INFERENCE_CALL_COUNT, TOKEN_USAGE, INVOCATION_DURATION})
NO_EVENTS = "the run's session events are not recorded: ADK's efficiency reports count what they show"
PER_TURN = "ADK's report, per turn (the mean over the turns, not the question's total)"


def _turns(trace: Trace) -> list[AdkTurnUsage] | None:
    usage = [turn.adk_usage for turn in trace.turns if turn.adk_usage is not None]
    return usage or None


def _mean_of_turns(figure: Callable[[AdkTurnUsage], int | None], what: str) -> Callable[[Question, Trace, MetricContext], Score]:
    """The mean over the turns that have the figure (ADK's ``_evaluate_efficiency_metric``)."""

    def score(question: Question, trace: Trace, ctx: MetricContext) -> Score:
        turns = _turns(trace)
        if turns is None:
            return unscored(NO_EVENTS)
        per_turn = [figure(turn) for turn in turns]
        known = [value for value in per_turn if value is not None]
        if not known:
            return unscored(f"the run's record lists tool calls only: no {what} recorded", per_turn=per_turn)
        mean = sum(known) / len(known)
        return scored(value=mean, explanation=f"{mean:g} {what} a turn over {len(known)} turn(s)", details={"per_turn": per_turn})

    return score


tool_call_count_v1 = register(TOOL_CALL_COUNT, "lower", f"Tool calls: {PER_TURN}.", kind="trace", unit="count")(
    _mean_of_turns(lambda turn: turn.tool_calls, "tool call(s)")
)
inference_call_count_v1 = register(INFERENCE_CALL_COUNT, "lower", f"Model calls: {PER_TURN}.", kind="trace", unit="count")(
    _mean_of_turns(lambda turn: turn.model_calls, "model call(s)")
)


@register(TOKEN_USAGE, "lower", f"Input plus output tokens: {PER_TURN}.", kind="trace", unit="count")
def token_usage_v1(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    turns = _turns(trace)
    if turns is None:
        return unscored(NO_EVENTS)
    per_turn = [
        None if turn.input_tokens is None and turn.output_tokens is None else (turn.input_tokens or 0) + (turn.output_tokens or 0)
        for turn in turns
    ]
    reported = [tokens for tokens in per_turn if tokens is not None]
    if not reported:
        return unscored("no model call reported its token usage", per_turn=per_turn)
    # ADK averages each count over every turn: a count a turn's calls left out is 0 for that turn.
    mean = sum(reported) / len(per_turn)
    return scored(value=mean, explanation=f"{mean:g} tokens a turn over {len(per_turn)} turn(s)", details={"per_turn": per_turn})


@register(INVOCATION_DURATION, "lower", f"Seconds: {PER_TURN}.", kind="trace", unit="seconds")
def invocation_duration_v1(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    per_turn = [turn.duration_s for turn in trace.turns]
    timed = [seconds for seconds in per_turn if seconds is not None]
    if not timed:
        return unscored("no turn was timed")
    mean = round(sum(timed) / len(timed), 3)
    return scored(value=mean, explanation=f"{mean:g} s a turn over {len(timed)} timed turn(s)", details={"per_turn": per_turn})
