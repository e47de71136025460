"""The page every view shows: marks and words of what moved, base-vs-head rows, the headline."""

from __future__ import annotations

import json
from typing import Any, Literal

from agent_eval_action.config import GateConfig, MetricRule
from agent_eval_action.models.questions import ToolInteraction
from agent_eval_action.models.results import DatasetResult, QuestionResult, Results
from agent_eval_action.models.scores import MetricSummary, Score
from agent_eval_action.models.traces import Transcript
from agent_eval_action.models.verdicts import DatasetComparison, GateFailure, GateResult, MetricComparison, QuestionDrop
from agent_eval_action.repo.results_io import parse_results
from agent_eval_action.text.markdown import escape_html, escape_md
from agent_eval_action.verdict.comparison import compare_dataset
from agent_eval_action.verdict.gate import RuleView, evaluate_gate
from agent_eval_action.views.background import Background
from agent_eval_action.views.figures import fmt, signed, spark
from agent_eval_action.views.headline import headline, reasons
from agent_eval_action.views.notes import unpaired_lines
from agent_eval_action.views.page import build, dataset_view
from agent_eval_action.views.question_diffs import DiffRow, call_rows, question_diff, runs_by_id, state_rows
from agent_eval_action.views.render import Renderer, view
from agent_eval_action.views.terminal import render

PATH = "evaluation/datasets/cs.json"
STATE = "state_management_fidelity"
RULES = {STATE: RuleView(max_regression=0.05)}


def dataset(values: dict[str, float], mismatch: str = "discount_value: missing from the final state") -> DatasetResult:
    questions = [
        QuestionResult(id=qid, scores={STATE: Score(value=v, details={"mismatches": [] if v == 1 else [mismatch]})})
        for qid, v in values.items()
    ]
    mean = sum(values.values()) / len(values)
    return DatasetResult(
        path=PATH, name="cs", format="golden", summary={STATE: MetricSummary(mean=mean, n=len(values), unscored=0)}, questions=questions
    )


def comparison(
    delta: float, ci: tuple[float, float], verdict: Literal["improved", "unchanged", "regressed"], drops: list[QuestionDrop] | None = None
) -> DatasetComparison:
    metric = MetricComparison(
        metric=STATE,
        direction="higher",
        baseline=1.0,
        current=1.0 + delta,
        delta=delta,
        ci95=ci,
        verdict=verdict,
        drops=drops or [],
    )
    return DatasetComparison(dataset="cs", path=PATH, status="compared", metrics=[metric])


def gate_of(current: DatasetResult, compared: DatasetComparison) -> GateResult:
    """The real gate's verdict under the rules the views are shown (``RULES``)."""
    config = GateConfig(metrics={STATE: MetricRule(max_regression=0.05)})
    return evaluate_gate([current], [compared], config, {STATE: "reference"})


def test_a_worse_mean_within_noise_is_marked_and_never_called_unchanged() -> None:
    current = dataset({"a": 1.0, "b": 0.0, "c": 1.0, "d": 1.0, "e": 0.0})
    compared = comparison(-0.4, (-0.8, 0.0), "unchanged")
    gate = gate_of(current, compared)
    assert gate.outcome == "passed" and [(f.rule, f.limit, f.significant) for f in gate.within_noise] == [("max_regression", 0.05, False)]
    view = dataset_view(current, compared, gate, {}, Background(rules=RULES))
    (row,) = view.moved
    assert (row.mark, row.emoji) == ("worse", "⚠️")
    assert row.words == "worse by more than the 5\u00a0pts allowed (max_regression 0.05), but within noise"
    results = Results(datasets=[current], comparison=[compared], gate=gate.model_copy(update={"notes": []}))  # the row, not the notes
    (line,) = [line for line in render(results, {}, Background(rules=RULES)).splitlines() if STATE in line and "%" in line]
    assert line.startswith("  ! state_management_fidelity") and "unchanged" not in line
    assert " 100% " in line and " 60% " in line and " −40\u00a0pts " in line and " [−80\u00a0pts, ±0] " in line
    assert line.endswith("  worse by more than the 5\u00a0pts allowed (max_regression 0.05), but within noise")


def test_rows_that_fail_improve_or_hold() -> None:
    drop = QuestionDrop(id="b", metric=STATE, baseline=1.0, current=0.0)
    failure = GateFailure(dataset=PATH, metric=STATE, question="b", rule="question_drop", baseline=1.0, current=0.0, message="cs: q")
    # The gate's record of the mean's fall beyond max_regression that it did not count (its CI includes no change).
    noise = GateFailure(
        dataset=PATH, metric=STATE, rule="max_regression", baseline=1.0, current=0.5, limit=0.05, significant=False, message="cs: x"
    )
    view = dataset_view(
        dataset({"a": 1.0, "b": 0.0}),
        comparison(-0.5, (-1.0, 0.0), "unchanged", [drop]),
        GateResult(outcome="failed", failures=[failure], within_noise=[noise]),
        {},
        Background(rules=RULES),
    )
    assert (view.moved[0].emoji, view.moved[0].words) == (
        "🔴",
        "fails the gate: 1 question dropped (100% → 0%); the mean fell −50\u00a0pts, more than the 5\u00a0pts allowed "
        "(max_regression 0.05), which alone fails nothing as it is within noise",
    )
    assert "but within noise" not in view.moved[0].words  # a failing row never reads as if it held
    better = dataset_view(dataset({"a": 1.0}), comparison(0.2, (0.1, 0.3), "improved"), None, {}, Background(rules=RULES)).moved[0]
    assert (better.emoji, better.words) == ("🟢", "better")
    same = dataset_view(dataset({"a": 1.0}), comparison(0.0, (0.0, 0.0), "unchanged"), None, {}, Background(rules=RULES))
    assert same.moved == [] and [(r.metric, r.words) for r in same.unchanged] == [(STATE, "unchanged")]
    slower = MetricComparison(
        metric="latency", direction="lower", baseline=1.0, current=1.5, delta=0.5, ci95=(0.3, 0.7), verdict="regressed"
    )
    gated = Background(rules={"latency": RuleView(max_regression="50%")})
    row = dataset_view(
        DatasetResult(path=PATH, name="cs", format="golden"),
        DatasetComparison(dataset="cs", path=PATH, status="compared", metrics=[slower]),
        None,
        {},
        gated,
    ).moved[0]
    # A timing a rule names is compared like any metric.
    assert (row.emoji, row.words) == ("⚠️", "worse, beyond noise; within the 50% of the baseline allowed (max_regression 50%)")


def test_headline_says_the_verdict_and_its_reason_in_words() -> None:
    current = dataset({"q1": 1.0, "q2": 0.0, "q3": 0.0, "q4": 1.0})
    failures = [
        GateFailure(dataset=PATH, metric=STATE, question=q, rule="question_drop", baseline=1.0, current=0.0, message=f"cs: {q}")
        for q in ("q2", "q3")
    ]
    results = Results(datasets=[current], gate=GateResult(outcome="failed", failures=failures))
    found = reasons(results)
    assert [(r.short, r.detail) for r in found] == [("2 of 4 questions lost their state writes", f"q2, q3 lost: {STATE} 100% → 0%")]
    assert headline(results, [], found) == "Agent evaluation failed: 2 of 4 questions lost their state writes"
    one = Results(
        datasets=[dataset({"q1": 1.0, "q2": 0.0}, mismatch="x: expected 1, got 2")],
        gate=GateResult(outcome="failed", failures=failures[:1]),
    )
    assert reasons(one)[0].short == "1 of 2 questions ends in a different state"
    passed = Results(datasets=[current], comparison=[comparison(0.0, (0.0, 0.0), "unchanged")], gate=GateResult())
    assert build(passed, background=Background(rules=RULES)).headline == "Agent evaluation passed: 1 gated metric held on 4 questions"


def test_tool_calls_that_differ_by_arguments_by_result_or_by_being_made() -> None:
    base = [
        ToolInteraction(tool_name="lookup", input_arguments={"q": "soil", "limit": 5}, output_result={"n": 2}),
        ToolInteraction(tool_name="refund", input_arguments={"order": "A1"}, output_result="ok"),
        ToolInteraction(tool_name="qr", input_arguments={"value": 10}, output_result={"code": "QR-10"}),
    ]
    head = [
        ToolInteraction(tool_name="lookup", input_arguments={"q": "Soil", "limit": 5}, output_result={"n": 2}),
        ToolInteraction(tool_name="qr", input_arguments={"value": 10}, error="discounts above 5% need approval"),
        ToolInteraction(tool_name="qr", input_arguments={"value": 5}, output_result={"code": "QR-5"}),
    ]
    assert call_rows(base, head) == [
        DiffRow(label="lookup arguments", base="q: soil", head="q: Soil", kind="call"),
        DiffRow(label="refund call", base="order: A1", head="not called", kind="call"),
        DiffRow(label="qr #1 result", base='{"code": "QR-10"}', head="error: discounts above 5% need approval", kind="result"),
        DiffRow(label="qr #2 call", base="not called", head="value: 5", kind="call"),
    ]
    assert call_rows(base, base) == []


def test_state_variables_that_differ() -> None:
    assert state_rows({"cart": {"n": 1}, "discount": 10, "same": True}, {"cart": {"n": 1}, "qr": True, "same": True}) == [
        DiffRow(label="state discount", base="10", head="(not set)", kind="state"),
        DiffRow(label="state qr", base="(not set)", head="true", kind="state"),
    ]


def test_figures_keep_their_unit_on_one_line() -> None:
    assert [fmt(1.0, STATE), fmt(0.875, STATE), fmt(0.2049, "latency"), fmt(812.5, "input_tokens"), fmt(0.0123, "cost_usd")] == [
        "100%",
        "87.5%",
        "0.20\u00a0s",
        "812.5",
        "$0.0123",
    ]
    assert [signed(-0.4, STATE), signed(0.0, STATE), signed(0.5, "latency")] == ["−40\u00a0pts", "±0", "+0.50\u00a0s"]
    assert [signed(-0.004, "latency"), signed(0.0004, STATE)] == ["−0.004\u00a0s", "+0.04\u00a0pts"]  # never a rounded "-0.00 s"


def test_escaping_for_markdown_and_for_html_inside_tags() -> None:
    hostile = "<img src=x onerror=alert(1)> cs_golden | @octocat #12 http://evil.example\nnext"
    assert escape_html(hostile) == (
        "&lt;img src=x onerror=alert(1)&gt; cs_golden | @\u200boctocat #\u200b12 http\u200b://evil.example next"
    )
    assert escape_md(hostile) == (
        "&lt;img src=x onerror=alert(1)&gt; cs\\_golden \\| @\u200boctocat #\u200b12 http\u200b://evil.example next"
    )


def test_sparkline_scales_shares_from_zero_to_one_and_marks_gaps() -> None:
    assert spark([0.0, 0.5, 1.0, None, 0.6], STATE) == "▁▅█·▅"
    assert spark([0.98, 0.99, 1.0], STATE) == "███"  # noise stays flat on the 0..100% scale
    assert spark([2.0, 4.0, 1.0], "latency") == "▅█▃"  # seconds from 0 to their maximum
    assert spark([None], "latency") == ""


def test_the_passed_headline_counts_only_the_changes_the_table_shows() -> None:
    # Latency 0.7552 s against 0.7589 s: worse by a hair, shown as "0.76 s → 0.76 s", so folded as unchanged.
    hair = MetricComparison(
        metric="latency", direction="lower", baseline=0.75517, current=0.758862, delta=0.003692, ci95=(0.0, 0.011), verdict="unchanged"
    )
    current = dataset({"a": 1.0, "b": 1.0})
    compared = DatasetComparison(
        dataset="cs", path=PATH, status="compared", metrics=[*comparison(0.0, (0.0, 0.0), "unchanged").metrics, hair]
    )
    shown = build(Results(datasets=[current], comparison=[compared], gate=GateResult()), background=Background(rules=RULES))
    assert shown.datasets[0].moved == []
    assert shown.headline == "Agent evaluation passed: 1 gated metric held on 2 questions"


# --- issue 24: no false alarm -------------------------------------------------------------------


def _runs(metric: str, values: dict[str, float | None], direction: Literal["higher", "lower"] = "lower") -> DatasetResult:
    """A dataset result of one metric; a None value is a question that ended in an error."""
    questions = [
        QuestionResult(id=qid, scores={metric: Score(value=v)})
        if v is not None
        else QuestionResult(id=qid, status="error", error="RuntimeError: boom")
        for qid, v in values.items()
    ]
    scored = [v for v in values.values() if v is not None]
    summary = MetricSummary(mean=sum(scored) / len(scored), n=len(scored), unscored=0, direction=direction)
    return DatasetResult(path=PATH, name="cs", format="golden", summary={metric: summary}, questions=questions)


def test_base_and_pr_columns_average_the_questions_the_change_pairs() -> None:
    """llm_calls 2.3 → 2, change ±0 was two means over different questions: the one that now errs
    counted on the base only. Both columns now average the paired questions; the other is counted apart."""
    base = _runs("llm_calls", {"a": 2.0, "b": 2.0, "c": 3.0})
    head = _runs("llm_calls", {"a": 2.0, "b": 2.0, "c": None})
    compared = compare_dataset(head, base, baseline_path="b.json")
    (metric,) = compared.metrics
    assert (metric.baseline, metric.current, metric.delta, metric.n_shared) == (2.0, 2.0, 0.0, 2)
    assert (metric.baseline_only, metric.current_only) == (1, 0)
    view = dataset_view(head, compared, GateResult(), {}, Background())
    (row,) = view.unchanged
    assert (fmt(row.baseline, "llm_calls"), fmt(row.current, "llm_calls"), row.n, row.words) == ("2", "2", 2, "unchanged")
    # The question that errs is said to have erred, once, not counted in every metric's "not paired".
    errored = "1 question ended in an error in this run, so no metric scored it: the rows compare the other questions"
    assert view.unpaired == [errored]
    comment = Renderer().render("comment.md.j2", view_of(Results(datasets=[head], comparison=[compared], gate=GateResult())))
    assert "| llm\\_calls | 2 | 2 | 2 | 0 |" in comment
    assert "Not paired: 1 question ended in an error in this run, so no metric scored it" in comment
    assert "scored only on the base" not in comment
    lines = render(Results(datasets=[head], comparison=[compared], gate=GateResult()), {}, Background()).splitlines()
    assert f"  not paired: {errored}" in lines
    # Added and removed questions pair with nothing either.
    grown = compare_dataset(_runs("llm_calls", {"a": 2.0, "d": 9.0}), _runs("llm_calls", {"a": 2.0, "b": 5.0}), baseline_path="b.json")
    assert (grown.metrics[0].baseline, grown.metrics[0].current, grown.metrics[0].delta) == (2.0, 2.0, 0.0)
    assert unpaired_lines(grown) == [
        "llm_calls: 1 question scored only on the base (removed, or an error or unscored now); 1 question this change adds (d)"
    ]


def view_of(results: Results, background: Background | None = None) -> dict[str, object]:
    return view(results, background=background or Background())


def test_a_timing_measured_elsewhere_is_information_unless_a_rule_names_it() -> None:
    """Latency 0.16 s on the machine that wrote the baseline, 0.57 s on this one: no ⚠️ row."""
    base = _runs("latency", {f"q{i}": 0.16 + i / 1000 for i in range(8)})
    head = _runs("latency", {f"q{i}": 0.57 + i / 1000 for i in range(8)})
    compared = compare_dataset(head, base, baseline_path="b.json")
    assert compared.metrics[0].verdict == "regressed"  # the comparison still says what it measured
    results = Results(datasets=[head], comparison=[compared], gate=GateResult())
    view = dataset_view(head, compared, results.gate, {}, Background())
    assert view.moved == [] and [(r.metric, r.mark, r.emoji) for r in view.info] == [("latency", "info", "ℹ️")]
    assert build(results, background=Background()).headline.startswith("Agent evaluation passed")
    comment = Renderer().render("comment.md.j2", view_of(results))
    assert "⚠️" not in comment and "Nothing moved." in comment
    assert "0 metrics unchanged, 1 timing for information</summary>" in comment
    assert "| ℹ️ latency | 0.16\u00a0s | 0.57\u00a0s | 8 | 0 |" in comment
    terminal = render(results, {}, Background())
    assert (
        "\n  ! " not in terminal and "timings, for information (they move with the machine; no rule gates them): latency 0.16" in terminal
    )
    # A rule on latency makes it a compared metric again.
    gated = dataset_view(head, compared, results.gate, {}, Background(rules={"latency": RuleView(max_regression="20%")}))
    assert [(r.metric, r.emoji) for r in gated.moved] == [("latency", "⚠️")] and gated.info == []


def test_an_errored_question_shows_its_calls_before_the_error_beside_the_base_run() -> None:
    lookup = ToolInteraction(tool_name="lookup", input_arguments={"order": "A1"}, output_result={"total": 10})
    refund = ToolInteraction(tool_name="refund", input_arguments={"order": "A1"}, output_result="ok")
    base_run = QuestionResult(
        id="q1",
        scores={STATE: Score(value=1.0)},
        transcript=Transcript(tool_calls=[lookup, refund], final_state={"refund": 10}, final_response="Refunded."),
    )
    head_run = QuestionResult(
        id="q1",
        status="error",
        error="RuntimeError: the refund service is down",
        transcript=Transcript(tool_calls=[lookup], final_state={}, error="RuntimeError: the refund service is down"),
    )
    base = DatasetResult(path=PATH, name="cs", format="golden", questions=[base_run])
    head = DatasetResult(path=PATH, name="cs", format="golden", questions=[head_run])
    compared = DatasetComparison(dataset="cs", path=PATH, status="compared", baseline_errors=0, current_errors=1)
    view = dataset_view(head, compared, None, {}, Background(base_runs={PATH: base}))
    (group,) = view.groups
    assert group.questions[0].recorded and group.questions[0].fell == ["ended in an error"]
    assert group.rows[:3] == [
        DiffRow(label="call 1", base='lookup(order: A1) → {"total": 10}', head='lookup(order: A1) → {"total": 10}', kind="call"),
        DiffRow(label="call 2", base="refund(order: A1) → ok", head="not reached (the run ended in an error)", kind="call"),
        DiffRow(label="error", base="none", head="RuntimeError: the refund service is down", kind="error"),
    ]
    results = Results(datasets=[head], comparison=[compared])
    comment = Renderer().render("comment.md.j2", view_of(results, Background(base_runs={PATH: base})))
    assert "predates transcripts" not in comment and '| call 1 | lookup(order: A1) → {"total": 10} |' in comment
    # A run that timed out sent nothing back: its calls are not recorded, not "not reached".
    timed_out = head_run.model_copy(update={"error": "timed out after 300 s", "transcript": Transcript(error="timed out after 300 s")})
    (group,) = dataset_view(
        DatasetResult(path=PATH, name="cs", format="golden", questions=[timed_out]), compared, None, {}, Background(base_runs={PATH: base})
    ).groups
    assert group.rows[0] == DiffRow(
        label="tool calls", base="lookup, refund", head="not recorded: the run ended before it reported any", kind="call"
    )
    # Only a base run without a transcript gets the note about old baselines.
    old = DatasetResult(path=PATH, name="cs", format="golden", questions=[base_run.model_copy(update={"transcript": None})])
    comment = Renderer().render("comment.md.j2", view_of(results, Background(base_runs={PATH: old})))
    assert "the base run's tool calls and state were not recorded: its baseline predates transcripts" in comment


def test_the_headline_names_questions_once_for_many_metrics_and_cuts_at_a_word() -> None:
    metrics = [
        STATE,
        "tool_usage_accuracy",
        "tool_call_precision",
        "trajectory_accuracy",
        "trajectory_exact_match",
        "trajectory_in_order_match",
    ]
    failures = [
        GateFailure(dataset=PATH, metric=m, question=q, rule="question_drop", baseline=1.0, current=0.0 if q == "q2" else 0.5, message="x")
        for m in metrics
        for q in ("q_discount_01", "q2")
    ]
    current = dataset({"q_discount_01": 0.5, "q2": 0.0, "q3": 1.0})
    results = Results(datasets=[current], gate=GateResult(outcome="failed", failures=failures))
    (reason,) = reasons(results)
    assert reason.detail == (
        "q_discount_01 lost: "
        + ", ".join(f"{m} 100% → 50%" for m in metrics)
        + "; q2 lost: "
        + ", ".join(f"{m} 100% → 0%" for m in metrics)
    )
    same = [f.model_copy(update={"current": 0.0}) for f in failures]
    (reason,) = reasons(Results(datasets=[current], gate=GateResult(outcome="failed", failures=same)))
    assert reason.detail == "q_discount_01, q2 lost: " + ", ".join(f"{m} 100% → 0%" for m in metrics)
    assert escape_md("q_discount_01 lost: state_management_fidelity 100%", 30) == "q\\_discount\\_01 lost…"
    assert escape_md("a" * 40, 10) == "a" * 9 + "…"  # one long token: cut where it must be
    for limit in range(20, len(reason.detail)):
        cut = escape_md(reason.detail, limit).replace("\\", "")
        assert cut.endswith("…") and reason.detail.startswith(cut[:-1]) and reason.detail[len(cut) - 1] in " ,;:", (limit, cut)


def test_a_question_diff_takes_the_runs_of_its_own_question() -> None:
    """Each regressed question is set beside its own base run, found through one index of the
    runs by id (a scan of every run per regressed question made 10,000 questions take minutes)."""
    base = _runs("tool_usage_accuracy", {f"q{i}": 1.0 for i in range(6)}, direction="higher")
    head = _runs("tool_usage_accuracy", {f"q{i}": 0.0 if i % 2 else 1.0 for i in range(6)}, direction="higher")
    # A second run of q3, worse than the first: the diff shows the worse one.
    head.questions.append(QuestionResult(id="q3", run=1, status="error", error="RuntimeError: boom"))
    assert [q.run for q in runs_by_id(head)["q3"]] == [0, 1]
    compared = compare_dataset(head, base, baseline_path="b.json")
    view = dataset_view(head, compared, None, {}, Background(base_runs={PATH: base}))
    assert [(d.id, d.run, d.base.id if d.base else None) for d in view.regressed] == [
        ("q3", 1, "q3"),  # a run that now ends in an error comes first
        ("q1", 0, "q1"),
        ("q5", 0, "q5"),
    ]


def test_every_view_shows_the_page_built_once() -> None:
    """The terminal, the comment and report.html render one build of the page: each shows the
    parts of the page it is given, and a view given results builds the same page."""
    from agent_eval_action.views.report import context

    base = _runs("tool_usage_accuracy", {"a": 1.0, "b": 1.0}, direction="higher")
    head = _runs("tool_usage_accuracy", {"a": 0.0, "b": 1.0}, direction="higher")
    results = Results(datasets=[head], comparison=[compare_dataset(head, base, baseline_path="b.json")], gate=GateResult())
    background = Background(base_runs={PATH: base})
    built = build(results, background=background)
    assert view(built)["datasets"] is built.datasets
    assert context(built)["datasets"] is built.datasets
    assert render(built) == render(results, {}, background)
    assert view(built)["headline"] == view(results, background=background)["headline"] == built.headline


def test_the_views_show_the_gates_decisions_and_never_make_them_again() -> None:
    """Failures whose limits no rule of the views' would give: shown as the gate stored them.
    The views once worked out max_regression from the config again, and split the gate's
    message at its first ": " (a dataset named "a: b" lost half its name)."""
    current = dataset({"a": 1.0, "b": 0.0, "c": 1.0, "d": 1.0, "e": 0.0})
    current.name = "cs: v2"
    compared = comparison(-0.4, (-0.8, 0.0), "regressed")
    stored = [
        GateFailure(
            dataset=PATH, metric=STATE, rule="max_regression", baseline=1.0, current=0.6, limit=0.3, significant=True, message="cs: v2: x"
        ),
        GateFailure(dataset=PATH, metric=STATE, rule="min", current=0.6, limit=0.9, message="cs: v2: y"),
        GateFailure(
            dataset=PATH,
            rule="max_errors",
            subject="cs: v2",
            detail="2 questions: ended in an error",
            message="cs: v2: 2 questions: ended in an error",
        ),
    ]
    results = Results(datasets=[current], comparison=[compared], gate=GateResult(outcome="failed", failures=stored))
    shown = build(results, background=Background(rules=RULES))  # the config's rule: max_regression 0.05, no minimum
    (row,) = shown.datasets[0].moved
    assert row.words == (
        "fails the gate: regressed −40\u00a0pts, more than the 30\u00a0pts allowed (max_regression 0.3); under the minimum 90%"
    )
    assert shown.datasets[0].lines == ["fails the gate: 2 questions: ended in an error"]
    details = {r.short: r.detail for r in shown.reasons}
    assert details["state_management_fidelity fell 40\u00a0pts"] == (
        "state_management_fidelity 100% → 60%, more than the 30\u00a0pts allowed (max_regression 0.3); 95% CI of the change [−80\u00a0pts, ±0]"
    )
    assert details["state_management_fidelity is under its minimum"] == "state_management_fidelity is 60%, under the minimum 90%"
    assert "2 questions: ended in an error" in details
    # A worse row the gate recorded no decision on is within what it allows: the views do not judge it again.
    held = build(Results(datasets=[current], comparison=[compared], gate=GateResult()), background=Background(rules=RULES))
    assert held.datasets[0].moved[0].words == "worse, beyond noise; within the 5\u00a0pts allowed (max_regression 0.05)"


def test_passed_is_the_outcome_and_files_that_store_it_are_read() -> None:
    gate = GateResult(outcome="unchecked")
    assert json.loads(gate.model_dump_json())["passed"] is False and GateResult(outcome="passed").passed
    # A version-1 file had no outcome: its reader (repo/results_io.py) gives it one from ``passed``.
    v1 = parse_results(json.dumps({"schema_version": 1, "gate": {"passed": False, "failures": ["cs: fell"]}}), "old.json")
    assert v1.gate is not None and v1.gate.outcome == "failed" and v1.gate.failures[0].rule == "legacy"
    assert GateResult.model_validate_json(gate.model_dump_json()) == gate
    old = GateResult.model_validate(
        {"passed": False, "outcome": "failed", "failures": [{"rule": "min", "message": "cs: m = 0.5 is below 0.8"}]}
    )
    assert (old.failures[0].subject, old.failures[0].detail, old.failures[0].limit) == ("cs", "m = 0.5 is below 0.8", None)


def test_the_gate_stores_what_it_decided_on_each_failure() -> None:
    current = dataset({"a": 1.0, "b": 0.0, "c": 0.0, "d": 0.0, "e": 0.0})
    (failure,) = gate_of(current, comparison(-0.8, (-1.0, -0.4), "regressed")).failures
    assert (failure.rule, failure.limit, failure.significant, failure.subject) == ("max_regression", 0.05, True, "cs")
    assert failure.detail is not None and failure.message == f"cs: {failure.detail}"
    assert failure.detail.startswith(f"{STATE} 1 -> 0.2 (delta -0.8") and failure.detail.endswith("regressed beyond max_regression 0.05")


def test_a_count_that_moved_within_noise_is_no_warning() -> None:
    """+0.9 output tokens a question, the CI across zero: no ⚠️ row; beyond noise it is one."""
    more = MetricComparison(
        metric="output_tokens", direction="lower", baseline=40.0, current=40.9, delta=0.9, ci95=(-2.0, 3.5), verdict="unchanged"
    )
    compared = DatasetComparison(dataset="cs", path=PATH, status="compared", metrics=[more])
    shown = dataset_view(DatasetResult(path=PATH, name="cs", format="golden"), compared, None, {}, Background(rules={}))
    assert shown.moved == [] and [(r.metric, r.emoji, r.words) for r in shown.unchanged] == [
        ("output_tokens", "⚪", "changed, within noise")
    ]
    results = Results(datasets=[DatasetResult(path=PATH, name="cs", format="golden")], comparison=[compared])
    assert "⚠️" not in Renderer().render("comment.md.j2", view_of(results)) and "! output_tokens" not in render(results, {})
    beyond = more.model_copy(update={"ci95": (0.4, 1.4), "verdict": "regressed"})
    row = dataset_view(
        DatasetResult(path=PATH, name="cs", format="golden"),
        compared.model_copy(update={"metrics": [beyond]}),
        None,
        {},
        Background(rules={}),
    ).moved[0]
    assert (row.emoji, row.words) == ("⚠️", "worse, beyond noise; no rule gates it")


def test_the_base_run_is_named_once_in_the_terminal() -> None:
    """Compared with the base's agent run now: its label, not also "(the base's agent run now at ...)"."""
    from agent_eval_action.models.results import BaseRun

    head = dataset({"a": 1.0, "b": 1.0})
    compared = compare_dataset(head, dataset({"a": 1.0, "b": 1.0}), baseline_path="the base's agent run now at 13726e1")
    results = Results(datasets=[head], comparison=[compared], base_run=BaseRun(commit="13726e1" + "0" * 33, questions=2))
    text = render(results, {}, Background(rules=RULES))
    assert "compared with the base's agent run now (13726e1)" in text and text.count("the base's agent run now") == 1, text
    # Against a stored baseline, its file is named beside the label.
    on_file = compare_dataset(head, dataset({"a": 1.0, "b": 1.0}), baseline_path="evaluation/baselines/cs.json")
    stored = render(Results(datasets=[head], comparison=[on_file]), {}, Background(rules=RULES, base_label="merge-base 1a2b3c4"))
    assert "compared with merge-base 1a2b3c4 (evaluation/baselines/cs.json)" in stored


def test_state_keys_the_bases_own_runs_disagree_on_are_volatile_not_changed() -> None:
    """A timestamp the agent writes differs between the base's own runs of a question: shown as
    volatile, never as a change; ignore-state names more."""

    def run(k: int, state: dict[str, object]) -> QuestionResult:
        return QuestionResult(id="q", run=k, scores={}, transcript=Transcript(final_state=state))

    base = [run(0, {"at": "10:00", "order": 7, "id": "a"}), run(1, {"at": "10:05", "order": 7, "id": "a"})]
    head = [run(0, {"at": "11:00", "order": 8, "id": "b"})]
    rows = question_diff("q", [], head, base, set()).rows
    assert [(r.label, r.base, r.head) for r in rows if r.kind == "state"] == [
        ("state id", "a", "b"),
        ("state order", "7", "8"),
        ("volatile state", "at", "differ between the base's own runs (or ignore-state): not a change"),
    ]
    ignored = question_diff("q", [], head, base, set(), frozenset({"id"})).rows
    assert [r.label for r in ignored if r.kind == "state"] == ["state order", "volatile state"]
    assert next(r.base for r in ignored if r.label == "volatile state") == "at, id"


def test_an_aa_pair_timed_side_by_side_reads_neither_better_nor_worse() -> None:
    """compare-with = "base" on identical code: each question's latency on both sides is drawn
    from one distribution (seeded), as an A/A pair timed in one job is. Whichever way the means
    happen to fall, the latency row is neither ⚠️ worse nor 🟢 better: within noise, with what held."""
    import random

    from agent_eval_action.datasets import LoadedDataset
    from agent_eval_action.metrics import MetricContext
    from agent_eval_action.scoring.scorer import Scorer

    scorer = Scorer.for_names(["latency"], MetricContext())
    rng = random.Random(36)
    signs = set()
    for _ in range(12):
        spread = {f"q{i}": rng.uniform(1.0, 4.0) for i in range(20)}  # a question's own latency
        sides = [
            scorer.summarize(
                LoadedDataset(path=PATH, name="cs", format="golden", records=iter(())),
                [
                    QuestionResult(id=q, run=r, scores={"latency": Score(value=t * rng.lognormvariate(0, 0.3))})
                    for q, t in spread.items()
                    for r in range(2)
                ],
            )
            for _ in range(2)
        ]
        compared = compare_dataset(sides[0], sides[1], baseline_path="the base's agent run now at 13726e1")
        (latency,) = compared.metrics
        shown = dataset_view(sides[0], compared, None, {}, Background(rules={}), same_job=True)
        rows = {r.metric: r for r in [*shown.moved, *shown.unchanged]}
        assert latency.verdict == "unchanged" and rows["latency"].mark == "same", (latency, rows["latency"].words)
        assert "latency" not in {r.metric for r in shown.moved}
        signs.add(latency.delta is not None and latency.delta > 0)
        assert rows["latency"].words == "changed, within noise"
    assert signs == {True, False}  # both ways were drawn: the PR's side slower, and faster


def test_a_cut_never_falls_inside_parentheses() -> None:
    """The comment's bullet once ended "(Holm over 3…": a figure cut in half."""
    text = "q_risk_01 passes 0 of 4 runs, 5 of 5 on the base (one-sided Fisher test, Holm over 3 questions, alpha 0.01); more"
    for limit in range(40, len(text)):
        cut = escape_md(text, limit).replace("\\", "")
        head = cut[:-1]
        assert cut.endswith("…") and text.startswith(head), (limit, cut)
        assert head.count("(") == head.count(")"), (limit, cut)
    assert escape_md(text, 70).replace("\\", "") == "q_risk_01 passes 0 of 4 runs, 5 of 5 on the base…"


def test_metrics_no_run_scored_are_one_line_not_a_row_each() -> None:
    """No API key: every run an outage, and the table had a row of "not scored in this run" for
    each of the base's 20 metrics."""
    from agent_eval_action import compare
    from agent_eval_action.datasets import LoadedDataset
    from agent_eval_action.metrics import REGISTRY, MetricContext
    from agent_eval_action.scoring.scorer import Scorer

    metrics = [name for name, m in REGISTRY.items() if m.kind in ("reference", "trace")][:20]
    scorer = Scorer.for_names(metrics, MetricContext())

    def side(questions: list[QuestionResult]) -> Results:
        return Results(datasets=[scorer.summarize(LoadedDataset(path=PATH, name="cs", format="golden", records=iter(())), questions)])

    base = side([QuestionResult(id=f"q{i}", scores={m: Score(value=1.0) for m in metrics}) for i in range(3)])
    outage = "ValueError: No API key was provided. Please pass a valid API key."
    results = compare(side([QuestionResult(id=f"q{i}", status="error", error=outage) for i in range(3)]), base)
    shown = build(results)
    (d,) = shown.datasets
    assert d.moved == [] and d.unchanged == []
    line = f"20 metrics the base scored were not scored in this run ({', '.join(r.metric for r in d.rows[:5])} and 15 more)"
    assert d.notes == [line]
    terminal = render(shown).splitlines()
    assert f"  {line}" in terminal and not [t for t in terminal if "not scored in this run" in t and t != f"  {line}"]
    comment = view(shown)
    assert Renderer().render("comment.md.j2", comment).count("not scored in this run") == 1
    # No question left for the rows to compare: not "the rows compare the other questions".
    assert d.unpaired == ["every question ended in an error in this run (3), so no metric scored any: there is nothing to compare"]


def test_a_question_a_judge_failed_shows_the_judges_rationale() -> None:
    """ADK's judged criteria keep the judge's rationale in the explanation: the diff of a question
    that fell on one shows it beside the base run's."""

    def run(value: float, said: str) -> QuestionResult:
        details: dict[str, object] = {"adk_status": "PASSED" if value else "FAILED", "samples": []}
        return QuestionResult(id="q", scores={"final_response_match_v2": Score(value=value, explanation=said, details=details)})

    base = run(1.0, "ADK final_response_match_v2: 1 over 1 judged turn(s), passed")
    head = run(0.0, "ADK final_response_match_v2: 0 over 1 judged turn(s), failed; turn 1: the price is wrong")
    rows = question_diff("q", ["final_response_match_v2"], [head], [base], set()).rows
    assert (
        DiffRow(
            label="final_response_match_v2: the judge",
            base="ADK final_response_match_v2: 1 over 1 judged turn(s), passed",
            head="ADK final_response_match_v2: 0 over 1 judged turn(s), failed; turn 1: the price is wrong",
            kind="score",
        )
        in rows
    )
    # A computed metric has no judge to quote.
    plain = QuestionResult(id="q", scores={"tool_usage_accuracy": Score(value=0.0, explanation="0 of 1 calls")})
    assert not [r for r in question_diff("q", ["tool_usage_accuracy"], [plain], [], set()).rows if r.label.endswith("the judge")]


def test_the_pages_json_is_what_json_dumps_makes_whether_or_not_it_was_indented_before() -> None:
    """report.html indents a value's JSON once for all values of the same one-line JSON: each text
    is json.dumps's, the first time and every later one, cut where a long one is cut."""
    import datetime

    from agent_eval_action.views import report

    values: list[Any] = [
        {"source": "spans", "n": 2},
        {"n": 2, "source": "spans"},  # the same JSON with its keys sorted
        {"when": datetime.date(2026, 11, 30), "é": ["ü", 1.0, None, True]},
        [1, 2.5, {"deep": {"er": [{}]}}],
        {"big": "x" * 7000},  # cut
        {"wide": list(range(900))},  # too long a line to keep
        "a string as it is",
    ]
    for value in [*values, *values]:
        indented = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2, default=str)
        one_line = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
        cut = indented if len(indented) <= report.PRETTY_CHARS else indented[: report.PRETTY_CHARS] + "\n… (cut)"
        assert report._pretty(value) == cut
        assert report._jsonish(value) == (one_line if len(one_line) <= 60 else cut)
    assert len(report._INDENTED_BY_LINE) <= report._KEPT


def test_the_trend_ends_at_this_runs_questions_as_its_history_points_are_and_as_the_row_says() -> None:
    """Three questions pass, two fail and ran again until the test decided (five runs each): the
    trend's last bar and report.html's last point are this run's mean over its questions (60%),
    as a baseline's history point is and as the This PR column says; not its mean over the runs,
    which the re-run questions outweigh (3 of 13 runs: 23%)."""
    from agent_eval_action.repo.history import Point
    from agent_eval_action.verdict.gate import metric_kinds, rules_of
    from agent_eval_action.views.report import _chart
    from agent_eval_action.views.verdict_facts import trend_ends

    metric = "state_management_fidelity"
    runs = {"a": [1.0], "b": [1.0], "c": [1.0], "d": [0.0] * 5, "e": [0.0] * 5}
    head_questions = [QuestionResult(id=q, run=i, scores={metric: Score(value=v)}) for q, vs in runs.items() for i, v in enumerate(vs)]
    head_questions.append(QuestionResult(id="f", status="error", error="RuntimeError: boom"))
    head = DatasetResult(
        path=PATH,
        name="cs",
        format="golden",
        summary={metric: MetricSummary(mean=3 / 13, n=13, unscored=0, pass_threshold=1.0)},
        questions=head_questions,
    )
    base = _runs(metric, dict.fromkeys(runs, 1.0), direction="higher")
    compared = compare_dataset(head, base, baseline_path="b.json")
    assert trend_ends(head, {metric, "latency"}) == {metric: 0.6}  # latency: no scores, no end
    results = Results(datasets=[head], comparison=[compared], gate=gate_of(head, compared))
    history = {metric: [Point(commit=f"{i}" * 40, date=f"2026-11-0{i}", subject="baseline", value=1.0) for i in (1, 2, 3)]}
    background = Background(history={PATH: history}, rules=rules_of(results, GateConfig(), metric_kinds()))
    (row,) = [r for r in build(results, background=background).datasets[0].moved if r.metric == metric]
    assert (fmt(row.current, metric), row.overall, row.trend) == ("60%", 0.6, "███→" + spark([0.6], metric))
    chart = _chart(row, 200, 40, 4)
    assert chart is not None and chart.current is not None and chart.current[2] == "this run: 60%"


def test_evaluates_table_shows_each_mean_and_interval_in_its_unit_as_check_does() -> None:
    """`evaluate` printed 0.600 and 0.159 where `check` prints 60% and 0.16 s."""
    summary = {
        "state_management_fidelity": MetricSummary(mean=0.6, n=16, unscored=0, ci95=(0.4, 0.8)),
        "latency": MetricSummary(mean=0.159, n=16, unscored=0, ci95=(0.14, 0.18), direction="lower"),
    }
    result = DatasetResult(path=PATH, name="cs", format="golden", summary=summary, questions=[QuestionResult(id="q")])
    lines = [" ".join(line.split()) for line in render(Results(datasets=[result]), {}, Background()).splitlines()]
    assert "state_management_fidelity 60% [40%, 80%] 16 0" in lines, lines
    assert "latency 0.16 s [0.14 s, 0.18 s] 16 0" in lines, lines


def test_a_count_that_moved_within_noise_is_counted_apart_only_where_its_figures_differ() -> None:
    """output_tokens 28.2 -> 28.5 within noise: "changed within noise", with both figures; 28.20 ->
    28.23, shown 28.2 both: unchanged, never "changed" beside two equal figures."""
    heads: list[tuple[dict[str, float | None], str]] = [
        ({"a": 28.5, "b": 28.1, "c": 28.9}, "changed within noise"),
        ({"a": 28.6, "b": 27.8, "c": 28.29}, "unchanged"),
    ]
    for head, said in heads:
        base = _runs("output_tokens", {"a": 28.0, "b": 28.4, "c": 28.2})
        now = _runs("output_tokens", head)
        compared = compare_dataset(now, base, baseline_path="b.json")
        view = dataset_view(now, compared, GateResult(), {}, Background())
        (row,) = view.unchanged
        assert row.folded == (said != "unchanged"), (head, row)
        lines = render(Results(datasets=[now], comparison=[compared], gate=GateResult()), {}, Background()).splitlines()
        if said == "unchanged":
            assert view.held_words == "1 metric unchanged" and "  unchanged (1): output_tokens 28.2" in lines, lines
        else:
            assert view.held_words == "1 metric changed within noise", view.held_words
            assert "  changed within noise (1): output_tokens 28.2 -> 28.5" in lines, lines
