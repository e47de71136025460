"""The agent's venv: made without ensurepip's five seconds, with the pip (and on 3.11 the
setuptools) ``python -m venv`` would have given it, runnable by every name it has there."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from agent_eval_action.run import environments
from agent_eval_action.run.environments import install_environment


def _listing(venv: Path) -> tuple[set[str], set[str]]:
    """The venv's scripts and the distributions in its site-packages."""
    scripts = {p.name for p in (venv / "bin").iterdir() if p.name.startswith("pip")}
    (site,) = (venv / "lib").glob("python*/site-packages")
    return scripts, {p.name.split("-")[0] for p in site.glob("*.dist-info")}


def test_the_venv_has_the_pip_ensurepip_gives_under_every_name(tmp_path: Path) -> None:
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    command = f"pip --version && pip3 --version && pip{version} --version && python -m pip --version > versions.txt"
    python = install_environment(command, tmp_path, {"RUNNER_TEMP": str(tmp_path)}, io.StringIO())
    venv = Path(python).parent.parent
    assert (tmp_path / "versions.txt").read_text().startswith("pip ")
    assert str(venv) in (tmp_path / "versions.txt").read_text()  # the venv's own pip, not ours
    # What `python -m venv` (ensurepip) makes, side by side.
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(tmp_path / "reference")], check=True)
    assert _listing(venv) == _listing(tmp_path / "reference")
    # Our packages are not on its path.
    seen = subprocess.run([python, "-c", "import pydantic"], capture_output=True, text=True)
    assert seen.returncode == 1 and "No module named 'pydantic'" in seen.stderr


def test_without_the_bundled_wheels_ensurepip_makes_pip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(environments, "bundled_wheels", list)
    python = install_environment("pip --version > version.txt", tmp_path, {"RUNNER_TEMP": str(tmp_path)}, io.StringIO())
    assert str(Path(python).parent.parent) in (tmp_path / "version.txt").read_text()
