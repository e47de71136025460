"""Entry points and the command adapter: the command line, the commands it dispatches, the GitHub Action.

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); nothing here is
part of it, and names may change between releases.
"""

__all__: list[str] = []
