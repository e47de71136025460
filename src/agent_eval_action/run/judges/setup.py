"""Judge metrics from the config: inline or file prompts, the built-in reference-aware
``response_correctness``, and the seed pipeline's ``metric_definitions*.json`` files."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agent_eval_action.config import Config
from agent_eval_action.core.errors import ConfigError
from agent_eval_action.core.inside import require_inside
from agent_eval_action.run.judges.engine import JudgeMetric
from agent_eval_action.run.judges.managed import spec_name
from agent_eval_action.run.judges.prompts import RESPONSE_CORRECTNESS

BUILT_IN = {"response_correctness": RESPONSE_CORRECTNESS}
# Seed column names -> the judge context's variables.
SEED_COLUMNS = {
    "user_inputs": "prompt", "prompt": "prompt", "query": "prompt",
    "final_response": "final_response", "response": "final_response",
    "sub_agent_trace": "sub_agent_trace", "trace_summary": "trajectory", "extracted_data": "tool_calls",
    "session_state": "final_state", "final_session_state": "final_state",
    "reference_data": "reference", "reference": "reference.reference_response",
}  # fmt: skip
REFERENCE_BLOCK = """

## Reference data for this test case
Expected response: {{ reference.reference_response or "(none given)" }}
Expected tool calls: {{ reference.reference_tool_interactions }}
Expected final state: {{ reference.reference_state_variables }}
Other reference data: {{ reference.custom }}
"""


def judge_metrics(config: Config) -> list[JudgeMetric]:
    out = []
    for name, spec in config.judges.items():
        if spec.prompt and spec.prompt_file:
            raise ConfigError(f"judges.{name}", "give prompt or prompt_file, not both")
        if spec.prompt_file:
            require_inside(spec.prompt_file, f"judges.{name}.prompt_file")
            try:
                template = Path(spec.prompt_file).read_text(encoding="utf-8")
            except OSError as error:
                raise ConfigError(f"judges.{name}.prompt_file", f"cannot read {spec.prompt_file}: {error.strerror}") from None
        elif spec.prompt:
            template = spec.prompt
        elif name in BUILT_IN:
            template = BUILT_IN[name]
        else:
            raise ConfigError(f"judges.{name}", f"needs a prompt or prompt_file (built-in judges: {', '.join(BUILT_IN)})")
        out.append(
            JudgeMetric(
                name=name,
                template=_with_reference(template),
                low=spec.score_range[0],
                high=spec.score_range[1],
                model=spec.model or config.judge.model,
                samples=spec.samples or config.judge.samples,
                agents=tuple(spec.agents),
            )
        )
    for path in config.metric_definitions:
        out.extend(read_metric_definitions(path, config))
    for name in config.managed_metrics:
        out.append(JudgeMetric(name=name, template="", low=0.0, high=1.0, managed=spec_name(name)))
    return out


def _with_reference(template: str) -> str:
    """A judge must see the reference: templates that never use it get it appended."""
    return template if "reference" in template else template + REFERENCE_BLOCK


def read_metric_definitions(path: str, config: Config) -> list[JudgeMetric]:
    """The seed pipeline's metric definitions: {name: {metric_type, is_managed, managed_metric_name,
    agents, template, dataset_mapping, score_range}} (or a list of them, or under "metrics")."""
    require_inside(path, "metric_definitions")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConfigError(f"metric_definitions {path}", f"unreadable: {error}") from None
    if isinstance(data, dict) and "metrics" in data:
        data = data["metrics"]
    items = (
        list(data.items()) if isinstance(data, dict) else [(d.get("name") or d.get("metric_name"), d) for d in data if isinstance(d, dict)]
    )
    out = []
    for name, spec in items:
        where = f"metric_definitions {path}: {name}"
        if not isinstance(spec, dict) or not name:
            raise ConfigError(where, "each metric needs a name and an object")
        if spec.get("is_managed"):
            managed = str(spec.get("managed_metric_name") or name)
            out.append(
                JudgeMetric(
                    name=str(name),
                    template="",
                    low=0.0,
                    high=1.0,
                    managed=spec_name(managed),
                    agents=tuple(str(a) for a in spec.get("agents") or []),
                )
            )
            continue
        template = spec.get("template")
        if not isinstance(template, str) or not template.strip():
            raise ConfigError(where, "needs a template")
        low, high = _score_range(spec.get("score_range"), where)
        out.append(
            JudgeMetric(
                name=str(name),
                template=_with_reference(_jinja(template, spec.get("dataset_mapping") or {})),
                low=low,
                high=high,
                model=str(spec.get("judge_model") or spec.get("model") or config.judge.model),
                samples=config.judge.samples,
                agents=tuple(str(a) for a in spec.get("agents") or []),
            )
        )
    return out


def _score_range(value: Any, where: str) -> tuple[float, float]:
    if value is None:
        return 1.0, 5.0
    if isinstance(value, dict):
        value = [value.get("min"), value.get("max")]
    if isinstance(value, str) and "-" in value:
        value = value.split("-", 1)
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ConfigError(where, f"score_range {value!r} is not [min, max]") from None
    if low >= high:
        raise ConfigError(where, "score_range needs min < max")
    return low, high


def _jinja(template: str, mapping: dict[str, Any]) -> str:
    """``{placeholder}`` fields (format style) become Jinja variables fed from the mapped columns."""

    def variable(match: re.Match[str]) -> str:
        placeholder = match.group(1)
        source = mapping.get(placeholder, placeholder)
        if isinstance(source, dict):
            source = source.get("source_column") or source.get("source") or source.get("column") or placeholder
        source = str(source)
        if source in SEED_COLUMNS:
            return "{{ " + SEED_COLUMNS[source] + " }}"
        field = source.removeprefix("reference_data.")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", field):
            raise ConfigError("metric_definitions", f"dataset_mapping source {source!r} is not a column name")
        if source.startswith("reference_data."):
            return "{{ reference_data.get('" + field + "') or reference_data.custom.get('" + field + "') or '' }}"
        return "{{ metadata.get('" + field + "', '') }}"

    return re.sub(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})", variable, template)
