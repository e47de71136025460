"""Issue 46's one decision path, on results: response_match decided from runs like every
reference metric, a cap that can decide the clearest fall of a 40-question dataset, a fall a
cap or a budget stopped never passed, a new question that fails every run failed as new."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agent_eval_action.config import GateConfig
from agent_eval_action.datasets import LoadedDataset
from agent_eval_action.metrics import MetricContext, default_pass_thresholds
from agent_eval_action.models.results import DatasetResult, QuestionResult
from agent_eval_action.models.scores import Score
from agent_eval_action.models.verdicts import GateResult
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.verdict.comparison import compare_dataset
from agent_eval_action.verdict.gate import evaluate_gate
from agent_eval_action.verdict.noise import Tally, cap_to_decide, fisher_fall, question_level, settings_for

TOOLS, ROUGE = "tool_usage_accuracy", "response_match"
KINDS = {TOOLS: "reference", ROUGE: "reference"}
SCORER = Scorer.for_names([TOOLS, ROUGE], MetricContext(), pass_thresholds=default_pass_thresholds({}))


def runs(values: Mapping[str, Sequence[tuple[float, float] | str]]) -> DatasetResult:
    """Question -> its runs, each (tool_usage_accuracy, response_match) or an error's text."""
    out = []
    for qid, vs in values.items():
        for k, v in enumerate(vs):
            if isinstance(v, str):
                out.append(QuestionResult(id=qid, run=k, status="error", error=v))
            else:
                out.append(QuestionResult(id=qid, run=k, scores={TOOLS: Score(value=v[0]), ROUGE: Score(value=v[1])}))
    return SCORER.summarize(LoadedDataset(path="d.json", name="d", format="golden", records=iter(())), out)


def gate_of(now: DatasetResult, base: DatasetResult, config: GateConfig | None = None, questions: int | None = None) -> GateResult:
    config = config or GateConfig()
    settings = settings_for(
        alpha=config.alpha,
        doubt=config.doubt,
        max_reruns=config.max_reruns,
        questions=questions or len({q.id for q in now.questions}),
        base_runs=5,
    )
    return evaluate_gate([now], [compare_dataset(now, base, baseline_path="b", settings=settings)], config, KINDS)


RIGHT = (1.0, 0.9)
STEADY = {f"s{i}": [RIGHT] * 5 for i in range(30)}


def test_a_worded_apart_answer_in_one_run_does_not_fail_an_unchanged_pr() -> None:
    """The observed false alarm: a question answering in its own words now and then (response_match
    98% on the base's five runs, 12.5% in the PR's one) is one run of a flaky question, decided by
    the per-question test (p = 5/6 with the base failing it once too), not by a hard drop."""
    base = runs(STEADY | {"q38": [(1.0, 0.98), (1.0, 0.98), (1.0, 0.2), (1.0, 0.98), (1.0, 0.98)]})
    now = runs(STEADY | {"q38": [(1.0, 0.125)]})
    gate = gate_of(now, base)
    assert gate.outcome == "passed", gate
    assert not gate.failures and not any(ROUGE in note for note in gate.notes)


def test_a_response_that_falls_in_every_run_fails_by_name() -> None:
    base = runs(STEADY | {"q7": [RIGHT] * 5})
    now = runs(STEADY | {"q7": [(1.0, 0.1)] * 13})
    gate = gate_of(now, base)
    assert gate.outcome == "failed"
    assert [(f.rule, f.question, f.metric) for f in gate.failures] == [("question_fall", "q7", ROUGE)]
    # 1/8568, under alpha's half shared by the 31 questions that could fall.
    assert "q7: 0 of 13 runs pass, 5 of 5 on the base: p < 0.001" in gate.failures[0].message


def test_the_default_cap_decides_the_clearest_fall_at_the_holm_level_of_40_questions() -> None:
    cap = cap_to_decide(40, 5)
    level = question_level(0.01) / 40
    assert cap == 13
    assert fisher_fall(Tally(cap, 0), Tally(5, 5)) <= level < fisher_fall(Tally(cap - 1, 0), Tally(5, 5))
    # A small dataset keeps the floor; a large one gets the runs its Holm level needs.
    assert cap_to_decide(4, 5) == 10 and cap_to_decide(200, 5) == 19
    assert settings_for(alpha=0.01, doubt=0.2, max_reruns=None, questions=40, base_runs=5).cap == 13
    assert settings_for(alpha=0.01, doubt=0.2, max_reruns=7, questions=40, base_runs=5).cap == 7


def test_a_fall_a_budget_stopped_is_not_a_pass() -> None:
    """0 of 3 against 5 of 5 (p = 0.018), the re-runs stopped by a budget: "could not be
    checked" (exit 3), naming the question and what would decide it; never passed."""
    base = runs(STEADY | {"q1": [RIGHT] * 5})
    now = runs(STEADY | {"q1": [(0.0, 0.9)] * 3})
    gate = gate_of(now, base)
    assert gate.outcome == "unchecked" and not gate.passed
    assert gate.infrastructure == "the re-runs stopped before 1 question that fail every run (and passed every base run) could be decided"
    assert gate.unchecked == [
        "d: question q1: 0 of 3 runs pass, 5 of 5 on the base: p = 0.018; re-runs stopped at 3 (a budget, or no agent to re-run "
        "it here): up to 13 runs would decide it"
    ]
    # A set cap that stops it there: the same, the cap is no pass either.
    assert gate_of(now, base, GateConfig(max_reruns=3)).outcome == "unchecked"
    # Re-run to the cap the default allows: failed.
    assert gate_of(runs(STEADY | {"q1": [(0.0, 0.9)] * 13}), base, questions=40).outcome == "failed"
    # A question that also fails on the base now and then stays inconclusive (a flaky fall).
    flaky = runs(STEADY | {"q1": [RIGHT, RIGHT, RIGHT, RIGHT, (0.0, 0.9)]})
    assert gate_of(runs(STEADY | {"q1": [(0.0, 0.9)] * 3}), flaky).outcome == "inconclusive"


def test_a_new_question_that_fails_every_run_fails_the_gate_as_new() -> None:
    base = runs(STEADY)
    now = runs(STEADY | {"q_new_fails_01": [(0.5, 0.9), (0.5, 0.9)], "q_new_flaky": [RIGHT, (0.0, 0.9)], "q_new_ok": [RIGHT]})
    gate = gate_of(now, base)
    assert gate.outcome == "failed"
    assert [(f.rule, f.question) for f in gate.failures] == [("new_question", "q_new_fails_01")]
    assert gate.failures[0].message == "d: question q_new_fails_01: new in this PR, 0 of 2 runs pass (misses tool_usage_accuracy)"
    assert "no worse than on the base" not in gate.failures[0].message
    # One whose runs end in the agent's own error is a new failing test too.
    crashed = gate_of(runs(STEADY | {"q_new_crash": ["KeyError: 'order'"]}), base)
    assert [(f.rule, f.question) for f in crashed.failures] == [("new_question", "q_new_crash")]  # told once, not as a new error too
    # The setting that allows it: a note, the gate passes.
    allowed = gate_of(now, base, GateConfig(fail_on_new_failing=False))
    assert allowed.outcome == "passed" and any("q_new_fails_01: new in this PR" in n for n in allowed.notes)


def test_the_cap_is_made_for_the_record_there_is() -> None:
    """baseline-runs is 10 by default; a baseline recorded under 5 is compared as it is: a cap
    made for 10 base runs (10) leaves 0 of 10 against 5 of 5 (p = 1/3003) above Holm's first
    level for 40 questions (0.000125), so the cap is the record's (13)."""
    from agent_eval_action.config import Config
    from agent_eval_action.verdict.noise import fewest_runs, gate_settings

    config = Config()
    assert config.baseline_runs == 10 and gate_settings(config, 40).cap == cap_to_decide(40, 10) == 10
    record = runs({f"q{i}": [RIGHT] * 5 for i in range(40)}).questions
    assert fewest_runs(record) == 5
    settings = gate_settings(config, 40, record=fewest_runs(record))
    assert settings.cap == 13 and fisher_fall(Tally(13, 0), Tally(5, 5)) <= question_level(settings.alpha) / 40
    assert fisher_fall(Tally(10, 0), Tally(5, 5)) > question_level(settings.alpha) / 40
