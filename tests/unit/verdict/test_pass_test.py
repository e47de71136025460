"""The per-question test on results: which runs pass, not-run runs, the stored test, the gate's
three outcomes and could-not-be-checked for outages, and every view telling them apart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from agent_eval_action.config import GateConfig
from agent_eval_action.datasets import LoadedDataset
from agent_eval_action.metrics import MetricContext, default_pass_thresholds
from agent_eval_action.models.results import DatasetResult, QuestionResult, Results
from agent_eval_action.models.scores import Score
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.verdict.comparison import compare_dataset
from agent_eval_action.verdict.gate import evaluate_gate
from agent_eval_action.verdict.pass_test import drift_to_rerun, pass_metrics, pass_test, run_passes, to_rerun
from agent_eval_action.views.headline import headline
from agent_eval_action.views.junit import write_junit
from agent_eval_action.views.page import build
from agent_eval_action.views.render import Renderer, view
from agent_eval_action.views.report import render_report
from agent_eval_action.views.terminal import render

TOOLS, ROUGE = "tool_usage_accuracy", "response_match"
SCORER = Scorer.for_names([TOOLS, ROUGE], MetricContext(), pass_thresholds=default_pass_thresholds({}))
KINDS = {TOOLS: "reference", ROUGE: "reference"}
NO_KEY = "ValueError: Missing key inputs argument! To use the Google AI API, provide (`api_key`) arguments."


def dataset(values: Mapping[str, Sequence[float | str]]) -> DatasetResult:
    """Question -> its runs: a float is a tool_usage_accuracy score (response_match 0.8 beside
    it, over its pass threshold), a string an error."""
    runs = []
    for qid, vs in values.items():
        for k, v in enumerate(vs):
            if isinstance(v, str):
                runs.append(QuestionResult(id=qid, run=k, status="error", error=v))
            else:
                runs.append(QuestionResult(id=qid, run=k, scores={TOOLS: Score(value=v), ROUGE: Score(value=0.8)}))
    return SCORER.summarize(LoadedDataset(path="d.json", name="d", format="golden", records=iter(())), runs)


def test_a_run_passes_when_every_thresholded_reference_metric_meets_it() -> None:
    d = dataset({"q": [1.0, 0.5, "KeyError: 'x'", NO_KEY]})
    metrics = pass_metrics(d)
    # response_match passes at 0.8 (ROUGE-L): decided from runs like every reference metric.
    assert metrics == {ROUGE: (0.8, "higher"), TOOLS: (1.0, "higher")}
    assert [run_passes(r, metrics) for r in d.questions] == [True, False, False, None]
    worded_apart = d.questions[0].model_copy(update={"scores": {TOOLS: Score(value=1.0), ROUGE: Score(value=0.2)}})
    assert run_passes(worded_apart, metrics) is False


def test_the_stored_test_says_each_question_in_plain_words() -> None:
    steady = {f"s{i}": [1.0] * 5 for i in range(10)}
    test = pass_test(dataset(steady | {"q26": [0.0] * 10}), dataset(steady | {"q26": [1.0] * 5}))
    # Every question that passed on the base could fall: 0.005 shared by 11.
    assert test is not None and test.m == 11 and test.questions == 11
    assert [(t.id, t.decision, t.said) for t in test.tested] == [("q26", "failed", "q26: 0 of 10 runs pass, 5 of 5 on the base: p < 0.001")]


def test_to_rerun_asks_for_the_questions_in_doubt() -> None:
    base = dataset({"a": [1.0] * 5, "b": [1.0] * 5, "c": [1.0]})
    again = to_rerun(dataset({"a": [0.0], "b": [1.0], "c": [0.0]}), base)
    assert {"a", "c"} <= set(again) and "b" not in again
    # Nothing in doubt: no re-runs.
    assert to_rerun(dataset({"a": [1.0], "b": [1.0], "c": [1.0]}), base) == []


def test_drift_in_doubt_runs_on_until_the_drift_test_decides() -> None:
    """compare-with = "base": the base's runs now against its stored record. Drift at one run a
    question went unsaid in 3 of 50 of the bench's drifted checks, each just above the level."""
    stored = dataset({f"q{i:02d}": [1.0] * 10 for i in range(40)})

    def now(failing: int) -> DatasetResult:
        return dataset({f"q{i:02d}": [0.0 if i < failing else 1.0] for i in range(40)})

    assert drift_to_rerun(now(0), stored) == []
    # One question that never failed in the record fails its one run now: p = 0.08 over the
    # dataset, in doubt; it runs again.
    assert drift_to_rerun(now(1), stored) == ["q00"]
    # Two: p < 0.001, the drift decided (said); no more runs.
    assert drift_to_rerun(now(2), stored) == []
    # A thin record (one stored run a question): a question that fell is decided as the note decides it.
    assert drift_to_rerun(now(2), dataset({f"q{i:02d}": [1.0] for i in range(40)})) == []


def _views(results: Results, tmp_path: Path) -> dict[str, str]:
    context = view(results)
    junit = write_junit(results, tmp_path / "junit.xml", {}).read_text()
    return {
        "comment": Renderer().render("comment.md.j2", context),
        "summary": Renderer().render("summary.md.j2", context),
        "terminal": render(results, {}),
        "report": render_report(results),
        "junit": junit,
    }


def test_inconclusive_is_told_apart_in_every_view(tmp_path: Path) -> None:
    steady = {f"s{i}": [1.0] * 5 for i in range(10)}
    now, base = dataset(steady | {"q7": [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]}), dataset(steady | {"q7": [1.0] * 5})
    comparison = compare_dataset(now, base, baseline_path="b")
    gate = evaluate_gate([now], [comparison], GateConfig(), KINDS)
    assert gate.outcome == "inconclusive" and gate.passed and not gate.failures
    results = Results(datasets=[now], comparison=[comparison], gate=gate)
    said = "q7: 3 of 10 runs pass, 5 of 5 on the base: p = 0.019"
    assert headline(results, [], []).startswith("Agent evaluation inconclusive: 1 question fell in some runs")
    shown = _views(results, tmp_path)
    for name, text in shown.items():
        assert said in text.replace("\\", ""), name
    assert "## ❔ Agent evaluation inconclusive" in shown["comment"]
    assert "gate: INCONCLUSIVE" in shown["terminal"]
    assert '<skipped message="inconclusive: d: question q7' in shown["junit"]
    assert 'class="verdict inconclusive"' in shown["report"]
    assert build(results).headline.startswith("Agent evaluation inconclusive")
    # on-inconclusive = "fail": the same outcome, and the check fails.
    strict = evaluate_gate([now], [comparison], GateConfig(on_inconclusive="fail"), KINDS)
    assert strict.outcome == "inconclusive" and not strict.passed


def test_an_outage_could_not_be_checked_with_its_cause_said_once(tmp_path: Path) -> None:
    now = dataset({f"q{i}": [NO_KEY] for i in range(26)})
    base = dataset({f"q{i}": [1.0] * 5 for i in range(26)})
    comparison = compare_dataset(now, base, baseline_path="b")
    gate = evaluate_gate([now], [comparison], GateConfig(), KINDS)
    assert (gate.outcome, gate.failures) == ("unchecked", [])
    assert gate.infrastructure is not None and gate.infrastructure.startswith("no API key or credentials for the model: set GOOGLE_API_KEY")
    assert gate.unchecked == [f"{gate.infrastructure} (26 of 26 question runs could not reach the model: not the PR's doing)"]
    results = Results(datasets=[now], comparison=[comparison], gate=gate)
    for name, text in _views(results, tmp_path).items():
        assert "set GOOGLE_API_KEY" in text.replace("\\", ""), name
    # A few runs not run beside runs that ran: noted, not counted, and the check decides on the rest.
    few = dataset({f"q{i}": [NO_KEY] if i < 3 else [1.0] for i in range(26)})
    partly = evaluate_gate([few], [compare_dataset(few, base, baseline_path="b")], GateConfig(), KINDS)
    assert partly.outcome == "passed" and any("3 question runs not run (no API key" in n for n in partly.notes)


def test_a_metric_a_question_fails_on_every_base_run_hides_no_other_fall() -> None:
    """A question that already fails one metric on the base (its state) and now calls a tool
    wrongly: judged on the metrics it meets on the base, it fell."""
    state = "state_management_fidelity"
    scorer = Scorer.for_names([TOOLS, state], MetricContext(), pass_thresholds=default_pass_thresholds({}))

    def runs(tools: float, n: int) -> DatasetResult:
        questions = [QuestionResult(id="q", run=k, scores={TOOLS: Score(value=tools), state: Score(value=0.0)}) for k in range(n)]
        return scorer.summarize(LoadedDataset(path="d.json", name="d", format="golden", records=iter(())), questions)

    test = pass_test(runs(0.5, 5), runs(1.0, 5))
    assert test is not None and [(t.id, t.decision) for t in test.tested] == [("q", "failed")]


def test_drift_is_claimed_only_beyond_the_questions_own_pass_rates() -> None:
    """The base's run now against its stored baseline (compare-with = "base"): a flaky question
    that fails its one fresh run, or an answer that differs by an id, is no drift; every question
    falling is."""
    from agent_eval_action.config import Config
    from agent_eval_action.service.compared import baselines_in, drift

    stored = dataset({f"s{i}": [1.0] * 5 for i in range(10)} | {"flaky": [1.0, 1.0, 0.0, 1.0, 1.0]})
    lookup = baselines_in(Results(datasets=[stored]), "stored")
    noise = dataset({f"s{i}": [1.0] for i in range(10)} | {"flaky": [0.0]})
    assert drift([noise], Config(), lookup)[1] == []
    moved = dataset({f"s{i}": [0.0] for i in range(10)} | {"flaky": [0.0]})
    (line,) = drift([moved], Config(), lookup)[1]
    assert "the model moved" in line


def test_a_metric_only_one_side_scored_decides_nothing() -> None:
    """A metric the stored baseline never computed (a criterion added since, a judge the base's
    runs could not reach): asked of the PR's runs alone it would read every run that missed it as
    a fall; only the metrics both sides scored a question on count."""

    def runs(n: int, rouge: list[float] | None) -> DatasetResult:
        questions = []
        for k in range(n):
            scores = {TOOLS: Score(value=1.0)}
            if rouge is not None:
                scores[ROUGE] = Score(value=rouge[k])
            questions.append(QuestionResult(id="q", run=k, scores=scores))
        return SCORER.summarize(LoadedDataset(path="d.json", name="d", format="golden", records=iter(())), questions)

    now, base = runs(6, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]), runs(10, None)
    assert ROUGE in pass_metrics(now, base)  # it has a threshold: only the record lacks it
    test = pass_test(now, base)
    assert test is not None and test.tested == []  # every PR run passes the one metric both sides have
