"""The one configuration object, from ``agent-eval.toml`` or ``[tool.agent-eval]`` in
``pyproject.toml``, with command-line flags laid over it through the same validation.

Three parts: the schema (:mod:`.schema`, :mod:`.tables`: the settings and their validation),
the search (:mod:`.search`: which file, upward from a folder) and the placement
(:mod:`.placement`: the paths moved from the config's folder to the working directory).

Internal: the public API is ``import agent_eval_action`` (its ``__all__``: ``Config`` and
``load_config`` come from here); the other names may change between releases.
"""

from agent_eval_action.config.placement import placed
from agent_eval_action.config.schema import DEFAULT_DATASETS, Config, Origin, default_prices
from agent_eval_action.config.search import CONFIG_FILE, Found, config_from_text, file_reader, find_again, find_config, load_config
from agent_eval_action.config.tables import (
    AgentEnv,
    CustomMetricConfig,
    GateConfig,
    JudgeConfig,
    JudgeMetricConfig,
    MetricRule,
    Price,
    QuotaConfig,
    UserSimulatorConfig,
    negations_only,
    parse_quota,
    parse_regression,
)

__all__ = [
    "CONFIG_FILE",
    "DEFAULT_DATASETS",
    "AgentEnv",
    "Config",
    "CustomMetricConfig",
    "Found",
    "GateConfig",
    "JudgeConfig",
    "JudgeMetricConfig",
    "MetricRule",
    "Origin",
    "Price",
    "QuotaConfig",
    "UserSimulatorConfig",
    "config_from_text",
    "default_prices",
    "file_reader",
    "find_again",
    "find_config",
    "load_config",
    "negations_only",
    "parse_quota",
    "parse_regression",
    "placed",
]
