"""The action's entrypoint as the runner starts it: INPUT_* variables with hyphens, an event
payload file, GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files, a loopback GitHub API."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.github_server import PROXY_PAGE, Failure, FakeGitHub
from tests.helpers.adk_venvs import ADK_1, adk_venv
from tests.helpers.commands import TOKEN, action, base_env
from tests.helpers.factories import runs, write_dataset
from tests.helpers.repos import commit, git

ROOT = Path(__file__).resolve().parents[2]


def outputs(path: Path) -> dict[str, str]:
    """The values a run wrote to $GITHUB_OUTPUT (``name<<DELIMITER`` blocks)."""
    found = re.findall(r"^([a-z-]+)<<(ghadelimiter_[0-9a-f]+)\n(.*?)\n\2$", path.read_text(), re.M | re.S)
    return {name: value for name, _, value in found}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    repo = tmp_path / "workspace"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    git(repo, "remote", "add", "origin", str(origin))
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.csv"]\n')
    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", runs())
    commit(repo, "datasets")
    git(repo, "push", "-q", "origin", "main")
    return repo


def test_push_writes_and_commits_baselines_then_a_pr_is_checked(workspace: Path, tmp_path: Path) -> None:
    push = base_env(tmp_path, workspace, {"repository": {"default_branch": "main"}}, "push")
    done = action(
        workspace, {**push, "GITHUB_REF": "refs/heads/main", "GITHUB_REF_NAME": "main"}, subprocess=True
    )  # the entrypoint as the runner starts it
    assert done.returncode == 0, done.stdout + done.stderr
    assert "committed and pushed the updated baselines to main" in done.stdout
    log = subprocess.run(["git", "log", "--format=%an %s", "main"], cwd=tmp_path / "origin.git", capture_output=True, text=True).stdout
    assert log.splitlines()[0] == "github-actions[bot] Update agent-eval baselines [skip ci]"
    again = action(workspace, {**push, "GITHUB_REF": "refs/heads/main", "GITHUB_REF_NAME": "main"})
    assert "baselines unchanged: nothing to commit" in again.stdout

    git(workspace, "checkout", "-q", "-b", "feature")
    write_dataset(workspace / "evaluation" / "datasets" / "cs_runs.csv", runs(broken=set(range(0, 24, 2))))
    git(workspace, "commit", "-qam", "regress")
    server = FakeGitHub(token=TOKEN)
    try:
        pr = base_env(tmp_path, workspace, {"pull_request": {"number": 3, "head": {"sha": "feedbeef"}}}, "pull_request", server)
        env = {**pr, "GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "feature", "INPUT_MAX-REGRESSION": "0.1"}
        first = action(workspace, env)
        second = action(workspace, env)
        assert first.returncode == second.returncode == 1, first.stdout + first.stderr
        (comment,) = server.on(3)
        # The input's max-regression reaches the gate (its means are decided question by question here).
        assert "## ❌ Agent evaluation failed" in comment["body"]
        assert "::group::Evaluate" in first.stdout and f"::add-mask::{TOKEN}" in first.stdout
        output = (tmp_path / "output").read_text()
        assert "passed<<" in output and "comment-url<<" in output and TOKEN not in output
        lenient = action(workspace, {**env, "INPUT_FAIL-ON-REGRESSION": "false"})
        assert lenient.returncode == 0 and "fail-on-regression is false" in lenient.stdout
        for stream in (first.stdout.replace(f"::add-mask::{TOKEN}", ""), first.stderr):
            assert TOKEN not in stream
    finally:
        server.close()


def test_a_misbehaving_github_never_crashes_the_run_nor_posts_in_the_wrong_place(workspace: Path, tmp_path: Path) -> None:
    push = base_env(tmp_path, workspace, {"repository": {"default_branch": "main"}}, "push")
    assert action(workspace, {**push, "GITHUB_REF_NAME": "main"}).returncode == 0
    git(workspace, "checkout", "-q", "-b", "feature")
    write_dataset(workspace / "evaluation" / "datasets" / "cs_runs.csv", runs(broken=set(range(0, 24, 2))))
    git(workspace, "commit", "-qam", "regress")
    server = FakeGitHub(token=TOKEN)
    marker = "<!-- agent-eval-action:default -->"
    quoted = server.add(3, f"> {marker}\n> ## ❌ Agent evaluation failed\nis this flaky?", author="octocat")["body"]
    output, results = tmp_path / "output", workspace / "agent-eval-results"
    try:
        pr = base_env(tmp_path, workspace, {"pull_request": {"number": 3, "head": {"sha": "feedbeef"}}}, "pull_request", server)
        env = {**pr, "GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "feature"}
        # A proxy's error page; its Retry-After: 0 keeps the five attempts from waiting 15 s in the subprocess.
        page = Failure("GET", 502, {"retry-after": "0"}, times=99, body=PROXY_PAGE, content_type="text/html")
        server.failures = [page]
        output.unlink(missing_ok=True)
        proxied = action(workspace, env)
        assert proxied.returncode == 1, proxied.stdout + proxied.stderr  # the gate's answer: a regression
        assert "Traceback" not in proxied.stderr and "proxy error" not in proxied.stdout + proxied.stderr
        assert (
            "::warning::could not post the PR comment (listing PR comments: HTTP 502 (GitHub answered with text/html instead of JSON))"
            in proxied.stdout
        )
        assert [status for method, _, status in server.log if method != "GET"] == [] and len(server.log) == 5
        values = outputs(output)
        assert values["comment-file"] == "agent-eval-results/comment.md" and values["passed"] == "false" and "comment-url" not in values
        assert (results / "comment.md").read_text().startswith(f"{marker}\n## ❌ Agent evaluation failed")
        assert [c["body"] for c in server.on(3)] == [quoted]

        server.failures, server.log = [], []
        output.unlink()
        posted = action(workspace, env)
        assert posted.returncode == 1, posted.stdout + posted.stderr
        stranger, ours = server.on(3)
        assert stranger["body"] == quoted and ours["author"] == "github-actions[bot]" and ours["body"].startswith(marker)
        assert ("PATCH", f"/repos/o/r/issues/comments/{stranger['id']}") not in [(m, p) for m, p, _ in server.log]
        assert outputs(output)["comment-url"] == f"https://github.com/o/r/pull/3#issuecomment-{ours['id']}"

        server.delete_on_patch.add(ours["id"])
        output.unlink()
        again = action(workspace, env)
        assert again.returncode == 1 and "::warning" not in again.stdout, again.stdout + again.stderr
        stranger, reposted = server.on(3)
        assert stranger["body"] == quoted and reposted["id"] > ours["id"] and reposted["body"].startswith(marker)
        assert outputs(output)["comment-url"] == f"https://github.com/o/r/pull/3#issuecomment-{reposted['id']}"
        assert "comment-file" not in outputs(output) and ("PATCH", 404) in [(m, s) for m, _, s in server.log]
        for stream in (proxied.stdout.replace(f"::add-mask::{TOKEN}", ""), proxied.stderr, output.read_text()):
            assert TOKEN not in stream
    finally:
        server.close()


def test_deltas_keep_two_datasets_of_one_name_apart(workspace: Path, tmp_path: Path) -> None:
    """The ``deltas`` output is keyed by the dataset's repository path, as its baseline is:
    ``a/cs.csv`` and ``b/cs.csv`` share a name, and one must not hide the other."""
    (workspace / "agent-eval.toml").write_text('datasets = ["evaluation/*/cs.csv"]\nselect = "all"\n')
    write_dataset(workspace / "evaluation" / "a" / "cs.csv", runs())
    write_dataset(workspace / "evaluation" / "b" / "cs.csv", runs(8))
    commit(workspace, "two datasets named cs")
    push = base_env(tmp_path, workspace, {"repository": {"default_branch": "main"}}, "push")
    assert action(workspace, {**push, "GITHUB_REF_NAME": "main"}).returncode == 0
    git(workspace, "checkout", "-q", "-b", "feature")
    write_dataset(workspace / "evaluation" / "a" / "cs.csv", runs(broken=set(range(0, 24, 2))))
    git(workspace, "commit", "-qam", "regress a/cs.csv only")
    pr = base_env(tmp_path, workspace, {"pull_request": {"number": 3, "head": {"sha": "feedbeef"}}}, "pull_request")
    (tmp_path / "output").unlink(missing_ok=True)
    done = action(workspace, {**pr, "GITHUB_BASE_REF": "main", "INPUT_COMMENT": "false"})
    assert done.returncode == 1, done.stdout + done.stderr
    deltas = json.loads(outputs(tmp_path / "output")["deltas"])
    assert set(deltas) == {"evaluation/a/cs.csv", "evaluation/b/cs.csv"}, deltas
    assert deltas["evaluation/a/cs.csv"]["tool_usage_accuracy"] < -0.2
    assert deltas["evaluation/b/cs.csv"]["tool_usage_accuracy"] == 0


def test_install_command_working_directory_and_bad_inputs(workspace: Path, tmp_path: Path) -> None:
    sub = workspace / "agents"
    sub.mkdir()
    shutil.copy(workspace / "agent-eval.toml", sub / "agent-eval.toml")
    (sub / "agent-eval.toml").write_text('datasets = ["../evaluation/datasets/*.csv"]\n')
    env = base_env(tmp_path, workspace, {}, "workflow_dispatch")
    env.update({"INPUT_WORKING-DIRECTORY": "agents", "INPUT_INSTALL": "echo installed > marker.txt", "INPUT_COMMENT": "false"})
    done = action(workspace, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (sub / "marker.txt").read_text().strip() == "installed"
    assert (sub / "agent-eval-results" / "results.json").is_file()
    bad = action(workspace, {**env, "INPUT_RUNS": "many"})
    assert bad.returncode == 2 and "input runs: 'many' is not a whole number" in bad.stderr
    failing = action(workspace, {**env, "INPUT_INSTALL": "exit 7"})
    assert failing.returncode == 3 and "the install command exited with 7" in failing.stderr


def test_push_without_contents_write_says_so(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "origin.git" / "hooks" / "pre-receive").write_text("#!/bin/sh\necho 'permission denied' >&2\nexit 1\n")
    (tmp_path / "origin.git" / "hooks" / "pre-receive").chmod(0o755)
    push = base_env(tmp_path, workspace, {"repository": {"default_branch": "main"}}, "push")
    done = action(workspace, {**push, "GITHUB_REF_NAME": "main"})
    assert done.returncode == 3
    assert "contents: write" in done.stderr and TOKEN not in done.stderr


def hostile_agent(workspace: Path) -> None:
    """tests/apps/hostile in the workspace, and a one-question dataset that calls its ``greet``."""
    shutil.copytree(ROOT / "tests" / "apps" / "hostile", workspace / "hostile")
    (workspace / "hostile_golden.json").write_text(
        json.dumps(
            {
                "golden_questions": [
                    {
                        "id": "q1",
                        "user_inputs": ["call greet"],
                        "agents_evaluated": ["hostile"],
                        "reference_data": {"reference_tool_interactions": [{"tool_name": "greet", "input_arguments": {"name": "ada"}}]},
                    }
                ]
            }
        )
    )


def test_install_makes_a_venv_for_the_agent_and_never_touches_ours(workspace: Path, tmp_path: Path) -> None:
    hostile_agent(workspace)
    ours = sorted(p.name for p in Path(sys.prefix, "lib").glob("python3*/site-packages/*"))
    env = base_env(tmp_path, workspace, {}, "workflow_dispatch")
    runner_temp = Path(env["RUNNER_TEMP"])
    record = "python -c \"import sys, os; print(sys.prefix, os.environ['VIRTUAL_ENV'], 'GITHUB_TOKEN' in os.environ)\" > where.txt"
    env.update(
        {
            "GITHUB_TOKEN": TOKEN,
            "INPUT_INSTALL": record,
            "INPUT_AGENT": "hostile",
            "INPUT_DATASETS": "hostile_golden.json",
            "INPUT_COMMENT": "false",
        }
    )
    done = action(workspace, env)
    (venv,) = runner_temp.glob("agent-eval-venv-*")  # named by the hash of what it is made from
    prefix, virtual_env, saw_token = (workspace / "where.txt").read_text().split()
    assert Path(prefix) == venv and Path(virtual_env) == venv and saw_token == "False"
    # The agent runs with that venv's Python, which has no google-adk here: bad input naming it.
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"google-adk is not installed for {venv}/bin/python" in done.stderr
    assert f"the agent's Python: {venv}/bin/python (the venv the install command made: {record}" in done.stdout
    assert sorted(p.name for p in Path(sys.prefix, "lib").glob("python3*/site-packages/*")) == ours
    # agent-python names the interpreter explicitly (here: ours, which has ADK).
    explicit = action(workspace, {**env, "INPUT_AGENT-PYTHON": sys.executable})
    assert explicit.returncode == 0, explicit.stdout + explicit.stderr
    assert f"the agent's Python: {sys.executable} (agent-python)" in explicit.stdout
    (question,) = json.loads((workspace / "agent-eval-results" / "results.json").read_text())["datasets"][0]["questions"]
    assert question["status"] == "ok"


def test_the_checkouts_token_is_out_of_the_agents_reach_and_put_back_after(workspace: Path, tmp_path: Path) -> None:
    """actions/checkout without ``persist-credentials: false`` leaves the token in .git/config: a
    PR's tool that copies that file finds no credential, and the config has it again after."""
    hostile_agent(workspace)
    leaked = tmp_path / "leaked"
    golden = json.loads((workspace / "hostile_golden.json").read_text())
    golden["golden_questions"][0]["user_inputs"] = [f"call leak_git_config {leaked}"]
    (workspace / "hostile_golden.json").write_text(json.dumps(golden))
    key = "http.https://github.com/.extraheader"
    header = "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    git(workspace, "config", "--local", key, header)
    env = base_env(tmp_path, workspace, {}, "workflow_dispatch")
    env.update(
        {"INPUT_AGENT": "hostile", "INPUT_DATASETS": "hostile_golden.json", "INPUT_COMMENT": "false", "INPUT_AGENT-PYTHON": sys.executable}
    )
    done = action(workspace, env)
    assert done.returncode == 0, done.stdout + done.stderr
    copied = leaked.read_text()
    assert '[remote "origin"]' in copied and "extraheader" not in copied and header.split()[-1] not in copied, copied
    said = [line for line in done.stdout.splitlines() if "persist-credentials: false" in line]
    assert said == [f"the checkout's credential ({key}) is out of its git config while the agent runs, put back after it: "
                    "set `persist-credentials: false` on actions/checkout"], done.stdout  # fmt: skip
    assert git(workspace, "config", "--local", "--get", key).strip() == header


def test_the_action_finds_the_agents_python_as_the_command_line_does_and_says_which(workspace: Path, tmp_path: Path) -> None:
    """No agent-python input, no install input: the action's own Python, said so; with the
    repository's .venv holding google-adk (1.x here, as a pinned project's), that one runs the
    agent, said in the command line's line."""
    hostile_agent(workspace)
    agent = workspace / "hostile" / "agent.py"
    agent.write_text(
        agent.read_text() + "\nimport sys as _sys\n(__import__('pathlib').Path(__file__).parent / 'where.txt').write_text(_sys.prefix)\n"
    )
    env = base_env(tmp_path, workspace, {}, "workflow_dispatch")
    env.update({"INPUT_AGENT": "hostile", "INPUT_DATASETS": "hostile_golden.json", "INPUT_COMMENT": "false"})
    own = action(workspace, env)
    assert own.returncode == 0, own.stdout + own.stderr
    assert f"the agent's Python: {sys.executable} (this tool's own: no agent-python setting and no .venv or venv" in own.stdout
    assert Path((workspace / "hostile" / "where.txt").read_text()) == Path(sys.prefix)

    venv = adk_venv(ADK_1).parent.parent
    (workspace / ".venv").symlink_to(venv)  # the team's own environment, as `uv sync` makes it
    found = action(workspace, env)
    assert found.returncode == 0, found.stdout + found.stderr
    assert "the agent's Python: .venv/bin/python (the repository's .venv, which has google-adk; agent-python overrides)" in found.stdout
    assert Path((workspace / "hostile" / "where.txt").read_text()) == workspace / ".venv"
    (question,) = json.loads((workspace / "agent-eval-results" / "results.json").read_text())["datasets"][0]["questions"]
    assert question["status"] == "ok"
    # The agent-python input comes first.
    given = action(workspace, {**env, "INPUT_AGENT-PYTHON": sys.executable})
    assert given.returncode == 0 and f"the agent's Python: {sys.executable} (agent-python)" in given.stdout
    assert Path((workspace / "hostile" / "where.txt").read_text()) == Path(sys.prefix)
