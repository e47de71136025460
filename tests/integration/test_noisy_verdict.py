"""The verdict on a non-deterministic agent, end to end through the CLI with a real ADK runner
(tests/apps/stochastic, at pass rates of 0 and 1 only: nothing depends on chance): a baseline of
5 runs a question that an unchanged dataset does not re-run, an unchanged PR that costs one run a
question and passes, a broken question re-run until it fails by name, and a missing API key that
is "could not be checked" (exit 3) with its cause said once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.commands import run_cli
from tests.helpers.repos import commit, git, new_repo, stored

ROOT = Path(__file__).resolve().parents[2]
ITEMS = ["apple", "pear", "plum", "fig", "kiwi", "lime"]


def cli(repo: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], int]:
    """The CLI's run and how many model calls it made."""
    calls = repo.parent / "calls.txt"
    calls.write_text("")
    full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "STOCHASTIC_"))}
    full.update({"PYTHONPATH": str(ROOT / "src"), "CALLS_FILE": str(calls), **(env or {})})
    done = run_cli(args, cwd=repo, env=full)
    return done, len(calls.read_text().splitlines())


def results(repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo / "agent-eval-results" / "results.json").read_text())
    return data


def assert_intervals_of_their_runs(data: dict[str, Any]) -> None:
    """Each metric's 95% interval in the results is the bootstrap of its runs' values, as a
    summary of them gives it: the re-runs' rounds summarize without intervals, the last adds them."""
    from agent_eval_action.models.stored import rounded
    from agent_eval_action.scoring.aggregate import bootstrap_mean_ci, seed_for

    checked = 0
    for dataset in data["datasets"]:
        for name, summary in dataset["summary"].items():
            values = [q["scores"][name]["value"] for q in dataset["questions"] if q["scores"].get(name, {}).get("value") is not None]
            expected = bootstrap_mean_ci(values, seed_for(dataset["name"], name))
            assert summary.get("ci95") == (list(rounded(expected)) if expected is not None else None), name
            checked += expected is not None
    assert checked >= 5


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("noisy") / "repo"
    repo.mkdir()
    shutil.copytree(ROOT / "tests" / "apps" / "stochastic", repo / "stochastic")
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.json"]\nagent = "stochastic.agent:root_agent"\n')
    questions = [
        {
            "id": item,
            "user_inputs": [f"price of {item}"],
            "agents_evaluated": ["stochastic"],
            "reference_data": {"reference_tool_interactions": [{"tool_name": "lookup", "input_arguments": {"item": item}}]},
        }
        for item in ITEMS
    ]
    (repo / "evaluation" / "datasets").mkdir(parents=True)
    (repo / "evaluation" / "datasets" / "prices.json").write_text(json.dumps({"golden_questions": questions}))
    new_repo(repo)
    commit(repo, "agent and dataset")
    done, calls = cli(repo, "baseline", "update")
    assert done.returncode == 0, done.stdout + done.stderr
    assert calls == len(ITEMS) * 10 * 2  # baseline-runs = 10, two model calls a run
    baseline = stored((repo / "evaluation" / "baselines" / "datasets" / "prices.json").read_text())
    assert sorted(q["run"] for q in baseline["datasets"][0]["questions"] if q["id"] == "plum") == list(range(10))
    commit(repo, "baseline")
    again, calls = cli(repo, "baseline", "update")
    # An unchanged dataset refreshes one run a question (the oldest makes way): a record ages out.
    assert again.returncode == 0 and calls == len(ITEMS) * 2
    refreshed = stored((repo / "evaluation" / "baselines" / "datasets" / "prices.json").read_text())
    assert sorted(q["run"] for q in refreshed["datasets"][0]["questions"] if q["id"] == "plum") == list(range(10))
    commit(repo, "baseline refreshed")
    return repo


@pytest.fixture
def pr(template: Path, tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(template, repo, symlinks=True)
    git(repo, "checkout", "-q", "-b", "pr")
    agent = repo / "stochastic" / "agent.py"
    agent.write_text(agent.read_text() + "\n# a comment: the agent's code changed, every question runs\n")
    commit(repo, "touch the agent")
    return repo


def test_an_unchanged_pr_passes_at_one_run_a_question(pr: Path) -> None:
    outputs = pr.parent / "outputs.txt"
    done, calls = cli(pr, "check", "--base", "main", env={"GITHUB_OUTPUT": str(outputs)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert calls == len(ITEMS) * 2
    assert results(pr)["gate"]["outcome"] == "passed"
    assert "verdict<<" in outputs.read_text() and "\npassed\n" in outputs.read_text()


def test_a_broken_question_is_rerun_until_it_fails_by_name(pr: Path) -> None:
    done, calls = cli(pr, "check", "--base", "main", env={"STOCHASTIC_RATES": json.dumps({"plum": 0.0})})
    assert done.returncode == 1, done.stdout + done.stderr
    gate = results(pr)["gate"]
    # One failure a metric plum fell on (the tool call it now gets wrong), each saying its runs.
    assert {(f["rule"], f["question"]) for f in gate["failures"]} == {("question_fall", "plum")}
    assert "tool_usage_accuracy" in {f["metric"] for f in gate["failures"]}
    said = "plum: 0 of 5 runs pass, 10 of 10 on the base: p < 0.001"
    assert all(said in f["message"] for f in gate["failures"])
    # Re-runs only where in doubt: plum four times more (p = 1/3003 is the first under the
    # questions' half of alpha shared by the 6 questions that could fall, 0.005 / 6), nothing else.
    assert calls == (len(ITEMS) + 4) * 2
    assert_intervals_of_their_runs(results(pr))
    # The comment says it in runs that pass, the question once: never a pass rate under a metric's name.
    comment = (pr / "agent-eval-results" / "comment.md").read_text()
    assert "plum passes 0 of 5 runs, 10 of 10 on the base (p < 0.001)" in comment.replace("\\", "").replace("&lt;", "<")


def test_no_api_key_could_not_be_checked_with_the_cause_said_once(pr: Path) -> None:
    done, _ = cli(pr, "check", "--base", "main", env={"STOCHASTIC_NO_KEY": "1"})
    assert done.returncode == 3, done.stdout + done.stderr
    gate = results(pr)["gate"]
    assert gate["outcome"] == "unchecked" and gate["failures"] == []
    assert gate["infrastructure"].startswith("no API key or credentials for the model: set GOOGLE_API_KEY")
    comment = (pr / "agent-eval-results" / "comment.md").read_text().replace("\\", "")
    assert comment.count("Missing key inputs") == 0 and "set GOOGLE_API_KEY" in comment


def test_base_mode_compares_with_this_jobs_base_runs_and_fails_a_broken_question_the_same(pr: Path) -> None:
    """compare-with = "base": the base's agent runs each question once now, and a question in
    doubt runs once more on both sides; the stored runs never join the base's record (one run now
    cannot show them stale: they are the drift, measured apart)."""
    agent = pr / "stochastic" / "agent.py"
    agent.write_text(agent.read_text() + 'RATES["plum"] = 0.0  # the PR breaks plum\n')
    commit(pr, "break plum")
    done, calls = cli(pr, "check", "--base", "main", "--compare-with", "base")
    assert done.returncode == 1, done.stdout + done.stderr
    data = results(pr)
    assert data["compare_with"] == "base"
    failures = data["gate"]["failures"]
    assert {(f["rule"], f["question"]) for f in failures} == {("question_fall", "plum")}, failures
    # 0 of 6 against 6 of 6: p = 1/924, not yet 0.005 / 6 (the questions' half of alpha shared by
    # the 6 that could fall); 0 of 7 against 7 of 7: p = 1/3432.
    assert "plum: 0 of 7 runs pass, 7 of 7 on the base: p < 0.001" in failures[0]["message"]
    (test,) = [c["pass_test"] for c in data["comparison"]]
    assert (test["baseline_runs"], test["questions"]) == (len(ITEMS) + 6, len(ITEMS))
    # Both sides run every question once, and plum six times more.
    assert data["base_run"]["reruns"] == 6
    assert_intervals_of_their_runs(data)
    assert calls == (len(ITEMS) + 6) * 2 * 2
    assert "base re-run: 6 questions × 1 run + 6 re-runs of the questions in doubt, 24 model calls" in done.stdout + done.stderr


def test_a_budget_that_stops_the_reruns_of_a_fall_could_not_be_checked(pr: Path) -> None:
    """The re-runs spend the run's budget: with none left after the first runs, a question that
    fails its run where every base run passed cannot be confirmed, and a fall the money stopped
    is never a pass: the check could not be checked (exit 3), naming it and what would decide it."""
    rates = {"STOCHASTIC_RATES": json.dumps({"plum": 0.0})}
    done, calls = cli(pr, "check", "--base", "main", "--max-model-calls", str(len(ITEMS) * 2), env=rates)
    assert calls == len(ITEMS) * 2
    gate = results(pr)["gate"]
    assert gate["outcome"] == "unchecked" and done.returncode == 3, done.stdout + done.stderr
    (line,) = gate["unchecked"]
    assert line.startswith("prices: question plum: 0 of 1 run passes, 10 of 10 on the base: p = 0.091; re-runs stopped at 1")
    assert done.stdout.startswith("gate: COULD NOT BE CHECKED - the re-runs stopped before 1 question")
