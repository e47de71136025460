"""The repository's root, asked of git once per Git object (a check asked 14 times), in real
repositories: a repository made below the root afterwards does not move it, and outside a
repository git is asked again until there is one."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval_action.repo.git import Git
from tests.helpers.repos import git, new_repo


def _asked(trace: Path) -> int:
    return sum("rev-parse --show-toplevel" in line for line in trace.read_text().splitlines()) if trace.exists() else 0


def test_the_root_is_asked_once_and_a_repository_made_below_it_later_does_not_move_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = new_repo(tmp_path / "repo")
    (repo / "project").mkdir()
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    ours = Git(repo / "project")
    assert ours.toplevel() == repo.resolve()
    git(repo / "project", "init", "-q")  # what a PR's agent could do while the check runs
    assert ours.toplevel() == repo.resolve() and ours.workspace().root == repo.resolve()
    assert _asked(trace) == 1
    assert Git(repo / "project").toplevel() == (repo / "project").resolve()  # a new object asks git


def test_outside_a_repository_git_is_asked_again_until_there_is_one(tmp_path: Path) -> None:
    folder = tmp_path / "later"
    folder.mkdir()
    ours = Git(folder)
    if ours.toplevel() is not None:
        pytest.skip("the temp dir is inside a git repository here")
    new_repo(folder)
    assert ours.toplevel() == folder.resolve()
