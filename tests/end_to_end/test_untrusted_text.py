"""Secrets and forged workflow commands in recorded runs, through the CLI and the action's
entrypoint as the runner starts them: nothing secret is written, posted or printed, and no line
of the log is a command we did not write."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.helpers.commands import TOKEN, action, base_env, run_cli
from tests.helpers.factories import Run, csv_row, runs, write_csv
from tests.helpers.repos import commit, git

ROOT = Path(__file__).resolve().parents[2]
SECRETS = {
    "GITHUB_TOKEN": "ghs_Zq81xE2eGithubTok",
    "AGENT_EVAL_JUDGE_API_KEY": "AIzaJudgeKq77Xm1e2e",
    "AGENT_EVAL_AUTH_TOKEN": "authTokenPq93Lw0e2e",
    "MY_SERVICE_PASSWORD": 'pw"Sv\\77Kd0e2e_Hunter',  # a quote and a backslash: escaped in JSON
}
FORGED_ID = "q_forged\n::set-output name=passed::true"
OURS = ("::group::", "::endgroup::", "::add-mask::", "::error file=", "::warning::")


def hostile_rows(broken: bool) -> list[dict[str, str]]:
    """24 recorded runs, one with a forged id (regressed when ``broken``), and on the PR side one
    run that failed with an error quoting every secret and forging commands."""
    items = runs(broken={1} if broken else None)
    items[1] = dataclasses.replace(items[1], qid=FORGED_ID)
    rows = [csv_row(run) for run in items]
    if broken:
        failed: Run = dataclasses.replace(runs(1)[0], qid="q_leaky\n::set-env name=PWNED::1", status="error")
        row = csv_row(failed)
        quoted = " ".join(f"{name}={value}" for name, value in SECRETS.items())
        row["error"] = f"crm tool failed: {quoted}\n::error::forged\n::set-output name=passed::true\r::warning::cr\n##[error]legacy"
        rows.append(row)
    return rows


def make_repo(repo: Path) -> None:
    """main with the dataset and its committed baseline; branch pr regresses it and adds the leaky run."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.csv"]\n')
    dataset = repo / "evaluation" / "datasets" / "cs_runs.csv"
    dataset.parent.mkdir(parents=True)
    write_csv(dataset, hostile_rows(broken=False))
    done = cli(repo, "baseline", "update")
    assert done.returncode == 0, done.stderr
    commit(repo, "datasets and baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    write_csv(dataset, hostile_rows(broken=True))
    git(repo, "commit", "-qam", "regress, with a leaky error")


def cli(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    full.update({"PYTHONPATH": str(ROOT / "src"), **(env or {})})
    return run_cli(args, cwd=repo, env=full)


def leaks(text: str) -> list[str]:
    """Any 10 characters of a secret, also once backslashes (JSON, Markdown escapes) are dropped."""
    found = []
    plain = text.replace("\\", "")
    for name, value in SECRETS.items():
        for form in (value, value.replace("\\", "")):
            for i in range(len(form) - 9):
                if form[i : i + 10] in text or form[i : i + 10] in plain:
                    found.append(f"{name}: {form[i : i + 10]!r}")
    return found


def forged(text: str) -> list[str]:
    """Lines the runner would obey that we did not write: ``::`` after leading whitespace (lines
    end at \\r too), or the legacy ``##[`` anywhere."""
    lines = re.split(r"\r\n|\r|\n", text)
    return [line for line in lines if (line.lstrip().startswith("::") and not line.startswith(OURS)) or "##[" in line]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    make_repo(tmp_path / "repo")
    return tmp_path / "repo"


def test_cli_run_and_evaluate_write_and_print_no_secret_and_no_forged_command(repo: Path, tmp_path: Path) -> None:
    env = {**SECRETS, "GITHUB_OUTPUT": str(tmp_path / "output"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary")}
    done = cli(repo, "run", "--base", "main", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    out = repo / "agent-eval-results"
    sinks = {
        "stdout": done.stdout,
        "stderr": done.stderr,
        **{name: (out / name).read_text() for name in ("results.json", "comment.md", "summary.md", "junit.xml")},
        "outputs": (tmp_path / "output").read_text(),
        "step summary": (tmp_path / "summary").read_text(),
    }
    for name, text in sinks.items():
        assert not leaks(text), (name, leaks(text))
    for name in ("stdout", "results.json", "junit.xml"):
        assert "***" in sinks[name], name
    for name in ("comment.md", "summary.md", "step summary"):
        assert "\\*\\*\\*" in sinks[name], name  # *** as Markdown escapes it
    data = json.loads(sinks["results.json"])
    (leaky,) = [q for q in data["datasets"][0]["questions"] if q["status"] == "error"]
    assert leaky["error"].startswith("crm tool failed: GITHUB_TOKEN=*** AGENT_EVAL_JUDGE_API_KEY=*** AGENT_EVAL_AUTH_TOKEN=***")
    assert "MY_SERVICE_PASSWORD=***\n::error::forged" in leaky["error"]  # the file keeps the data, redacted only
    for stream in (done.stdout, done.stderr):
        assert not forged(stream), forged(stream)
    assert "error in q_leaky" in done.stdout and "set-env name=PWNED" in done.stdout  # defused, still readable

    evaluated = cli(repo, "evaluate", "--output-dir", "ev", env=SECRETS)
    assert evaluated.returncode == 0, evaluated.stderr
    for text in (evaluated.stdout, evaluated.stderr):
        assert not leaks(text) and not forged(text)
    assert not leaks((repo / "ev" / "results.json").read_text())
    assert "***" in evaluated.stdout

    # A baseline is committed: it is redacted too.
    updated = cli(repo, "baseline", "update", env=SECRETS)
    assert updated.returncode == 0, updated.stderr
    baseline = (repo / "evaluation" / "baselines" / "datasets" / "cs_runs.csv.json").read_text()
    assert not leaks(baseline) and "***" in baseline


def test_action_posts_and_prints_no_secret_while_its_own_commands_still_work(repo: Path, tmp_path: Path) -> None:
    server = FakeGitHub(token=TOKEN)
    try:
        event = {"pull_request": {"number": 5, "head": {"sha": "feedbeef"}}}
        env = {**base_env(tmp_path, repo, event, "pull_request", server), **SECRETS, "GITHUB_BASE_REF": "main"}
        done = action(repo, env)
        assert done.returncode == 1, done.stdout + done.stderr
        (comment,) = server.on(5)
    finally:
        server.close()
    stdout = "\n".join(line for line in done.stdout.splitlines() if not line.startswith("::add-mask::"))
    sinks = {
        "stdout": stdout,
        "stderr": done.stderr,
        "posted comment": comment["body"],
        "outputs": (tmp_path / "output").read_text(),
        "step summary": (tmp_path / "summary").read_text(),
        **{name: (repo / "agent-eval-results" / name).read_text() for name in ("results.json", "comment.md", "junit.xml")},
    }
    for name, text in sinks.items():
        assert not leaks(text), (name, leaks(text))
        assert TOKEN not in text, name
    assert "\\*\\*\\*" in comment["body"]  # *** as Markdown escapes it
    assert not forged(done.stdout) and not forged(done.stderr), forged(done.stdout) + forged(done.stderr)
    lines = done.stdout.splitlines()
    assert "::group::Evaluate" in lines and "::endgroup::" in lines and f"::add-mask::{TOKEN}" in lines
    # The regressed question with the forged id is annotated: one line, its newline escaped.
    annotation = next(line for line in lines if line.startswith("::error file=evaluation/datasets/cs_runs.csv"))
    assert "question q_forged%0A::set-output name=passed::true fell on" in annotation
