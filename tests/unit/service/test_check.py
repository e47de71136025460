"""The PR check in process, in real git repositories: its plan made once, and every stage agreeing
with it (the announcement, the model-call cache, what it compares with, results.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_eval_action.config import load_config
from agent_eval_action.models.plan import CheckPlan
from agent_eval_action.repo.results_io import read_results, write_results
from agent_eval_action.service.check import run_check
from tests.helpers.factories import runs, write_dataset
from tests.helpers.repos import commit, counting_repo, git, new_repo

QUESTIONS = 2


def calls(file: Path) -> int:
    return len(file.read_text().splitlines()) if file.exists() else 0


def test_without_a_merge_base_the_base_does_not_run_and_the_model_cache_stays_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """compare-with = "base" asked, no base branch: the plan compares with the stored baselines,
    announces nothing of a base run, and keeps the model-call cache (a second check replays)."""
    repo = counting_repo(tmp_path / "repo", QUESTIONS)
    with (repo / "agent-eval.toml").open("a") as config:
        config.write('compare-with = "base"\nmodel-cache = "model-cache"\n')
    (repo / ".gitignore").write_text("agent-eval-results/\ncalls.txt\n__pycache__/\nmodel-cache/\n")
    commit(repo, "compare with the base")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("CALLS_FILE", str(repo / "calls.txt"))
    monkeypatch.delenv("GITHUB_BASE_REF", raising=False)

    heard: list[CheckPlan] = []
    outcome = run_check(load_config(), cwd=repo, base=None, announce=heard.append)
    (plan,) = heard
    assert plan.asked == "base" and plan.stored and plan.merge_base is None and plan.base_runner is None
    assert plan.model_cache and plan.runner == "workers"
    results = outcome.results
    assert results.plan == plan and results.compare_with == "baseline" and results.base_run is None and results.drift is None
    assert results.gate is not None and results.gate.outcome == "passed"
    assert plan.fallback is not None and results.gate.notes[-1] == plan.fallback
    first = calls(repo / "calls.txt")
    assert first == 2 * QUESTIONS  # each question: the tool call, then the answer

    again = run_check(load_config(), cwd=repo, base=None)
    # The cache was on, as the plan said: the second check asked the model nothing.
    assert calls(repo / "calls.txt") == first
    assert again.results.run is not None and again.results.plan == plan


def test_the_plan_is_saved_in_results_json_and_older_files_still_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A check of recorded runs against the stored baseline: its plan in the results, read back
    as written; a file written before plans were saved reads with the plan its compare_with implies."""
    repo = new_repo(tmp_path / "repo", {"agent-eval.toml": 'datasets = ["data/*.json"]\n'})
    write_dataset(repo / "data" / "runs.json", runs(4))
    commit(repo, "recorded runs")
    git(repo, "checkout", "-qb", "pr")
    monkeypatch.chdir(repo)

    outcome = run_check(load_config(), cwd=repo, base="main", evaluate_all=True)
    plan = outcome.results.plan
    assert plan is not None and plan.stored and plan.merge_base == git(repo, "rev-parse", "main").strip()
    assert plan.runner == "none" and not plan.timings_gated and plan.fallback is None
    written = write_results(outcome.results, tmp_path / "results.json")
    assert read_results(written).plan == plan

    data = json.loads(written.read_text())
    assert data["plan"]["mode"] == "baseline" and data["compare_with"] == "baseline"
    del data["plan"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    old = read_results(tmp_path / "old.json").plan
    assert old is not None and old.stored and not old.timings_gated
