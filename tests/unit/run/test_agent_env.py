"""Which Python runs the agent when nobody names one: the repository's own ``.venv`` / ``venv``
when it has google-adk, found from the working directory up to the repository's top."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_eval_action.run.agent.env import chosen_agent_python, repository_venv


def venv(folder: Path, *, adk: bool) -> Path:
    """A venv's layout on disk: its python, and google-adk in its site-packages when ``adk``."""
    python = folder / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    site = folder / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    if adk:
        (site / "google" / "adk").mkdir(parents=True)
        (site / "google" / "adk" / "__init__.py").write_text("")
    return python


def test_the_nearest_venv_with_google_adk_up_to_the_repositorys_top(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "agents" / "shop").mkdir(parents=True)
    assert repository_venv(repo / "agents" / "shop") is None
    venv(repo / "venv", adk=False)  # a venv without google-adk is not the agent's
    assert repository_venv(repo / "agents" / "shop") is None
    top = venv(repo / ".venv", adk=True)
    assert repository_venv(repo / "agents" / "shop") == top
    nearer = venv(repo / "agents" / "venv", adk=True)
    assert repository_venv(repo / "agents" / "shop") == nearer
    # Never above the repository's top.
    venv(tmp_path / ".venv", adk=True)
    (tmp_path / "other" / ".git").mkdir(parents=True)
    assert repository_venv(tmp_path / "other") is None


def test_the_setting_comes_first_then_the_repositorys_venv_then_ours_each_said_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    python, which = chosen_agent_python(None, tmp_path, ours=sys.executable)
    assert python is None and which.startswith(f"the agent's Python: {sys.executable} (this tool's own: ")
    found = venv(tmp_path / ".venv", adk=True)
    python, which = chosen_agent_python(None, tmp_path, ours=sys.executable)
    assert python == str(found)
    assert which == "the agent's Python: .venv/bin/python (the repository's .venv, which has google-adk; agent-python overrides)"
    python, which = chosen_agent_python("/opt/py/bin/python", tmp_path, ours=sys.executable)
    assert (python, which) == ("/opt/py/bin/python", "the agent's Python: /opt/py/bin/python (agent-python)")
    assert "\n" not in which
