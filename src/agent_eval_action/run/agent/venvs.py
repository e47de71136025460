"""The agent's own environment: a venv made by the user's ``install`` command, outside the
workspace, cached by what it is made from.

The action's own environment is never touched: an agent pinning google-adk 1.x or its own
pydantic cannot downgrade what we run on. A venv is keyed by the hash of the command, the
interpreter it is made from and everything the command can read: the repository's whole tree
(``pip install .`` reads the package itself, not only its dependency files), so the PR's agent
and the base's (``compare-with = "base"``) share one only when their trees are byte-identical.
Outside a repository, or with uncommitted changes, the key is the folder's: never shared.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from agent_eval_action.repo.git import Git
from agent_eval_action.run.agent.env import agent_environment
from agent_eval_action.system.errors import InfrastructureError
from agent_eval_action.text.workflow import group, in_actions

READY = ".agent-eval-ready"  # written last: a venv whose install failed or was cut off is never reused
# The files the install command wrote in the repository that git ignores (a prompt rendered into
# build/ from a committed template): read by the agent, they are inputs by their content.
MADE = ".agent-eval-made"
_NOT_MADE = ("__pycache__", ".egg-info", ".dist-info")  # a build's own metadata and bytecode, never an input


def environment_key(command: str, project: Path, python: str, source: str | None = None) -> str:
    """The hash of what the venv is made from: the command, the interpreter, and the source it
    can read: ``source`` (a git tree hash), else the tree of the repository holding ``project``
    when it has no uncommitted changes, else the folder itself (a key no tree has: never shared,
    and the same for every run of that checkout, so runs do not pile venvs up)."""
    tree = source or source_tree(project) or f"working tree {project.resolve()}"
    return hashlib.sha256(f"{command}\0{python}\0{tree}".encode()).hexdigest()[:16]


def source_tree(project: Path) -> str | None:
    """The hash of the whole tree of the repository ``project`` is in, when what is on disk is
    that tree (no change, no untracked file); None otherwise."""
    git = Git(project)
    if git.toplevel() is None or git.run("status", "--porcelain", "--untracked-files=all", check=False).stdout.strip():
        return None
    return git.tree("HEAD")


def install_environment(
    command: str,
    project: Path,
    env: Mapping[str, str],
    out: TextIO,
    *,
    label: str = "the agent",
    fresh: bool = True,
    source: str | None = None,
) -> str:
    """The Python of a venv under ``$RUNNER_TEMP`` (else the temp dir) that ``command`` installed
    ``project``'s dependencies into (run in ``project``, the venv first on PATH). ``fresh``: made
    anew (the PR's agent: the command runs once a check); else one already made with the same
    :func:`environment_key` is reused (the base's agent, beside the PR's); ``source``: the tree
    hash of ``project``'s files when they are no checkout (the base's export). Raises
    InfrastructureError when the command fails."""
    # The interpreter our own venv was made from: the agent's venv must not see our packages.
    base = getattr(sys, "_base_executable", None) or sys.executable
    key = environment_key(command, project, base, source)
    venv = Path(env.get("RUNNER_TEMP") or tempfile.gettempdir()) / f"agent-eval-venv-{key}"
    python = venv / "bin" / "python"
    if not fresh and (venv / READY).is_file() and python.exists():
        print(f"{label}'s environment: {venv} (cached: same install command, interpreter and files)", file=out, flush=True)
        return str(python)
    with group(out, f"Install {label}'s environment", actions=in_actions(env)):
        shutil.rmtree(venv, ignore_errors=True)
        made = subprocess.run([base, "-m", "venv", "--clear", "--without-pip", str(venv)], check=False, capture_output=True, text=True)
        if made.returncode == 0 and not seed_pip(venv):
            made = subprocess.run(
                [str(python), "-m", "ensurepip", "--upgrade", "--default-pip"], check=False, capture_output=True, text=True
            )
        if made.returncode != 0:
            raise InfrastructureError(f"could not create {label}'s venv at {venv}: {(made.stderr or made.stdout).strip()[:300]}")
        clean = agent_environment(env)
        clean.update({"VIRTUAL_ENV": str(venv), "PATH": os.pathsep.join([str(venv / "bin"), clean.get("PATH", "")])})
        clean.pop("PYTHONPATH", None)  # ours points into our own installation
        clean.pop("PYTHONHOME", None)
        print(f"{label}'s environment: {venv} ({base}); running in {project}: {command}", file=out, flush=True)
        before = _ignored_files(project)
        done = subprocess.run(command, shell=True, check=False, env=clean, cwd=project)
    if done.returncode != 0:
        raise InfrastructureError(f"the install command exited with {done.returncode} for {label}: {command}")
    after = _ignored_files(project)
    (venv / MADE).write_text("\n".join(sorted(name for name, seen in after.items() if before.get(name) != seen)))
    (venv / READY).write_text(key)
    return str(python)


def _ignored_files(project: Path) -> dict[str, tuple[int, int]]:
    """The files of ``project``'s repository that git ignores (named from its top), with their
    modification time and size (a venv's folder, bytecode and build metadata left out); empty
    outside a repository."""
    top = Git(project).toplevel()
    if top is None:
        return {}
    done = subprocess.run(
        ["git", "ls-files", "-z", "--others", "--ignored", "--exclude-standard"], cwd=top, capture_output=True, check=False
    )
    if done.returncode != 0:
        return {}
    project = top
    found: dict[str, tuple[int, int]] = {}
    venvs: dict[str, bool] = {}
    for name in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        parts = name.split("/")
        if not name or any(part == "__pycache__" or part.endswith(_NOT_MADE) for part in parts):
            continue
        if len(parts) > 1 and venvs.setdefault(parts[0], (project / parts[0] / "pyvenv.cfg").is_file()):
            continue
        try:
            status = os.lstat(project / name)
        except OSError:
            continue
        found[name] = (status.st_mtime_ns, status.st_size)
    return found


def made_files(python: str | None) -> list[str]:
    """The repository files git ignores that the install command which made ``python``'s venv
    wrote (repository-relative); empty for a Python no install command made."""
    if not python:
        return []
    try:
        text = (Path(python).parent.parent / MADE).read_text()
    except OSError:
        return []
    return [name for name in text.split("\n") if name]


def bundled_wheels() -> list[Path]:
    """The wheels ``python -m venv`` has ensurepip install (pip; setuptools too before 3.12), from
    where ensurepip takes them: the distribution's wheel folder when it has one (Debian's), else
    the ones bundled with it. Empty when any is missing."""
    import ensurepip

    names = ("pip",) if sys.version_info >= (3, 12) else ("pip", "setuptools")
    folder = sysconfig.get_config_var("WHEEL_PKG_DIR") or os.path.join(os.path.dirname(ensurepip.__file__), "_bundled")
    found = []
    for name in names:
        wheels = sorted(Path(folder).glob(f"{name}-*-py3-none-any.whl")) if os.path.isdir(folder) else []
        if not wheels:
            return []
        found.append(wheels[-1])
    return found


def seed_pip(venv: Path) -> bool:
    """Installs :func:`bundled_wheels` into ``venv`` (made by this interpreter's base, without
    pip) as ensurepip would, with PyPA's ``installer``: 0.15 s where ensurepip, which runs pip to
    install pip, takes 2.5 s on a quiet machine. False when the wheels are not to be found."""
    wheels = bundled_wheels()
    if not wheels:
        return False
    from installer import install
    from installer.destinations import SchemeDictionaryDestination
    from installer.sources import WheelFile

    paths = sysconfig.get_paths(scheme="venv", vars={"base": str(venv), "platbase": str(venv)})
    scheme = {key: paths[key] for key in ("purelib", "platlib", "scripts", "data")}
    python = str(venv / "bin" / "python")
    for wheel in wheels:
        destination = SchemeDictionaryDestination(scheme, interpreter=python, script_kind="posix", bytecode_optimization_levels=())
        with WheelFile.open(wheel) as source:
            install(source, destination, {"INSTALLER": b"agent-eval-action"})
    # pip's wheel names its versioned script after the Python it was built on; pip, installing
    # itself, renames it after the one it runs on, and so do we.
    scripts = Path(scheme["scripts"])
    ours = f"pip{sys.version_info[0]}.{sys.version_info[1]}"
    for script in scripts.glob("pip3.*"):
        if script.name == ours:
            continue
        if (scripts / ours).exists():
            script.unlink()
        else:
            script.rename(scripts / ours)
    return True
