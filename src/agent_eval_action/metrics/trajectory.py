"""Trajectory metrics: the reference steps (agent and tool names, in order) against what ran.

``trajectory_accuracy`` is the longest common subsequence over the reference length;
the ``trajectory_*`` family follows the Vertex AI definitions, computed locally on names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import lru_cache

from agent_eval_action.metrics.calls import steps as counted_steps
from agent_eval_action.metrics.registry import MetricContext, per_run, register, unscored
from agent_eval_action.models.questions import Question
from agent_eval_action.models.scores import Score, scored
from agent_eval_action.models.traces import Trace
from agent_eval_action.text.lcs import lcs_length


@per_run  # the six trajectory metrics project the same run in turn
def project(question: Question, trace: Trace) -> tuple[list[str], list[str], str, str, int] | None:
    """(reference, actual, how, text, overlap) with the actual steps reduced to the kinds the reference names.

    A reference that names only agents is compared with the agent steps, one that names
    only tools with the tool calls; an ADK app name in the reference stands for the root agent.
    ``transfer_to_agent`` calls are agent steps unless the reference names them (``calls.steps``).
    ``None`` when there is nothing to compare. The fourth item is the actual steps as text, the
    fifth how many steps the two have in common in any order (:func:`_overlap`).
    The lists are shared between callers: read them, don't change them.
    """
    reference = question.reference_data.reference_trajectory
    counted = counted_steps(question, trace)
    if reference is None or counted is None:
        return None
    app_names = tuple(name for name in (trace.app_name, *question.agents_evaluated[:1]) if name)
    return _project(tuple(reference), tuple((step.kind, step.name) for step in counted), app_names, trace.root_agent)


@lru_cache(maxsize=1024)  # runs of one question project alike
def _project(
    reference: tuple[str, ...], steps: tuple[tuple[str, str], ...], app_names: tuple[str, ...], root: str | None
) -> tuple[list[str], list[str], str, str, int]:
    agents = [name for kind, name in steps if kind == "agent"]
    tools = [name for kind, name in steps if kind == "tool"]
    ref = [root if root and step in app_names and step not in agents else step for step in reference]
    names_agents = any(step in agents for step in ref)
    names_tools = any(step in tools for step in ref)
    if names_agents and not names_tools:
        actual, how = agents, "agent steps"
    elif names_tools and not names_agents:
        actual, how = tools, "tool calls"
    else:
        actual, how = [name for _, name in steps], "agent steps and tool calls"
    return ref, actual, how, " -> ".join(actual) or "(no steps)", _overlap(ref, actual)


def _is_subsequence(needle: list[str], haystack: list[str]) -> bool:
    it = iter(haystack)
    return all(step in it for step in needle)


def _overlap(a: list[str], b: list[str]) -> int:
    return sum((Counter(a) & Counter(b)).values())


def _trajectory_metric(name: str, description: str, compute: Callable[[list[str], list[str], int], float | None]) -> None:
    """``compute(reference, actual, overlap)``: the score, or None where it is undefined."""

    def score(question: Question, trace: Trace, ctx: MetricContext) -> Score:
        if question.reference_data.reference_trajectory is None:
            return unscored("no reference_trajectory")
        projected = project(question, trace)
        if projected is None:
            return unscored("the run recorded no trajectory")
        ref, actual, how, text, overlap = projected
        details = {"reference": ref, "actual": actual, "compared": how}
        value = compute(ref, actual, overlap)
        if value is None:
            return unscored("undefined for an empty trajectory", **details)
        return scored(value=value, explanation=text, details=details)

    register(name, "higher", description)(score)


def _ratio(num: int, den: int, empty: float | None) -> float | None:
    return num / den if den else empty


_trajectory_metric(
    "trajectory_accuracy",
    "Longest common subsequence of reference and actual steps over the reference length.",
    lambda ref, act, _: _ratio(lcs_length(ref, act), len(ref), 1.0 if not act else 0.0),
)
_trajectory_metric("trajectory_exact_match", "1 when the steps equal the reference exactly.", lambda ref, act, _: float(ref == act))
_trajectory_metric(
    "trajectory_in_order_match",
    "1 when every reference step occurs in order (extra steps allowed).",
    lambda ref, act, _: float(_is_subsequence(ref, act)),
)
_trajectory_metric(
    "trajectory_any_order_match",
    "1 when every reference step occurs, in any order (extra steps allowed).",
    lambda ref, act, overlap: float(overlap == len(ref)),
)
_trajectory_metric(
    "trajectory_precision",
    "Share of actual steps that are reference steps.",
    lambda ref, act, overlap: _ratio(overlap, len(act), 1.0 if not ref else None),
)
_trajectory_metric(
    "trajectory_recall",
    "Share of reference steps that the actual steps contain.",
    lambda ref, act, overlap: _ratio(overlap, len(ref), 1.0),
)
