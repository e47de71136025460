"""The agent's venv: made without ensurepip's seconds, with the pip (and on 3.11 the setuptools)
``python -m venv`` would have given it, runnable by every name it has there."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from agent_eval_action.run.agent import venvs as environments
from agent_eval_action.run.agent.venvs import install_environment

VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"
# Every name pip has in the venv, each run from it (the venv is first on the command's PATH).
COMMAND = f"pip --version && pip3 --version && pip{VERSION} --version && python -m pip --version > versions.txt"
# Where ensurepip made the venv, its pip is ensurepip's to make runnable: the listing is compared.
ITS_PIP = "python -m pip --version > versions.txt"


def _listing(venv: Path) -> tuple[set[str], set[str]]:
    """The venv's pip scripts and the distributions in its site-packages."""
    scripts = {p.name for p in (venv / "bin").iterdir() if p.name.startswith("pip")}
    (site,) = (venv / "lib").glob("python*/site-packages")
    return scripts, {p.name.split("-")[0] for p in site.glob("*.dist-info")}


def _made(project: Path, command: str = COMMAND) -> Path:
    project.mkdir()
    python = install_environment(command, project, {"RUNNER_TEMP": str(project)}, io.StringIO())
    venv = Path(python).parent.parent
    said = (project / "versions.txt").read_text()
    assert said.startswith("pip ") and str(venv) in said  # the venv's own pip, not ours
    seen = subprocess.run([python, "-c", "import pydantic"], capture_output=True, text=True)
    assert seen.returncode == 1 and "No module named 'pydantic'" in seen.stderr  # nor our packages
    return venv


def test_the_venv_has_what_ensurepip_gives_under_every_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ours = _made(tmp_path / "seeded")
    scripts, distributions = _listing(ours)
    assert scripts == {"pip", "pip3", f"pip{VERSION}"}
    assert distributions == ({"pip"} if sys.version_info >= (3, 12) else {"pip", "setuptools"})
    # Where the bundled wheels cannot be found, ensurepip makes it, as `python -m venv` does:
    # the two are alike (every name of ours ran above; three pip starts fewer here).
    monkeypatch.setattr(environments, "bundled_wheels", list)
    assert _listing(_made(tmp_path / "ensurepip", ITS_PIP)) == (scripts, distributions)
