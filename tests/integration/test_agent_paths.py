"""The agent's code by default: its package, the repository modules it imports, its dependency
files and the config; not docs, tests or other folders. What a PR re-runs and when a baseline is
stale both follow it: counted in model calls of the counting agent, in real git repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.commands import calls, cli
from tests.helpers.repos import DATASET, commit, counting_repo, git, golden, pr_branch, stored

QUESTIONS = 8  # two model calls each


def reused(repo: Path) -> int:
    datasets = json.loads((repo / "agent-eval-results" / "results.json").read_text())["datasets"]
    return sum(d["reused"] for d in datasets)


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The counting agent as ``counting.agent:root_agent``, importing ``lib/prices.py`` from outside
    its package, with a README, a script it does not import, a requirements.txt and baselines on
    main; made once per test process (its baseline update runs the agent)."""
    repo = counting_repo(tmp_path_factory.mktemp("agent_paths") / "repo", QUESTIONS)
    (repo / "agent-eval.toml").write_text(
        'datasets = ["evaluation/datasets/*.json"]\nagent = "counting.agent:root_agent"\nbaseline-runs = 1\n'
    )
    (repo / "lib").mkdir()
    (repo / "lib" / "prices.py").write_text('PRICES = {"apple": 1, "pear": 2, "plum": 3}\n')
    (repo / "scripts").mkdir()
    (repo / "scripts" / "release.py").write_text("print('release')\n")
    (repo / "README.md").write_text("# prices\n")
    (repo / "requirements.txt").write_text("google-adk\n")
    agent = repo / "counting" / "agent.py"
    agent.write_text(agent.read_text().replace('PRICES = {"apple": 1, "pear": 2, "plum": 3}', "from lib.prices import PRICES"))
    commit(repo, "the agent's prices in lib/")
    assert calls(repo, "baseline", "update") == 2 * QUESTIONS
    commit(repo, "baselines")
    return repo


@pytest.fixture
def repo(template: Path, tmp_path: Path) -> Path:
    return pr_branch(template, tmp_path)


def change(repo: Path, path: str, text: str, message: str) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    commit(repo, message)


def test_a_readme_only_pr_reuses_every_question(repo: Path) -> None:
    change(repo, "README.md", "# prices\n\nNow with docs.\n", "docs")
    assert calls(repo, "run", "--base", "main") == 0  # no dataset and no agent code changed: nothing to run
    assert calls(repo, "run", "--base", "main", "--all") == 0  # every question's score reused
    assert reused(repo) == QUESTIONS
    golden(repo / DATASET, QUESTIONS, edited={3})
    git(repo, "commit", "-qam", "reword q03")
    assert calls(repo, "run", "--base", "main") == 2  # the README does not make the baseline stale
    assert reused(repo) == QUESTIONS - 1


def test_adding_tests_on_main_leaves_the_baseline_fresh(repo: Path) -> None:
    git(repo, "checkout", "-q", "main")
    change(repo, "tests/test_prices.py", "def test_nothing():\n    pass\n", "tests, without a baseline update")
    change(repo, ".github/workflows/ci.yml", "on: push\n", "a workflow")
    git(repo, "checkout", "-q", "pr")
    git(repo, "merge", "-q", "main")
    assert calls(repo, "run", "--base", "main", "--all") == 0
    assert reused(repo) == QUESTIONS


def test_a_script_the_agent_does_not_import_changes_nothing(repo: Path) -> None:
    change(repo, "scripts/release.py", "print('release 2')\n", "release script")
    assert calls(repo, "run", "--base", "main", "--all") == 0


def test_a_module_the_agent_imports_from_outside_its_package_reruns(repo: Path) -> None:
    change(repo, "lib/prices.py", 'PRICES = {"apple": 1, "pear": 2, "plum": 4}\n', "plum costs more")
    assert calls(repo, "run", "--base", "main") == 2 * QUESTIONS
    results = json.loads((repo / "agent-eval-results" / "results.json").read_text())
    assert results["selection"]["agent_changes"] == ["lib/prices.py"]
    assert reused(repo) == 0


def test_a_requirements_change_reruns(repo: Path) -> None:
    change(repo, "requirements.txt", "google-adk>=1.2\n", "pin adk")
    assert calls(repo, "run", "--base", "main") == 2 * QUESTIONS
    assert reused(repo) == 0


def test_agent_paths_in_the_config_still_decide(repo: Path) -> None:
    """The base's config says which paths are agent code: the README is, there. What the agent
    was seen to read counts too, named there or not."""
    git(repo, "checkout", "-q", "main")
    config = repo / "agent-eval.toml"
    config.write_text(config.read_text() + 'agent-paths = ["counting/**", "README.md"]\n')
    git(repo, "commit", "-qam", "the README is agent code here")
    assert calls(repo, "baseline", "update") == 2 * QUESTIONS  # the fingerprint covers other paths now
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "pr")
    git(repo, "merge", "-q", "main")
    change(repo, "README.md", "# prices, again\n", "docs")
    assert calls(repo, "run", "--base", "main") == 2 * QUESTIONS
    change(repo, "README.md", "# prices\n", "docs back as on main")
    assert calls(repo, "run", "--base", "main", "--all") == 0
    change(repo, "lib/prices.py", 'PRICES = {"apple": 1, "pear": 2, "plum": 4}\n', "not named in agent-paths, but read")
    assert calls(repo, "run", "--base", "main") == 2 * QUESTIONS


def test_a_local_check_sees_work_not_yet_committed(repo: Path) -> None:
    """What runs is the working tree: an edit to the agent's code that is not committed yet
    re-runs everything, and a dataset not yet added is evaluated (both were "nothing to evaluate",
    a green check of what the user had not committed)."""
    prices = repo / "lib" / "prices.py"
    prices.write_text(prices.read_text() + "# cheaper soon\n")
    assert calls(repo, "check", "--base", "main") == 2 * QUESTIONS
    git(repo, "checkout", "-q", "--", "lib/prices.py")
    extra = repo / DATASET.parent / "extra_golden.json"
    extra.write_text((repo / DATASET).read_text())
    assert calls(repo, "check", "--base", "main") == 2 * QUESTIONS
    selected = json.loads((repo / "agent-eval-results" / "results.json").read_text())["selection"]["selected"]
    assert [s["path"] for s in selected] == [(DATASET.parent / "extra_golden.json").as_posix()]


def test_baseline_update_says_when_uncommitted_agent_code_leaves_its_baselines_without_a_fingerprint(repo: Path) -> None:
    git(repo, "checkout", "-q", "main")
    prices = repo / "lib" / "prices.py"
    prices.write_text(prices.read_text() + "# cheaper soon\n")
    done = cli(repo, "baseline", "update", env={"CALLS_FILE": str(repo / "calls.txt")})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the agent's code has changes not committed (lib/prices.py)" in done.stderr, done.stderr
    baseline = stored(next((repo / "evaluation" / "baselines").rglob("*.json")).read_text())
    assert baseline["datasets"][0]["agent_fingerprint"] is None
    git(repo, "commit", "-qam", "cheaper soon")
    done = cli(repo, "baseline", "update", env={"CALLS_FILE": str(repo / "calls.txt")})
    assert "not committed" not in done.stderr, done.stderr
