"""Real git repositories made in temp dirs, for the tests and the benchmarks: ``git``, and the
counting agent's repository: ``tests/apps/counting`` (whose scripted model writes one line per
call to $CALLS_FILE) beside a golden dataset of its price questions."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers.factories import Run, write_dataset

ROOT = Path(__file__).resolve().parents[2]
ITEMS = ["apple", "pear", "plum", "fig"]
DATASET = Path("evaluation") / "datasets" / "prices.json"


def golden(path: Path, count: int, *, edited: set[int] | None = None) -> None:
    """``count`` price questions, two model calls each; those in ``edited`` reworded."""
    questions = []
    for i in range(count):
        item = ITEMS[i % len(ITEMS)]
        # Distinct texts: identical requests would be one cache entry.
        text = f"{i}: what is the price of {item}" if i not in (edited or set()) else f"{i}: please, the price of {item}"
        questions.append(
            {
                "id": f"q{i:02d}",
                "user_inputs": [text],
                "agents_evaluated": ["counting"],
                "reference_data": {"reference_tool_interactions": [{"tool_name": "lookup", "input_arguments": {"item": item}}]},
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"golden_questions": questions}, indent=1))


def stored(text: str) -> dict[str, Any]:
    """A baseline file's JSON with each question's packed runs (repo/results_io.pack_runs) whole
    again, one object a run, as every reader of baselines gets them."""
    from agent_eval_action.repo.results_io import unpack_runs

    data: dict[str, Any] = json.loads(text)
    for dataset in data.get("datasets") or []:
        dataset["questions"] = unpack_runs(dataset.get("questions", []), "baseline", "")
    return data


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def counting_repo(repo: Path, questions: int) -> Path:
    """A git repository (branch main, one commit) with the counting agent and ``questions`` of
    its questions in ``DATASET``, checked by agent-eval.toml."""
    new_repo(repo)
    shutil.copytree(ROOT / "tests" / "apps" / "counting", repo / "counting", ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.json"]\nagent = "counting"\nbaseline-runs = 1\n')
    (repo / ".gitignore").write_text("agent-eval-results/\ncalls.txt\n__pycache__/\n")
    golden(repo / DATASET, questions)
    commit(repo, "agent and dataset")
    return repo


def pr_branch(template: Path, tmp_path: Path) -> Path:
    """A copy of a template repository (built once per test process), checked out on a PR branch."""
    repo = tmp_path / "repo"
    shutil.copytree(template, repo)
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


def results(repo: Path) -> dict[str, Any]:
    """The results.json a run wrote in the repository's default output directory."""
    data: dict[str, Any] = json.loads((repo / "agent-eval-results" / "results.json").read_text())
    return data


def new_repo(repo: Path, files: dict[str, str | list[Run]] | None = None) -> Path:
    """A git repository on branch main, with a committer set and ``files`` written (not committed):
    text as is, a list of runs as a recorded dataset."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@example.com")
    git(repo, "config", "user.name", "CI")
    for name, content in (files or {}).items():
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, list):
            write_dataset(target, content)
        else:
            target.write_text(content)
    return repo


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


SHOP = ROOT / "tests" / "apps" / "shop"  # a root agent (tools lookup_order, explode) with a sub-agent (refunds)


def app_repo(repo: Path, package: str = "app") -> Path:
    """A git repository on main whose ADK app (the scripted multi-agent shop) is ``package/agent.py``."""
    new_repo(repo)
    shutil.copytree(SHOP, repo / package, ignore=shutil.ignore_patterns("__pycache__"))
    (repo / ".gitignore").write_text("agent-eval-results/\n__pycache__/\n")
    commit(repo, "the agent")
    return repo
