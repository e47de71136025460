"""Repositories for the observed-inputs tests: an ADK agent whose scripted model follows what
the agent read (tests/apps/observed/scripted.py), main with a committed baseline, a PR branch,
and the check run as CI runs it."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from agent_eval_action.config import Config
from tests.helpers.commands import cli
from tests.helpers.repos import DATASET, ROOT, commit, git, golden, new_repo, results

QUESTIONS = 6  # two model calls each
BASELINE_RUNS = Config().baseline_runs  # the runs a question `baseline update` makes by default
SCRIPTED = ROOT / "tests" / "apps" / "observed" / "scripted.py"
CONFIG = 'datasets = ["evaluation/datasets/*.json"]\nagent = "{agent}"\n'


def repo_with(
    tmp_path: Path,
    files: dict[str, str],
    agent: str = "shop.agent:root_agent",
    extra_config: str = "",
    prepare: Callable[[Path], None] | None = None,
) -> Path:
    """main: ``files``, the scripted model as ``scripted.py``, the config, a dataset and its
    baseline (made by running the agent); then a PR branch ``pr`` checked out. ``prepare``: what
    else the repository holds before the first commit (a link, a database, a submodule)."""
    repo = new_repo(tmp_path / "repo", dict(files))
    if prepare is not None:
        prepare(repo)
    shutil.copy(SCRIPTED, repo / "scripted.py")
    (repo / "agent-eval.toml").write_text(CONFIG.format(agent=agent) + extra_config)
    (repo / ".gitignore").write_text("agent-eval-results/\ncalls.txt\n__pycache__/\n.cache/\n")
    (repo / "README.md").write_text("# shop\n")
    golden(repo / DATASET, QUESTIONS)
    commit(repo, "the agent and its dataset")
    # With a model cache the baseline's later runs of a question replay its first.
    assert run(repo, "baseline", "update")[1] == 2 * QUESTIONS * (1 if "model-cache" in extra_config else BASELINE_RUNS)
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


def run(repo: Path, *args: str, code: int = 0, env: dict[str, str] | None = None) -> tuple[str, int]:
    """The CLI's output and the model calls it made; asserts its exit code."""
    counter = repo / "calls.txt"
    counter.write_text("")
    done = cli(repo, *args, env={"CALLS_FILE": str(counter), **(env or {})})
    assert done.returncode == code, done.stdout + done.stderr
    return done.stdout + done.stderr, len(counter.read_text().splitlines())


def pr(repo: Path, path: str, text: str) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    commit(repo, f"change {path}")


def assert_caught(repo: Path, *args: str, env: dict[str, str] | None = None) -> None:
    """``check --base main`` fails (exit 1) on the regressed metric, having run the agent."""
    out, calls = run(repo, "check", "--base", "main", *args, code=1, env=env)
    assert calls > 0, out
    assert "tool_usage_accuracy" in out, out
    failures = results(repo)["gate"]["failures"]
    assert any(f["metric"] == "tool_usage_accuracy" for f in failures), failures


PACKAGE_INIT = {"shop/__init__.py": ""}


SITE = next(p for p in sys.path if p.endswith("site-packages"))  # google-adk, for the agent's venv
# The install command: the agent's venv sees our site-packages (google-adk) through a .pth file,
# and gets `helper` from the repository's vendor/ wheels, as a real install would from an index.
LINK_ADK = f"python -c \"import site; open(site.getsitepackages()[0] + '/adk.pth', 'w').write({SITE!r})\""
