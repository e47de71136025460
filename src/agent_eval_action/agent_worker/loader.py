"""Finding the user's ADK agent: ``module:attr`` (``app.agent:root_agent``) or an agent directory.

An agent directory is what ``adk run DIR`` takes: ``DIR/agent.py`` or ``DIR/__init__.py``
defining ``app`` or ``root_agent``. The working directory (and an agent directory's parent) is
put on ``sys.path`` first: :func:`import_folders`.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ATTRS = ("app", "root_agent")
# Words of the messages that say the --agent names nothing there (not that the agent's own code
# failed): the parent adds the module:attr it finds (run/agent/loader.py: with_suggestion).
NAMES_NOTHING = ("was not found from", "is a file:", "is neither", "has no attribute")


class AgentLoadError(Exception):
    """The agent could not be loaded; the message says why and how to fix it."""


@dataclass(frozen=True)
class LoadedAgent:
    """The root agent, or the ADK ``App`` around it, and the app name the runner uses."""

    target: Any
    app_name: str
    is_app: bool

    @property
    def root_agent(self) -> Any:
        return self.target.root_agent if self.is_app else self.target


def load_agent(spec: str, cwd: str | os.PathLike[str] = ".") -> LoadedAgent:
    try:
        from google.adk.agents import BaseAgent
    except ImportError as error:
        raise AgentLoadError(f"google-adk is not installed for {sys.executable} ({error}): install it in the agent's environment") from None
    app_type: Any = None
    try:
        from google.adk.apps import App

        app_type = App
    except ImportError:  # older ADK releases have no App
        pass

    for folder in reversed(import_folders(spec, cwd)):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    base = Path(cwd).resolve()
    read_dotenv(agent_folder(spec, base), base)
    path = (base / spec) if not os.path.isabs(spec) else Path(spec)
    if ":" not in spec and path.is_dir():
        obj, where = _from_directory(path)
    elif ":" not in spec:
        obj, where = _from_module(spec)
    else:
        module_name, _, attr = spec.partition(":")
        if not module_name or not attr:
            raise AgentLoadError(f"{spec!r} is neither module:attr (e.g. app.agent:root_agent) nor an agent directory")
        if module_name.endswith(".py"):
            raise AgentLoadError(f"{module_name!r} is a file: --agent takes module:attr (e.g. app.agent:root_agent) or an agent directory")
        module = _import(module_name, base=base)
        if not hasattr(module, attr):
            raise AgentLoadError(f"module {module_name!r} has no attribute {attr!r}")
        obj, where = getattr(module, attr), spec
    if app_type is not None and isinstance(obj, app_type):
        return LoadedAgent(target=obj, app_name=obj.name, is_app=True)
    if isinstance(obj, BaseAgent):
        return LoadedAgent(target=obj, app_name=obj.name, is_app=False)
    raise AgentLoadError(f"{where} is a {type(obj).__name__}, not an ADK agent or App")


def agent_folder(spec: str, base: Path) -> Path:
    """The agent's folder, as ``adk`` names it: an agent directory, or the package of ``module:attr``
    (``app.agent:root_agent``: ``app/``)."""
    path = (base / spec) if not os.path.isabs(spec) else Path(spec)
    if ":" not in spec and path.is_dir():
        return path
    module = spec.partition(":")[0]
    return base.joinpath(*module.split(".")[:-1]) if "." in module else base


def read_dotenv(folder: Path, top: Path) -> list[str]:
    """The first ``.env`` from the agent's ``folder`` up to ``top`` (the project's folder, never
    above it), read into this process's environment before the agent is imported, as ``adk run``
    and ``adk web`` do (ADK's samples keep their model key there). A variable already set wins
    (the step's secret over a committed placeholder), where ADK's own loader lets the file win.
    Returns the names it set; values are never printed."""
    folder, top = folder.resolve(), top.resolve()
    while True:
        found = folder / ".env"
        if found.is_file():
            break
        if folder == top or top not in folder.parents:
            return []
        folder = folder.parent
    names = []
    for line in found.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.removeprefix("export ").partition("=")
        name, value = name.strip(), value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        # Ours (AGENT_EVAL_*) are not the agent's to set: the worker's settings and our secrets.
        if name.isidentifier() and name not in os.environ and not name.startswith("AGENT_EVAL_"):
            os.environ[name] = value
            names.append(name)
    return names


def import_folders(spec: str, cwd: str | os.PathLike[str] = ".") -> list[str]:
    """The folders :func:`load_agent` puts first on ``sys.path`` (where they are not on it yet):
    the working directory, and for an agent directory the folder that holds it."""
    base = Path(cwd).resolve()
    path = (base / spec) if not os.path.isabs(spec) else Path(spec)
    return [str(path.parent), str(base)] if ":" not in spec and path.is_dir() else [str(base)]


def _import(module_name: str, *, missing_ok: bool = False, base: Path | None = None) -> Any:
    """The module, with a fix-it message for every way importing the user's code can fail.

    With ``missing_ok`` a module that does not exist is None (the caller tries another name).
    """
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and module_name.startswith(error.name):
            if missing_ok:
                return None
            missing = "" if error.name == module_name else f" (no module {error.name!r})"
            raise AgentLoadError(f"module {module_name!r} was not found from {base or os.getcwd()}{missing}") from None
        raise AgentLoadError(
            f"importing {module_name!r} failed: {error} (install the agent's dependencies in its environment, "
            "e.g. with the `install` input or --agent-python)"
        ) from None
    except BaseException as error:  # noqa: BLE001 - the user's module failed (even by sys.exit): say where
        frames = traceback.extract_tb(error.__traceback__)
        place = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
        raise AgentLoadError(f"importing {module_name!r} raised {type(error).__name__}: {error}{place}") from None


def _first_defining(candidates: list[str], failure: str) -> tuple[Any, str]:
    """``app`` or ``root_agent`` from the first candidate module that exists and defines one."""
    for module_name in candidates:
        module = _import(module_name, missing_ok=True)
        for attr in ATTRS if module is not None else ():
            if hasattr(module, attr):
                return getattr(module, attr), f"{module_name}:{attr}"
    raise AgentLoadError(failure)


def _from_module(name: str) -> tuple[Any, str]:
    """A bare module or package name: its ``agent`` submodule or itself."""
    if name.endswith(".py"):
        raise AgentLoadError(f"{name!r} is a file: --agent takes module:attr (e.g. app.agent:root_agent) or an agent directory")
    if not name.replace(".", "").replace("_", "").isalnum():
        raise AgentLoadError(f"{name!r} is neither module:attr (e.g. app.agent:root_agent) nor an agent directory")
    failure = f"{name!r} is neither module:attr (e.g. app.agent:root_agent), an agent directory, nor a module defining app or root_agent"
    return _first_defining([f"{name}.agent", name], failure)


def _from_directory(path: Path) -> tuple[Any, str]:
    """An agent directory as ``adk run`` takes it: ``agent.py`` or ``__init__.py`` in it (its
    parent folder is on ``sys.path``: :func:`import_folders`)."""
    return _first_defining([f"{path.name}.agent", path.name], f"{path} defines neither `app` nor `root_agent` in agent.py or __init__.py")
