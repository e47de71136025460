"""Judge metrics from the config: inline or file prompts, the built-in reference-aware
``response_correctness``, and the seed pipeline's ``metric_definitions*.json`` files."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_eval_action.config import Config
from agent_eval_action.run.judges.engine import JudgeMetric
from agent_eval_action.run.judges.managed import spec_name
from agent_eval_action.run.judges.prompts import RESPONSE_CORRECTNESS
from agent_eval_action.system.errors import ConfigError
from agent_eval_action.system.inside import require_inside
from agent_eval_action.text.jsonish import loads

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


@dataclass(frozen=True)
class Definition:
    """One entry of a metric definitions file as read: a judge, or why it is not one."""

    name: str
    judge: JudgeMetric | None
    note: str = ""


def is_metric_definitions(path: str) -> bool:
    """Whether a JSON file is a seed pipeline metric definitions file ({"metrics": {NAME: {...}}}
    with judge-shaped entries), not a dataset."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        # A dataset's reader says what is wrong with it (too deep, not JSON): here it is no definitions file.
        data = loads(text)[0] if '"metrics"' in text else None
    except (OSError, ValueError):
        return False
    metrics = data.get("metrics") if isinstance(data, dict) else None
    return isinstance(metrics, dict) and any(
        isinstance(spec, dict) and ("metric_type" in spec or "is_managed" in spec or "dataset_mapping" in spec) for spec in metrics.values()
    )


def read_metric_definitions(path: str, config: Config) -> list[JudgeMetric]:
    """The seed pipeline's metric definitions as judges (entries that are no judge left out)."""
    return [entry.judge for entry in metric_definitions(path, config) if entry.judge is not None]


def metric_definitions(path: str, config: Config, *, typed: bool = False) -> list[Definition]:
    """The seed pipeline's metric definitions, as its evaluator reads them: {name: {metric_type,
    is_managed, managed_metric_name, agents, template (or instruction, criteria, rating_scores),
    dataset_mapping, score_range}} (or a list of them, or under "metrics"). Entries whose name
    starts with "_" are its documentation and comments; ``metric_type: deterministic`` entries
    are its own code's metrics, not judges. ``typed``: a path the user typed (read wherever it is),
    not the config's."""
    if not typed:
        require_inside(path, "metric_definitions")
    try:
        data = loads(Path(path).read_text(encoding="utf-8"))[0]
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
        if isinstance(name, str) and name.startswith("_"):
            continue  # "_documentation", "_comment_...": notes for the reader
        if not isinstance(spec, dict) or not name:
            raise ConfigError(where, "each metric needs a name and an object")
        out.append(_definition(str(name), spec, where, config))
    return out


def _definition(name: str, spec: dict[str, Any], where: str, config: Config) -> Definition:
    from agent_eval_action.metrics import REGISTRY

    # A judge named like one of our deterministic metrics gets its own name: its score must not
    # replace the computed one.
    judged = f"{name}_judge" if name in REGISTRY else name
    renamed = f" (scored as {judged}: {name} is a deterministic metric here)" if judged != name else ""
    agents = tuple(str(a) for a in spec.get("agents") or [])
    if spec.get("is_managed"):
        managed = str(spec.get("managed_metric_name") or name)
        judge = JudgeMetric(name=judged, template="", low=0.0, high=1.0, managed=spec_name(managed.strip().lower()), agents=agents)
        return Definition(name, judge, f"managed {judge.managed}{renamed}")
    if str(spec.get("metric_type", "llm")).lower() != "llm":
        return Definition(name, None, f"not a judge: metric_type {spec.get('metric_type')!r} is the pipeline's own code")
    mapping = spec.get("dataset_mapping") or {}
    if not isinstance(mapping, dict):
        raise ConfigError(where, "dataset_mapping must be an object")
    template = spec.get("template")
    if not isinstance(template, str) or not template.strip():
        template = _rubric_template(spec, mapping, where)
    low, high = _score_range(spec.get("score_range", spec.get("range")), where, spec.get("rating_scores"))
    judge = JudgeMetric(
        name=judged,
        template=_with_reference(_jinja(template, mapping)),
        low=low,
        high=high,
        model=str(spec.get("judge_model") or spec.get("model") or config.judge.model),
        samples=config.judge.samples,
        agents=agents,
    )
    return Definition(name, judge, f"judge, scores {low:g}..{high:g}{renamed}")


def _rubric_template(spec: dict[str, Any], mapping: dict[str, Any], where: str) -> str:
    """A prompt from the pipeline's pointwise rubric fields (instruction, criteria, rating_scores),
    with each dataset_mapping input below them, as Vertex's PointwiseMetricPromptTemplate lays them out."""
    instruction = spec.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise ConfigError(where, "needs a template (or an instruction with criteria and rating_scores)")
    lines = [instruction.strip()]
    criteria = spec.get("criteria")
    if isinstance(criteria, dict) and criteria:
        lines += ["", "## Criteria", *(f"{key}: {value}" for key, value in criteria.items())]
    scores = spec.get("rating_scores")
    if isinstance(scores, dict) and scores:
        lines += ["", "## Rating rubric", *(f"{key}: {value}" for key, value in scores.items())]
    lines += ["", "## Inputs", *(f"### {key}\n{{{key}}}" for key in mapping)]
    return "\n".join(lines)


def _score_range(value: Any, where: str, rating_scores: Any = None) -> tuple[float, float]:
    if value is None or value == "N/A":
        keys = [float(k) for k in rating_scores or {} if re.fullmatch(r"-?\d+(\.\d+)?", str(k))] if isinstance(rating_scores, dict) else []
        return (min(keys), max(keys)) if len(keys) > 1 else (1.0, 5.0)
    if isinstance(value, dict):
        value = [value.get("min"), value.get("max")]
    if isinstance(value, str) and value.strip().startswith("["):
        value = value.strip().strip("[]").split(",")
    elif isinstance(value, str) and "-" in value:
        value = value.split("-", 1)
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ConfigError(where, f"score_range {value!r} is not [min, max]") from None
    if low >= high:
        raise ConfigError(where, "score_range needs min < max")
    return low, high


# The seed pipeline's "COLUMN:KEY" sources (extracted_data's keys) that our trace holds under a name.
EXTRACTED = {
    "tool_interactions": "tool_calls", "state_variables": "final_state", "sub_agent_trace": "sub_agent_trace",
    "conversation_history": "prompt",
}  # fmt: skip
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _source(source: str, default: Any = None) -> str:
    """A Jinja expression for one dataset_mapping source: a column (``user_inputs``), or a key in
    a column with the pipeline's path syntax (``extracted_data:tool_declarations``,
    ``reference_data:reference_trajectory``; ``AGENT:KEY`` for a state key its agent wrote)."""
    fallback = "" if default is None else (default if isinstance(default, str) else json.dumps(default))
    tail = f" or {json.dumps(fallback)}" if fallback else ""
    if source in SEED_COLUMNS:
        return "(" + SEED_COLUMNS[source] + tail + ")"
    column, sep, key = source.replace(".", ":", 1).partition(":") if source.startswith("reference_data.") else source.partition(":")
    if not sep:
        column, key = "", source
    if not _NAME.fullmatch(key) or (column and not _NAME.fullmatch(column)):
        raise ConfigError("metric_definitions", f"dataset_mapping source {source!r} is not a column name or COLUMN:KEY")
    if column == "reference_data":
        return f"(reference_data.get('{key}') or reference_data.custom.get('{key}') or {json.dumps(fallback)})"
    if column == "extracted_data" and key in EXTRACTED:
        return "(" + EXTRACTED[key] + tail + ")"
    if column:  # a key of the final state (extracted_data holds the state's keys flattened)
        return f"(state.get('{key}') or {json.dumps(fallback)})"
    return f"(metadata.get('{key}') or {json.dumps(fallback)})"


def _jinja(template: str, mapping: dict[str, Any]) -> str:
    """``{placeholder}`` fields (format style) become Jinja variables fed from the mapped columns;
    a mapping may join several columns through its own template (``source_columns``), and give a
    ``default`` for an empty one."""

    def variable(match: re.Match[str]) -> str:
        placeholder = match.group(1)
        source = mapping.get(placeholder, placeholder)
        if isinstance(source, dict):
            inner = source.get("template")
            columns = source.get("source_columns")
            if isinstance(inner, str) and isinstance(columns, list):
                # Its placeholders are the columns with ":" as "_" (the pipeline's convention).
                named = {str(c).replace(":", "_"): {"source_column": str(c)} for c in columns}
                return _jinja(inner, named)
            default = source.get("default")
            source = source.get("source_column") or source.get("source") or source.get("column") or placeholder
            return "{{ " + _source(str(source), default) + " }}"
        return "{{ " + _source(str(source)) + " }}"

    return re.sub(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})", variable, template)
