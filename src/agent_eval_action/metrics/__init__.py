"""Deterministic metrics. Importing this package fills :data:`REGISTRY`."""

from agent_eval_action.metrics import response, state, tools, trace_metrics, trajectory  # noqa: F401
from agent_eval_action.metrics.registry import REGISTRY, Metric, MetricContext

__all__ = ["REGISTRY", "Metric", "MetricContext"]
