"""The environment the agent's worker gets: ours minus our secrets.

The agent is code we did not write and must never read the GitHub token, the Actions runtime
tokens, the judge's key or the agent-URL auth token. Its own credentials (``GOOGLE_API_KEY``,
``GOOGLE_APPLICATION_CREDENTIALS``, ``GOOGLE_GENAI_USE_VERTEXAI``, ``GOOGLE_CLOUD_*``, ...) pass.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

WITHHELD = ("GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "AGENT_EVAL_JUDGE_API_KEY", "AGENT_EVAL_AUTH_TOKEN")
WITHHELD_PREFIXES = ("INPUT_", "ACTIONS_ID_TOKEN_REQUEST_")
# The agent's own git commands see no replace refs or grafts either. What we read of the base
# was read before it started; this keeps a `git replace` it runs from mattering to anything else.
GIT_SETTINGS = {"GIT_NO_REPLACE_OBJECTS": "1", "GIT_GRAFT_FILE": os.devnull}


def agent_environment(
    env: Mapping[str, str], *, also_withhold: Iterable[str] = (), pass_through: Iterable[str] = (), remove: Iterable[str] = ()
) -> dict[str, str]:
    """``env`` without our secrets (``also_withhold``: names the config gives to secrets of ours,
    e.g. ``agent_auth_env``). ``pass_through`` names variables the user wants the agent to have
    anyway; ``remove`` withholds more (the config's ``agent-env`` table)."""
    keep = set(pass_through)
    drop = {*WITHHELD, *also_withhold, *remove}
    kept = {name: value for name, value in env.items() if name in keep or (name not in drop and not name.startswith(WITHHELD_PREFIXES))}
    return {**kept, **GIT_SETTINGS}


# Where a project keeps its own environment: uv, poetry (in-project) and `python -m venv .venv`
# make `.venv`; many READMEs say `venv`.
VENV_NAMES = (".venv", "venv")


def repository_venv(start: Path) -> Path | None:
    """The Python of the nearest ``.venv`` (or ``venv``) from ``start`` up to the repository's
    top (the folder holding ``.git``) that has google-adk installed: the agent's own environment,
    as its team made it. None when there is none. Only the file system is read (no interpreter
    started): a venv's ``site-packages`` holds ``google/adk`` when it has google-adk."""
    folder = start.resolve()
    while True:
        for name in VENV_NAMES:
            venv = folder / name
            python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
            if python.exists() and _has_adk(venv):
                return python
        if (folder / ".git").exists() or folder.parent == folder:
            return None
        folder = folder.parent


def _has_adk(venv: Path) -> bool:
    patterns = ("Lib/site-packages/google/adk/__init__.py",) if os.name == "nt" else ("lib/python3*/site-packages/google/adk/__init__.py",)
    return any(next(venv.glob(pattern), None) is not None for pattern in patterns)


def chosen_agent_python(setting: str | None, start: Path, *, ours: str) -> tuple[str | None, str]:
    """The agent's Python and one line saying which it is and why: the ``agent-python`` setting
    when given; else the repository's ``.venv`` / ``venv`` with google-adk
    (:func:`repository_venv`); else ``ours`` (None returned: this interpreter). An ``install``
    command, which makes a venv of its own, is the caller's to prefer over the last two."""
    if setting:
        return setting, f"the agent's Python: {setting} (agent-python)"
    found = repository_venv(start)
    if found is not None:
        here = Path.cwd().resolve()
        shown = os.path.relpath(found, here) if found.is_relative_to(here) else str(found)
        return str(
            found
        ), f"the agent's Python: {shown} (the repository's {found.parent.parent.name}, which has google-adk; agent-python overrides)"
    return None, (
        f"the agent's Python: {ours} (this tool's own: no agent-python setting and no .venv or venv with google-adk up to the "
        "repository's top; if the agent needs packages of its own, set agent-python)"
    )
