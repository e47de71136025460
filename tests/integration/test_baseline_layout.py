"""Where a baseline lives (the dataset's path mirrored once under the baselines folder) and how
its runs are stored (a question's runs on one line, what they share once), in real git
repositories: a baseline of the older layout is read where it is, and the next `baseline update`
moves it; the bundled example's baseline is the packed form, small."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from agent_eval_action.repo.results_io import dumps, parse_results
from tests.helpers.commands import cli
from tests.helpers.factories import Run, runs, write_dataset
from tests.helpers.repos import ROOT, commit, git, new_repo, results

DATASET = "evaluation/datasets/cs_runs.csv"
MIRRORED = "evaluation/baselines/datasets/cs_runs.csv.json"
WHOLE = "evaluation/baselines/evaluation/datasets/cs_runs.csv.json"  # the older layout: the folder both share doubled
EXAMPLE = ROOT / "examples" / "customer_service" / "evaluation" / "baselines" / "datasets" / "customer_service_golden.json"


def three_runs_each(broken: set[int] | None = None) -> list[Run]:
    """8 questions recorded three times each (consecutive rows of one question id)."""
    return [dataclasses.replace(run, session_id=f"s-{run.qid}-{k}") for run in runs(8, broken=broken) for k in range(3)]


def packed_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line.strip().rstrip(",")) for line in text.splitlines() if line.strip().startswith('{"id":')]


def test_an_older_layouts_baseline_is_read_where_it_is_then_moved_and_packed(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.csv"]\n')
    write_dataset(repo / DATASET, three_runs_each())
    commit(repo, "dataset")
    update = cli(repo, "baseline", "update")
    assert update.returncode == 0, update.stderr
    assert f"wrote {MIRRORED}" in update.stdout, update.stdout
    text = (repo / MIRRORED).read_text()
    entries = packed_lines(text)
    assert len(entries) == 8 and all(len(e["runs"]) == 3 for e in entries)  # type: ignore[arg-type]
    whole = dumps(parse_results(text, MIRRORED, what="baseline"))  # one line a run, as the older files were
    assert len(text) < len(whole) / 2

    # main as an older version left it: the same runs, one line each, at the whole-path file.
    (repo / WHOLE).parent.mkdir(parents=True)
    (repo / WHOLE).write_text(whole)
    (repo / MIRRORED).unlink()
    commit(repo, "baselines (older layout)")

    git(repo, "checkout", "-q", "-b", "pr")
    write_dataset(repo / DATASET, three_runs_each(broken={0, 2, 4, 6}))
    commit(repo, "regress")
    before = cli(repo, "check", "--base", "main", "--no-comment")
    assert before.returncode == 1, before.stdout + before.stderr
    (compared,) = results(repo)["comparison"]
    assert compared["status"] == "compared" and compared["baseline_path"] == WHOLE
    failed_before = sorted(f["question"] or "" for f in results(repo)["gate"]["failures"])

    git(repo, "checkout", "-q", "main")
    moved = cli(repo, "baseline", "update")
    assert moved.returncode == 0, moved.stderr
    assert f"wrote {MIRRORED}" in moved.stdout and f"moved from {WHOLE}" in moved.stdout, moved.stdout
    assert not (repo / WHOLE).exists() and len(packed_lines((repo / MIRRORED).read_text())) == 8
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "baselines moved")

    git(repo, "checkout", "-q", "pr")
    git(repo, "rebase", "-q", "main")
    after = cli(repo, "check", "--base", "main", "--no-comment")
    assert after.returncode == 1, after.stdout + after.stderr
    (compared,) = results(repo)["comparison"]
    assert compared["status"] == "compared" and compared["baseline_path"] == MIRRORED
    assert sorted(f["question"] or "" for f in results(repo)["gate"]["failures"]) == failed_before  # the same runs, read packed


def test_the_bundled_examples_baseline_is_packed_and_small() -> None:
    """`bash scripts/example-baseline.sh` writes it: 10 runs of each question (baseline-runs), a two-turn
    question's run well under 10 KB (8.9 KB each, one line a run, before)."""
    text = EXAMPLE.read_text()
    entries = packed_lines(text)
    assert {e["id"] for e in entries} >= {"q_appointment_01", "q_cart_01"}
    for line, entry in zip([x for x in text.splitlines() if x.strip().startswith('{"id":')], entries, strict=True):
        runs_of = entry["runs"]
        assert isinstance(runs_of, list) and len(runs_of) == 10
        shared = entry["shared"]
        assert isinstance(shared, dict)
        if len(shared["transcript"]["turns"]) == 2:
            assert len(line.encode()) / len(runs_of) <= 10_000
        assert len(line.encode()) / len(runs_of) <= 3_000, entry["id"]  # what the runs share, once
