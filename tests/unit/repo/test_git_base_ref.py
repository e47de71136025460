"""A base ref that is not in the repository, in real repositories: a typo is answered with the
branch or tag it most resembles (a remote's by its short name, as the check finds it too); a
name like none says to fetch it, naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval_action.repo.git import Git
from agent_eval_action.system.errors import ConfigError
from tests.helpers.repos import commit, git, new_repo


def test_a_misspelled_base_ref_is_answered_with_the_names_it_resembles(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    (repo / "a.txt").write_text("a\n")
    commit(repo, "first")
    git(repo, "branch", "-q", "release-2026")
    git(repo, "tag", "v1.0")
    # A remote's branch, as a CI checkout has it (no local branch of that name).
    git(repo, "update-ref", "refs/remotes/origin/develop", "HEAD")
    ours = Git(repo)
    assert ours.similar_refs("mian") == ["main"]
    for typo, meant in (("mian", "'main'"), ("devlop", "'develop'"), ("v1.o", "'v1.0'")):
        with pytest.raises(ConfigError) as raised:
            ours.merge_base(typo)
        said = str(raised.value)
        assert said.startswith(f"--base: base ref '{typo}' is not in this repository (did you mean {meant}"), said
        assert f"else fetch it first: `git fetch origin {typo}`)" in said, said
    with pytest.raises(ConfigError) as raised:
        ours.merge_base("zzzzqq")
    assert str(raised.value) == "--base: base ref 'zzzzqq' is not in this repository (fetch it first: `git fetch origin zzzzqq`)"
    assert ours.merge_base("develop") == git(repo, "rev-parse", "HEAD").strip()  # found as origin/develop


def test_a_ref_named_as_typed_is_never_suggested_and_a_shallow_clone_still_says_to_fetch_its_history(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    (repo / "a.txt").write_text("a\n")
    commit(repo, "first")
    (repo / "a.txt").write_text("b\n")
    commit(repo, "second")
    git(repo, "update-ref", "refs/remotes/upstream/release", "HEAD")  # not origin's: the check does not find it
    ours = Git(repo)
    with pytest.raises(ConfigError) as raised:
        ours.merge_base("release")
    assert str(raised.value) == "--base: base ref 'release' is not in this repository (fetch it first: `git fetch origin release`)"
    with pytest.raises(ConfigError) as raised:
        ours.merge_base("origin/zzzzqq")
    assert str(raised.value).endswith("(fetch it first: `git fetch origin zzzzqq`)")
    git(repo, "branch", "-q", "main-v2")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", "--no-single-branch", f"file://{repo}", str(shallow))
    with pytest.raises(ConfigError) as raised:
        Git(shallow).merge_base("mainn")
    said = str(raised.value)
    assert "did you mean 'main'" in said and said.endswith("fetch-depth: 0` so the base branch's history is there"), said
