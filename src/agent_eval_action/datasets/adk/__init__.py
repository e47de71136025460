"""ADK eval data: ``eval_sets`` (the old ``*.test.json`` turn lists, the ``EvalSet`` JSON),
``history`` (eval history: recorded runs), ``config`` (``test_config.json``'s criteria and the
user simulator's settings), ``schema`` (the ADK versions' fields, checked as ADK checks them).

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); ``__all__`` here
names what the rest of the package uses.
"""

from __future__ import annotations

from agent_eval_action.datasets.adk.config import dataset_stem
from agent_eval_action.datasets.adk.eval_sets import load_eval_set, load_test_json
from agent_eval_action.datasets.adk.history import load_eval_history

__all__ = ["dataset_stem", "load_eval_history", "load_eval_set", "load_test_json"]
