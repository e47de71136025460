"""The shop app, with the scripted simulated user registered in ADK's model registry of the
process that loads it: the agent's worker process, where conversation scenarios are played."""

import simulated_user  # noqa: F401  (registers scripted-user*)
from shop.agent import root_agent

__all__ = ["root_agent"]
