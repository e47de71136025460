"""Loading the user's agent in this process (``--in-process``): the worker's loader, with its
failures turned into our error for the ``--agent`` setting, and ``sys.path`` left as found."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agent_eval_action.agent_worker import loader
from agent_eval_action.repo.agent_code import agent_suggestion
from agent_eval_action.system.errors import AgentLoadError

LoadedAgent = loader.LoadedAgent


def with_suggestion(spec: str, reason: str, root: Path) -> str:
    """The loader's reason, and where the --agent names nothing, what to give instead: the
    module:attr of a file path, or the agents ``init`` would find in ``root``."""
    if not any(words in reason for words in loader.NAMES_NOTHING):
        return reason
    return reason + agent_suggestion(spec, root)


def load_agent(spec: str, cwd: str | os.PathLike[str] = ".") -> LoadedAgent:
    """The agent, imported with its folders first on ``sys.path``; they are taken off again after
    (the modules stay imported, and a package finds its submodules through its own ``__path__``).
    In a worker process the loader keeps them: that process is the agent's."""
    added = [folder for folder in loader.import_folders(spec, cwd) if folder not in sys.path]
    try:
        return loader.load_agent(spec, cwd)
    except loader.AgentLoadError as error:
        raise AgentLoadError("--agent", with_suggestion(spec, str(error), Path(cwd))) from None
    finally:
        for folder in added:
            if folder in sys.path:
                sys.path.remove(folder)
