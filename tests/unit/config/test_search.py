"""The one config search (``config.search``): agent-eval.toml, else ``[tool.agent-eval]`` in
pyproject.toml, nearest folder first, up to the repository's top; the file the user named; the
same search in another tree (the merge-base's commit, the base's checkout). Real files in a
temporary repository (its top is the folder holding ``.git``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval_action.config import Origin, file_reader, find_again, find_config, load_config
from agent_eval_action.system.errors import ConfigError


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    top = tmp_path / "repo"
    (top / ".git").mkdir(parents=True)
    for name, text in files.items():
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text(text, encoding="utf-8")
    return top


def test_the_nearest_folder_wins_and_agent_eval_toml_before_pyproject(tmp_path: Path) -> None:
    top = _repo(
        tmp_path,
        {
            "agent-eval.toml": "seed = 1\n",
            "svc/pyproject.toml": "[tool.agent-eval]\nseed = 2\n",
            "svc/agent-eval.toml": "seed = 3\n",
            "svc/deep/x.txt": "",
        },
    )
    found = load_config(cwd=top / "svc" / "deep")
    assert found.seed == 3 and found.origin.file == "../agent-eval.toml" and found.origin.table is None
    assert found.origin.folder == str((top / "svc").resolve()) and found.origin.moved_from == ".."


def test_a_pyproject_without_the_table_is_passed_over_for_a_folder_above(tmp_path: Path) -> None:
    top = _repo(tmp_path, {"agent-eval.toml": "seed = 1\n", "svc/pyproject.toml": '[project]\nname = "svc"\n'})
    found = load_config(cwd=top / "svc")
    assert found.seed == 1 and found.origin.file == "../agent-eval.toml"


def test_the_pyproject_table_is_read_and_named_in_the_source(tmp_path: Path) -> None:
    top = _repo(
        tmp_path, {"pyproject.toml": '[project]\nname = "x"\n[tool.agent-eval]\nruns = 2\n[tool.agent-eval.gate]\nmax-regression = "5%"\n'}
    )
    found = load_config(cwd=top)
    assert found.runs == 2 and found.gate.max_regression == "5%"
    assert found.origin.source == "pyproject.toml [tool.agent-eval]" and found.origin.table == "tool.agent-eval"


def test_the_search_stops_at_the_repositorys_top(tmp_path: Path) -> None:
    (tmp_path / "agent-eval.toml").write_text("seed = 9\n")  # above the repository: not its config
    top = _repo(tmp_path, {"app/x.txt": ""})
    found = load_config(cwd=top / "app")
    assert found.seed == 0 and found.origin.file is None and found.origin.source is None
    # The defaults are the top's: their paths are relative to it.
    assert found.origin.folder == str(top.resolve()) and found.datasets[0] == "../evaluation/datasets/*.json"


def test_a_named_file_is_read_alone_and_one_missing_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = _repo(tmp_path, {"agent-eval.toml": "seed = 1\n", "ci/eval.toml": "seed = 5\n"})
    monkeypatch.chdir(top)
    found = load_config("ci/eval.toml")
    assert found.seed == 5 and found.origin.named and found.origin.file == "ci/eval.toml"
    with pytest.raises(ConfigError, match="config file not found"):
        load_config("ci/none.toml")


def test_a_named_pyproject_is_read_at_its_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = _repo(tmp_path, {"sub/pyproject.toml": "[tool.agent-eval]\nseed = 4\n"})
    monkeypatch.chdir(top)
    found = load_config("sub/pyproject.toml")
    assert found.seed == 4 and found.origin.table == "tool.agent-eval" and found.origin.moved_from == "sub"


def test_a_config_that_links_outside_the_repository_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.toml"
    outside.write_text("seed = 7\n")
    top = _repo(tmp_path, {})
    (top / "agent-eval.toml").symlink_to(outside)
    with pytest.raises(ConfigError, match="config"):
        load_config(cwd=top)


def test_a_file_that_is_not_toml_is_named(tmp_path: Path) -> None:
    top = _repo(tmp_path, {"agent-eval.toml": "seed = = 1\n"})
    with pytest.raises(ConfigError) as refused:
        load_config(cwd=top)
    assert str(refused.value).startswith("agent-eval.toml") and "not valid TOML" in str(refused.value)


def test_find_config_reads_any_tree_through_its_reader() -> None:
    files = {"agent-eval.toml": "seed = 1\n", "a/pyproject.toml": "[tool.agent-eval]\nseed = 2\n"}
    found = find_config(files.get, ["a/b", "a", ""])
    assert found is not None and found.path == "a/pyproject.toml" and found.config.seed == 2
    nothing: dict[str, str] = {}
    assert find_config(nothing.get, ["a", ""]) is None


def test_a_named_file_is_read_alone_unless_the_search_follows() -> None:
    files = {"agent-eval.toml": "seed = 1\n"}
    assert find_config(files.get, [""], "ci/eval.toml") is None
    found = find_config(files.get, [""], "ci/eval.toml", search_too=True)
    assert found is not None and found.path == "agent-eval.toml"


def test_another_tree_is_searched_as_the_config_was_found() -> None:
    """The base's tree: the file the user named first, at the same place from the working
    directory; else the base's own search upward from there."""
    tree = {"svc/ci/eval.toml": "seed = 5\n", "agent-eval.toml": "seed = 1\n"}
    named = Origin(file="ci/eval.toml", named=True)
    found = find_again(named, tree.get, "svc")
    assert found is not None and found.path == "svc/ci/eval.toml"
    searched = find_again(Origin(file="ci/eval.toml", named=False), tree.get, "svc")
    assert searched is not None and searched.path == "agent-eval.toml"
    moved_away = find_again(named, {"agent-eval.toml": "seed = 1\n"}.get, "svc/")
    assert moved_away is not None and moved_away.config.seed == 1


def test_the_file_reader_refuses_what_its_check_refuses(tmp_path: Path) -> None:
    (tmp_path / "agent-eval.toml").write_text("seed = 1\n")

    def refuse(file: Path) -> None:
        raise ConfigError(str(file), "refused")

    assert file_reader(tmp_path)("agent-eval.toml") == "seed = 1\n"
    assert file_reader(tmp_path)("none.toml") is None
    with pytest.raises(ConfigError, match="refused"):
        file_reader(tmp_path, check=refuse)("agent-eval.toml")
