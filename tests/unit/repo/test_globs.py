"""The one glob matcher (``globs``), as GitHub users write globs in ``on.push.paths`` and
``.gitignore``: classes, braces, ``**`` anywhere, and ``!`` patterns read in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval_action.config import Config
from agent_eval_action.repo.git import Change, Workspace
from agent_eval_action.repo.globs import is_glob, matches
from agent_eval_action.system.errors import ConfigError
from agent_eval_action.verdict.selection import PathRoles, select


@pytest.mark.parametrize(
    ("path", "expected"),
    [("data/a.json", True), ("data/b12.json", True), ("data/c.json", False), ("data/ab/x.json", False), ("data/[ab].json", False)],
)
def test_a_class_is_one_of_its_characters(path: str, expected: bool) -> None:
    assert matches(path, ["data/[ab]*.json"]) is expected


def test_a_negated_class_and_a_range() -> None:
    assert matches("data/c.json", ["data/[!ab].json"]) and not matches("data/a.json", ["data/[!ab].json"])
    assert matches("runs/run7.csv", ["runs/run[0-9].csv"]) and not matches("runs/runx.csv", ["runs/run[0-9].csv"])


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("evaluation/golden/a.json", True),
        ("evaluation/recorded/a.jsonl", True),
        ("evaluation/recorded/a.csv", False),
        ("evaluation/other/a.json", False),
    ],
)
def test_braces_are_alternatives_anywhere(path: str, expected: bool) -> None:
    assert matches(path, ["evaluation/{golden,recorded}/*.{json,jsonl}"]) is expected


DATASETS = ["evaluation/datasets/**", "!evaluation/datasets/drafts/**", "evaluation/datasets/drafts/ready.json"]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("evaluation/datasets/a.json", True),
        ("evaluation/datasets/deep/er/b.csv", True),
        ("evaluation/datasets/drafts/wip.json", False),  # excluded by the later `!`
        ("evaluation/datasets/drafts/sub/wip.json", False),
        ("evaluation/datasets/drafts/ready.json", True),  # included again by the pattern after it
        ("evaluation/other.json", False),
    ],
)
def test_the_last_pattern_that_matches_decides(path: str, expected: bool) -> None:
    assert matches(path, DATASETS) is expected


def test_an_exclusion_before_the_pattern_it_meant_excludes_nothing() -> None:
    """Order matters, as in Actions' paths filters: a `!` drops only what came before it."""
    assert matches("evaluation/datasets/drafts/wip.json", ["!evaluation/datasets/drafts/**", "evaluation/datasets/**"])
    assert not matches("evaluation/datasets/drafts/wip.json", ["evaluation/datasets/**", "!evaluation/datasets/drafts/**"])
    assert not matches("anything.json", ["!*.csv"])  # only exclusions: nothing is included


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        ("**/golden.json", "golden.json", True),  # at the start: zero directories too
        ("**/golden.json", "a/b/c/golden.json", True),
        ("**/golden.json", "a/b/notgolden.json", False),
        ("evaluation/**/golden.json", "evaluation/golden.json", True),  # in the middle
        ("evaluation/**/golden.json", "evaluation/x/y/golden.json", True),
        ("evaluation/**/golden.json", "other/x/golden.json", False),
        ("evaluation/**", "evaluation/x/y/z.csv", True),  # at the end
        ("evaluation/**", "evaluationx/y.csv", False),
        ("evaluation/*", "evaluation/x/y.csv", True),  # a directory the pattern matches: what is below it too
        ("*.json", "a/b.json", False),  # `*` stays within one directory
        ("a?.json", "ab.json", True),
        ("a?.json", "a/.json", False),
    ],
)
def test_globstar_at_the_start_middle_and_end(glob: str, path: str, expected: bool) -> None:
    assert matches(path, [glob]) is expected


def test_spaces_and_brackets_in_names() -> None:
    assert matches("my data/golden set.json", ["my data/*.json"])
    assert matches("my data/golden set.json", ["my data/golden set.json"])
    # `[` opens a class; `[[]` (or `\[`) is a literal one.
    assert matches("runs/run[1].json", ["runs/run[[]1].json"]) and not matches("runs/run1.json", ["runs/run[[]1].json"])
    assert matches("runs/run[1].json", ["runs/run\\[1].json"])
    assert matches("runs/run1.json", ["runs/run[1].json"]) and not matches("runs/run[1].json", ["runs/run[1].json"])
    assert is_glob("runs/run[1].json") and not is_glob("my data/golden set.json")


def test_dot_names_need_the_dot_spelled() -> None:
    assert not matches(".github/workflows/ci.yml", ["**"]) and not matches("app/.env", ["app/*"])
    assert matches(".github/workflows/ci.yml", [".github/**"]) and matches("app/.env", ["app/.*"])


def test_a_leading_dot_slash_is_the_same_path() -> None:
    assert matches("./evaluation/a.json", ["evaluation/*.json"]) and matches("evaluation/a.json", ["./evaluation/*.json"])
    assert not matches("evaluation/a.json", ["evaluation/*.json", "!./evaluation/a.json"])


def test_a_subfolders_globs_keep_their_exclusions(tmp_path: Path) -> None:
    workspace = Workspace(root=tmp_path, cwd=tmp_path / "agents")
    assert [workspace.glob(g) for g in ["./datasets/**", "!datasets/drafts/**"]] == ["agents/datasets/**", "!agents/datasets/drafts/**"]
    assert workspace.glob("/abs/**") == "/abs/**"


def test_selection_reads_exclusions_in_datasets_and_agent_paths() -> None:
    roles = PathRoles(dataset_globs=DATASETS, baselines_dir="evaluation/baselines", agent_paths=["app/**", "!app/docs/**"])
    all_datasets = ["evaluation/datasets/a.json", "evaluation/datasets/drafts/ready.json"]
    only_drafts_and_docs = [Change("M", "evaluation/datasets/drafts/wip.json"), Change("M", "app/docs/notes.md")]
    selection = select(all_datasets, only_drafts_and_docs, roles)
    assert selection.selected == [] and selection.agent_changes == []
    with_agent = select(all_datasets, [*only_drafts_and_docs, Change("M", "app/agent.py")], roles)
    assert with_agent.agent_changes == ["app/agent.py"] and [s.path for s in with_agent.selected] == all_datasets
    deleted = select(all_datasets, [Change("D", "evaluation/datasets/drafts/ready.json")], roles)
    assert deleted.deleted == ["evaluation/datasets/drafts/ready.json"]


@pytest.mark.parametrize("setting", ["datasets", "agent_paths"])
def test_a_list_of_exclusions_only_is_refused_naming_the_setting(setting: str) -> None:
    with pytest.raises(ConfigError) as raised:
        Config().with_overrides(**{setting: ["!evaluation/datasets/drafts/**"]})
    assert f"{setting}:" in str(raised.value) and "every pattern starts with `!`" in str(raised.value)
    assert Config().with_overrides(**{setting: ["evaluation/**", "!evaluation/drafts/**"]})
