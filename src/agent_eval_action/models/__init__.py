"""What each stage hands the next, and what results.json and baselines store: questions, traces,
scores, verdicts, results, the check's plan.

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); nothing here is
part of it, and names may change between releases.
"""

__all__: list[str] = []
