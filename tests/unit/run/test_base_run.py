"""The base's side of compare-with = "base" takes its settings from the base's own config, found
by the base's own search, and notices a file changed after it was sealed."""

from __future__ import annotations

from pathlib import Path

from agent_eval_action.config import config_from_text, placed
from agent_eval_action.run.base_run import BaseTree, base_config


def test_the_bases_config_moved_into_pyproject_names_the_bases_agent_and_no_pr_interpreter(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.agent-eval]\nagent = "base_pkg.agent:root_agent"\n')
    pr = config_from_text('agent = "pr_pkg.agent:root_agent"\nagent-python = "ci/python"\nruns = 3\ntimeout = 7\n', "agent-eval.toml", None)
    assert pr is not None
    twin = base_config(placed(pr, "."), tmp_path, "", python=None)
    assert twin.agent == "base_pkg.agent:root_agent"
    assert twin.agent_python is None  # the PR's wrapper is the PR's
    assert (twin.runs, twin.timeout) == (3, 7)  # how the run is carried out is the run's
    assert twin.origin.folder == str(tmp_path.resolve()) and twin.in_process is False


def test_a_base_without_a_config_runs_the_runs_reference_from_its_own_files(tmp_path: Path) -> None:
    pr = config_from_text('agent = "app"\nagent-python = "ci/python"\n', "agent-eval.toml", None)
    assert pr is not None
    (tmp_path / "app").mkdir()
    twin = base_config(placed(pr, "."), tmp_path, "", python="/venv/bin/python")
    assert twin.agent == str((tmp_path / "app").resolve())
    assert twin.agent_python == "/venv/bin/python"


def test_a_file_written_added_or_removed_after_the_seal_is_named(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "agent.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "tool.py").write_text("y = 1\n")
    tree = BaseTree(top=tmp_path, tree=None)
    tree.seal()
    assert tree.changed() == []
    (tmp_path / "pkg" / "agent.py").chmod(0o644)
    (tmp_path / "pkg" / "agent.py").write_text("x = 2\n")
    (tmp_path / "pkg").chmod(0o755)
    (tmp_path / "pkg" / "tool.py").unlink()
    (tmp_path / "pkg" / "new.py").write_text("")
    assert tree.changed() == ["pkg", "pkg/agent.py", "pkg/new.py", "pkg/tool.py"]


def test_a_file_written_and_put_back_is_named_too(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text("x = 1\n")
    tree = BaseTree(top=tmp_path, tree=None)
    tree.seal()
    agent.chmod(0o644)
    agent.write_text("x = 2\n")
    agent.write_text("x = 1\n")  # the same bytes again: its change time still moved
    agent.chmod(0o444)
    assert tree.changed() == ["agent.py"]
