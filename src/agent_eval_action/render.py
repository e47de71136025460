"""Rendering results with Jinja templates shipped as package data (sandboxed; filters in Python).

Users override a template by putting a file of the same name in ``templates_dir``, or extend
the built-in one with ``{% extends "builtin/comment.md.j2" %}`` and their own blocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from agent_eval_action.aggregate import passes
from agent_eval_action.errors import ConfigError
from agent_eval_action.markdown import code_block, escape_md
from agent_eval_action.models import DatasetComparison, DatasetResult, MetricComparison, MetricSummary, QuestionResult, Results

COMMENT_LIMIT = 65_000
SUMMARY_LIMIT = 1_000_000  # GitHub refuses step summaries over 1 MiB
DETAIL_QUESTIONS = 30
VERDICT_EMOJI = {"improved": "🟢", "regressed": "🔴", "unchanged": "⚪", "new": "🆕", "removed": "➖"}
SECONDS = {"latency", "turn_latency"}
COUNTS = {"llm_calls", "tool_calls", "input_tokens", "output_tokens", "cached_tokens", "total_tokens"}


def marker(key: str) -> str:
    return f"<!-- agent-eval-action:{key} -->"


def fmt(value: float | None, metric: str = "") -> str:
    """A figure in the metric's unit: seconds, counts, dollars, else a percentage of 0..1."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if metric in SECONDS:
        return f"{value:.2f} s"
    if metric in COUNTS:
        return f"{value:,.1f}" if value != int(value) else f"{value:,.0f}"
    if metric == "cost_usd":
        return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"
    return f"{value * 100:.1f}%"


def signed(value: float | None, metric: str = "") -> str:
    if value is None:
        return "–"
    if abs(value) < 1e-9:
        return "±0"
    text = fmt(abs(value), metric)
    if metric not in SECONDS | COUNTS and metric != "cost_usd":
        text = text.replace("%", " pts")
    return ("+" if value > 0 else "−") + text


def ci(interval: tuple[float, float] | list[float] | None, metric: str = "") -> str:
    if not interval:
        return "–"
    return f"[{signed(interval[0], metric)}, {signed(interval[1], metric)}]"


@dataclass
class QuestionView:
    id: str
    run: int
    status: str
    error: str | None
    failed: list[str]
    tools: dict[str, Any] | None
    state: list[str]
    trajectory: dict[str, Any] | None


def failed_metrics(question: QuestionResult, thresholds: dict[str, float], summary: dict[str, MetricSummary]) -> list[str]:
    """The metrics whose pass threshold this run missed, judged as the dataset's pass rate is
    (``summary`` gives each metric's direction)."""
    failed = []
    for name, score in question.scores.items():
        threshold = thresholds.get(name)
        if threshold is None or score.value is None:
            continue
        direction = summary[name].direction if name in summary else "higher"
        if not passes(score.value, threshold, direction):
            failed.append(name)
    return failed


def _question_view(question: QuestionResult, thresholds: dict[str, float], summary: dict[str, MetricSummary]) -> QuestionView:
    failed = failed_metrics(question, thresholds, summary)
    tools = question.scores.get("tool_usage_accuracy")
    state = question.scores.get("state_management_fidelity")
    trajectory = question.scores.get("trajectory_accuracy")
    return QuestionView(
        id=question.id,
        run=question.run,
        status=question.status,
        error=question.error,
        failed=failed,
        tools=tools.details if tools and tools.value is not None and tools.value < 1 else None,
        state=list(state.details.get("mismatches", [])) if state and state.value is not None and state.value < 1 else [],
        trajectory=trajectory.details if trajectory and trajectory.value is not None and trajectory.value < 1 else None,
    )


@dataclass
class DatasetView:
    result: DatasetResult
    comparison: DatasetComparison | None
    rows: list[MetricComparison]
    errors: int
    unscored: dict[str, int]
    questions: list[QuestionView]
    failing: int


def _dataset_view(dataset: DatasetResult, comparison: DatasetComparison | None, thresholds: dict[str, float]) -> DatasetView:
    if comparison is not None:
        rows = [m for m in comparison.metrics if m.current is not None or m.baseline is not None]
    else:
        rows = [
            MetricComparison(metric=name, direction=s.direction, baseline=None, current=s.mean, delta=None, verdict="new")
            for name, s in dataset.summary.items()
            if s.mean is not None
        ]
    order = {name: i for i, name in enumerate(_registry_order())}
    rows.sort(key=lambda m: (order.get(m.metric, len(order)), m.metric))
    views = [_question_view(q, thresholds, dataset.summary) for q in dataset.questions]
    failing = [v for v in views if v.status == "error" or v.failed]
    failing.sort(key=lambda v: (v.status != "error", -len(v.failed), v.id, v.run))
    return DatasetView(
        result=dataset,
        comparison=comparison,
        rows=rows,
        errors=sum(1 for q in dataset.questions if q.status == "error"),
        unscored={name: s.unscored for name, s in dataset.summary.items() if s.unscored},
        questions=failing,
        failing=len(failing),
    )


def _registry_order() -> list[str]:
    from agent_eval_action.metrics import REGISTRY

    return list(REGISTRY)


def view(
    results: Results,
    *,
    key: str = "default",
    thresholds: dict[str, float] | None = None,
    sha: str | None = None,
    run_url: str | None = None,
) -> dict[str, Any]:
    """The template context: plain data shaped for the page, built from results.json's model."""
    comparisons = {c.path: c for c in results.comparison or []}
    datasets = [_dataset_view(d, comparisons.get(d.path), thresholds or {}) for d in results.datasets]
    removed = [c for c in results.comparison or [] if c.status == "removed"]
    return {
        "marker": marker(key),
        "gate": results.gate,
        "selection": results.selection,
        "datasets": datasets,
        "removed": removed,
        "problems": results.problems,
        "sha": sha,
        "run_url": run_url,
        "version": results.tool_version,
        "detail_limit": DETAIL_QUESTIONS,
        "show_details": True,
    }


class Renderer:
    def __init__(self, templates_dir: str | None = None):
        from jinja2 import ChoiceLoader, PackageLoader, PrefixLoader, StrictUndefined
        from jinja2.sandbox import SandboxedEnvironment

        from agent_eval_action.inside import template_loader

        builtin = PackageLoader("agent_eval_action", "templates")
        loaders: list[Any] = [PrefixLoader({"builtin": builtin})]
        if templates_dir:
            loaders.append(template_loader(templates_dir))  # refuses files outside the repository
        loaders.append(builtin)
        self.env = SandboxedEnvironment(
            loader=ChoiceLoader(loaders), undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, autoescape=False
        )
        self.env.filters.update(
            escape_md=escape_md,
            fmt=fmt,
            signed=signed,
            ci=ci,
            code=code_block,
            emoji=lambda v: VERDICT_EMOJI.get(v, ""),
            tojson_compact=_json,
        )

    def render(self, name: str, context: dict[str, Any]) -> str:
        from jinja2 import TemplateError

        try:
            text = self.env.get_template(name).render(**context)
        except TemplateError as error:
            raise ConfigError(f"template {name}", f"{type(error).__name__}: {error}") from None
        if name.startswith("comment") and context["marker"] not in text:
            raise ConfigError(
                f"template {name}", f"the rendered comment lacks the marker {context['marker']}; keep `{{{{ marker }}}}` in it"
            )
        return text


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def render_comment(renderer: Renderer, context: dict[str, Any], limit: int = COMMENT_LIMIT) -> str:
    """The comment under ``limit``: full, else with details folded away, else truncated with a notice."""
    text = renderer.render("comment.md.j2", context)
    if len(text) <= limit:
        return text
    text = renderer.render("comment.md.j2", {**context, "show_details": False})
    if len(text) <= limit:
        return text
    notice = f"\n\n> ⚠️ This comment was cut at {limit:,} characters; the job's step summary and `results.json` have everything.\n\n{context['marker']}\n"
    return text[: limit - len(notice)] + notice


def render_summary(renderer: Renderer, context: dict[str, Any], limit: int = SUMMARY_LIMIT) -> str:
    text = renderer.render("summary.md.j2", {**context, "detail_limit": 10_000})
    if len(text.encode()) <= limit:
        return text
    text = renderer.render("summary.md.j2", {**context, "detail_limit": 10_000, "show_details": False})
    notice = "\n\n> ⚠️ Cut to stay under GitHub's 1 MiB step-summary limit; see `results.json`.\n"
    return text.encode()[: limit - len(notice.encode()) - 4].decode(errors="ignore") + notice
