"""agent-eval-action: evaluate ADK agents on golden datasets and gate pull requests on regressions.

The Python API (see docs/python-api.md)::

    import agent_eval_action as aea
    results = aea.evaluate("evaluation/datasets", agent="app.agent:root_agent")
    aea.assert_passed(aea.compare(results, "evaluation/baselines/..."))

Names are imported on first use, so ``import agent_eval_action`` (and the command line, and the
agent worker, which runs under the agent's Python) stays fast and light.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "evaluate": "agent_eval_action.service.api",
    "compare": "agent_eval_action.service.api",
    "check": "agent_eval_action.service.api",
    "load": "agent_eval_action.service.api",
    "assert_passed": "agent_eval_action.service.api",
    "GateFailed": "agent_eval_action.service.api",
    "Dataset": "agent_eval_action.service.api",
    "Config": "agent_eval_action.config",
    "load_config": "agent_eval_action.config",
    "Results": "agent_eval_action.core.models",
    "DatasetResult": "agent_eval_action.core.models",
    "QuestionResult": "agent_eval_action.core.models",
    "MetricSummary": "agent_eval_action.core.models",
    "DatasetComparison": "agent_eval_action.core.models",
    "MetricComparison": "agent_eval_action.core.models",
    "GateResult": "agent_eval_action.core.models",
    "GateFailure": "agent_eval_action.core.models",
    "Problem": "agent_eval_action.core.models",
    "Question": "agent_eval_action.core.models",
    "ReferenceData": "agent_eval_action.core.models",
    "Trace": "agent_eval_action.core.models",
    "Score": "agent_eval_action.core.models",
    "AgentEvalError": "agent_eval_action.core.errors",
    "ConfigError": "agent_eval_action.core.errors",
    "DatasetError": "agent_eval_action.core.errors",
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_eval_action' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
