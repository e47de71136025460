"""Deterministic metrics. Importing this package fills :data:`REGISTRY`.

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); ``__all__`` here
names what the rest of the package uses.
"""

from agent_eval_action.metrics import efficiency, response, state, tools, trace_metrics, trajectory  # noqa: F401

# ADK's own metrics register after ours, so tables list ours first.
from agent_eval_action.metrics import adk, adk_efficiency  # noqa: F401  # isort: skip
from agent_eval_action.metrics.registry import REGISTRY, Metric, MetricContext, default_pass_thresholds, new_run

__all__ = ["REGISTRY", "Metric", "MetricContext", "default_pass_thresholds", "new_run"]
