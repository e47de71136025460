"""A run from a subfolder of the repository works as one from the top: the config is found above,
its paths are relative to its folder, and the results go next to it (not into the package)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from agent_eval_action.repo.baseline import baseline_path
from tests.helpers.commands import calls, cli
from tests.helpers.factories import csv_row, customer_service_runs, write_csv
from tests.helpers.repos import DATASET, commit, counting_repo, git, golden, results

QUESTIONS = 6


def verdict(data: dict[str, Any]) -> tuple[Any, ...]:
    (dataset,) = data["datasets"]
    return (
        data["gate"]["outcome"],
        [(s["path"], s["reason"]) for s in data["selection"]["selected"]],
        [(c["path"], c["status"], c["baseline_path"]) for c in data["comparison"]],
        dataset["path"],
        dataset["reused"],
        {q["id"]: q["scores"]["tool_usage_accuracy"]["value"] for q in dataset["questions"]},
    )


def test_a_run_from_a_subfolder_gives_the_same_verdict_in_the_same_place(tmp_path: Path) -> None:
    repo = counting_repo(tmp_path / "repo", QUESTIONS)
    package = repo / "counting"
    # Written from inside the package, the baselines land where a run from the top writes them.
    assert calls(repo, "baseline", "update", cwd=package) == 2 * QUESTIONS
    assert (repo / baseline_path("evaluation/baselines", DATASET.as_posix())).is_file()
    assert not (package / "evaluation").exists()
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    golden(repo / DATASET, QUESTIONS, edited={2})
    git(repo, "commit", "-qam", "reword q02")

    assert calls(repo, "run", "--base", "main") == 2
    from_top = verdict(results(repo))
    shutil.rmtree(repo / "agent-eval-results")
    assert calls(repo, "run", "--base", "main", cwd=package) == 2
    assert not (package / "agent-eval-results").exists()
    assert verdict(results(repo)) == from_top
    assert from_top[0] == "passed" and from_top[4] == QUESTIONS - 1
    gate = results(repo)["gate"]  # the gate's rules from the base's config, found above as at HEAD
    assert gate["rules_from"].startswith("../agent-eval.toml at ") and not gate["config_changes"], gate

    # evaluate and validate find the config's datasets from the subfolder too.
    done = cli(package, "evaluate", env={"CALLS_FILE": str(repo / "calls.txt")})
    assert done.returncode == 0, done.stdout + done.stderr
    assert [d["path"] for d in results(repo)["datasets"]] == ["../evaluation/datasets/prices.json"]
    assert "wrote ../agent-eval-results/results.json" in done.stdout


def test_the_config_in_pyproject_is_found_above_and_a_nearer_one_wins(tmp_path: Path) -> None:
    repo = counting_repo(tmp_path / "repo", QUESTIONS)
    (repo / "agent-eval.toml").unlink()
    (repo / "pyproject.toml").write_text('[project]\nname = "prices"\n\n[tool.agent-eval]\ndatasets = ["evaluation/datasets/*.json"]\n')
    (repo / "counting" / "pyproject.toml").write_text('[project]\nname = "counting"\n')  # no table: not a config
    done = cli(repo / "counting", "evaluate", "--output-dir", "here")
    assert done.returncode == 2 and "this dataset has no recorded runs" in done.stderr, done.stdout + done.stderr
    assert (repo / "counting" / "here" / "results.json").is_file()  # --output-dir is the user's: from the working directory
    (repo / "counting" / "agent-eval.toml").write_text('datasets = ["nothing/*.json"]\n')
    nearer = cli(repo / "counting", "evaluate")
    assert nearer.returncode == 2 and "nothing/*.json: matched no dataset files" in nearer.stderr
    assert (repo / "counting" / "agent-eval-results" / "results.json").is_file()  # next to the config that was used


def test_without_a_config_the_defaults_are_the_repository_top(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "evaluation" / "datasets").mkdir(parents=True)
    write_csv(repo / "evaluation" / "datasets" / "runs.csv", [csv_row(run) for run in customer_service_runs()])
    done = cli(repo / "app", "evaluate")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [d["path"] for d in results(repo)["datasets"]] == ["../evaluation/datasets/runs.csv"]
    assert not (repo / "app" / "agent-eval-results").exists()
