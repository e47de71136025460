"""The agent's worker processes: started early, forked by a zygote or spawned, pooled, and each
seen from the pool. Light: the command line's early start imports it before the rest of us.

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); nothing here is
part of it, and names may change between releases.
"""

__all__: list[str] = []
