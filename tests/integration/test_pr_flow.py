"""The PR check end to end in real git repositories made in temp dirs, exactly as CI runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.commands import cli, run_cli
from tests.helpers.factories import runs, write_dataset
from tests.helpers.repos import commit, git, new_repo, pr_branch, results

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main with datasets and committed baselines, made once; each test works on a copy."""
    repo = new_repo(tmp_path_factory.mktemp("template") / "repo")
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.csv"]\n')
    (repo / "app").mkdir()
    (repo / "app" / "agent.py").write_text("root_agent = None\n")
    (repo / "README.md").write_text("# shop\n")
    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", runs())
    write_dataset(repo / "evaluation" / "datasets" / "other_runs.csv", runs(8))
    commit(repo, "datasets")
    update = cli(repo, "baseline", "update")
    assert update.returncode == 0, update.stderr
    # Each baseline said with what it records (a recorded table: a run a row).
    assert "wrote evaluation/baselines/datasets/cs_runs.csv.json (24 questions, 24 runs)" in update.stdout, update.stdout
    again = cli(repo, "baseline", "update")
    assert "unchanged evaluation/baselines/datasets/cs_runs.csv.json" in again.stdout  # stable bytes: committing again is a no-op
    commit(repo, "baselines")
    return repo


@pytest.fixture
def repo(template: Path, tmp_path: Path) -> Path:
    return pr_branch(template, tmp_path)


def test_regressing_half_the_questions_fails(repo: Path) -> None:
    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", runs(broken=set(range(0, 24, 2))))
    git(repo, "commit", "-qam", "regress")
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 1, done.stdout + done.stderr
    data = results(repo)
    assert [s["path"] for s in data["selection"]["selected"]] == ["evaluation/datasets/cs_runs.csv"]
    assert data["selection"]["selected"][0]["reason"] == "changed in this PR"
    (comparison,) = data["comparison"]
    metric = next(m for m in comparison["metrics"] if m["metric"] == "tool_usage_accuracy")
    assert metric["verdict"] == "regressed" and metric["delta"] < -0.2 and metric["ci95"][1] < 0
    assert data["gate"]["passed"] is False
    failures = data["gate"]["failures"]
    assert data["gate"]["outcome"] == "failed"
    # tool_usage_accuracy has a pass threshold: its questions are decided one by one from their
    # runs (recorded: one run a side, so by the guard's rule), and they alone speak of it: no
    # max_regression failure on its mean, and no note that repeats it.
    assert not [f for f in failures if f["rule"] == "max_regression" and f["metric"] == "tool_usage_accuracy"]
    assert not any("max_regression" in n and "tool_usage_accuracy" in n for n in data["gate"]["notes"])
    fell = [f for f in failures if f["rule"] == "question_fall"]
    assert len({f["question"] for f in fell}) >= 8 and all(f["dataset"] == "evaluation/datasets/cs_runs.csv" for f in fell)
    # One failure a metric the question fell on, each saying the question's runs.
    drops = [f for f in fell if f["question"] == "q_cart_01_00"]
    assert "tool_usage_accuracy" in {f["metric"] for f in drops}
    assert all("question q_cart_01_00: 0 of 1 run passes, 1 of 1 on the base" in f["message"] for f in drops)
    assert "gate: FAILED" in done.stdout


def test_workflow_commands_only_in_actions_and_plain_lines_on_a_terminal(repo: Path) -> None:
    """GITHUB_ACTIONS=true decides: there the regression is an `::error` annotation at the
    question's line; on a terminal the same error is a readable line and no `::` command prints."""
    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", runs(broken={0}))
    git(repo, "commit", "-qam", "regress one question")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update({"PYTHONPATH": str(ROOT / "src"), "GITHUB_TOKEN": "ghs_e2e_secret"})
    args = ["run", "--base", "main", "--no-comment"]
    local = run_cli(args, cwd=repo, env=env)
    assert local.returncode == 1, local.stdout + local.stderr
    assert not [line for line in (local.stdout + local.stderr).splitlines() if "::" in line], local.stdout + local.stderr
    fell = "question q_cart_01_00 fell on tool_usage_accuracy, tool_call_precision: 0 of 1 run passes, 1 of 1 on the base"
    assert f"error: evaluation/datasets/cs_runs.csv:2: {fell}" in local.stdout
    actions = run_cli(args, cwd=repo, env={**env, "GITHUB_ACTIONS": "true"})
    assert actions.returncode == 1, actions.stdout + actions.stderr
    assert f"::error file=evaluation/datasets/cs_runs.csv,line=2,title=agent-eval regression::{fell}" in actions.stdout.splitlines()
    assert "::add-mask::ghs_e2e_secret" in actions.stdout.splitlines()


def test_no_score_change_passes(repo: Path) -> None:
    items = runs()
    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", list(reversed(items)))  # rows reordered
    git(repo, "commit", "-qam", "reorder")
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 0, done.stdout + done.stderr
    data = results(repo)
    assert data["gate"] == {
        "passed": True,
        "outcome": "passed",
        "failures": [],
        "notes": [],
        "unchecked": [],
        "config_changes": [],
        "rules_from": f"agent-eval.toml at {data['selection']['merge_base'][:7]}",
    }
    verdicts = {m["metric"]: m["verdict"] for m in data["comparison"][0]["metrics"]}
    assert verdicts["tool_usage_accuracy"] == "unchanged" and verdicts["state_management_fidelity"] == "unchanged"


def test_readme_only_selects_nothing_and_passes(repo: Path) -> None:
    (repo / "README.md").write_text("# shop\n\nmore words\n")
    git(repo, "commit", "-qam", "docs")
    done = cli(repo, "run", "--base", "main", env={"AGENT_EVAL_X": "1"})
    assert done.returncode == 0, done.stderr
    # README.md is not agent code only when agent_paths says so; by default any non-dataset path
    # is. agent_paths decides what is checked, so it is read from the base like the gate's rules.
    git(repo, "checkout", "-q", "main")
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.csv"]\nagent-paths = ["app/**"]\n')
    git(repo, "commit", "-qam", "scope agent paths")
    git(repo, "checkout", "-q", "pr")
    git(repo, "merge", "-q", "main", "-m", "merge main")
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 0, done.stderr
    assert "nothing to evaluate" in done.stdout
    assert results(repo)["datasets"] == [] and results(repo)["gate"]["passed"] is True


def test_agent_change_selects_everything(repo: Path) -> None:
    (repo / "app" / "agent.py").write_text("root_agent = 'v2'\n")
    git(repo, "commit", "-qam", "agent")
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 0, done.stdout + done.stderr
    selected = results(repo)["selection"]["selected"]
    assert sorted(s["path"] for s in selected) == ["evaluation/datasets/cs_runs.csv", "evaluation/datasets/other_runs.csv"]
    assert all(s["reason"] == "agent code changed: app/agent.py" for s in selected)


def test_new_dataset_without_baseline_is_new_not_a_failure(repo: Path) -> None:
    write_dataset(repo / "evaluation" / "datasets" / "fresh_runs.csv", runs(6))
    commit(repo, "new dataset")
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 0, done.stdout + done.stderr
    data = results(repo)
    (comparison,) = data["comparison"]
    assert comparison["status"] == "new" and all(m["verdict"] == "new" for m in comparison["metrics"])
    assert data["selection"]["selected"][0]["reason"] == "added in this PR"
    assert "no baseline on the base branch" in data["gate"]["notes"][0]


def test_deleted_dataset_is_reported(repo: Path) -> None:
    git(repo, "rm", "-q", "evaluation/datasets/other_runs.csv")
    git(repo, "commit", "-qm", "drop")
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 0, done.stderr
    data = results(repo)
    assert data["selection"]["deleted"] == ["evaluation/datasets/other_runs.csv"]
    assert data["comparison"][0]["status"] == "removed"


def test_baseline_is_read_at_the_merge_base_not_the_working_tree(repo: Path) -> None:
    # A PR that rewrites the baseline to hide its regression gains nothing.
    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", runs(broken=set(range(24))))
    assert cli(repo, "baseline", "update").returncode == 0
    commit(repo, "regress and rewrite baseline")
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 1


def test_shallow_clone_says_fetch_depth_0(repo: Path, tmp_path: Path) -> None:
    (repo / "app" / "agent.py").write_text("root_agent = 'v2'\n")
    git(repo, "commit", "-qam", "agent")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", f"file://{repo}", str(clone)], check=True)
    done = cli(clone, "run", "--base", "main")
    assert done.returncode == 2
    assert "fetch-depth: 0" in done.stderr and "Traceback" not in done.stderr


def test_compare_two_results_files(repo: Path, tmp_path: Path) -> None:
    before = cli(repo, "evaluate", "evaluation/datasets/cs_runs.csv", "--output-dir", str(tmp_path / "a"))
    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", runs(broken=set(range(0, 24, 2))))
    after = cli(repo, "evaluate", "evaluation/datasets/cs_runs.csv", "--output-dir", str(tmp_path / "b"))
    assert before.returncode == after.returncode == 0
    done = cli(
        repo, "compare", str(tmp_path / "b" / "results.json"), str(tmp_path / "a" / "results.json"), "--output-dir", str(tmp_path / "c")
    )
    assert done.returncode == 1, done.stdout
    assert "gate: FAILED - 8 of 24 questions no longer make the expected tool calls" in done.stdout


def test_local_run_without_base_compares_with_working_tree_baselines(repo: Path) -> None:
    done = cli(repo, "run")
    assert done.returncode == 0, done.stderr
    data = results(repo)
    assert data["selection"]["mode"] == "all" and {c["status"] for c in data["comparison"]} == {"compared"}


def test_agent_driven_dataset_regression_is_caught(tmp_path: Path) -> None:
    """The example agent in its own repository: a PR that breaks a tool argument fails the check."""
    repo = tmp_path / "agent_repo"
    shutil.copytree(ROOT / "examples" / "customer_service", repo, ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.json"]\nagent = "customer_service"\n')
    new_repo(repo)
    commit(repo, "agent")
    assert cli(repo, "baseline", "update").returncode == 0
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    policy = repo / "customer_service" / "scripted_model.py"
    policy.write_text(
        policy.read_text().replace(
            'return _call("access_cart_information", customer_id="123")', 'return _call("access_cart_information", customer_id="321")'
        )
    )
    git(repo, "commit", "-qam", "refactor the policy")
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 1, done.stdout + done.stderr
    data = results(repo)
    assert data["selection"]["selected"][0]["reason"].startswith("inputs the agent read changed: customer_service/scripted_model.py")
    failures = "\n".join(f["message"] for f in data["gate"]["failures"])
    # The cart question now crashes in the model (an empty cart), the discount ones call the tool wrongly.
    assert "customer_service_golden: 1 question ended in an error, 0 on the base branch" in failures
    assert "question q_discount_01: 0 of " in failures and "10 of 10 on the base" in failures
    # Two drops in seven questions are not significant for the mean; the per-question guard is what fails.
    assert "regressed beyond" not in failures
    errored = next(q for q in data["datasets"][0]["questions"] if q["id"] == "q_cart_01")
    assert errored["status"] == "error" and "IndexError" in errored["error"]


def test_run_in_actions_posts_one_sticky_comment_and_fork_prs_fall_back(repo: Path, tmp_path: Path) -> None:
    from tests.fakes.github_server import Failure, FakeGitHub

    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", runs(broken={0, 2, 4}))
    git(repo, "commit", "-qam", "regress")
    server = FakeGitHub(token="ghs_e2e_secret")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 9, "head": {"sha": git(repo, "rev-parse", "HEAD").strip()}}}))
    env = {
        "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": "o/r",
        "GITHUB_API_URL": server.url, "GITHUB_BASE_REF": "main", "GITHUB_TOKEN": "ghs_e2e_secret", "GITHUB_RUN_ID": "5",
        "GITHUB_OUTPUT": str(tmp_path / "out.txt"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }  # fmt: skip
    try:
        for _ in range(2):
            done = cli(repo, "run", env=env)
            assert done.returncode == 1, done.stdout + done.stderr
        (comment,) = server.on(9)
        assert comment["body"].startswith("<!-- agent-eval-action:default -->\n## ❌ Agent evaluation failed")
        assert "::add-mask::ghs_e2e_secret" in done.stdout
        server.failures = [Failure("POST", 403, times=5), Failure("PATCH", 403, times=5)]
        server.comments.clear()
        fork = cli(repo, "run", env=env)
        assert fork.returncode == 1  # the gate decides, not the missing permission
        assert "pull-requests: write" in fork.stdout and server.on(9) == []
        assert "comment-file<<" in (tmp_path / "out.txt").read_text()
        for text in (
            fork.stdout.replace("::add-mask::ghs_e2e_secret", ""),
            fork.stderr,
            (tmp_path / "out.txt").read_text(),
            (tmp_path / "summary.md").read_text(),
        ):
            assert "ghs_e2e_secret" not in text
        for file in (repo / "agent-eval-results").iterdir():
            assert "ghs_e2e_secret" not in file.read_text()
    finally:
        server.close()


def test_questions_given_new_ids_are_compared_with_their_own_baseline_runs(tmp_path: Path) -> None:
    """The PR breaks the three fig questions and renames exactly those (their content unchanged):
    they are paired with the baseline's by content, not let through as new."""
    from tests.helpers.repos import DATASET, counting_repo

    repo = counting_repo(tmp_path / "repo", 12)
    env = {"CALLS_FILE": str(tmp_path / "calls.txt")}
    assert cli(repo, "baseline", "update", env=env).returncode == 0
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    agent = repo / "counting" / "agent.py"
    agent.write_text(agent.read_text().replace('args={"item": item}', 'args={"item": item if item != "fig" else "figs"}'))
    data = json.loads((repo / DATASET).read_text())
    for question in data["golden_questions"]:
        if question["id"] in ("q03", "q07", "q11"):
            question["id"] += "-fig"
    (repo / DATASET).write_text(json.dumps(data, indent=1))
    commit(repo, "figs, and clearer ids")
    done = cli(repo, "check", "--base", "main", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    found = results(repo)
    (comparison,) = found["comparison"]
    assert comparison["paired_by_content"] == {"q03-fig": "q03", "q07-fig": "q07", "q11-fig": "q11"}
    dropped = {f["question"] for f in found["gate"]["failures"] if f["metric"] == "tool_usage_accuracy" and f["question"]}
    assert dropped == {"q03-fig", "q07-fig", "q11-fig"}, found["gate"]["failures"]
    comment = (repo / "agent-eval-results" / "comment.md").read_text()
    assert "3 questions renamed, compared with the baseline's by content: q03-fig was q03" in comment, comment


def test_a_pr_that_edits_a_reference_is_told_so_not_as_the_agent_answering_differently(tmp_path: Path) -> None:
    """The example agent as its baseline was made (the discount cap back at 10): a PR that edits
    only one question's expected answer still fails that question (the answer the agent gives,
    the same as the base's, no longer matches what the dataset now expects), but the verdict
    said "answers differently", and its why showed the score alone: the answer did not differ."""
    repo = tmp_path / "agent_repo"
    shutil.copytree(ROOT / "examples" / "customer_service", repo, ignore=shutil.ignore_patterns("__pycache__"))
    tools = repo / "customer_service" / "tools.py"
    tools.write_text(tools.read_text().replace("MAX_DISCOUNT = 5", "MAX_DISCOUNT = 10"))
    new_repo(repo)
    commit(repo, "agent, datasets and the baseline it was made with")
    git(repo, "checkout", "-q", "-b", "pr")
    dataset = repo / "evaluation" / "datasets" / "customer_service_golden.json"
    old = "Hello! Welcome to the garden store. How can I help you?"
    new = "Good morning, thanks for calling the garden store's support line."
    dataset.write_text(dataset.read_text().replace(old, new))
    git(repo, "commit", "-qam", "a new greeting")
    done = cli(repo, "check", "--base", "main", "--no-comment")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "gate: FAILED - 1 of 8 questions fails against its changed reference" in done.stdout, done.stdout
    why = done.stdout[done.stdout.index("why:") :]
    assert f"expected answer base: {old}" in " ".join(why.split())
    assert f"now: {new} (changed)" in " ".join(why.split())
    assert "answer differently" not in done.stdout and "answers differently" not in done.stdout
    comment = (repo / "agent-eval-results" / "comment.md").read_text()
    assert "expected answer" in comment and f"{new} (changed)" in comment
    # Every other question's reference is as the base's runs were scored against: no row says otherwise.
    assert why.count("(changed)") == 1 and comment.count("(changed)") == 1
