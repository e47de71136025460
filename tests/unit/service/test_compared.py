"""The one compare-and-gate, in process: the check's plan decides whether timings are gated, and
fail-on-drift fails the check through the verdict's final outcome."""

from __future__ import annotations

from agent_eval_action.config import Config
from agent_eval_action.models.plan import plan_check
from agent_eval_action.models.results import Results
from agent_eval_action.service.compared import baselines_in, compare_and_gate, drift
from agent_eval_action.verdict.rules import Rules
from tests.helpers.scored import dataset

BESIDE = plan_check(asked="base", merge_base="a" * 40, runner="workers", selected=True, reuse=False, model_cache=False, runs=1)


def test_fail_on_drift_fails_a_check_that_passed_against_the_base() -> None:
    stored = dataset({f"q{i}": [1.0] * 5 for i in range(10)})
    base_now = dataset({f"q{i}": [0.0] for i in range(10)})  # the same code scores nothing now: the model moved
    ours = dataset({f"q{i}": [0.0] for i in range(10)})  # as the base's agent does now: no regression of the PR's
    config = Config.model_validate({"gate": {"fail_on_drift": True}})
    results = Results(datasets=[ours], plan=BESIDE)
    results.drift, results.drift_notes = drift([base_now], config, baselines_in(Results(datasets=[stored]), "stored"))
    assert results.drift_notes and "the model moved" in results.drift_notes[0]

    outcome = compare_and_gate(results, Rules(config=config, source="test"), baselines_in(Results(datasets=[base_now]), "now"), plan=BESIDE)
    gate = outcome.results.gate
    assert gate is not None and gate.outcome == "failed" and [f.rule for f in gate.failures] == ["drift"]
    assert "against its stored baseline (fail-on-drift = true)" in gate.failures[0].message

    quiet = Results(datasets=[ours], plan=BESIDE, drift=results.drift)
    kept = compare_and_gate(quiet, Rules(config=Config(), source="test"), baselines_in(Results(datasets=[base_now]), "now"), plan=BESIDE)
    assert kept.results.gate is not None and kept.results.gate.outcome == "passed"


def test_notes_the_check_adds_come_after_the_gates() -> None:
    runs = dataset({"q": [1.0]})
    outcome = compare_and_gate(Results(datasets=[runs]), Rules(config=Config(), source="test"), lambda d: None, notes=["the plan's note"])
    gate = outcome.results.gate
    assert gate is not None and gate.notes[-1] == "the plan's note" and gate.outcome == "passed"
