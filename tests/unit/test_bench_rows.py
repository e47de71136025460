"""The rows of make bench's table for issue 39 (bench/fresh_process.py, bench/base_mode.py): figures
in, row text out. No timing is measured here; the figures are given."""

from __future__ import annotations

from typing import Any

from bench import base_mode, fresh_process
from bench.verdicts import reported


def _fresh(pools: dict[str, Any]) -> dict[str, Any]:
    return {
        "questions": 64,
        "latency_ms": 1000,
        "samples": {
            "ours": [4.0, 4.1, 4.2],
            "ours cold": [4.4, 4.5, 4.6],
            "ours wide": [4.3, 4.3, 4.3],
            "bare ADK": [4.0, 4.0, 4.0],
            "ADK's fixed cost": [0.8, 0.8, 0.8],
        },
        "floor_s": 3.0,
        "adk_s": None,
        "ours_default_s": 4.1,
        "ours_cold_s": 4.5,
        "ours_wide_s": 4.3,
        "bare_adk_s": 4.0,
        "adk_fixed_s": 0.8,
        "pools": pools,
    }


def test_the_warm_run_is_judged_against_the_floor_plus_the_fixed_cost_of_the_same_run() -> None:
    lines = fresh_process.rows(_fresh({"skipped": "bench/warm_start.py failed: ImportError"}))
    fresh = next(line for line in lines if line.startswith("| the same against the least any fresh process takes"))
    # 4.1 s against 3.0 + 0.8 s: 1.08x, within 1.1x.
    assert "| 4.10 s at the defaults | 3.80 s | 1.08x | <= 1.1x the least any fresh process takes (the row below) | met |" in fresh
    warm = next(line for line in lines if "`--no-warm-start`" in line)
    assert "| 4.10 s warm | 4.50 s cold | 0.91x |" in warm and warm.endswith("| met |")
    assert any(line.startswith("| worker pool start and replacement") and "skipped: bench/warm_start.py failed" in line for line in lines)
    assert lines[-1].startswith("| vs ADK AgentEvaluator | skipped:")


def test_the_pool_rows_take_each_side_samples_of_their_own_figure() -> None:
    pools = {
        "workers": 4,
        "warm": {"ready_s": 1.6, "replacement_s": 0.01, "samples": {"pool": [[1.6, 0.01], [1.6, 0.01], [1.6, 0.01]]}},
        "cold": {"ready_s": 2.5, "replacement_s": 1.5, "samples": {"pool": [[2.5, 1.5], [2.5, 1.5], [2.5, 1.5]]}},
    }
    lines = fresh_process.rows(_fresh(pools))
    ready, replacement = (line for line in lines if line.startswith("| worker pool (bench/warm_start.py)"))
    assert "4 workers, start to ready | 1.60 s warm (forked) | 2.50 s cold (spawned) | 0.64x |" in ready
    assert "a replacement worker, start to ready | 0.010 s warm (forked) | 1.500 s cold (spawned) | 0.01x |" in replacement
    assert ready.endswith("| met |") and replacement.endswith("| met |")


def _base(install_first: float = 9.0) -> dict[str, Any]:
    return {
        "questions": 10,
        "latency_ms": 1000,
        "samples": {
            "baseline mode": [5.0, 5.0, 5.0],
            "base mode": [8.0, 8.0, 8.0],
            "unchanged, one run a question": [5.0, 5.0, 5.0],
            "one broken": [15.0, 15.0, 15.0],
            "one broken, one run a question": [5.0, 5.0, 5.0],
        },
        "calls": {
            "baseline mode": [20, 20, 20],
            "base mode": [40, 40, 40],
            "unchanged, one run a question": [20, 20, 20],
            "one broken": [28, 28, 28],
            "one broken, one run a question": [20, 20, 20],
        },
        "install": {"first_s": install_first, "cached": [8.5, 8.5, 8.5], "cached_s": 8.5, "base_install_s": install_first - 8.5},
    }


def test_base_mode_is_judged_against_baseline_mode_and_its_install_is_reported_apart() -> None:
    base, install, *_ = base_mode.rows(_base())
    assert "| 8.00 s, 40 model calls | the same PR against the stored baselines 5.00 s, 20 model calls | 1.60x | <= 2.2x" in base
    assert base.endswith("| met |")
    assert install.endswith(
        "| 9.00 s with the base's venv made | 8.50 s with it cached (median of 3; the PR's venv is made on every run) | +0.50 s | none: a cost reported | reported |"
    )


def test_the_reruns_cost_per_question_against_one_run_a_question() -> None:
    simulated = {mode: {"unchanged": {"cost": 1.1}, "one_broken": {"cost": 1.2}} for mode in ("baseline", "base")}
    unchanged, broken = base_mode.rows(_base(), simulated)[2:]
    assert (
        "| 2.00 model calls, 0.500 s a question | one run a question (the base's `[gate] max-reruns = 1`): 2.00 calls, 0.500 s |"
        in unchanged
    )
    assert "1.00x calls, 1.00x time; simulated stochastic agent (bench/aa_gate.py): baseline mode 1.10x, base mode 1.10x" in unchanged
    # One broken question re-run 4 times: 28 calls for 10 questions, in sequence (3x the time).
    assert "| 2.80 model calls, 1.500 s a question |" in broken and "| 1.40x calls, 3.00x time;" in broken
    assert broken.endswith("base mode 1.20x | none: a cost reported | reported |")


def test_per_question_takes_each_side_median() -> None:
    assert base_mode.per_question([3.0, 1.0, 2.0], [20, 28, 24], 4) == {"seconds": 0.5, "calls": 6.0}


def test_a_reported_row_has_no_goal_to_judge() -> None:
    assert reported("install", "9 s", "8 s", "+1 s") == "| install | 9 s | 8 s | +1 s | none: a cost reported | reported |"


def test_bench_families_are_chosen_by_name_in_the_tables_order_and_an_unknown_name_is_refused() -> None:
    import pytest
    from bench.run import FAMILIES, STABLE, selected

    assert selected("quota,recorded", stable=False) == ("recorded", "quota")
    assert selected(None, stable=True) == STABLE
    assert selected("", stable=False) == FAMILIES
    with pytest.raises(SystemExit, match="unknown family agents: choose from recorded, agent,"):
        selected("recorded,agents", stable=False)


def test_the_agent_growth_row_judges_a_questions_time_at_ten_times_the_questions() -> None:
    from bench.rows import agent_rows

    small = {
        "questions": 200,
        "samples": {"bare": [2.6, 2.6, 2.6], "in process": [3.0, 3.1, 3.2], "workers": [1.6, 1.6, 1.6]},
        "bare_s": 2.6,
        "ours_s": 3.1,
        "ratio": 3.1 / 2.6,
        "ours_with_scoring_s": 3.2,
        "workers_s": 2.6,
        "workers_run_s": 1.6,
        "workers_ratio": 1.6 / 2.6,
    }
    per = [1.6 / 200] * 3
    growth = {
        "questions": 2000,
        "small_questions": 200,
        "samples": [0.0104, 0.0104, 0.0104],  # 30% slower a question at 2,000
        "small_samples": per,
        "workers_s": 20.8,
        "ratio": 0.0104 / (1.6 / 200),
    }
    lines = agent_rows(small, growth)
    assert len(lines) == 3 and agent_rows(small) == lines[:2]
    assert lines[2].startswith(
        "| time per question, 2,000 two-turn questions against 200, over 2 agent worker processes | 10.4 ms a question (20.8 s) | 8.0 ms a question | 1.30x |"
    )
    assert lines[2].endswith("| <= 1.1x the smaller run's time per question (flat) | missed |")
    flat = {**growth, "samples": [0.0079, 0.0080, 0.0081], "ratio": 1.0}
    assert agent_rows(small, flat)[2].endswith("| met |")
