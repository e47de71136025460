"""A verdict that is never green by accident: each case ran green (or contradicted itself) before,
reproduced here in real git repositories with the CLI and the action entrypoint as subprocesses."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import recorded_repo
from tests.helpers.commands import action, base_env, cli
from tests.helpers.factories import runs, write_dataset
from tests.helpers.repos import commit, git, new_repo, stored

BROKEN = {0, 2, 4, 6, 8}
# main with one recorded dataset and its committed baseline (made once per test process), and a copy on branch pr.
template = recorded_repo.template
repo = recorded_repo.repo


def results(where: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((where / "agent-eval-results" / "results.json").read_text())
    return data


def outputs(file: Path) -> dict[str, str]:
    """$GITHUB_OUTPUT's name<<DELIM blocks."""
    values: dict[str, str] = {}
    lines = file.read_text().splitlines()
    i = 0
    while i < len(lines):
        name, delimiter = lines[i].split("<<", 1)
        end = lines.index(delimiter, i + 1)
        values[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return values


def test_a_dataset_glob_that_matches_nothing_is_bad_input(repo: Path) -> None:
    (repo / "app" / "agent.py").write_text("root_agent = 'v2'\n")
    commit(repo, "agent")
    done = cli(repo, "run", "--base", "main", "--datasets", "evaluation/dataset/*.csv")  # a typo: dataset, not datasets
    assert done.returncode == 2, done.stdout + done.stderr
    assert "evaluation/dataset/*.csv: matched no dataset files" in done.stderr
    gate = results(repo)["gate"]
    assert gate["outcome"] == "unchecked" and gate["passed"] is False
    assert "gate: COULD NOT BE CHECKED" in done.stdout
    # The same typo in the config file.
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.csv", "evaluation/dataset/*.jsonl"]\n')
    commit(repo, "config typo")
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 2 and "evaluation/dataset/*.jsonl: matched no dataset files" in done.stderr
    assert results(repo)["datasets"][0]["path"] == "evaluation/datasets/cs_runs.csv"  # the valid part is still evaluated


def test_a_renamed_and_broken_dataset_is_compared_with_its_old_baseline(repo: Path) -> None:
    git(repo, "mv", "evaluation/datasets/cs_runs.csv", "evaluation/datasets/support_runs.csv")
    write_dataset(repo / "evaluation" / "datasets" / "support_runs.csv", runs(broken=BROKEN))
    commit(repo, "rename and break")
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 1, done.stdout + done.stderr
    data = results(repo)
    (selected,) = data["selection"]["selected"]
    assert selected["renamed_from"] == "evaluation/datasets/cs_runs.csv"
    assert selected["reason"] == "renamed from evaluation/datasets/cs_runs.csv in this PR"
    (comparison,) = data["comparison"]
    assert comparison["status"] == "compared" and comparison["renamed_from"] == "evaluation/datasets/cs_runs.csv"
    assert comparison["baseline_path"] == "evaluation/baselines/datasets/cs_runs.csv.json"
    drops = [f for f in data["gate"]["failures"] if f["rule"] == "question_fall"]
    assert "q_cart_01_00" in {f["question"] for f in drops}
    assert all(f["dataset"] == "evaluation/datasets/support_runs.csv" for f in drops)


def test_two_datasets_with_one_file_name_keep_their_own_baselines(tmp_path: Path) -> None:
    repo = new_repo(
        tmp_path / "repo",
        {
            "agent-eval.toml": 'datasets = ["evaluation/**/*.csv"]\nbaselines-dir = "baselines"\n',
            "evaluation/a/cs.csv": runs(6),
            "evaluation/b/cs.csv": runs(12),
        },
    )
    commit(repo, "datasets")
    update = cli(repo, "baseline", "update")
    assert update.returncode == 0, update.stderr
    assert "wrote baselines/evaluation/a/cs.csv.json" in update.stdout and "wrote baselines/evaluation/b/cs.csv.json" in update.stdout
    for name, count in (("a", 6), ("b", 12)):
        stored = json.loads((repo / "baselines" / "evaluation" / name / "cs.csv.json").read_text())
        assert stored["datasets"][0]["path"] == f"evaluation/{name}/cs.csv" and len(stored["datasets"][0]["questions"]) == count
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    write_dataset(repo / "evaluation" / "b" / "cs.csv", runs(12, broken=BROKEN))
    commit(repo, "break b")
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 1, done.stdout + done.stderr
    data = results(repo)
    (comparison,) = data["comparison"]
    assert comparison["path"] == "evaluation/b/cs.csv" and comparison["baseline_path"] == "baselines/evaluation/b/cs.csv.json"
    assert comparison["added_questions"] == [] and comparison["removed_questions"] == []  # b's 12 questions, not a's 6
    assert {f["dataset"] for f in data["gate"]["failures"]} == {"evaluation/b/cs.csv"}


def test_stem_keyed_baselines_are_read_for_their_own_dataset_and_moved_by_baseline_update(tmp_path: Path) -> None:
    legacy = {"schema_version": 1, "tool_version": "0.1.0", "datasets": []}
    repo = new_repo(
        tmp_path / "repo",
        {
            "agent-eval.toml": 'datasets = ["evaluation/datasets/*.csv", "other/*.csv"]\n',
            "evaluation/datasets/cs_runs.csv": runs(),
            "other/cs_runs.csv": runs(6),
        },
    )
    commit(repo, "datasets")
    assert cli(repo, "evaluate", "evaluation/datasets/cs_runs.csv").returncode == 0
    evaluated = results(repo)["datasets"][0]
    assert evaluated["path"] == "evaluation/datasets/cs_runs.csv"
    # Version 1 wrote evaluation/baselines/<stem>.json: one file for both cs_runs datasets.
    (repo / "evaluation" / "baselines").mkdir(parents=True)
    (repo / "evaluation" / "baselines" / "cs_runs.json").write_text(json.dumps({**legacy, "datasets": [evaluated]}))
    (repo / "agent-eval-results" / "results.json").unlink()
    commit(repo, "legacy baseline")
    git(repo, "checkout", "-q", "-b", "pr")
    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", runs(broken=BROKEN))
    write_dataset(repo / "other" / "cs_runs.csv", runs(6, broken={0, 1, 2, 3, 4, 5}))
    commit(repo, "break both")
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 1, done.stdout + done.stderr
    by_path = {c["path"]: c for c in results(repo)["comparison"]}
    assert by_path["evaluation/datasets/cs_runs.csv"]["status"] == "compared"
    assert by_path["evaluation/datasets/cs_runs.csv"]["baseline_path"] == "evaluation/baselines/cs_runs.json"
    assert by_path["other/cs_runs.csv"]["status"] == "new"  # the stem file recorded the other dataset's path
    git(repo, "checkout", "-q", "main")
    update = cli(repo, "baseline", "update")
    assert update.returncode == 0, update.stderr
    assert "moved from evaluation/baselines/cs_runs.json" in update.stdout
    assert not (repo / "evaluation" / "baselines" / "cs_runs.json").exists()
    moved = json.loads((repo / "evaluation" / "baselines" / "datasets" / "cs_runs.csv.json").read_text())
    assert moved["schema_version"] == 2 and moved["datasets"][0]["path"] == "evaluation/datasets/cs_runs.csv"
    # other/ is outside evaluation/: its whole path, under a folder no mirrored path starts with.
    assert (repo / "evaluation" / "baselines" / "baselines" / "other" / "cs_runs.csv.json").is_file()


def monorepo(tmp_path: Path) -> Path:
    repo = new_repo(
        tmp_path / "mono",
        {
            "README.md": "# many agents\n",
            "agents/agent-eval.toml": 'datasets = ["evaluation/datasets/*.csv"]\nagent-paths = ["app/**"]\n',
            "agents/app/agent.py": "root_agent = None\n",
            "agents/evaluation/datasets/cs_runs.csv": runs(),
            "web/index.html": "<p>hi</p>\n",
        },
    )
    commit(repo, "monorepo")
    update = cli(repo / "agents", "baseline", "update")
    assert update.returncode == 0, update.stderr
    assert "wrote evaluation/baselines/datasets/cs_runs.csv.json" in update.stdout  # named from agents/
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


def test_a_monorepo_run_from_its_subdirectory_catches_the_regression(tmp_path: Path) -> None:
    repo = monorepo(tmp_path)
    (repo / "web" / "index.html").write_text("<p>hello</p>\n")
    commit(repo, "web only")
    quiet = cli(repo / "agents", "run", "--base", "main")
    assert quiet.returncode == 0 and "nothing to evaluate" in quiet.stdout, quiet.stdout + quiet.stderr
    write_dataset(repo / "agents" / "evaluation" / "datasets" / "cs_runs.csv", runs(broken=BROKEN))
    (repo / "agents" / "app" / "agent.py").write_text("root_agent = 'v2'\n")
    commit(repo, "break the agent")
    done = cli(repo / "agents", "run", "--base", "main")
    assert done.returncode == 1, done.stdout + done.stderr
    data = results(repo / "agents")
    (selected,) = data["selection"]["selected"]
    assert selected["path"] == "agents/evaluation/datasets/cs_runs.csv"
    assert selected["reason"] == "changed in this PR"
    (comparison,) = data["comparison"]
    assert comparison["status"] == "compared"
    assert comparison["baseline_path"] == "agents/evaluation/baselines/datasets/cs_runs.csv.json"


def test_the_action_in_a_monorepo_working_directory_fails_the_regression_and_annotates_from_the_root(tmp_path: Path) -> None:
    repo = monorepo(tmp_path)
    write_dataset(repo / "agents" / "evaluation" / "datasets" / "cs_runs.csv", runs(broken=BROKEN))
    commit(repo, "break")
    event = {"pull_request": {"number": 3, "head": {"sha": git(repo, "rev-parse", "HEAD").strip()}}}
    env = base_env(tmp_path, repo, event, "pull_request")
    env.update({"GITHUB_BASE_REF": "main", "INPUT_WORKING-DIRECTORY": "agents", "INPUT_COMMENT": "false"})
    done = action(repo, env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "::error file=agents/evaluation/datasets/cs_runs.csv," in done.stdout
    assert outputs(tmp_path / "output")["passed"] == "false"


def test_a_pr_that_loosens_its_own_gate_is_judged_by_the_base_rules(repo: Path) -> None:
    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", runs(broken=BROKEN))
    (repo / "agent-eval.toml").write_text(
        'datasets = ["evaluation/datasets/*.csv"]\nbaselines-dir = "elsewhere"\n\n'
        "[gate]\nmax-regression = 1.0\nfail-on-question-drop = false\nfail-on-new-errors = false\n"
    )
    commit(repo, "loosen the gate and break the agent")
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 1, done.stdout + done.stderr
    gate = results(repo)["gate"]
    assert gate["outcome"] == "failed" and gate["rules_from"].startswith("agent-eval.toml at ")
    assert set(gate["config_changes"]) == {
        "baselines-dir evaluation/baselines -> elsewhere",
        "fail-on-new-errors true -> false",
        "fail-on-question-drop true -> false",
        "max-regression 0.05 -> 1.0",
    }
    comment = (repo / "agent-eval-results" / "comment.md").read_text()
    assert "**This PR changes the gate** (it applies after merge" in comment
    assert "max-regression 0.05 -&gt; 1.0" in comment and "## ❌ Agent evaluation failed" in comment
    assert "this PR changes the gate (applies after merge" in done.stdout


def test_a_corrupt_baseline_on_the_base_branch_is_never_a_green_headline(repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "-q", "main")
    (repo / "evaluation" / "baselines" / "datasets" / "cs_runs.csv.json").write_text("{ not json")
    commit(repo, "corrupt the baseline")
    git(repo, "checkout", "-q", "pr")
    git(repo, "merge", "-q", "main")
    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", list(reversed(runs())))
    commit(repo, "reorder")
    env = {"GITHUB_OUTPUT": str(tmp_path / "output"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary")}
    done = cli(repo, "run", "--base", "main", env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cs_runs.csv.json at " in done.stderr and "not valid JSON" in done.stderr
    comment = (repo / "agent-eval-results" / "comment.md").read_text()
    assert "## ⚠️ Agent evaluation could not be checked" in comment and "passed" not in comment.splitlines()[1]
    assert "## ⚠️ Agent evaluation could not be checked" in (tmp_path / "summary").read_text()
    assert outputs(tmp_path / "output")["passed"] == "false"
    gate_case = ET.parse(repo / "agent-eval-results" / "junit.xml").getroot().find("testsuite[@name='gate']/testcase")
    assert gate_case is not None and gate_case.find("error") is not None and gate_case.find("failure") is None
    assert results(repo)["gate"]["outcome"] == "unchecked"


@pytest.mark.parametrize("emptied", ["datasets", "questions"])
def test_an_emptied_baseline_on_the_base_branch_is_bad_input_not_a_pass(repo: Path, emptied: str) -> None:
    """A committed baseline of ``"datasets": []`` read as "no baseline yet" and passed; one of
    ``"questions": []`` passed with "nothing moved" for a comparison of nothing: each is bad input
    (exit 2) naming the file and what to do."""
    git(repo, "checkout", "-q", "main")
    path = repo / "evaluation" / "baselines" / "datasets" / "cs_runs.csv.json"
    data = stored(path.read_text())
    if emptied == "datasets":
        data["datasets"] = []
    else:
        data["datasets"][0]["questions"] = []
    path.write_text(json.dumps(data))
    commit(repo, f"empty the baseline's {emptied}")
    git(repo, "checkout", "-q", "pr")
    git(repo, "merge", "-q", "main")
    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", list(reversed(runs())))
    commit(repo, "reorder")
    done = cli(repo, "check", "--base", "main", "--no-comment")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"holds no {emptied}" in done.stderr and "run `baseline update` on the base branch" in done.stderr, done.stderr
    assert results(repo)["gate"]["outcome"] == "unchecked"


def test_a_dataset_with_nothing_scored_on_a_gated_metric_is_not_a_pass(repo: Path) -> None:
    # Without a base: a PR run computes at least the metrics the base's config computes (all).
    done = cli(repo, "run", "--metrics", "latency,llm_calls")  # no rule gates either
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no question has a score on any gated metric, so nothing was checked" in done.stderr
    assert results(repo)["gate"]["outcome"] == "unchecked"


def test_an_unexpected_error_is_exit_3_with_one_line_and_a_debug_log(repo: Path) -> None:
    (repo / "blocker").write_text("a file where the output directory should go\n")
    done = cli(repo, "run", "--base", "main", "--output-dir", "blocker/out")
    assert done.returncode == 3, done.stdout + done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert "unexpected NotADirectoryError" in line and "debug.log" in line and "Traceback" not in done.stderr
    log = Path(line.split("the traceback is in ", 1)[1].split(" (rerun", 1)[0])
    assert "Traceback (most recent call last)" in log.read_text()
    debug = cli(repo, "run", "--base", "main", "--output-dir", "blocker/out", "--debug")
    assert debug.returncode == 3 and "Traceback (most recent call last)" in debug.stderr


def test_version_1_results_are_still_read(repo: Path, tmp_path: Path) -> None:
    assert cli(repo, "evaluate", "evaluation/datasets/cs_runs.csv", "--output-dir", str(tmp_path / "a")).returncode == 0
    old = json.loads((tmp_path / "a" / "results.json").read_text())
    old["schema_version"] = 1
    old["gate"] = {"passed": False, "failures": ["cs_runs: something fell"], "notes": []}
    (tmp_path / "old.json").write_text(json.dumps(old))
    done = cli(repo, "compare", str(tmp_path / "a" / "results.json"), str(tmp_path / "old.json"), "--output-dir", str(tmp_path / "c"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((tmp_path / "c" / "results.json").read_text())["schema_version"] == 2
