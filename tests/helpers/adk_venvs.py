"""Venvs with a released google-adk and nothing of ours, made once from PyPI and kept in the temp
dir: the agent's own environment of a team pinned to another ADK (``--agent-python``, or the
repository's ``.venv`` the tool finds by itself)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ADK_1 = "1.39.1"  # the last google-adk 1.x


def adk_venv(version: str) -> Path:
    """A venv with google-adk==version and nothing of ours, made once and kept in the temp dir.
    Test sessions running at once (xdist workers, two checkouts on one machine) share it: the
    first makes it under a lock while the others wait, instead of clearing it under each other."""
    import fcntl
    import tempfile

    target = Path(tempfile.gettempdir()) / "agent-eval-adk-venvs" / version
    target.parent.mkdir(parents=True, exist_ok=True)
    with (target.parent / f"{version}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _make_adk_venv(version, target)


def _make_adk_venv(version: str, target: Path) -> Path:
    python = target / "bin" / "python"
    if (target / ".complete").is_file():
        return python
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    base = getattr(sys, "_base_executable", sys.executable)
    try:
        if uv:
            subprocess.run([uv, "venv", "-q", "--clear", "--python", base, str(target)], check=True, capture_output=True, timeout=300)
            subprocess.run(
                [uv, "pip", "install", "-q", "--python", str(python), f"google-adk=={version}"],
                check=True,
                capture_output=True,
                timeout=600,
            )
        else:
            subprocess.run([base, "-m", "venv", "--clear", str(target)], check=True, capture_output=True, timeout=300)
            subprocess.run(
                [str(python), "-m", "pip", "install", "-q", f"google-adk=={version}"], check=True, capture_output=True, timeout=900
            )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
        detail = getattr(error, "stderr", b"") or b""
        message = f"could not install google-adk=={version} from PyPI into {target}: {detail.decode(errors='replace')[-500:]}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message + " (needs PyPI; CI always runs this)")
    (target / ".complete").write_text(version)
    return python
