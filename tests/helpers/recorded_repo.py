"""A repository on main with one recorded dataset and its committed baseline, made once per test
process (``template``), and a copy of it on a PR branch for each test (``repo``). A test module
uses them as fixtures by naming them: ``template = recorded_repo.template``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.commands import cli
from tests.helpers.factories import runs
from tests.helpers.repos import commit, new_repo, pr_branch


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: one recorded dataset and its committed baseline, made once per test process."""
    repo = new_repo(
        tmp_path_factory.mktemp("verdict") / "repo",
        {
            "agent-eval.toml": 'datasets = ["evaluation/datasets/*.csv"]\n',
            "app/agent.py": "root_agent = None\n",
            "evaluation/datasets/cs_runs.csv": runs(),
        },
    )
    commit(repo, "datasets")
    assert cli(repo, "baseline", "update").returncode == 0
    commit(repo, "baselines")
    return repo


@pytest.fixture
def repo(template: Path, tmp_path: Path) -> Path:
    return pr_branch(template, tmp_path)
