"""The per-question test on results: which runs of a question pass (every gated reference metric
with a pass threshold meets it), the tallies of both sides, and the test's decisions
(``noise.py``) stored as the comparison's :class:`PassTest`."""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from agent_eval_action.models.results import DatasetResult, QuestionResult
from agent_eval_action.models.verdicts import PassTest, QuestionTest
from agent_eval_action.scoring.aggregate import passes
from agent_eval_action.verdict.noise import DEFAULTS, Settings, Tally, decide, more_runs, spread_in_doubt
from agent_eval_action.verdict.outages import outage_cause


def pass_metrics(current: DatasetResult, baseline: DatasetResult | None = None) -> dict[str, tuple[float, str]]:
    """Metric -> (pass threshold, direction) for the metrics a question run must all meet to
    pass: every metric that says whether an answer is right (reference metrics, ``response_match``
    included, judged and custom ones) with a pass threshold on either side. Trace metrics (how
    the run went: timings, counts, tokens, cost) take no part: they are gated by their own rules."""
    out: dict[str, tuple[float, str]] = {}
    for side in (baseline, current):
        for name, s in (side.summary if side is not None else {}).items():
            if s.pass_threshold is not None and s.kind != "trace" and s.direction != "neutral":
                out[name] = (s.pass_threshold, s.direction)
    return dict(sorted(out.items()))


def run_passes(run: QuestionResult, metrics: dict[str, tuple[float, str]]) -> bool | None:
    """Whether one run of a question passes: every metric of ``metrics`` it has a score on meets
    its threshold; an error of the agent's (a tool that raised, a timeout) fails. None: no
    evidence (a model/API error, a skipped run, no score on any of them)."""
    return _run_passes(run, _marked(run, metrics), metrics)


def _marked(run: QuestionResult, metrics: dict[str, tuple[float, str]]) -> dict[str, bool]:
    """For each metric of ``metrics`` the run holds a value of (in their order), whether it meets
    its threshold: what every part of the test asks of a run, asked once a run."""
    out = {}
    scores = run.scores
    for name, (threshold, direction) in metrics.items():
        score = scores.get(name)
        if score is not None and (value := score.value) is not None:
            out[name] = passes(value, threshold, direction)
    return out


def _run_passes(run: QuestionResult, marked: dict[str, bool], own: dict[str, tuple[float, str]]) -> bool | None:
    """:func:`run_passes` of a run whose marks (:func:`_marked`) cover ``own``."""
    if run.status == "skipped":
        return None
    if run.status == "error":
        return None if outage_cause(run.error, run.error_origin) else False
    met = [marked[name] for name in own if name in marked]
    if not met:
        return None
    return all(met)


Metrics = dict[str, tuple[float, str]]
# Runs, each with its marks (:func:`_marked`).
Marked = list[tuple[QuestionResult, dict[str, bool]]]


def marks(side: DatasetResult, metrics: Metrics) -> Marked:
    """Each run of a side with its marks (:func:`_marked`): what every part of the test reads of it."""
    return [(run, _marked(run, metrics)) for run in side.questions]


def passable(baseline: Marked, current: Marked, metrics: Metrics) -> dict[str, Metrics]:
    """Question id -> the metrics of ``metrics`` it meets in some run of either side (each side's
    runs marked, :func:`marks`): what a run of
    it must meet to pass. A metric a question fails in every run (a known failure, or a threshold
    it never reached) would hide every other fall of it; a question that meets none is not tested.

    Both sides choose, never one: chosen by the base's runs alone, a question whose one base run
    failed was left out (it could only have shown a rise) while one whose base run passed was in,
    and a base run always met the metrics its own run chose, so a PR as good as its base read as
    a fall (with one base run a question, 5.5% of unchanged checks of a dataset with 20 flaky
    questions failed the dataset-wide test in the simulation; chosen by both sides, 0.3%).
    Only a metric both sides scored the question on counts: one side's alone (a criterion the
    stored baseline never computed, a judge the base's runs could not reach) would be met by that
    side and missed by none on the other, a fall or a rise that is only the record's.

    The price of choosing by both sides: a metric the base never met and a PR run met once is
    then asked of every run, so the base passes none and the question shows no fall on its other
    metrics (a known failure the PR made flaky hides a break beside it)."""
    both = _scored(baseline) & _scored(current)
    out: dict[str, Metrics] = defaultdict(dict)
    for run, marked in (*baseline, *current):
        if run.status != "ok":
            continue
        for name, met in marked.items():
            if met and (run.id, name) in both:
                out[run.id][name] = metrics[name]
    return dict(out)


def _scored(side: Marked) -> set[tuple[str, str]]:
    """(question id, metric) of every score of the pass metrics a side's runs hold a value of."""
    return {(run.id, name) for run, marked in side for name in marked}


def tallies(marked: Marked, per_question: dict[str, Metrics]) -> tuple[dict[str, Tally], dict[str, int]]:
    """(question id -> its runs and passes, question id -> its runs that did not run: model/API
    errors), over marked runs (:func:`marks`). ``per_question``: each question's own metrics
    (:func:`passable`); a question not in it has no evidence."""
    counted: dict[str, list[int]] = {}
    not_run: dict[str, int] = defaultdict(int)
    for run, marked_run in marked:
        own = per_question.get(run.id)
        if not own:
            continue
        passed = _run_passes(run, marked_run, own)
        if passed is None:
            if run.status == "error":
                not_run[run.id] += 1
            continue
        tally = counted.setdefault(run.id, [0, 0])
        tally[0] += 1
        tally[1] += passed
    return {q: Tally(n, k) for q, (n, k) in counted.items()}, dict(not_run)


class _Sides(NamedTuple):
    """Both sides' runs marked and tallied over each question's own metrics."""

    ours: Marked
    own: dict[str, Metrics]
    now: dict[str, Tally]
    not_run: dict[str, int]
    before: dict[str, Tally]


def _sides(current: DatasetResult, baseline: DatasetResult, metrics: Metrics) -> _Sides:
    ours, theirs = marks(current, metrics), marks(baseline, metrics)
    own = passable(theirs, ours, metrics)
    now, not_run = tallies(ours, own)
    before, _ = tallies(theirs, own)
    return _Sides(ours, own, now, not_run, before)


def pass_test(current: DatasetResult, baseline: DatasetResult, settings: Settings = DEFAULTS) -> PassTest | None:
    """The per-question test of ``current`` against ``baseline`` over the questions both ran;
    None when no metric has a pass threshold."""
    metrics = pass_metrics(current, baseline)
    if not metrics:
        return None
    sides = _sides(current, baseline, metrics)
    now, before, not_run = sides.now, sides.before, sides.not_run
    shared = {q: (now[q], before[q]) for q in sorted(now.keys() & before.keys())}
    verdict = decide(shared, settings)
    fell_on = _fell_on(sides.ours, sides.own)
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
        cap=settings.cap,
        new_failing=_new_failing(sides.ours, baseline, metrics),
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


def _new_failing(current: Marked, baseline: DatasetResult, metrics: Metrics) -> list[QuestionTest]:
    """The questions ``current`` has and ``baseline`` does not (the PR added them) of which no run
    passes (every run misses a threshold, or ends in the agent's own error): new failing tests.
    A new question that passes some runs is flaky, not failing; one that did not run is no evidence."""
    before = {q.id for q in baseline.questions}
    added = {run.id for run, _ in current if run.id not in before}
    if not added:
        return []
    everything = dict.fromkeys(added, metrics)
    now, not_run = tallies(current, everything)
    missed = _fell_on(current, everything)
    out = []
    for qid in sorted(added):
        tally = now.get(qid)
        if tally is None or tally.runs == 0 or tally.passes:
            continue
        misses = missed.get(qid, [])
        said = f"{qid}: new in this PR, {tally.said()}" + (f" (misses {', '.join(misses)})" if misses else " (its runs end in an error)")
        out.append(
            QuestionTest(
                id=qid,
                runs=tally.runs,
                passes=0,
                baseline_runs=0,
                baseline_passes=0,
                p=0.0,
                level=0.0,
                decision="failed",
                not_run=not_run.get(qid, 0),
                fell_on=misses,
                said=said,
            )
        )
    return out


def _fell_on(current: Marked, own: dict[str, Metrics]) -> dict[str, list[str]]:
    """Question id -> the metrics of its own (:func:`passable`) that some run of it here missed."""
    out: dict[str, set[str]] = defaultdict(set)
    for run, marked in current:
        if run.status != "ok":
            continue
        for name in own.get(run.id, {}):
            if marked.get(name) is False:
                out[run.id].add(name)
    return {q: sorted(names) for q, names in out.items()}


def to_rerun(current: DatasetResult, baseline: DatasetResult, settings: Settings = DEFAULTS) -> list[str]:
    """The sequential re-runs' next round: the questions to run once more (beside the base's agent,
    on both sides: see ``service/evaluation.py``)."""
    return sorted(more_runs(_shared(current, baseline), settings))


def drift_to_rerun(fresh: DatasetResult, stored: DatasetResult, settings: Settings = DEFAULTS) -> list[str]:
    """compare-with = "base": the questions to run once more so that drift is decided, when the
    dataset-wide test of the base's fresh runs against its stored baseline is in doubt (above its
    level, a fall plausible: ``noise.spread_in_doubt``) and no question has fallen alone. Drift
    read at one run a question was missed when it was there (10 of 40 questions right 30% of the
    time: the note unsaid in 3 of 50 checks, each at p = 0.0055-0.0068 against a level of 0.005);
    a question that fell alone (a thin record's: one stored run, one failed now) is decided as
    the note decides it, without more runs."""
    shared = _shared(fresh, stored)
    if not shared:
        return []
    verdict = decide(shared, settings)
    if verdict.of("failed") or not spread_in_doubt(shared, verdict.spread_p, settings):
        return []
    return sorted(more_runs(shared, settings, verdict))


def _shared(current: DatasetResult, baseline: DatasetResult) -> dict[str, tuple[Tally, Tally]]:
    """Each question both sides ran: its tallies here and on the base, over the pass metrics."""
    metrics = pass_metrics(current, baseline)
    if not metrics:
        return {}
    sides = _sides(current, baseline, metrics)
    return {q: (sides.now[q], sides.before[q]) for q in sides.now.keys() & sides.before.keys()}
