"""The statistics of a verdict on a non-deterministic agent, as small pure functions.

A question's runs on one side are a :class:`Tally` (runs, passes). The PR's passes are compared
with the base's, question by question, with a one-sided Fisher exact test (the hypergeometric
tail: how likely this few passes of the PR's are when both sides pass equally often, given the
passes both sides made together). The error over all questions of a check is held by Holm's
step-down over every question that could fall: each that passed on the base, since the re-runs
can take any of them to its cap (counting only those whose runs so far could reach the level,
as Tarone would for a fixed design, let a flaky question that happened to be re-run share alpha
with no one: 2.5% of unchanged checks failed in the simulation of a dataset with 20 flaky
questions). A fall spread
thin over many questions, each too small to decide alone, is caught by the Cochran-Mantel-Haenszel
test: the PR's passes against what the base's rates predict, summed over questions.

Re-runs are a curtailed sequential test: a question whose first PR run already makes a fall
plausible (p at most ``doubt``) gets one more run at a time, until it is decided (p at most its
share of the error rate: failed), cleared (p above ``doubt``: what the base does often), or
reaches its cap (inconclusive when still in doubt at ``suspect`` shared among the questions
whose runs vary: at 5% shared, a dataset of 20 flaky questions left 2.7% of unchanged checks
inconclusive; it is 2% now). Every stop is a Fisher test on all the question's runs, so the test
said in the report is the one made.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from agent_eval_action.text.markdown import p_words

if TYPE_CHECKING:
    from agent_eval_action.config import Config
    from agent_eval_action.models.results import QuestionResult

# The error rate of a whole check (every question, and the dataset-wide test, share it).
ALPHA = 0.01
# A question is in doubt while its p-value is at most this: one more run may decide it.
DOUBT = 0.2
# The most runs a question gets on the PR's side, first run included.
CAP = 10
# At its cap, a question whose p-value is still at most this shared among the questions whose
# runs vary (Bonferroni: 2% of a check, whatever its number of flaky questions) is inconclusive;
# above it, cleared. 2%, not 5%: it bounds what chance alone leaves inconclusive at the cap, and the
# goals allow 3% of unchanged checks inconclusive and ask 98% of harmless ones passed. With
# `on-inconclusive = "pass"` (the default) the exit code is the same either way: only what a
# reviewer reads differs.
SUSPECT = 0.02
# While the dataset-wide test is in doubt, every question is run up to this many times.
SPREAD_RUNS = 5
# ... when its p-value is at most this (and above its level) ...
SPREAD_DOUBT = 0.10
# ... or when the same test over the questions that passed every base run is at most this: a fall
# spread thin over reliable questions shows there first, where the flaky questions' own noise
# (which the test over all questions must allow for) hides it. Priced in the simulation of the
# bench's agent (3,000 checks each): ten questions 0.3 weaker not passed 64% -> 77%, unchanged
# PRs' runs 1.17x -> 1.19x.
STEADY_DOUBT = 0.05
# Below this many base runs, a fall from an all-pass base is in doubt whatever its p-value:
# one base run cannot tell a broken question from a flaky one (compare-with = "base" without history).
MIN_BASE_RUNS = 3


def spread_level(alpha: float) -> float:
    """The dataset-wide test's share of the error rate: half (Bonferroni between it and the
    questions' Holm, which gets the other half: :func:`question_level`)."""
    return alpha / 2


def question_level(alpha: float) -> float:
    """The questions' share of the error rate, divided among them by Holm: the other half. Each
    question is looked at after every run it makes, and an unchanged check fails when any look of
    any question crosses, so the share must cover the looks too: at the whole alpha an unchanged
    check of the bench's agent failed about 1% of the time from the questions alone (a coin-flip
    question passing 5 of 5 at base then 0 of 4 here, p = 1/126), and the two tests together could
    reach 1.5 alpha."""
    return alpha / 2


Decision = Literal["failed", "inconclusive", "cleared", "unchanged"]


@dataclass(frozen=True)
class Tally:
    """A question's runs on one side: how many, and how many of them passed."""

    runs: int
    passes: int

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.runs + other.runs, self.passes + other.passes)

    @property
    def rate(self) -> float | None:
        return self.passes / self.runs if self.runs else None

    def said(self) -> str:
        """ "3 of 5 runs pass" """
        return f"{self.passes} of {self.runs} run{'s' if self.runs != 1 else ''} pass{'es' if self.runs == 1 else ''}"


def _hypergeom(total: int, successes: int, draws: int, k: int) -> float:
    return math.comb(successes, k) * math.comb(total - successes, draws - k) / math.comb(total, draws)


def fisher_fall(pr: Tally, base: Tally) -> float:
    """One-sided Fisher exact p-value that the PR passes less often than the base: P(X <= PR's
    passes) for X hypergeometric (the runs of both sides pooled, as many drawn as the PR made).
    1.0 when either side has no runs."""
    if pr.runs == 0 or base.runs == 0:
        return 1.0
    total, successes = pr.runs + base.runs, pr.passes + base.passes
    low = max(0, pr.runs + successes - total)
    return min(1.0, sum(_hypergeom(total, successes, pr.runs, k) for k in range(low, pr.passes + 1)))


def could_fall(base: Tally) -> bool:
    """Whether a question can show a fall at all: it passed some run on the base (the re-runs can
    take any such question to its cap, so each shares the error rate)."""
    return base.passes > 0


def varies(pr: Tally, base: Tally) -> bool:
    """Whether a question that could fall has runs that disagree (some run failed, on either side):
    one that could end its re-runs in doubt."""
    return could_fall(base) and (pr.passes < pr.runs or base.passes < base.runs)


def holm(pvalues: Mapping[str, float], m: int, alpha: float = ALPHA) -> dict[str, float]:
    """Holm's step-down over ``m`` hypotheses (``m`` at least the number given): the questions it
    rejects, each with the level it was rejected at (``alpha / m``, ``alpha / (m - 1)``, ...)."""
    m = max(m, len(pvalues), 1)
    rejected: dict[str, float] = {}
    for rank, (qid, p) in enumerate(sorted(pvalues.items(), key=lambda item: (item[1], item[0]))):
        level = alpha / (m - rank)
        if p > level:
            break
        rejected[qid] = level
    return rejected


def _normal_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def spread_fall(tallies: Mapping[str, tuple[Tally, Tally]]) -> float:
    """One-sided Cochran-Mantel-Haenszel p-value that the PR passes less often than the base over
    the whole dataset, question by question (each question its own stratum, so questions that
    always pass, or never do, weigh nothing), with continuity correction. 1.0 with nothing to test."""
    observed = expected = variance = 0.0
    for pr, base in tallies.values():
        total, successes = pr.runs + base.runs, pr.passes + base.passes
        if pr.runs == 0 or base.runs == 0 or total < 2:
            continue
        observed += pr.passes
        expected += pr.runs * successes / total
        variance += pr.runs * base.runs * successes * (total - successes) / (total * total * (total - 1))
    if variance <= 0:
        return 1.0
    return _normal_cdf((observed - expected + 0.5) / math.sqrt(variance))


def in_doubt(pr: Tally, base: Tally, *, doubt: float = DOUBT) -> bool:
    """Whether one more run could change what is concluded of the question: its PR runs make a
    fall plausible (p at most ``doubt``)."""
    if pr.runs == 0 or base.runs == 0 or pr.passes == pr.runs:
        return False
    return fisher_fall(pr, base) <= doubt


@dataclass(frozen=True)
class QuestionVerdict:
    """What the test concluded of one question: its tallies, p-value and decision; ``level``: the
    p-value it had to reach (its share of the error rate)."""

    id: str
    pr: Tally
    base: Tally
    p: float
    decision: Decision
    level: float
    # Decided by the per-question guard's rule: the base has too few runs to test by.
    short: bool = False

    def said(self) -> str:
        """ "q26: 0 of 6 runs pass, 5 of 5 on the base: p = 0.002" """
        said = f"{self.id}: {self.pr.said()}, {self.base.passes} of {self.base.runs} on the base"
        return said if self.short else f"{said}: {p_words(self.p)}"


@dataclass(frozen=True)
class Settings:
    alpha: float = ALPHA
    doubt: float = DOUBT
    cap: int = CAP
    suspect: float = SUSPECT
    spread_runs: int = SPREAD_RUNS
    spread_doubt: float = SPREAD_DOUBT
    steady_doubt: float = STEADY_DOUBT
    # A shard of a check (``--shard i/n``): the questions of the whole check, whose merge decides
    # once over all of them; a question this shard fails is run on until it fails at the level
    # of that merge too. 0: this is the whole check.
    whole: int = 0


DEFAULTS = Settings()


def cap_to_decide(questions: int, base_runs: int, alpha: float = ALPHA, floor: int = CAP) -> int:
    """The fewest runs (at least ``floor``) after which a question that fails every run, against
    a base that passed all ``base_runs`` of it, is failed even when all ``questions`` of the
    dataset share the questions' half of ``alpha`` (Holm's first level, ``alpha / 2 / questions``):
    so the cap never leaves the clearest fall undecided. 13 for 40 questions and 5 base runs
    (0 of 13 against 5 of 5: p = 1/8568 under 0.005/40), ``floor`` for a handful."""
    level = question_level(alpha) / max(1, questions)
    runs = floor
    while runs < 100 and fisher_fall(Tally(runs, 0), Tally(base_runs, base_runs)) > level:
        runs += 1
    return runs


def settings_for(
    *, alpha: float, doubt: float, max_reruns: int | None, questions: int, base_runs: int, whole: int | None = None
) -> Settings:
    """The test's settings for a dataset of ``questions`` whose baseline holds ``base_runs`` runs a
    question: ``max_reruns`` None (the default) is :func:`cap_to_decide`'s cap. ``whole``: a
    shard's, the questions of the whole check (the cap and the re-runs are the whole's)."""
    count = max(questions, whole or 0)
    cap = max_reruns if max_reruns is not None else cap_to_decide(count, max(base_runs, MIN_BASE_RUNS), alpha)
    return Settings(alpha=alpha, doubt=doubt, cap=cap, whole=whole or 0)


def gate_settings(config: Config, questions: int, whole: int | None = None, record: int | None = None) -> Settings:
    """:func:`settings_for` from the gate's config, for a dataset of ``questions``. ``record``:
    the fewest runs a question has in the stored baseline compared with, when fewer than the
    config's ``baseline-runs`` (a baseline recorded under a smaller setting): the cap must decide
    against the record there is, not the one the setting would make."""
    gate = config.gate
    base_runs = min(config.baseline_runs, record) if record else config.baseline_runs
    return settings_for(
        alpha=gate.alpha, doubt=gate.doubt, max_reruns=gate.max_reruns, questions=questions, base_runs=base_runs, whole=whole
    )


def fewest_runs(runs: Iterable[QuestionResult]) -> int | None:
    """The fewest runs any question has among ``runs`` (None: none)."""
    counts = Counter(run.id for run in runs)
    return min(counts.values()) if counts else None


@dataclass(frozen=True)
class DatasetVerdict:
    """The per-question decisions of one dataset, Holm's ``m`` (the questions that :func:`could_fall`)
    and the dataset-wide test's p."""

    questions: list[QuestionVerdict]
    m: int
    spread_p: float
    alpha: float

    def of(self, decision: Decision) -> list[QuestionVerdict]:
        return [q for q in self.questions if q.decision == decision]

    @property
    def spread_failed(self) -> bool:
        return self.spread_p <= spread_level(self.alpha)


def decide(tallies: Mapping[str, tuple[Tally, Tally]], settings: Settings = DEFAULTS) -> DatasetVerdict:
    """Each question (id -> (PR's tally, base's tally)) decided: ``failed`` when Holm rejects it,
    ``inconclusive`` when not but still in doubt (below its cap: the re-runs were not made, a
    budget stopped them; at its cap: p still at most ``suspect`` shared among the questions that
    :func:`varies`),
    ``cleared`` when it failed a run but the base fails as often, ``unchanged`` when every PR run
    passed. Holm works at :func:`question_level`, the dataset-wide test at :func:`spread_level`."""
    pvalues = {q: fisher_fall(pr, base) for q, (pr, base) in tallies.items()}
    # A base record too short to test by (an older baseline of one run): the per-question guard's
    # rule, a question that passed every base run and fails every run here fell.
    short = {q for q, (pr, base) in tallies.items() if 0 < base.runs < MIN_BASE_RUNS}
    level = question_level(settings.alpha)
    m = max(1, sum(1 for _, base in tallies.values() if could_fall(base)))
    rejected = holm({q: p for q, p in pvalues.items() if q not in short and could_fall(tallies[q][1])}, m, level)
    suspect = settings.suspect / max(1, sum(1 for pr, base in tallies.values() if varies(pr, base)))
    out = []
    for qid in sorted(tallies):
        pr, base = tallies[qid]
        p = pvalues[qid]
        if qid in short:
            broke = base.passes == base.runs and pr.runs > 0 and pr.passes == 0
            decision: Decision = "failed" if broke else "cleared" if pr.passes < pr.runs else "unchanged"
        elif qid in rejected:
            decision = "failed"
        elif in_doubt(pr, base, doubt=suspect if pr.runs >= settings.cap else settings.doubt):
            decision = "inconclusive"
        elif pr.passes < pr.runs:
            decision = "cleared"
        else:
            decision = "unchanged"
        out.append(QuestionVerdict(qid, pr, base, p, decision, rejected.get(qid, level / m), short=qid in short))
    return DatasetVerdict(out, m, spread_fall(tallies), settings.alpha)


def spread_in_doubt(tallies: Mapping[str, tuple[Tally, Tally]], spread_p: float, settings: Settings = DEFAULTS) -> bool:
    """Whether the dataset-wide test (its p-value ``spread_p``) is undecided but a fall is
    plausible: above its level, and at most ``spread_doubt``, or the same test over the questions
    whose every base run passed at most ``steady_doubt``."""
    if spread_p <= spread_level(settings.alpha):
        return False
    if spread_p <= settings.spread_doubt:
        return True
    steady = {q: (pr, base) for q, (pr, base) in tallies.items() if base.runs and base.passes == base.runs}
    return spread_fall(steady) <= settings.steady_doubt


def more_runs(
    tallies: Mapping[str, tuple[Tally, Tally]], settings: Settings = DEFAULTS, verdict: DatasetVerdict | None = None
) -> list[str]:
    """The questions to run once more (sequential re-runs): in doubt, not yet decided (Holm would
    not reject them now), and under the cap of PR runs. ``verdict``: ``decide``'s of these
    tallies, when the caller has it already."""
    verdict = decide(tallies, settings) if verdict is None else verdict
    doubtful = [q.id for q in verdict.questions if q.decision == "inconclusive" and q.pr.runs < settings.cap]
    # A fall against a short base record is confirmed by failing MIN_BASE_RUNS runs, not one.
    doubtful += [q.id for q in verdict.questions if q.short and q.decision == "failed" and q.pr.runs < MIN_BASE_RUNS]
    # A shard's fall must hold at the whole check's Holm level, the least the merge may give it
    # (every question of the whole sharing alpha): else the merge leaves it undecided.
    if settings.whole:
        level = question_level(settings.alpha) / settings.whole
        doubtful += [q.id for q in verdict.of("failed") if not q.short and q.p > level and q.pr.runs < settings.cap]
    # Questions in doubt are decided first; once one fell, the check fails whatever else does.
    if doubtful or verdict.of("failed") or not spread_in_doubt(tallies, verdict.spread_p, settings):
        return doubtful
    # The dataset-wide test in doubt: a fall spread thin shows on questions that passed their
    # first run too, so every question gets runs up to ``spread_runs``, and never past the cap
    # (``[gate] max-reruns``: with 1, every question of a PR with one broken ran 3 times).
    wide = [q.id for q in verdict.questions if q.pr.runs < min(settings.spread_runs, settings.cap) and q.base.runs]
    return sorted(set(doubtful) | set(wide))
