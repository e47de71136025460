"""The per-question test on results: which runs of a question pass (every gated reference metric
with a pass threshold meets it), the tallies of both sides, and the test's decisions
(``noise.py``) stored as the comparison's :class:`PassTest`."""

from __future__ import annotations

from collections import defaultdict

from agent_eval_action.core.results import DatasetResult, QuestionResult
from agent_eval_action.core.verdicts import PassTest, QuestionTest
from agent_eval_action.scoring.aggregate import passes
from agent_eval_action.verdict.noise import DEFAULTS, MIN_BASE_RUNS, Settings, Tally, decide, more_runs
from agent_eval_action.verdict.outages import outage_cause


def pass_metrics(current: DatasetResult, baseline: DatasetResult | None = None) -> dict[str, tuple[float, str]]:
    """Metric -> (pass threshold, direction) for the metrics a question run must all meet to
    pass: reference metrics (not judged, not timings or counts) with a pass threshold on either side.
    A metric without a threshold (response_match by default, every trace metric) takes no part:
    it is gated on its mean as before."""
    out: dict[str, tuple[float, str]] = {}
    for side in (baseline, current):
        for name, s in (side.summary if side is not None else {}).items():
            if s.pass_threshold is not None and s.kind in (None, "reference") and s.direction != "neutral":
                out[name] = (s.pass_threshold, s.direction)
    return dict(sorted(out.items()))


def run_passes(run: QuestionResult, metrics: dict[str, tuple[float, str]]) -> bool | None:
    """Whether one run of a question passes: every metric of ``metrics`` it has a score on meets
    its threshold; an error of the agent's (a tool that raised, a timeout) fails. None: no
    evidence (a model/API error, a skipped run, no score on any of them)."""
    if run.status == "skipped":
        return None
    if run.status == "error":
        return None if outage_cause(run.error, run.error_origin) else False
    values = [(run.scores[m].value, t, d) for m, (t, d) in metrics.items() if m in run.scores and run.scores[m].value is not None]
    if not values:
        return None
    return all(passes(v, t, d) for v, t, d in values)  # type: ignore[arg-type]


Metrics = dict[str, tuple[float, str]]


def passable(baseline: DatasetResult, metrics: Metrics) -> dict[str, Metrics]:
    """Question id -> the metrics of ``metrics`` it meets in some base run: what a run of it must
    meet to pass. A metric a question fails in every base run (a known failure, or a threshold it
    never reached) would hide every other fall of it; a question that meets none is not tested."""
    out: dict[str, Metrics] = defaultdict(dict)
    for run in baseline.questions:
        if run.status != "ok":
            continue
        for name, (threshold, direction) in metrics.items():
            score = run.scores.get(name)
            if score is not None and score.value is not None and passes(score.value, threshold, direction):
                out[run.id][name] = (threshold, direction)
    return dict(out)


def tallies(
    dataset: DatasetResult, metrics: Metrics, per_question: dict[str, Metrics] | None = None
) -> tuple[dict[str, Tally], dict[str, int]]:
    """(question id -> its runs and passes, question id -> its runs that did not run: model/API
    errors). ``per_question``: each question's own metrics (:func:`passable`); a question not in
    it has no evidence."""
    out: dict[str, Tally] = defaultdict(lambda: Tally(0, 0))
    not_run: dict[str, int] = defaultdict(int)
    for run in dataset.questions:
        own = metrics if per_question is None else per_question.get(run.id, {})
        if not own:
            continue
        passed = run_passes(run, own)
        if passed is None:
            if run.status == "error":
                not_run[run.id] += 1
            continue
        out[run.id] = out[run.id] + Tally(1, int(passed))
    return dict(out), dict(not_run)


def pass_test(current: DatasetResult, baseline: DatasetResult, settings: Settings = DEFAULTS) -> PassTest | None:
    """The per-question test of ``current`` against ``baseline`` over the questions both ran;
    None when no metric has a pass threshold."""
    metrics = pass_metrics(current, baseline)
    if not metrics:
        return None
    own = passable(baseline, metrics)
    now, not_run = tallies(current, metrics, own)
    before, _ = tallies(baseline, metrics, own)
    shared = {q: (now[q], before[q]) for q in sorted(now.keys() & before.keys())}
    verdict = decide(shared, settings)
    fell_on = _fell_on(current, own)
    tested = [
        QuestionTest(
            id=q.id,
            runs=q.pr.runs,
            passes=q.pr.passes,
            baseline_runs=q.base.runs,
            baseline_passes=q.base.passes,
            p=q.p,
            level=q.level,
            decision=q.decision,
            not_run=not_run.get(q.id, 0),
            short=q.short,
            fell_on=fell_on.get(q.id, []),
            said=q.said(),
        )
        for q in verdict.questions
        if q.decision != "unchanged"
    ]
    return PassTest(
        metrics=list(metrics),
        alpha=settings.alpha,
        m=verdict.m,
        questions=len(shared),
        runs=sum(pr.runs for pr, _ in shared.values()),
        passes=sum(pr.passes for pr, _ in shared.values()),
        baseline_runs=sum(b.runs for _, b in shared.values()),
        baseline_passes=sum(b.passes for _, b in shared.values()),
        spread_p=verdict.spread_p,
        tested=tested,
    )


def _fell_on(current: DatasetResult, own: dict[str, Metrics]) -> dict[str, list[str]]:
    """Question id -> the metrics of its own (:func:`passable`) that some run of it here missed."""
    out: dict[str, set[str]] = defaultdict(set)
    for run in current.questions:
        for name, (threshold, direction) in own.get(run.id, {}).items():
            score = run.scores.get(name)
            if run.status == "ok" and score is not None and score.value is not None and not passes(score.value, threshold, direction):
                out[run.id].add(name)
    return {q: sorted(names) for q, names in out.items()}


def to_rerun(current: DatasetResult, baseline: DatasetResult, settings: Settings = DEFAULTS) -> tuple[list[str], list[str]]:
    """The sequential re-runs' next round: (questions to run once more on the PR's side, those of
    them whose base record is too short to judge by, to run once more on the base's side too)."""
    metrics = pass_metrics(current, baseline)
    if not metrics:
        return [], []
    own = passable(baseline, metrics)
    now, _ = tallies(current, metrics, own)
    before, _ = tallies(baseline, metrics, own)
    shared = {q: (now[q], before[q]) for q in now.keys() & before.keys()}
    again = sorted(more_runs(shared, settings))
    return again, [q for q in again if before[q].runs < MIN_BASE_RUNS and before[q].passes == before[q].runs]
