"""Running agents: worker processes, the run pool, HTTP agents, adaptive limit, budget, retries, judges.

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); nothing here is
part of it, and names may change between releases.
"""

__all__: list[str] = []
