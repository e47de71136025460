"""The check's plan: decided once from the merge-base, the runner and what is selected."""

from __future__ import annotations

import pytest

from agent_eval_action.models.plan import CheckPlan, merged_plan, plan_check, recorded_plan, runner_for, timings_gated


def plan(**changes: object) -> CheckPlan:
    settings: dict[str, object] = {
        "asked": "base",
        "merge_base": "a" * 40,
        "runner": "workers",
        "selected": True,
        "reuse": True,
        "model_cache": True,
        "runs": 3,
    }
    return plan_check(**{**settings, **changes})  # type: ignore[arg-type]


def test_the_base_runs_beside_only_with_a_merge_base_and_an_agent_in_the_repository() -> None:
    beside = plan()
    assert beside.base_beside and beside.mode == "base" and beside.base_runner == "workers"
    assert beside.timings_gated and not beside.model_cache and beside.fallback is None and beside.runs == 3

    no_base = plan(merge_base=None)
    assert not no_base.base_beside and no_base.stored and no_base.base_runner is None
    # Nothing runs beside, so nothing turns the cache off; and reuse needs a merge-base to reuse from.
    assert no_base.model_cache and not no_base.timings_gated and not no_base.reuse
    assert no_base.fallback == 'compare-with = "base" needs a base branch (--base, or $GITHUB_BASE_REF): compared with the stored baselines'

    deployed = plan(runner="http")
    assert deployed.stored and deployed.fallback is not None and "not agent-url" in deployed.fallback


def test_nothing_selected_runs_no_base_and_says_no_fallback() -> None:
    empty = plan(selected=False)
    assert empty.stored and empty.fallback is None
    assert plan(asked="baseline").fallback is None and plan(asked="baseline").stored


@pytest.mark.parametrize(
    ("agent", "url", "in_process", "runner"),
    [
        ("app.agent:root_agent", None, False, "workers"),
        ("app", None, True, "in_process"),
        (None, "http://x", False, "http"),
        ("a", "http://x", True, "http"),
        (None, None, False, "none"),
    ],
)
def test_one_choice_of_runner(agent: str | None, url: str | None, in_process: bool, runner: str) -> None:
    assert runner_for(agent, url, in_process) == runner


def test_a_plan_is_frozen_and_round_trips() -> None:
    made = plan()
    with pytest.raises(ValueError):
        made.mode = "baseline"
    assert CheckPlan.model_validate_json(made.model_dump_json()) == made


def test_shards_merged_compare_with_stored_baselines() -> None:
    merged = merged_plan([plan(), None])
    assert merged.stored and not merged.timings_gated and merged.asked == "base"
    assert merged.fallback is not None and "not kept across shards" in merged.fallback
    assert merged_plan([plan(asked="baseline", merge_base=None)]).fallback is None


def test_files_written_before_plans_were_saved() -> None:
    assert recorded_plan(None, False) is None
    old_base = recorded_plan("base", True)
    assert old_base is not None and old_base.base_beside and old_base.timings_gated
    old_stored = recorded_plan("baseline", False)
    assert old_stored is not None and old_stored.stored and not timings_gated(old_stored)
    # No plan (evaluate, or `compare` of two files): the caller compares runs it chose, timings too.
    assert timings_gated(None)
