"""report.html: one self-contained page to dig into a run (inline CSS, JS and SVG; nothing
fetched; works from ``file://``). The verdict, per dataset the metric table with deltas, CIs
and trends, and every question run with its conversation, tool calls, trajectory, final state
against the reference and scores; regressed questions show the base run beside this one.

Agent and dataset text is always text: the template autoescapes everything, the page's
Content-Security-Policy allows only its own script (by hash) and no fetches at all.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_eval_action.metrics.values import mismatches
from agent_eval_action.models.results import DatasetResult, QuestionResult, Results
from agent_eval_action.models.scores import Score
from agent_eval_action.models.traces import Transcript
from agent_eval_action.repo.history import Point
from agent_eval_action.system.files import write_atomic
from agent_eval_action.text.markdown import plural, printed
from agent_eval_action.views.background import Background
from agent_eval_action.views.figures import compact, fmt, is_share, signed
from agent_eval_action.views.metric_rows import MetricRow
from agent_eval_action.views.page import DatasetView, Page, page_of
from agent_eval_action.views.question_diffs import DiffRow, QuestionDiff

if TYPE_CHECKING:
    from jinja2 import Environment

# Question runs per dataset shown in full; past it, the regressed and failing ones come first
# and the rest are counted (results.json has them all).
REPORT_QUESTIONS = 2000
PRETTY_CHARS = 6000


@dataclass
class StateRow:
    key: str
    reference: Any
    final: Any
    has_reference: bool
    has_final: bool
    ok: bool | None  # None: not in the reference


@dataclass
class ScoreRow:
    metric: str
    value: str
    base: str | None
    explanation: str
    details: dict[str, Any]
    failed: bool
    fell: bool


@dataclass
class QuestionPanel:
    """One question run as the report shows it."""

    anchor: str
    question: QuestionResult
    base: QuestionResult | None
    regressed: bool
    failing: bool
    failed: list[str]
    fell: list[str]
    diff: list[DiffRow]
    scores: list[ScoreRow]
    state: list[StateRow]
    base_state: list[StateRow]

    @property
    def transcript(self) -> Transcript | None:
        return self.question.transcript


@dataclass
class Chart:
    """An SVG line chart of one metric's baseline history and this run's value."""

    metric: str
    commits: int  # baseline commits in the history
    width: int
    height: int
    line: str  # polyline points of the history
    dots: list[tuple[float, float, str]]  # x, y, tooltip
    current: tuple[float, float, str] | None
    low: str
    high: str
    first: str
    last: str


@dataclass
class DatasetPanel:
    anchor: str
    view: DatasetView
    questions: list[QuestionPanel]
    omitted: int
    charts: list[Chart] = field(default_factory=list)
    sparks: dict[str, Chart] = field(default_factory=dict)

    @property
    def history_label(self) -> str:
        commits = max((c.commits for c in self.charts), default=0)
        return "the last baseline commit" if commits == 1 else f"the last {commits} baseline commits"


def _state_rows(transcript: Transcript | None) -> list[StateRow]:
    if transcript is None or (transcript.final_state is None and transcript.reference.reference_state_variables is None):
        return []
    reference = transcript.reference.reference_state_variables or {}
    final = transcript.final_state or {}
    rows = []
    for key in [*reference, *(k for k in sorted(final) if k not in reference)]:
        ok = None
        if key in reference:
            ok = key in final and not mismatches(reference[key], final[key], key)
        rows.append(
            StateRow(
                key=key,
                reference=reference.get(key),
                final=final.get(key),
                has_reference=key in reference,
                has_final=key in final,
                ok=ok,
            )
        )
    return rows


def _score_text(score: Score | None, metric: str) -> str | None:
    if score is None:
        return None
    return fmt(score.value, metric) if score.value is not None else "unscored"


def _score_rows(question: QuestionResult, base: QuestionResult | None, failed: list[str], fell: list[str]) -> list[ScoreRow]:
    rows = []
    for metric, score in question.scores.items():
        rows.append(
            ScoreRow(
                metric=metric,
                value=_score_text(score, metric) or "–",
                base=_score_text(base.scores.get(metric), metric) if base is not None else None,
                explanation=score.explanation,
                details=score.details,
                failed=metric in failed,
                fell=metric in fell,
            )
        )
    rows.sort(key=lambda r: (not r.fell, not r.failed, r.metric))
    return rows


def _panels(view: DatasetView, dataset_index: int) -> tuple[list[QuestionPanel], int]:
    dataset: DatasetResult = view.result
    diffs: dict[tuple[str, int], QuestionDiff] = {(d.id, d.run): d for d in view.regressed}
    regressed_ids = {d.id for d in view.regressed}
    base_by_id: dict[str, QuestionResult] = {}
    if view.base is not None:
        for q in sorted(view.base.questions, key=lambda q: (q.status == "error", q.run)):
            base_by_id.setdefault(q.id, q)
    # Which runs are shown, and in what order, first: the panels (score and state rows) are
    # made for those only, not for every run of a 10,000-question dataset.
    order = []
    for i, question in enumerate(dataset.questions):
        failed = view.missed[i]
        regressed = question.id in regressed_ids
        failing = question.status == "error" or bool(failed)
        rank = (not (regressed and (question.id, question.run) in diffs), not regressed, not failing)
        order.append((rank, i, question, failed, regressed, failing))
    order.sort(key=lambda item: item[0])  # stable: the dataset's order within a rank
    omitted = max(len(order) - REPORT_QUESTIONS, 0)
    panels = []
    for _, i, question, failed, regressed, failing in order[:REPORT_QUESTIONS]:
        diff = diffs.get((question.id, question.run))
        base = diff.base if diff is not None else base_by_id.get(question.id)
        panels.append(
            QuestionPanel(
                anchor=f"d{dataset_index}-q{i}",
                question=question,
                base=base,
                regressed=regressed,
                failing=failing,
                failed=failed,
                fell=diff.fell if diff else [],
                diff=diff.rows if diff else [],
                scores=_score_rows(question, base, failed, diff.metrics if diff else []),
                state=_state_rows(question.transcript),
                base_state=_state_rows(base.transcript) if base is not None else [],
            )
        )
    return panels, omitted


def _chart(row: MetricRow, width: int, height: int, pad: int) -> Chart | None:
    points: list[Point] = row.points
    if not points:
        return None
    end = row.overall if row.overall is not None else row.current  # the trend's end, as the comment's
    values = [p.value for p in points] + [end]
    known = [v for v in values if v is not None]
    if not known:
        return None
    low, high = (0.0, 1.0) if is_share(row.metric) else (min(0.0, *known), max(known) or 1.0)
    span = (high - low) or 1.0
    step = (width - 2 * pad) / max(len(values) - 1, 1)

    def xy(i: int, value: float) -> tuple[float, float]:
        return round(pad + i * step, 1), round(height - pad - (value - low) / span * (height - 2 * pad), 1)

    dots = []
    for i, point in enumerate(points):
        if point.value is None:
            continue
        x, y = xy(i, point.value)
        dots.append((x, y, f"{point.commit[:7]} {point.date}: {fmt(point.value, row.metric)} ({point.subject})"))
    current = None
    if end is not None:
        x, y = xy(len(points), end)
        current = (x, y, f"this run: {fmt(end, row.metric)}")
    line = " ".join(f"{x},{y}" for x, y, _ in dots) + (f" {current[0]},{current[1]}" if current else "")
    return Chart(
        metric=row.metric,
        commits=len(points),
        width=width,
        height=height,
        line=line.strip(),
        dots=dots,
        current=current,
        low=fmt(low, row.metric),
        high=fmt(high, row.metric),
        first=points[0].date,
        last="this run",
    )


def context(
    page: Page | Results,
    *,
    thresholds: dict[str, float] | None = None,
    background: Background | None = None,
    sha: str | None = None,
    run_url: str | None = None,
) -> dict[str, Any]:
    """The page's context. ``page``: the page the other views show (given results, one is built
    from them, the ``thresholds`` and ``background``)."""
    shared = page_of(page, thresholds, background)
    datasets = []
    for i, view in enumerate(shared.datasets):
        questions, omitted = _panels(view, i)
        panel = DatasetPanel(anchor=f"d{i}", view=view, questions=questions, omitted=omitted)
        for row in view.rows:
            chart = _chart(row, 300, 120, 14)
            if chart is not None:
                panel.charts.append(chart)
                spark = _chart(row, 96, 24, 3)
                assert spark is not None
                panel.sparks[row.metric] = spark
        datasets.append(panel)
    counts = {
        "regressed": sum(1 for d in datasets for q in d.questions if q.regressed),
        "failing": sum(1 for d in datasets for q in d.questions if q.failing),
        "all": sum(len(d.questions) for d in datasets),
    }
    # The headline counts questions; the filters show runs. With several runs a question, each
    # says both, so "Got worse 21" never stands beside "3 questions" as if the same unit.
    question_counts = {
        "regressed": len({(i, q.question.id) for i, d in enumerate(datasets) for q in d.questions if q.regressed}),
        "failing": len({(i, q.question.id) for i, d in enumerate(datasets) for q in d.questions if q.failing}),
        "all": len({(i, q.question.id) for i, d in enumerate(datasets) for q in d.questions}),
    }
    return {
        **shared.context(),
        "panels": datasets,
        "counts": counts,
        "question_counts": question_counts,
        "initial": "regressed" if counts["regressed"] else "failing" if counts["failing"] else "all",
        "sha": sha,
        "run_url": run_url,
    }


def _asset(name: str) -> str:
    return resources.files("agent_eval_action.views").joinpath("templates", name).read_text(encoding="utf-8")


# What json.dumps makes of a value with these settings (an encoder a call is what it does itself).
_ONE_LINE = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str)
_INDENTED = json.JSONEncoder(ensure_ascii=False, sort_keys=True, indent=2, default=str)
# A value's indented text by its one-line text, which decides it (the same settings; only the
# whitespace differs), and which the C encoder makes where the indented one is Python's own, 10x
# slower: a page shows the same details for many runs (a 10,000-question check: 71,000 scores'
# details, 19 distinct; 1.2 s of its 25 indenting them). Values this long are not kept.
_INDENTED_BY_LINE: dict[str, str] = {}
_KEPT_CHARS = 2000
_KEPT = 4096


def _indented(value: Any, one_line: str | None = None) -> str:
    line = _ONE_LINE.encode(value) if one_line is None else one_line
    text = _INDENTED_BY_LINE.get(line)
    if text is None:
        text = _INDENTED.encode(value)
        if len(line) <= _KEPT_CHARS:
            if len(_INDENTED_BY_LINE) >= _KEPT:
                _INDENTED_BY_LINE.clear()
            _INDENTED_BY_LINE[line] = text
    return text


def _cut(text: str) -> str:
    return text if len(text) <= PRETTY_CHARS else text[:PRETTY_CHARS] + "\n… (cut)"


def _pretty(value: Any) -> str:
    return _cut(value if isinstance(value, str) else _indented(value))


def _jsonish(value: Any) -> str:
    """Short values on one line, longer ones indented."""
    if isinstance(value, str):
        return value
    one_line = _ONE_LINE.encode(value)
    return one_line if len(one_line) <= 60 else _cut(_indented(value, one_line))


def render_report(
    page: Page | Results,
    *,
    thresholds: dict[str, float] | None = None,
    background: Background | None = None,
    sha: str | None = None,
    run_url: str | None = None,
) -> str:
    """The page as one string."""
    return render_context(context(page, thresholds=thresholds, background=background, sha=sha, run_url=run_url))


def environment(cache: Any = None) -> Environment:
    """report.html's Jinja environment (``cache``: its bytecode cache; default ``views.compiled``'s)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    from agent_eval_action.views.compiled import bytecode_cache

    env = Environment(
        loader=PackageLoader("agent_eval_action.views", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        finalize=printed,  # bidirectional controls in agent text are shown as escapes
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=cache if cache is not None else bytecode_cache("report"),
    )
    env.filters.update(fmt=fmt, signed=signed, compact=compact, pretty=_pretty, jsonish=_jsonish, plural=plural)
    return env


def render_context(page_context: dict[str, Any]) -> str:
    env = environment()
    script = _asset("report.js")
    # The page's policy runs this script only (by its hash): no inline handler, no other script.
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    return env.get_template("report.html.j2").render(
        **page_context, css=_asset("report.css"), script=script, script_hash=f"sha256-{digest}"
    )


def write_page(text: str, path: Path) -> Path:
    """Writes the page whole or not at all (a temporary file renamed over it)."""
    return write_atomic(path, text)


def write_report(page: Page | Results, path: Path, **kwargs: Any) -> Path:
    """report.html at ``path``; ``kwargs`` as :func:`render_report` takes them."""
    return write_page(render_report(page, **kwargs), path)
