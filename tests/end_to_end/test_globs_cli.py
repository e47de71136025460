"""Dataset globs through the command line, the config and a PR's changed files: classes, braces,
``**`` anywhere, exclusions in order, and names with spaces and brackets."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.commands import run_cli
from tests.helpers.factories import csv_row, customer_service_runs, write_csv
from tests.helpers.repos import git

ROOT = Path(__file__).resolve().parents[2]
FILES = [
    "evaluation/datasets/a.csv",
    "evaluation/datasets/b.csv",
    "evaluation/datasets/c.csv",
    "evaluation/datasets/deep/d.csv",
    "evaluation/datasets/drafts/wip.csv",
    "evaluation/datasets/drafts/ready.csv",
    "evaluation/more/e.jsonl",
    "my data/golden set.csv",
    "runs/run[1].csv",
    "runs/run1.csv",
]


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env["PYTHONPATH"] = str(ROOT / "src")
    return run_cli(args, cwd=cwd, env=env)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    rows = [csv_row(run) for run in customer_service_runs()[:2]]
    for name in FILES:
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".jsonl"):
            path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        else:
            write_csv(path, rows)
    return repo


def validated(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The dataset files validate read, in its order."""
    return [line.removeprefix("ok: ").rsplit(" (", 1)[0] for line in done.stdout.splitlines() if line.startswith("ok: ")]


@pytest.mark.parametrize(
    ("patterns", "expected"),
    [
        (["evaluation/datasets/[ab].csv"], ["evaluation/datasets/a.csv", "evaluation/datasets/b.csv"]),
        (["evaluation/datasets/[!ab].csv"], ["evaluation/datasets/c.csv"]),
        (["evaluation/{datasets,more}/*.{csv,jsonl}"], ["evaluation/datasets/a.csv", "evaluation/datasets/b.csv", "evaluation/datasets/c.csv", "evaluation/more/e.jsonl"]),
        (["**/d.csv"], ["evaluation/datasets/deep/d.csv"]),
        (["evaluation/**/wip.csv"], ["evaluation/datasets/drafts/wip.csv"]),
        (["evaluation/datasets/drafts/**"], ["evaluation/datasets/drafts/ready.csv", "evaluation/datasets/drafts/wip.csv"]),
        (
            ["evaluation/datasets/**", "!evaluation/datasets/drafts/**", "evaluation/datasets/drafts/ready.csv"],
            ["evaluation/datasets/a.csv", "evaluation/datasets/b.csv", "evaluation/datasets/c.csv", "evaluation/datasets/deep/d.csv", "evaluation/datasets/drafts/ready.csv"],
        ),
        (["evaluation/datasets", "!evaluation/datasets/drafts"], ["evaluation/datasets/a.csv", "evaluation/datasets/b.csv", "evaluation/datasets/c.csv", "evaluation/datasets/deep/d.csv"]),
        (["my data/*.csv"], ["my data/golden set.csv"]),
        (["runs/run[[]1].csv"], ["runs/run[1].csv"]),  # a literal `[` in a glob
        (["runs/run[1].csv"], ["runs/run[1].csv"]),  # a name that exists is itself
        (["runs/run[0-9].csv"], ["runs/run1.csv"]),
    ],
)  # fmt: skip
def test_validate_reads_what_the_globs_name(repo: Path, patterns: list[str], expected: list[str]) -> None:
    done = cli(repo, "validate", *patterns)
    assert done.returncode == 0, done.stdout + done.stderr
    assert validated(done) == expected


def test_a_glob_that_matches_nothing_is_named_and_the_rest_still_read(repo: Path) -> None:
    done = cli(repo, "validate", "evaluation/datasets/[xyz].csv", "evaluation/datasets/a.csv")
    assert done.returncode == 2
    assert "error: evaluation/datasets/[xyz].csv: matched no dataset files" in done.stderr
    assert validated(done) == ["evaluation/datasets/a.csv"]


def test_exclusions_only_are_refused_naming_the_setting(repo: Path) -> None:
    done = cli(repo, "validate", "!evaluation/datasets/drafts/**")
    assert done.returncode == 2 and "error: !evaluation/datasets/drafts/**: every pattern starts with `!`" in done.stderr
    (repo / "agent-eval.toml").write_text('datasets = ["!evaluation/datasets/drafts/**"]\n')
    done = cli(repo, "evaluate")
    assert done.returncode == 2 and "agent-eval.toml: datasets: Value error, every pattern starts with `!`" in done.stderr, done.stderr
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.csv"]\nagent-paths = ["!docs/**"]\n')
    done = cli(repo, "evaluate")
    assert done.returncode == 2 and "agent-eval.toml: agent_paths: Value error, every pattern starts with `!`" in done.stderr, done.stderr
    (repo / "agent-eval.toml").unlink()
    done = cli(repo, "run", "--datasets", "!evaluation/**")
    assert done.returncode == 2 and "command line: datasets: Value error, every pattern starts with `!`" in done.stderr, done.stderr


def test_a_pr_check_reads_exclusions_in_the_config_and_in_its_changed_files(repo: Path) -> None:
    """Drafts excluded from the datasets, and docs from the agent's paths: a PR that changes a
    draft and a doc evaluates nothing; one that changes the included draft evaluates it alone."""
    (repo / "agent-eval.toml").write_text(
        'datasets = ["evaluation/datasets/**", "!evaluation/datasets/drafts/**", "evaluation/datasets/drafts/ready.csv"]\n'
        'agent-paths = ["app/**", "!app/docs/**"]\n'
    )
    (repo / "app" / "docs").mkdir(parents=True)
    (repo / "app" / "agent.py").write_text("root_agent = None\n")
    (repo / "app" / "docs" / "notes.md").write_text("notes\n")
    git(repo, "-c", "user.email=ci@example.com", "-c", "user.name=CI", "add", "-A")
    git(repo, "-c", "user.email=ci@example.com", "-c", "user.name=CI", "commit", "-qm", "datasets")
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "app" / "docs" / "notes.md").write_text("more notes\n")
    write_csv(repo / "evaluation" / "datasets" / "drafts" / "wip.csv", [csv_row(customer_service_runs()[3])])
    git(repo, "-c", "user.email=ci@example.com", "-c", "user.name=CI", "commit", "-qam", "a draft and a doc")
    done = cli(repo, "run", "--base", "main", "--no-comment")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "nothing to evaluate" in done.stdout
    write_csv(repo / "evaluation" / "datasets" / "drafts" / "ready.csv", [csv_row(customer_service_runs()[3])])
    git(repo, "-c", "user.email=ci@example.com", "-c", "user.name=CI", "commit", "-qam", "the ready draft")
    done = cli(repo, "run", "--base", "main", "--no-comment")
    assert done.returncode == 0, done.stdout + done.stderr
    selected = json.loads((repo / "agent-eval-results" / "results.json").read_text())["selection"]["selected"]
    assert [(s["path"], s["reason"]) for s in selected] == [("evaluation/datasets/drafts/ready.csv", "changed in this PR")]
