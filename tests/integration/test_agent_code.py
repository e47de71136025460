"""Which files are the agent's code, read from real files with ``ast``: the package, what it
imports from the repository (relative and absolute, transitively), dependency files, the config."""

from __future__ import annotations

from pathlib import Path

from agent_eval_action.repo.agent_code import agent_paths


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_package_and_every_repository_module_it_imports(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app/__init__.py": "from . import agent\n",
            "app/agent.py": "import json\nfrom .tools import lookup\nfrom google.adk.agents import LlmAgent\nroot_agent = None\n",
            "app/tools.py": "from shared.db import query\n",
            "app/prompts/system.txt": "be nice\n",
            "shared/__init__.py": "",
            "shared/db.py": "from ..outside import nothing\nimport shared.pool as pool\n",
            "shared/pool.py": "from helpers import *\n",
            "helpers.py": "VALUE = 1\n",
            "unused/thing.py": "X = 1\n",
            "broken/mod.py": "def (:\n",
            "scripts/release.py": "import app.agent\n",  # imports the agent; the agent does not import it
            "README.md": "# docs\n",
        },
    )
    found = agent_paths("app.agent:root_agent", top=tmp_path, import_roots=[tmp_path], config_file=tmp_path / "agent-eval.toml")
    assert found is not None
    assert found[0] == "app/**"
    assert {"shared/__init__.py", "shared/db.py", "shared/pool.py", "helpers.py"} <= set(found)
    assert "requirements*.txt" in found and "uv.lock" in found and "pyproject.toml" in found and "agent-eval.toml" in found
    assert not any(p.startswith(("unused", "broken", "scripts", "README")) for p in found), found
    # The same agent named as a directory, or as a bare package name, is the same code.
    assert agent_paths(str(tmp_path / "app"), top=tmp_path, import_roots=[tmp_path], config_file=None) == [
        p for p in found if p != "agent-eval.toml"
    ]
    assert agent_paths("app", top=tmp_path, import_roots=[tmp_path], config_file=None) == [p for p in found if p != "agent-eval.toml"]


def test_a_nested_agent_counts_the_dependency_files_above_it(tmp_path: Path) -> None:
    write(tmp_path, {"agents/support/agent.py": "from support import tools\n", "agents/support/tools.py": "", "web/index.html": ""})
    found = agent_paths("support.agent:root_agent", top=tmp_path, import_roots=[tmp_path / "agents"], config_file=None)
    assert found is not None and found[0] == "agents/support/**"
    assert "agents/requirements*.txt" in found and "requirements*.txt" in found and "agents/poetry.lock" in found
    assert not any(p.startswith("web") for p in found)


def test_an_agent_that_is_not_a_file_in_the_repository_cannot_be_told_apart(tmp_path: Path) -> None:
    write(tmp_path, {"agent.py": "root_agent = None\n"})
    assert agent_paths("google.adk.agents:LlmAgent", top=tmp_path, import_roots=[tmp_path], config_file=None) is None
    # A single-module agent at the top is that file.
    found = agent_paths("agent:root_agent", top=tmp_path, import_roots=[tmp_path], config_file=None)
    assert found is not None and found[0] == "agent.py"
