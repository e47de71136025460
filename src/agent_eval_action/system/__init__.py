"""The process and what it touches: named errors and exit codes, files written whole, paths kept
inside the repository, signals, what the agent starts, the garbage collector, logs.

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); nothing here is
part of it, and names may change between releases.
"""

__all__: list[str] = []
