"""The check's plan: what a check compares with, what runs where and with which runner, made once
before any agent runs (``plan_check``) and read by every later stage, never decided again.

This module is the one place ``compare_with`` is compared (tests/unit/test_one_plan.py keeps it
so) and the one place the runner is chosen from the settings (:func:`runner_for`). It takes plain
values, not the config: it sits in ``models`` so that every layer that reads a plan may import it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

# "workers": the agent's worker processes (under its own Python); "in_process": ADK's Runner in
# this process (--in-process); "http": a deployed ADK API server (agent-url); "none": no agent.
Runner = Literal["workers", "in_process", "http", "none"]
Asked = Literal["baseline", "base"]
Mode = Literal["baseline", "base", "none"]


def runner_for(agent: str | None, agent_url: str | None, in_process: bool = False) -> Runner:
    """Which runner runs the agent these settings name: the one decision the run layer, the
    service (what is observed, what is agent code) and the plan share."""
    if agent_url:
        return "http"
    if not agent:
        return "none"
    return "in_process" if in_process else "workers"


def in_repository(runner: Runner) -> bool:
    """Whether the agent runs from this repository's code (not a deployed server, not nothing):
    what it reads can be observed, its code hashed, and the merge-base's version of it run."""
    return runner in ("workers", "in_process")


class CheckPlan(BaseModel):
    """What one check does, decided once: saved in results.json (``plan``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # What the settings asked (compare-with) and what the check does: "base" only when the
    # merge-base's agent actually runs beside this one; "none" compares with nothing.
    asked: Asked = "baseline"
    mode: Mode = "baseline"
    # Why the check compares with the stored baselines although "base" was asked.
    fallback: str | None = None
    merge_base: str | None = None
    # The runner of this run's agent, and of the base's (None: the base does not run).
    runner: Runner = "none"
    base_runner: Runner | None = None
    # Whether timings are gated: only when both sides were timed in this job.
    timings_gated: bool = False
    # The model-call cache: off when the base runs beside (a replay would hide the drift it is there to see).
    model_cache: bool = False
    reuse: bool = False
    runs: int = 1
    max_model_calls: int | None = None
    max_cost_usd: float | None = None

    @property
    def base_beside(self) -> bool:
        """The merge-base's agent runs now, beside this one, and this run is compared with it."""
        return self.mode == "base"

    @property
    def stored(self) -> bool:
        """Compared with the baselines stored on the base branch."""
        return self.mode == "baseline"


def plan_check(
    *,
    asked: Asked,
    merge_base: str | None,
    runner: Runner,
    selected: bool,
    reuse: bool,
    model_cache: bool,
    runs: int,
    max_model_calls: int | None = None,
    max_cost_usd: float | None = None,
) -> CheckPlan:
    """The plan of a PR check, once the merge-base is known (None: no base branch, or none in
    common) and what it selects (``selected``: some dataset). "base" runs the base's agent only
    when there is a merge-base to check out and an agent in the repository to run there."""
    beside = asked == "base" and merge_base is not None and in_repository(runner) and selected
    fallback = None
    if asked == "base" and (merge_base is None or not in_repository(runner)):
        need = "a base branch (--base, or $GITHUB_BASE_REF)" if merge_base is None else "an agent in the repository (agent), not agent-url"
        fallback = f'compare-with = "base" needs {need}: compared with the stored baselines'
    return CheckPlan(
        asked=asked,
        mode="base" if beside else "baseline",
        fallback=fallback,
        merge_base=merge_base,
        runner=runner,
        # Two agents of one module name cannot share this process: the base's runs in workers.
        base_runner="workers" if beside else None,
        timings_gated=beside,
        model_cache=model_cache and not beside,
        reuse=reuse and merge_base is not None,
        runs=runs,
        max_model_calls=max_model_calls,
        max_cost_usd=max_cost_usd,
    )


def merged_plan(shards: list[CheckPlan | None]) -> CheckPlan:
    """The plan of shards joined by ``merge``: compared with the stored baselines (a merge never
    re-runs the base), timings not gated."""
    asked: Asked = "base" if any(p is not None and p.asked == "base" for p in shards) else "baseline"
    first = next((p for p in shards if p is not None), None)
    fallback = None
    if any(p is not None and p.base_beside for p in shards):
        fallback = (
            'compare-with = "base" is not kept across shards: the merged run is compared with the stored baselines '
            "(run the check unsharded to compare with the base's agent run now)"
        )
    return CheckPlan(
        asked=asked,
        fallback=fallback,
        merge_base=first.merge_base if first is not None else None,
        runner=first.runner if first is not None else "none",
        reuse=first.reuse if first is not None else False,
        runs=first.runs if first is not None else 1,
    )


def recorded_plan(compare_with: str | None, base_ran: bool) -> CheckPlan | None:
    """The plan of a results file written before plans were saved, from what it recorded
    (``compare_with``, and whether the base's run is in it); None when it recorded neither."""
    if compare_with is None:
        return None
    beside = compare_with == "base" and base_ran
    return CheckPlan(asked="base" if compare_with == "base" else "baseline", mode="base" if beside else "baseline", timings_gated=beside)


def mode_of(plan: CheckPlan | None) -> Mode:
    """What a run's results were compared with: "none" without a plan (``evaluate``)."""
    return plan.mode if plan is not None else "none"


def timings_gated(plan: CheckPlan | None) -> bool:
    """Whether a run's timings were gated: without a plan (``compare`` of two files), yes, as both
    files' runs are what the caller compares."""
    return plan.timings_gated if plan is not None else True
