"""Loading the user's agent in this process (``--in-process``): the worker's loader, with its
failures turned into our error for the ``--agent`` setting."""

from __future__ import annotations

import os

from agent_eval_action.agent_worker import loader
from agent_eval_action.errors import AgentLoadError

LoadedAgent = loader.LoadedAgent


def load_agent(spec: str, cwd: str | os.PathLike[str] = ".") -> LoadedAgent:
    try:
        return loader.load_agent(spec, cwd)
    except loader.AgentLoadError as error:
        raise AgentLoadError("--agent", str(error)) from None
