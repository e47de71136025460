"""Running agents: worker processes, the run pool, HTTP agents, adaptive limit, budget, retries, judges."""
