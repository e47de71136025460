"""ADK's criteria (test_config.json, or those an ADK eval history recorded): the pass thresholds and
the gate's minimums of their metrics unless our config sets its own; from the file through
scoring to the gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_eval_action.config import Config, GateConfig, MetricRule
from agent_eval_action.datasets import load_dataset
from agent_eval_action.metrics import MetricContext
from agent_eval_action.models.results import DatasetResult
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.service.evaluation import Evaluation
from agent_eval_action.verdict.gate import evaluate_gate, gated_metrics, metric_kinds, rule_for
from tests.helpers.adk_files import ADK_ROUGE, history

# Inputs must lie inside the working directory's repository: work in tmp_path, as a user would.
pytestmark = pytest.mark.usefixtures("in_tmp")


def evaluate(path: Path, config: Config) -> DatasetResult:
    evaluation = Evaluation(config.model_copy(update={"progress": "never"}))
    done = evaluation.evaluate(str(path))
    evaluation.close()
    assert done.result is not None, [p.message for p in done.problems]
    return done.result


def test_rule_for_takes_the_criterion_as_minimum_unless_the_config_sets_one() -> None:
    criteria = {"tool_trajectory_avg_score": 0.8}
    assert rule_for("tool_trajectory_avg_score", "reference", "higher", GateConfig(), criteria).min == 0.8
    ours = GateConfig(metrics={"tool_trajectory_avg_score": MetricRule(min=0.5)})
    assert rule_for("tool_trajectory_avg_score", "reference", "higher", ours, criteria).min == 0.5
    assert rule_for("tool_trajectory_avg_score", "reference", "higher", GateConfig(), None).min is None
    # A regression rule of ours keeps the criterion's minimum: only a minimum of ours replaces it.
    regression = GateConfig(metrics={"tool_trajectory_avg_score": MetricRule(max_regression=0.1)})
    assert rule_for("tool_trajectory_avg_score", "reference", "higher", regression, criteria).min == 0.8


def test_recorded_criteria_become_pass_thresholds_and_gate_minimums(tmp_path: Path) -> None:
    path = history(tmp_path / "shop.evalset_result.json", with_session=False)
    result = evaluate(path, Config())
    # ADK ran the history with tool_trajectory_avg_score 1.0, response_match_score 0.5 and its
    # Vertex-backed safety_v1 0.8, whose score ADK recorded (1.0) is taken as ADK's.
    assert result.criteria == {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5, "safety_v1": 0.8}
    assert result.summary["safety_v1"].mean == 1.0 and result.summary["safety_v1"].pass_rate == 1.0
    summary = result.summary["response_match_score"]
    assert summary.mean == ADK_ROUGE and summary.pass_rate == 0.0  # under the criterion's 0.5 (ADK's own default would be 0.8)
    assert result.summary["tool_trajectory_avg_score"].pass_rate == 0.0
    gate = evaluate_gate([result], [], Config().gate, metric_kinds())
    assert [(f.rule, f.metric, f.message) for f in gate.failures] == [
        (
            "min",
            "tool_trajectory_avg_score",
            "shop_set: tool_trajectory_avg_score = 0.5 is below the minimum 1 (the dataset's ADK criterion)",
        ),
        ("min", "response_match_score", "shop_set: response_match_score = 0.4636 is below the minimum 0.5 (the dataset's ADK criterion)"),
    ]
    assert {"tool_trajectory_avg_score", "response_match_score"} <= set(gated_metrics(result, Config().gate, metric_kinds()))
    # Our config says otherwise for one metric: its threshold and its minimum win there.
    ours = Config(gate=GateConfig(metrics={"response_match_score": MetricRule(min=0.4, pass_threshold=0.4)}))
    result = evaluate(path, ours)
    assert result.summary["response_match_score"].pass_rate == 1.0
    gate = evaluate_gate([result], [], ours.gate, metric_kinds())
    assert [f.metric for f in gate.failures] == ["tool_trajectory_avg_score"]


def test_test_config_criteria_of_an_eval_file_reach_the_results(tmp_path: Path) -> None:
    (tmp_path / "test_config.json").write_text(
        json.dumps({"criteria": {"tool_trajectory_avg_score": {"threshold": 0.9, "match_type": "ANY_ORDER"}, "safety_v1": 0.8}})
    )
    path = tmp_path / "refund.test.json"
    path.write_text(json.dumps([{"query": "I want a refund", "expected_tool_use": [{"tool_name": "refund", "tool_input": {}}]}]))
    dataset = load_dataset(str(path))
    # safety_v1 is ADK's Vertex-backed metric: kept, so that the check gates on it or says it could not.
    assert dataset.criteria == {"tool_trajectory_avg_score": 0.9, "safety_v1": 0.8}
    assert dataset.criterion_options == {
        "tool_trajectory_avg_score": {"threshold": 0.9, "match_type": "ANY_ORDER"},
        "safety_v1": {"threshold": 0.8},
    }
    result = Scorer.for_names(["tool_trajectory_avg_score"], MetricContext(criteria=dataset.criterion_options)).summarize(dataset, [])
    assert result.criteria == {"tool_trajectory_avg_score": 0.9, "safety_v1": 0.8}
