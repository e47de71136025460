"""Metric history from the baselines' git log, in real repositories made in temp dirs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_eval_action.config import GateConfig
from agent_eval_action.models.results import DatasetResult, QuestionResult, Results, Selection
from agent_eval_action.models.scores import MetricSummary, Score
from agent_eval_action.models.verdicts import DatasetComparison
from agent_eval_action.repo.git import Git
from agent_eval_action.repo.history import metric_history, read_base_runs
from agent_eval_action.repo.results_io import dumps
from agent_eval_action.verdict.gate import rules_of
from tests.helpers.repos import new_repo

DATASET = "evaluation/datasets/cs.csv"
WHOLE = "evaluation/baselines/evaluation/datasets/cs.csv.json"  # the layout that doubled the folder both share
NEW = "evaluation/baselines/datasets/cs.csv.json"  # the dataset's path mirrored once
LEGACY = "evaluation/baselines/cs.json"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def baseline(mean: float, path: str = DATASET, questions: int = 2, *, packed: bool = False) -> str:
    """A baseline file; ``packed``: three runs a question, written as ``baseline update`` writes them."""
    runs = 3 if packed else 1
    dataset = DatasetResult(
        path=path,
        name="cs",
        format="csv",
        summary={"tool_usage_accuracy": MetricSummary(mean=mean, n=questions, unscored=0)},
        questions=[
            QuestionResult(id=f"q{i}", run=r, scores={"tool_usage_accuracy": Score(value=mean)})
            for i in range(questions)
            for r in range(runs)
        ],
    )
    return dumps(Results(tool_version="0.1.0", datasets=[dataset]), packed=packed)


def commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    for name, text in files.items():
        target = repo / name
        if text is None:
            git(repo, "rm", "-q", name)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        git(repo, "add", name)
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """main: two stem-keyed baselines, an unrelated commit, the move to the current layout, a
    stem-keyed file of another dataset named cs.csv, an update; then a PR branch rewriting its
    own baseline, and main moving on after it branched."""
    repo = tmp_path / "repo"
    new_repo(repo)
    shas = {
        "legacy 1": commit(repo, {DATASET: "q\n", LEGACY: baseline(0.5)}, "first baseline"),
        "legacy 2": commit(repo, {LEGACY: baseline(0.6)}, "baseline update"),
        "unrelated": commit(repo, {"README.md": "# shop\n"}, "docs"),
        "moved": commit(repo, {LEGACY: None, WHOLE: baseline(0.7)}, "move baselines to the repository-path layout"),
        "other dataset": commit(repo, {LEGACY: baseline(0.1, path="other/cs.csv")}, "another cs.csv's stem-keyed baseline"),
        "mirrored": commit(repo, {WHOLE: None, NEW: baseline(0.75, packed=True)}, "move baselines to the mirrored layout, runs packed"),
        "current 1": commit(repo, {NEW: baseline(0.8, packed=True)}, "baseline update"),
    }
    git(repo, "checkout", "-q", "-b", "pr")
    shas["pr"] = commit(repo, {NEW: baseline(0.05, packed=True)}, "a PR rewriting its own baseline")
    git(repo, "checkout", "-q", "main")
    shas["after"] = commit(repo, {NEW: baseline(0.9, packed=True)}, "baseline update after the PR branched")
    git(repo, "checkout", "-q", "pr")
    return repo, shas


def test_history_follows_the_older_layout_and_stops_at_the_merge_base(repo: tuple[Path, dict[str, str]]) -> None:
    path, shas = repo
    merge_base = git(path, "merge-base", "main", "HEAD")
    assert merge_base == shas["current 1"]
    history = metric_history(Git(path), merge_base, "evaluation/baselines", [DATASET], "cs")
    assert list(history) == ["tool_usage_accuracy"]
    points = history["tool_usage_accuracy"]
    # The unrelated commit and the other dataset's stem-keyed file add no point; the PR's own
    # baseline and main's later update are not at the merge-base.
    assert [(p.commit, p.value) for p in points] == [
        (shas["legacy 1"], 0.5),
        (shas["legacy 2"], 0.6),
        (shas["moved"], 0.7),
        (shas["mirrored"], 0.75),
        (shas["current 1"], 0.8),
    ]
    assert points[0].subject == "first baseline" and len(points[0].date) == 10
    assert [
        p.value for p in metric_history(Git(path), merge_base, "evaluation/baselines", [DATASET], "cs", depth=3)["tool_usage_accuracy"]
    ] == [0.75, 0.8]  # the last three commits touching the files include the other dataset's, which adds nothing


def test_history_from_a_subdirectory_names_files_from_the_root(repo: tuple[Path, dict[str, str]]) -> None:
    """A monorepo's check runs from its folder; the baseline files are still named from the root."""
    path, shas = repo
    (path / "agents").mkdir()
    history = metric_history(Git(path / "agents"), shas["current 1"], "evaluation/baselines", [DATASET], "cs")
    assert [p.value for p in history["tool_usage_accuracy"]] == [0.5, 0.6, 0.7, 0.75, 0.8]


def test_background_reads_the_base_run_and_history_at_the_merge_base(repo: tuple[Path, dict[str, str]]) -> None:
    path, shas = repo
    results = Results(
        selection=Selection(base_ref="main", merge_base=shas["current 1"], mode="changed"),
        datasets=[
            DatasetResult(path=DATASET, name="cs", format="csv", summary={"tool_usage_accuracy": MetricSummary(mean=0.3, n=2, unscored=0)})
        ],
        comparison=[DatasetComparison(dataset="cs", path=DATASET, status="compared", baseline_path=NEW)],
    )
    found = read_base_runs(results, Git(path))
    assert found.label == f"merge-base {shas['current 1'][:7]}"
    assert found.runs[DATASET].summary["tool_usage_accuracy"].mean == 0.8  # not the PR's 0.05, not main's later 0.9
    assert [(q.id, q.run) for q in found.runs[DATASET].questions] == [(f"q{i}", r) for i in range(2) for r in range(3)]  # unpacked
    assert [p.value for p in found.history[DATASET]["tool_usage_accuracy"]] == [0.5, 0.6, 0.7, 0.75, 0.8]
    assert rules_of(results, GateConfig(), {"tool_usage_accuracy": "reference"})["tool_usage_accuracy"].max_regression == 0.05


def test_a_renamed_dataset_keeps_its_history(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    new_repo(repo)
    old = "evaluation/datasets/old.csv"
    old_baseline = f"evaluation/baselines/{old}.json"
    first = commit(repo, {old: "q\n", old_baseline: baseline(0.4, path=old)}, "baseline of old.csv")
    second = commit(repo, {old_baseline: baseline(0.5, path=old)}, "baseline update")
    history = metric_history(Git(repo), "HEAD", "evaluation/baselines", [DATASET, old], "cs")
    assert [(p.commit, p.value) for p in history["tool_usage_accuracy"]] == [(first, 0.4), (second, 0.5)]
    assert metric_history(Git(repo), "HEAD", "evaluation/baselines", [DATASET], "cs") == {}


def test_no_repository_no_history(tmp_path: Path) -> None:
    assert metric_history(Git(tmp_path), "HEAD", "evaluation/baselines", [DATASET], "cs") == {}
