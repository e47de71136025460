"""ADK's ``test_config.json``: criteria (pass thresholds and gate minimums) and the user
simulator's settings, beside an eval file; the criteria an eval history recorded read alike."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_eval_action.datasets.base import LoadedDataset
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.system.inside import is_inside, outside_reason
from agent_eval_action.text.jsonish import get, loads

# ADK's LLM-judged metrics that ADK computes locally with a judge model: computed here by ADK's
# own evaluator classes (run/judges/adk.py), their judge calls made through our judge path.
ADK_JUDGED = (
    "final_response_match_v2", "rubric_based_final_response_quality_v1", "rubric_based_tool_use_quality_v1",
    "rubric_based_multi_turn_trajectory_quality_v1", "hallucinations_v1",
    # It judges ADK's user simulator (its turns against the conversation scenario's plan): a
    # conversation scenario's runs only.
    "per_turn_user_simulator_quality_v1",
)  # fmt: skip
# ADK's metrics computed by the Vertex AI evaluation service: computed by ADK's evaluators, the
# service asked here (run/judges/adk.py), where the Vertex AI SDK and credentials are; else an
# eval history's recorded score is taken as ADK's, or the criterion could not be computed.
ADK_VERTEX = (
    "safety_v1",
    "response_evaluation_score",
    "multi_turn_task_success_v1",
    "multi_turn_trajectory_quality_v1",
    "multi_turn_tool_use_quality_v1",
)
NOT_EVALUATED = (3, "NOT_EVALUATED")


def dataset_stem(path: str) -> str:
    name = os.path.basename(path)
    for suffix in (".evalset_result.json", ".test.json", ".evalset.json", ".json", ".jsonl", ".csv"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


@dataclass
class AdkConfig:
    """What a ``test_config.json`` gives: thresholds, each criterion as written, simulator settings."""

    thresholds: dict[str, float] = field(default_factory=dict)
    criteria: dict[str, dict[str, Any]] = field(default_factory=dict)
    user_simulator: dict[str, Any] = field(default_factory=dict)


def read_test_config(path: str, warnings: list[str]) -> AdkConfig:
    """The ``test_config.json`` beside an ADK eval file, if any (ADK's AgentEvaluator reads it there)."""
    config = Path(path).parent / "test_config.json"
    if not config.is_file():
        return AdkConfig()
    # Inside the repository, or in the folder where the dataset it configures really is (one the user named).
    if not is_inside(config, also=(os.path.dirname(os.path.realpath(path)),)):
        warnings.append(f"{config}: {outside_reason()}; its criteria are ignored")
        return AdkConfig()
    try:
        data = loads(config.read_text(encoding="utf-8"))[0]
    except (ValueError, OSError) as error:
        warnings.append(f"{config}: unreadable ({error}); its criteria are ignored")
        return AdkConfig()
    if not isinstance(data, dict):
        warnings.append(f"{config}: not a JSON object; its criteria are ignored")
        return AdkConfig()
    out = criteria_from(str(config), get(data, "criteria") or {}, warnings)
    simulator = get(data, "user_simulator_config")
    if isinstance(simulator, dict):
        out.user_simulator = simulator
    elif simulator is not None:
        raise DatasetError(str(config), "expected an object", pointer="$.user_simulator_config")
    return out


def criteria_from(source: str, criteria: Any, warnings: list[str]) -> AdkConfig:
    """ADK criteria (``{name: threshold}`` or ``{name: {threshold, match_type, ...}}``) as thresholds and options."""
    from agent_eval_action.metrics import REGISTRY
    from agent_eval_action.metrics.adk import match_type
    from agent_eval_action.metrics.adk_efficiency import INFORMATIONAL

    out = AdkConfig()
    if not isinstance(criteria, dict):
        raise DatasetError(source, "expected an object of criteria", pointer="$.criteria")
    for name, value in criteria.items():
        if name in INFORMATIONAL:
            # As ADK refuses it (_efficiency_evaluators._reject_threshold): a report never passes or fails.
            raise DatasetError(
                source,
                f"{name} is one of ADK's efficiency reports: it never passes or fails, so it takes no threshold "
                "(ADK refuses one too); remove it from criteria, it is reported on every run",
                pointer=f"$.criteria.{name}",
            )
        threshold = value.get("threshold") if isinstance(value, dict) else value
        if not isinstance(threshold, int | float) or isinstance(threshold, bool) or not math.isfinite(threshold):
            raise DatasetError(source, "needs a finite numeric threshold", pointer=f"$.criteria.{name}")
        if name in ADK_JUDGED or name in ADK_VERTEX:
            if isinstance(value, dict) and not isinstance(get(value, "judge_model_options") or {}, dict):
                raise DatasetError(source, "judge_model_options must be an object", pointer=f"$.criteria.{name}.judge_model_options")
            # Kept as written: ADK's own evaluator reads it (its judge, num_samples, rubrics); a
            # Vertex-backed one gates too, and is said not computed where it is not (run/judges/adk.py).
            out.thresholds[name] = float(threshold)
            out.criteria[name] = dict(value) if isinstance(value, dict) else {"threshold": threshold}
            continue
        if name not in REGISTRY:
            warnings.append(f"{source}: criterion {name!r} is not a metric known here; it is not computed (docs/metrics.md: ADK's metrics)")
            continue
        options = dict(value) if isinstance(value, dict) else {"threshold": threshold}
        try:
            match_type(options)
        except ValueError as error:
            raise DatasetError(source, str(error), pointer=f"$.criteria.{name}.match_type") from None
        out.thresholds[name] = float(threshold)
        out.criteria[name] = options
    return out


def use_config(dataset: LoadedDataset, config: AdkConfig) -> None:
    dataset.criteria = config.thresholds
    dataset.criterion_options = config.criteria


# The keys of a turn of ADK's old test files, as ADK's local_eval_sets_manager reads them.
