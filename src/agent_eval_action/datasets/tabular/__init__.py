"""Run tables (CSV, JSONL): ``stream`` reads the rows lazily, ``rows`` maps one row's columns to
a question and its trace (``cells``: the columns and typed cell access; ``figures``: what the
producer measured).

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); ``__all__`` here
names what the rest of the package uses.
"""

from __future__ import annotations

from agent_eval_action.datasets.tabular.cells import CONVERT_SPAN
from agent_eval_action.datasets.tabular.stream import load_csv, load_jsonl

__all__ = ["CONVERT_SPAN", "load_csv", "load_jsonl"]
