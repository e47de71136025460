"""Drift in words: the base's fresh runs against its stored baseline with the same code."""

from __future__ import annotations

from agent_eval_action.datasets import LoadedDataset
from agent_eval_action.metrics import MetricContext, default_pass_thresholds
from agent_eval_action.models.results import DatasetResult, QuestionResult, Results, Selection
from agent_eval_action.models.scores import Score
from agent_eval_action.models.traces import Transcript
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.verdict.comparison import compare_dataset
from agent_eval_action.verdict.drift import drift_failures, drift_hint, drift_lines
from agent_eval_action.verdict.noise import DEFAULTS

SCORER = Scorer.for_names(["response_match", "total_tokens"], MetricContext(), pass_thresholds=default_pass_thresholds({}))


def _summarized(questions: list[QuestionResult]) -> DatasetResult:
    return SCORER.summarize(LoadedDataset(path="golden.json", name="golden", format="golden", records=iter(())), questions)


def _side(runs: int, tokens: float, answer: str, right: float = 1.0) -> DatasetResult:
    return _summarized(
        [
            QuestionResult(
                id=f"q{i:02d}",
                run=run,
                scores={"response_match": Score(value=right), "total_tokens": Score(value=tokens + i % 3)},
                transcript=Transcript(final_response=f"{answer} {i}"),
            )
            for i in range(20)
            for run in range(runs)
        ]
    )


def _lines(fresh: DatasetResult, stored: DatasetResult) -> list[str]:
    return _said(fresh, stored)[0]


def _said(fresh: DatasetResult, stored: DatasetResult) -> tuple[list[str], list[str]]:
    """The drift lines, and the metrics fail-on-drift fails the check on."""
    comparison = compare_dataset(fresh, stored, baseline_path="baseline.json", seed=1, settings=DEFAULTS)
    assert any(m.metric == "total_tokens" and m.verdict == "regressed" for m in comparison.metrics)
    lines = drift_lines([fresh], [comparison], lambda _: stored, DEFAULTS)
    assert drift_failures([comparison], fail_on_drift=False) == []
    return lines, [str(f.metric) for f in drift_failures([comparison], fail_on_drift=True)]


def test_a_token_count_that_moved_while_every_answer_is_one_the_record_gave_is_no_drift() -> None:
    """Seen in the bench (base mode, one question broken by the PR): "the model moved: 0 of 40
    questions answer differently ... (total_tokens 99 -> 100)" on every check, a count skewed by
    which paths a few flaky questions took in one run each. No answer moved: no drift said."""
    stored = _side(3, 100, "Order")
    assert _lines(_side(1, 104, "Order"), stored) == []
    # Every answer one the record gave (the same words), but the pass rates fell beyond chance: said.
    (line,) = _lines(_side(1, 104, "Order", right=0.0), stored)
    assert line.startswith("golden: the model moved: 0 of 20 questions answer differently"), line
    # The same count with answers the record never gave, every score as it was: counts alone are
    # no drift either (the bench's base-mode checks of a model that had not moved read "the model
    # moved: 2 of 40 questions answer differently ... (total_tokens 99.2 -> 100)" in 7 of 60).
    # A drift that matters moves a score.
    assert _lines(_side(1, 104, "Parcel"), stored) == []
    (line,) = _lines(_side(1, 104, "Parcel", right=0.0), stored)
    assert line.startswith("golden: the model moved: 20 of 20 questions answer differently than the stored baseline")
    assert "(response_match 100% → 0%)" in line, line


def test_fail_on_drift_fails_on_what_the_drift_line_says_and_on_nothing_else() -> None:
    """fail-on-drift failed on every regressed metric: a token count skewed by which paths flaky
    questions took (no line said, no answer moved) failed every base-mode check that set it."""
    stored = _side(3, 100, "Order")
    assert _said(_side(1, 104, "Order"), stored) == ([], [])
    lines, failed = _said(_side(1, 104, "Order", right=0.0), stored)
    assert len(lines) == 1 and failed == ["response_match"]
    assert _said(_side(1, 104, "Parcel"), stored) == ([], [])


def test_a_drift_comparison_written_before_drift_metrics_fails_as_it_did() -> None:
    stored = _side(3, 100, "Order")
    comparison = compare_dataset(_side(1, 104, "Order"), stored, baseline_path="baseline.json", seed=1, settings=DEFAULTS)
    assert comparison.drift_metrics is None
    assert [f.metric for f in drift_failures([comparison], fail_on_drift=True)] == ["total_tokens"]


def test_a_trace_metrics_rate_is_no_count() -> None:
    """Counts and prices alone are no drift; a trace metric's rate (tools failing) may be."""
    from agent_eval_action.verdict.drift import _counts_only

    scorer = Scorer.for_names(["total_tokens", "cost_usd", "tool_error_rate", "response_match"], MetricContext())
    dataset = scorer.summarize(
        LoadedDataset(path="g.json", name="g", format="golden", records=iter(())),
        [
            QuestionResult(
                id="q", run=0, scores={n: Score(value=0.5) for n in ("total_tokens", "cost_usd", "tool_error_rate", "response_match")}
            )
        ],
    )
    assert [n for n in ("total_tokens", "cost_usd", "tool_error_rate", "response_match") if _counts_only(dataset, n)] == [
        "total_tokens",
        "cost_usd",
    ]


def _hint(now: DatasetResult, stored: DatasetResult) -> str | None:
    """The drift hint of a check against stored baselines that changed no agent code: both sides
    the same agent code, every question as the record asked it."""
    for side in (now, stored):
        side.agent_fingerprint = "same code"
        for question in side.questions:
            question.content_hash = f"asked {question.id}"
    comparison = compare_dataset(now, stored, baseline_path="baseline.json", seed=1, settings=DEFAULTS)
    results = Results(datasets=[now], comparison=[comparison], selection=Selection())
    return drift_hint(results, lambda _: stored, lambda _: DEFAULTS)


def test_the_drift_hint_reads_a_move_as_the_drift_line_does() -> None:
    """Against stored baselines, with no agent code changed: the hint said "model drift is the
    likely cause" when a count alone moved and some question answered in other words (a flaky
    one's wording). As the drift line: a move of what runs are scored on, beyond chance."""
    assert _hint(_side(1, 104, "Parcel"), _side(3, 100, "Order")) is None
    assert _hint(_side(1, 100, "Order", right=0.0), _side(3, 100, "Order")) is None  # no answer differs
    hint = _hint(_side(1, 104, "Parcel", right=0.0), _side(3, 100, "Order"))
    assert hint is not None and hint.startswith("scores moved although this PR changed no agent code: 20 question runs"), hint
