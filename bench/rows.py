"""The rows of ``make bench``'s table for the measurements of bench/measure.py, bench/views_scale.py,
bench/pr_reuse.py and bench/cli_start.py: one function a family, each figure with its goal and
verdict (bench/verdicts.py)."""

from __future__ import annotations

from typing import Any

from bench.goals import GOALS
from bench.measure import SUITE
from bench.verdicts import median, ratio, row


def recorded_rows(r: dict[str, Any], big: dict[str, Any] | None, long: dict[str, Any] | None = None) -> list[str]:
    """Scoring recorded rows against the parse floor, peak memory, (with ``big``) the growth per
    row, and (with ``long``) rows whose answers are as long as real ones."""
    runs = tuple(run for run in (r, big, long) if run is not None)
    lines = [
        row(
            f"score {run['rows']:,} recorded rows"
            + (f" with {run['answer_words']}-word answers and references" if run.get("answer_words") else "")
            + f" ({run['file_mb']:.0f} MB)",
            f"{run['ours_s']:.2f} s, peak {run['ours_peak_mb']:.0f} MB",
            f"parse floor {run['floor_s']:.2f} s, peak {run['floor_peak_mb']:.0f} MB",
            run["ratio"],
            GOALS["recorded"],
            run["samples"],
        )
        for run in runs
    ]
    peak = max(run["ours_peak_mb"] for run in runs)
    # Memory is not a timing: judged as measured, the largest peak of every run.
    lines.append(
        row(
            "peak memory scoring recorded rows (main process + largest worker)",
            f"{peak:.0f} MB",
            "",
            peak,
            GOALS["peak_memory"],
            {},
            shown=f"{peak:.0f} MB",
        )
    )
    if big is not None:
        # Time per row at 20,000 rows over time per row at 2,000, each run's samples alike.
        growth = (big["ours_s"] / r["ours_s"]) / (big["rows"] / r["rows"])
        lines.append(
            row(
                f"time per row, {big['rows']:,} recorded rows against {r['rows']:,}",
                f"{big['ours_s'] / big['rows'] * 1000:.2f} ms a row",
                f"{r['ours_s'] / r['rows'] * 1000:.2f} ms a row",
                growth,
                GOALS["recorded_growth"],
                {f"ours at {r['rows']:,}": r["samples"]["ours"], f"ours at {big['rows']:,}": big["samples"]["ours"]},
            )
        )
    return lines


def agent_rows(a: dict[str, Any], growth: dict[str, Any] | None = None) -> list[str]:
    """Our runner against a bare loop over Runner.run_async, in process and over two workers;
    with ``growth``, the time a question takes over two workers at 10x the questions against the
    smaller run's."""
    lines = [
        row(
            f"run {a['questions']} two-turn questions, 50 ms model latency, concurrency 32",
            f"{a['ours_s']:.2f} s ({a['ours_with_scoring_s']:.2f} s with scoring), in process",
            f"bare asyncio loop over Runner.run_async {a['bare_s']:.2f} s",
            a["ratio"],
            GOALS["agent_in_process"],
            {k: a["samples"][k] for k in ("bare", "in process")},
        ),
        row(
            "the same over 2 agent worker processes (the default here)",
            f"{a['workers_run_s']:.2f} s once started ({a['workers_s']:.2f} s with their start and scoring)",
            f"the bare single-process loop {a['bare_s']:.2f} s",
            a["workers_ratio"],
            GOALS["agent_workers"],
            {k: a["samples"][k] for k in ("bare", "workers")},
        ),
    ]
    if growth is None:
        return lines
    lines.append(
        row(
            f"time per question, {growth['questions']:,} two-turn questions against {growth['small_questions']}, over 2 agent worker processes",
            f"{median(growth['samples']) * 1000:.1f} ms a question ({growth['workers_s']:.1f} s)",
            f"{median(growth['small_samples']) * 1000:.1f} ms a question",
            growth["ratio"],
            GOALS["agent_growth"],
            {f"ours at {growth['small_questions']}": growth["small_samples"], f"ours at {growth['questions']:,}": growth["samples"]},
        )
    )
    return lines


def views_rows(v: dict[str, Any]) -> list[str]:
    """The PR check of many recorded questions: regressed against none, and 4x the questions."""
    many, none, few = (v["samples"][k] for k in ("many", "none", "few"))
    share = f"{v['regressed_share']:.0%}"
    return [
        row(
            f"PR check (`check --base main`, whole process) of {v['questions']:,} recorded questions, {share} regressed",
            f"{median(many):.2f} s ({v['regressed']['many']:,} questions shown regressed)",
            f"the same with none regressed {median(none):.2f} s",
            ratio(many, none),
            GOALS["views_regressed"],
            {"regressed": many, "none": none},
        ),
        row(
            f"the same, {v['questions']:,} questions against {v['small']:,}",
            f"{median(many):.2f} s",
            f"{v['small']:,} questions, {share} regressed, {median(few):.2f} s",
            ratio(many, few),
            GOALS["views_scale"],
            {f"{v['questions']:,}": many, f"{v['small']:,}": few},
        ),
    ]


def pr_reuse_rows(p: dict[str, Any]) -> list[str]:
    """A one-question PR with reuse against the same PR with --no-reuse: model calls."""
    per_question = p["full_calls"] / p["questions"]
    faster = f"{p['full_calls'] / max(p['one_question_calls'], 1):.0f}x fewer calls, {p['full_s'] / p['one_question_s']:.1f}x faster"
    return [
        row(
            f"PR check of a PR rewording 1 of {p['questions']} questions, 1 s model latency",
            f"{p['one_question_s']:.2f} s, {p['one_question_calls']} model calls (reuse)",
            f"the same PR with --no-reuse: {p['full_s']:.2f} s, {p['full_calls']} model calls",
            p["one_question_calls"] / per_question,
            GOALS["pr_reuse"],
            # The goal is on model calls, which the model counts: the same every run.
            {"calls with reuse": p["calls"]},
            shown=f"{p['one_question_calls'] / per_question:g}x ({faster})",
        )
    ]


def judges_rows(j: dict[str, Any]) -> list[str]:
    return [
        row(
            "200 judge calls, 200 ms judge latency, concurrency 16",
            f"{j['seconds']:.2f} s",
            f"ideal ceil(200/16) x 0.2 s = {j['ideal_seconds']:.2f} s",
            j["ratio"],
            GOALS["judges"],
            j["samples"],
        )
    ]


def cli_rows(c: dict[str, Any]) -> list[str]:
    return [
        row(
            "CLI start (`--help`)",
            f"{c['help_s'] * 1000:.0f} ms",
            f"bare interpreter {c['bare_s'] * 1000:.0f} ms",
            c["overhead_ms"],
            GOALS["cli_start"],
            c["samples"],
            shown=f"{c['overhead_ms']:+.0f} ms",
        )
    ]


def suite_rows(t: dict[str, Any]) -> list[str]:
    """The test suite, one run, judged as measured (it is minutes long); a failing suite misses whatever its time."""
    seconds = t["seconds"] if t["exit_code"] == 0 else float("inf")
    return [
        row(
            "the test suite (`make test`'s pytest: " + " ".join(SUITE[3:7]) + ")",
            f"{t['seconds']:.0f} s: {t['summary']}",
            "",
            seconds,
            GOALS["suite"],
            {},
            shown=f"{t['seconds']:.0f} s",
        )
    ]
