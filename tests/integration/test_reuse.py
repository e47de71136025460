"""Paying only for what changed: question-level reuse in real git repositories, with a scripted
model that counts its calls across the worker processes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.commands import cli
from tests.helpers.repos import DATASET, commit, counting_repo, git, golden, pr_branch
from tests.helpers.values import timings

LAST_OUTPUT = [""]  # what the last CLI run printed


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: 40 questions and their baselines, made once per test process (the update runs the agent)."""
    repo = counting_repo(tmp_path_factory.mktemp("reuse") / "repo", 40)
    assert calls(repo, "baseline", "update") == 80  # two model calls a question
    commit(repo, "baselines")
    return repo


@pytest.fixture
def repo(template: Path, tmp_path: Path) -> Path:
    return pr_branch(template, tmp_path)


def calls(repo: Path, *args: str, code: int = 0) -> int:
    """Runs the CLI and returns how many model calls it made."""
    counter = repo / "calls.txt"
    counter.write_text("")
    done = cli(repo, *args, env={"CALLS_FILE": str(counter)})
    assert done.returncode == code, done.stdout + done.stderr
    LAST_OUTPUT[:] = [done.stdout]
    return len(counter.read_text().splitlines())


def dataset(repo: Path) -> dict[str, Any]:
    result: dict[str, Any]
    (result,) = json.loads((repo / "agent-eval-results" / "results.json").read_text())["datasets"]
    return result


def test_a_pr_editing_one_question_runs_one_and_reuses_39(repo: Path) -> None:
    golden(repo / DATASET, 40, edited={7})
    git(repo, "commit", "-qam", "reword q07")
    assert calls(repo, "run", "--base", "main") == 2
    result = dataset(repo)
    assert result["reused"] == 39
    by_id = {q["id"]: q for q in result["questions"]}
    assert by_id["q07"]["reused"] is False and by_id["q07"]["content_hash"]
    assert all(q["reused"] for qid, q in by_id.items() if qid != "q07")
    assert result["summary"]["tool_usage_accuracy"]["n"] == 40  # compared as today, all 40
    comment = (repo / "agent-eval-results" / "comment.md").read_text()
    assert "39 question runs reused from the baseline, 1 ran." in comment


def test_an_agent_change_runs_all_40(repo: Path) -> None:
    agent = repo / "counting" / "agent.py"
    agent.write_text(agent.read_text().replace('"plum": 3', '"plum": 4'))
    golden(repo / DATASET, 40, edited={7})
    git(repo, "commit", "-qam", "plum price and a reworded question")
    assert calls(repo, "run", "--base", "main") == 80
    assert dataset(repo)["reused"] == 0


def test_no_reuse_runs_everything_selected(repo: Path) -> None:
    golden(repo / DATASET, 40, edited={7})
    git(repo, "commit", "-qam", "reword q07")
    assert calls(repo, "run", "--base", "main", "--no-reuse") == 80
    assert dataset(repo)["reused"] == 0


def test_a_stale_baseline_is_not_reused(repo: Path) -> None:
    """Agent code changed on main after the baselines were written: their fingerprint is not HEAD's."""
    git(repo, "checkout", "-q", "main")
    agent = repo / "counting" / "agent.py"
    agent.write_text(agent.read_text().replace('"fig"', '"fig"').replace("return {", "return  {"))
    git(repo, "commit", "-qam", "agent tweak without a baseline update")
    git(repo, "checkout", "-q", "pr")
    git(repo, "merge", "-q", "main")
    golden(repo / DATASET, 40, edited={7})
    git(repo, "commit", "-qam", "reword q07")
    # Every question runs again, and the record, which main's change left behind, is not blamed
    # on the PR nor taken for the base's: the check says so (exit 3).
    assert calls(repo, "run", "--base", "main", code=3) == 80
    assert "the stored baseline of evaluation/datasets/prices.json is not the base's: the base changed counting/agent.py" in LAST_OUTPUT[0]


def scores_of(path: Path) -> dict[str, dict[str, float | None]]:
    (result,) = json.loads(path.read_text())["datasets"]
    return {q["id"]: {m: s["value"] for m, s in q["scores"].items() if m not in timings()} for q in result["questions"]}


def test_the_model_call_cache_replays_unchanged_calls_and_recalls_only_diverged_conversations(repo: Path) -> None:
    golden(repo / "evaluation" / "datasets" / "small.json", 12)
    args = ("evaluate", "evaluation/datasets/small.json", "--model-cache", ".cache/models", "--output-dir")
    assert calls(repo, *args, "first") == 24
    first = dataset_at(repo / "first")
    assert first["model_calls"] == {"live": 24, "replayed": 0}
    assert calls(repo, *args, "second") == 0  # unchanged code: no model call at all
    assert dataset_at(repo / "second")["model_calls"] == {"live": 0, "replayed": 24}
    assert scores_of(repo / "second" / "results.json") == scores_of(repo / "first" / "results.json")
    # A tool whose answer changed for plums: the three plum conversations diverge at their second
    # model call (the tool's answer is in the request); every other call is replayed.
    agent = repo / "counting" / "agent.py"
    agent.write_text(agent.read_text().replace('"plum": 3', '"plum": 4'))
    assert calls(repo, *args, "third") == 3
    assert dataset_at(repo / "third")["model_calls"] == {"live": 3, "replayed": 21}
    assert "model calls: 3 to the model, 21 replayed from the cache" in LAST_OUTPUT[0]
    # A corrupt entry is a miss, never a crash.
    entries = sorted((repo / ".cache" / "models").rglob("*.json"))
    assert entries and all(json.loads(e.read_text())["version"] == 2 for e in entries)
    for entry in entries:
        entry.write_text("{ not json")
    assert calls(repo, *args, "fourth") == 24


def dataset_at(out: Path) -> dict[str, Any]:
    result: dict[str, Any]
    (result,) = json.loads((out / "results.json").read_text())["datasets"]
    return result
