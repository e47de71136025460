"""What the comparison and the gate decide: metric and question comparisons, per-question tests, the gate's result (the verdict stage's types, stored in results files)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, computed_field, field_validator, model_validator

from agent_eval_action.models.scores import Direction
from agent_eval_action.models.stored import Stored, rounded


class QuestionDrop(Stored):
    """A question whose score fell by at least ``max_question_drop``: listed even when the mean holds."""

    id: str
    metric: str
    baseline: float
    current: float
    # With several runs a side: the larger of the ranges (highest - lowest score) of its runs on
    # the two sides; None when every run on each side scored the same. The gate counts a drop of
    # a question whose runs disagree only beyond this spread.
    spread: float | None = None
    # The fewer of its scored runs on the two sides: with several on both, a complete fall counts
    # only beyond what the questions' flakiness explains (``MetricComparison.chance_falls``).
    runs: int = 1

    _round_figures = field_validator("spread")(classmethod(lambda cls, v: rounded(v)))


class FlakyQuestion(Stored):
    """A question whose runs on one side disagree on a metric's pass threshold: some pass, some fail."""

    id: str
    metric: str
    threshold: float
    # The share of its scored runs that pass on each side, and how many were scored there
    # (None and 0: not scored on that side).
    baseline_pass_rate: float | None = None
    baseline_runs: int = 0
    current_pass_rate: float | None = None
    current_runs: int = 0

    _round_figures = field_validator("baseline_pass_rate", "current_pass_rate")(classmethod(lambda cls, v: rounded(v)))


class MetricComparison(Stored):
    metric: str
    direction: Direction
    # The base's and this run's means over the ``n_shared`` questions both scored, so that
    # ``delta`` is their difference; over all their questions when they share none (and in
    # files written before the means were paired).
    baseline: float | None
    current: float | None
    # Mean paired difference (current - baseline) over the questions both runs scored;
    # the difference of means when they share none.
    delta: float | None
    ci95: tuple[float, float] | None = None
    n_shared: int = 0
    # Questions only the base scored (removed, or an error / unscored now) and only this run
    # scored (added, or unscored on the base): left out of the means above.
    baseline_only: int = 0
    current_only: int = 0
    verdict: Literal["improved", "unchanged", "regressed", "new", "removed"]
    drops: list[QuestionDrop] = Field(default_factory=list)
    # With a pass threshold, over the questions with several runs on both sides: how many would
    # fall from passing every base run to failing every run here by chance alone, at each one's
    # own pass rate over both sides' runs; the gate counts their hard drops only beyond it.
    # None: no question has several runs on both sides.
    chance_falls: float | None = None

    _round_figures = field_validator("baseline", "current", "delta", "ci95", "chance_falls")(classmethod(lambda cls, v: rounded(v)))


class DatasetComparison(Stored):
    dataset: str
    path: str
    # "compared"; "new": no baseline on the base branch; "removed": the dataset file was deleted.
    status: Literal["compared", "new", "removed"]
    baseline_path: str | None = None
    # The dataset's path at the merge-base when this PR renamed it.
    renamed_from: str | None = None
    added_questions: list[str] = Field(default_factory=list)
    removed_questions: list[str] = Field(default_factory=list)
    # Question id now -> its id in the baseline: questions whose id changed and whose content did
    # not, compared with their own baseline runs.
    paired_by_content: dict[str, str] = Field(default_factory=dict)
    baseline_errors: int = 0
    current_errors: int = 0
    metrics: list[MetricComparison] = Field(default_factory=list)
    # Questions whose runs disagree on a side (with several runs per question), per metric with
    # a pass threshold, with their pass rate on each side. Kept here, not on the question runs:
    # flakiness is a statement about a question's K runs and both sides, which only the comparison sees.
    flaky: list[FlakyQuestion] = Field(default_factory=list)
    # The per-question pass test (verdict/noise.py): None where no metric has a pass threshold.
    pass_test: PassTest | None = None
    # On the base's fresh run against its stored baseline (results.drift), the metrics that moved
    # as drift (verdict/drift.py): what the drift note says and fail-on-drift fails on. None on a
    # PR's comparison, and in files written before it was recorded.
    drift_metrics: list[str] | None = None


class QuestionTest(Stored):
    """One question's runs on each side under the per-question test, and what it concluded:
    "failed" (Holm rejects "it passes as often as on the base"), "inconclusive" (a fall the
    re-runs could not confirm or clear), "cleared" (it failed a run, as the base does too)."""

    id: str
    runs: int
    passes: int
    baseline_runs: int
    baseline_passes: int
    # The one-sided Fisher exact p-value, and the level it had to reach (its share of alpha).
    p: float
    level: float
    decision: Literal["failed", "inconclusive", "cleared"]
    # Runs of it that ended in a model/API error: not run, not counted.
    not_run: int = 0
    # The base holds too few runs of it to test by (an older baseline of one run): decided by the
    # per-question guard's rule (every base run passed, every run here failed).
    short: bool = False
    # The metrics (of those it meets on the base) that some run of it here missed.
    fell_on: list[str] = Field(default_factory=list)
    # A plain-words line: "q26: 0 of 6 runs pass, 5 of 5 on the base: p = 0.002".
    said: str = ""


class PassTest(Stored):
    """The per-question test of a dataset: a question run passes when every metric in ``metrics``
    meets its pass threshold. Questions whose every PR run passed are not listed."""

    metrics: list[str]
    alpha: float
    # Holm's count: how many questions share alpha (those that could fall: passed some base run).
    m: int
    # Questions the test saw, and the runs each side made of them (re-runs included).
    questions: int = 0
    runs: int = 0
    passes: int = 0
    baseline_runs: int = 0
    baseline_passes: int = 0
    # The dataset-wide Cochran-Mantel-Haenszel p-value (falls spread thin over many questions).
    spread_p: float = 1.0
    tested: list[QuestionTest] = Field(default_factory=list)
    # The most runs a question could get on the PR's side (the re-runs' cap).
    cap: int = 10
    # Questions the PR adds (no base to test against) of which no run passes: a new failing test.
    new_failing: list[QuestionTest] = Field(default_factory=list)


# The rule a gate failure broke ("legacy": read from a version-1 file, which kept only the message).
GateRule = Literal[
    "min",
    "max",
    "max_regression",
    "question_drop",
    "question_fall",
    "new_question",
    "pass_rate",
    "new_errors",
    "max_errors",
    "nothing_scored",
    "drift",
    "legacy",
]


class GateFailure(Stored):
    """One reason the gate failed. ``question`` is None for a dataset-level rule.

    The gate's decision is stored whole, so the views only display it: ``message`` is
    "``subject``: ``detail``" (the dataset's name, then what happened)."""

    dataset: str | None = None  # the dataset's repository path
    metric: str | None = None
    question: str | None = None
    rule: GateRule
    baseline: float | None = None
    current: float | None = None
    message: str
    # The dataset named first in ``message``, and the message without it (None in older files: read from the message).
    subject: str | None = None
    detail: str | None = None
    # The figure of the rule as configured: the minimum or maximum, or max_regression (0.05, or "20%" of the baseline).
    limit: float | str | None = None
    # max_regression: whether the change's 95% CI lies wholly on the worse side (None: no CI, too few shared questions).
    significant: bool | None = None

    _round_figures = field_validator("baseline", "current")(classmethod(lambda cls, v: rounded(v)))

    @model_validator(mode="after")
    def _parts(self) -> GateFailure:
        """Files written before the parts were stored: the gate wrote every message as "name: detail"."""
        if self.detail is None:
            subject, sep, rest = self.message.partition(": ")
            self.subject, self.detail = (subject, rest) if sep else (None, self.message)
        return self


Outcome = Literal["passed", "failed", "inconclusive", "unchecked"]


class GateResult(Stored):
    """The verdict. ``unchecked``: bad input, an unreadable baseline or an infrastructure failure
    kept part of the check from happening, so it is neither a pass nor only a failure."""

    outcome: Outcome = "passed"
    failures: list[GateFailure] = Field(default_factory=list)
    # Found but not failing (a judged metric's question drops, missing baselines).
    notes: list[str] = Field(default_factory=list)
    # Regressions beyond max_regression that the gate did not count (their CI includes no change):
    # the notes that name them, as records the views show.
    within_noise: list[GateFailure] = Field(default_factory=list)
    # Why the check is unchecked: the first problems' messages.
    unchecked: list[str] = Field(default_factory=list)
    # Unchecked for no input's fault (the model/API failed, a budget or an interrupt skipped
    # questions it needed, the base's side was disturbed): the cause, said once (exit 3).
    infrastructure: str | None = None
    # The questions the per-question test could not decide within the re-runs' cap or budget,
    # each in plain words with what would decide it; with on-inconclusive = "fail", exit 1.
    inconclusive: list[str] = Field(default_factory=list)
    on_inconclusive: Literal["pass", "fail"] = "pass"
    # Where the gate's rules came from, and what this PR changes in them (applies after merge).
    rules_from: str | None = None
    config_changes: list[str] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """Written to results.json for its readers; the outcome says it (an inconclusive check
        passes unless on-inconclusive = "fail")."""
        return self.outcome == "passed" or (self.outcome == "inconclusive" and self.on_inconclusive == "pass")

    @model_validator(mode="before")
    @classmethod
    def _computed(cls, data: Any) -> Any:
        """``passed`` is written for the file's readers and given by the outcome: not an input.
        (Older files' gates are brought to this shape by repo/results_io.py when read.)"""
        if isinstance(data, dict) and "passed" in data:
            data = {k: v for k, v in data.items() if k != "passed"}
        return data
