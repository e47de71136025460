"""agent-eval-action: evaluate ADK agents on golden datasets and gate pull requests on regressions.

The Python API (see docs/python-api.md)::

    import agent_eval_action as aea
    results = aea.evaluate("evaluation/datasets", agent="app.agent:root_agent")
    aea.assert_passed(aea.compare(results, "evaluation/baselines/..."))

Names are imported on first use, so ``import agent_eval_action`` (and the command line, and the
agent worker, which runs under the agent's Python) stays fast and light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
    "Results": "agent_eval_action.models.results",
    "DatasetResult": "agent_eval_action.models.results",
    "QuestionResult": "agent_eval_action.models.results",
    "MetricSummary": "agent_eval_action.models.scores",
    "DatasetComparison": "agent_eval_action.models.verdicts",
    "MetricComparison": "agent_eval_action.models.verdicts",
    "GateResult": "agent_eval_action.models.verdicts",
    "GateFailure": "agent_eval_action.models.verdicts",
    "Problem": "agent_eval_action.models.results",
    "Question": "agent_eval_action.models.questions",
    "ReferenceData": "agent_eval_action.models.questions",
    "Trace": "agent_eval_action.models.traces",
    "Score": "agent_eval_action.models.scores",
    "AgentEvalError": "agent_eval_action.system.errors",
    "ConfigError": "agent_eval_action.system.errors",
    "DatasetError": "agent_eval_action.system.errors",
}
__all__ = [  # written out for type checkers; tests/unit/test_public_api.py keeps it equal to _EXPORTS
    "AgentEvalError",
    "Config",
    "ConfigError",
    "Dataset",
    "DatasetComparison",
    "DatasetError",
    "DatasetResult",
    "GateFailed",
    "GateFailure",
    "GateResult",
    "MetricComparison",
    "MetricSummary",
    "Problem",
    "Question",
    "QuestionResult",
    "ReferenceData",
    "Results",
    "Score",
    "Trace",
    "__version__",
    "assert_passed",
    "check",
    "compare",
    "evaluate",
    "load",
    "load_config",
]

if TYPE_CHECKING:  # what type checkers see (py.typed); at run time each name is imported on first use
    from agent_eval_action.config import Config, load_config
    from agent_eval_action.models.questions import Question, ReferenceData
    from agent_eval_action.models.results import DatasetResult, Problem, QuestionResult, Results
    from agent_eval_action.models.scores import MetricSummary, Score
    from agent_eval_action.models.traces import Trace
    from agent_eval_action.models.verdicts import DatasetComparison, GateFailure, GateResult, MetricComparison
    from agent_eval_action.service.api import Dataset, GateFailed, assert_passed, check, compare, evaluate, load
    from agent_eval_action.system.errors import AgentEvalError, ConfigError, DatasetError


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
