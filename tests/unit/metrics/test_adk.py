"""ADK's own metrics under ADK's names: our values against ADK's evaluator classes on the same invocations.

Each case is written once and turned both into our question and trace and into ADK
``Invocation`` objects. The values ADK's classes gave (google-adk 2.13.0: TrajectoryEvaluator,
RougeEvaluator) are kept as fixed expectations, so the tests hold without ADK's evaluators; where
they import, ours are also compared with theirs live.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from agent_eval_action.metrics import REGISTRY, MetricContext
from agent_eval_action.metrics.adk import adk_tokens, match_type, rouge_1
from agent_eval_action.models.questions import Question, ReferenceData, ReferenceToolCall, ToolInteraction, Turn
from agent_eval_action.models.scores import Score
from agent_eval_action.models.traces import Trace

Calls = list[tuple[str, dict[str, Any]]]


@dataclass
class Case:
    """One conversation: per turn the actual and expected tool calls and texts."""

    actual_calls: list[Calls]
    expected_calls: list[Calls]
    # Per turn: the final response's text parts as (text, is_thought).
    actual_parts: list[list[tuple[str, bool]]] = field(default_factory=list)
    expected_texts: list[str | None] = field(default_factory=list)

    def question(self) -> Question:
        turns = len(self.actual_calls) or len(self.actual_parts)
        return Question(
            id="c",
            user_inputs=[f"turn {i}" for i in range(turns)],
            reference_data=ReferenceData(
                turn_tool_calls=[[ReferenceToolCall(tool_name=n, input_arguments=a) for n, a in turn] for turn in self.expected_calls]
                if self.expected_calls
                else None,
                turn_references=self.expected_texts or None,
            ),
        )

    def trace(self) -> Trace:
        turns = max(len(self.actual_calls), len(self.actual_parts))
        return Trace(
            turns=[
                Turn(
                    user_input=f"turn {i}",
                    response="".join(t for t, thought in self.actual_parts[i] if not thought) if self.actual_parts else None,
                    response_parts=[t for t, _ in self.actual_parts[i]] if self.actual_parts else None,
                )
                for i in range(turns)
            ],
            tool_interactions=[
                ToolInteraction(tool_name=n, input_arguments=a, turn=i) for i, turn in enumerate(self.actual_calls) for n, a in turn
            ],
        )

    def adk_invocations(self) -> tuple[list[Any], list[Any]]:
        from google.adk.evaluation.eval_case import IntermediateData, Invocation
        from google.genai import types

        def calls(turn: Calls) -> IntermediateData:
            return IntermediateData(tool_uses=[types.FunctionCall(name=n, args=a) for n, a in turn])

        turns = max(len(self.actual_calls), len(self.actual_parts))
        user = types.Content(role="user", parts=[types.Part(text="hi")])
        actual, expected = [], []
        for i in range(turns):
            parts = (
                [types.Part(text=t, thought=True if thought else None) for t, thought in self.actual_parts[i]] if self.actual_parts else []
            )
            actual.append(
                Invocation(
                    user_content=user,
                    final_response=types.Content(role="model", parts=parts) if parts else None,
                    intermediate_data=calls(self.actual_calls[i] if self.actual_calls else []),
                )
            )
            text = self.expected_texts[i] if self.expected_texts else None
            expected.append(
                Invocation(
                    user_content=user,
                    final_response=types.Content(role="model", parts=[types.Part(text=text)]) if text is not None else None,
                    intermediate_data=calls(self.expected_calls[i] if self.expected_calls else []),
                )
            )
        return actual, expected


LOOKUP = ("lookup_order", {"order_id": "A1"})
REFUND = ("refund", {"order_id": "A1", "amount": 10})
REFUND_FLOAT = ("refund", {"order_id": "A1", "amount": 10.0})
REFUND_OTHER = ("refund", {"order_id": "A2", "amount": 10})
SEARCH = [("search", {"q": f"term {i}"}) for i in range(3)]
TRANSFER = ("transfer_to_agent", {"agent_name": "refunds"})

# (name, case, match type, ignore_args, the score ADK's TrajectoryEvaluator gave)
TRAJECTORY_CASES = [
    ("exact same", Case([[LOOKUP, REFUND]], [[LOOKUP, REFUND]]), "EXACT", False, 1.0),
    ("exact, numbers as numbers", Case([[REFUND_FLOAT]], [[REFUND]]), "EXACT", False, 1.0),
    ("exact, extra call", Case([[LOOKUP, REFUND]], [[REFUND]]), "EXACT", False, 0.0),
    ("exact, other order", Case([[REFUND, LOOKUP]], [[LOOKUP, REFUND]]), "EXACT", False, 0.0),
    ("exact, other argument", Case([[REFUND_OTHER]], [[REFUND]]), "EXACT", False, 0.0),
    ("exact, names only", Case([[REFUND_OTHER]], [[REFUND]]), "EXACT", True, 1.0),
    ("in order, extra calls", Case([[SEARCH[0], LOOKUP, SEARCH[1], REFUND]], [[LOOKUP, REFUND]]), "IN_ORDER", False, 1.0),
    ("in order, wrong order", Case([[REFUND, LOOKUP]], [[LOOKUP, REFUND]]), "IN_ORDER", False, 0.0),
    ("any order", Case([[SEARCH[2], REFUND, SEARCH[0], LOOKUP]], [[LOOKUP, REFUND]]), "ANY_ORDER", False, 1.0),
    ("any order, one missing", Case([[SEARCH[0], LOOKUP]], [[LOOKUP, REFUND]]), "ANY_ORDER", False, 0.0),
    ("any order, repeated needs two", Case([[LOOKUP]], [[LOOKUP, LOOKUP]]), "ANY_ORDER", False, 0.0),
    ("nothing expected, nothing made", Case([[]], [[]]), "EXACT", False, 1.0),
    ("nothing expected, in order", Case([[LOOKUP]], [[]]), "IN_ORDER", False, 1.0),
    ("three turns averaged", Case([[LOOKUP], [REFUND], []], [[LOOKUP], [REFUND_OTHER], []]), "EXACT", False, 2 / 3),
    ("transfer named by the reference", Case([[TRANSFER, REFUND]], [[TRANSFER, REFUND]]), "EXACT", False, 1.0),
]

# (name, case, the score ADK's RougeEvaluator gave)
ROUGE_CASES = [
    (
        "stemming",
        Case([], [], [[("The cats are running quickly to the houses", False)]], ["A cat runs quick to the house."]),
        0.666666666667,
    ),
    (
        "unicode, CJK and Thai",
        Case([], [], [[("Ünïcode café naïve — 東京タワー is 333m; ภาษาไทย", False)]], ["cafe naive 東京 tower ภาษา"]),
        0.461538461538,
    ),
    ("thought parts are read", Case([], [], [[("I think refund", True), ("Refunded 10 on order A1.", False)]], ["Refunded 10."]), 0.4),
    ("parts joined by newlines", Case([], [], [[("Refunded", False), ("ten", False)]], ["Refundedten"]), 0.0),
    ("no reference scores 0", Case([], [], [[("Hello there", False)], [("Bye", False)]], [None, "Bye"]), 0.5),
]


def ours(name: str, case: Case, criteria: dict[str, Any] | None = None) -> Score:
    return REGISTRY[name].score(case.question(), case.trace(), MetricContext(criteria=criteria or {}))


@pytest.mark.parametrize(("label", "case", "kind", "ignore_args", "expected"), TRAJECTORY_CASES, ids=[c[0] for c in TRAJECTORY_CASES])
def test_tool_trajectory_avg_score_as_adk_recorded(label: str, case: Case, kind: str, ignore_args: bool, expected: float) -> None:
    score = ours(
        "tool_trajectory_avg_score", case, {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": kind, "ignore_args": ignore_args}}
    )
    assert score.value == round(expected, 6), score.explanation
    assert score.details["match_type"] == kind


@pytest.mark.parametrize(("label", "case", "expected"), ROUGE_CASES, ids=[c[0] for c in ROUGE_CASES])
def test_response_match_score_as_adk_recorded(label: str, case: Case, expected: float) -> None:
    score = ours("response_match_score", case)
    assert score.value == round(expected, 6), score.explanation


def _adk_evaluators() -> Any:
    try:
        from google.adk.evaluation import final_response_match_v1, trajectory_evaluator
    except ImportError as error:  # ADK's evaluators need its eval dependencies
        pytest.skip(f"ADK's evaluator classes do not import here ({error}); the recorded values above still hold")
    return trajectory_evaluator, final_response_match_v1


@pytest.mark.parametrize(("label", "case", "kind", "ignore_args", "expected"), TRAJECTORY_CASES, ids=[c[0] for c in TRAJECTORY_CASES])
def test_tool_trajectory_avg_score_against_adk_live(label: str, case: Case, kind: str, ignore_args: bool, expected: float) -> None:
    trajectory_evaluator, _ = _adk_evaluators()
    from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion

    criterion = ToolTrajectoryCriterion(threshold=1.0, match_type=ToolTrajectoryCriterion.MatchType[kind], ignore_args=ignore_args)
    evaluator = trajectory_evaluator.TrajectoryEvaluator(
        eval_metric=EvalMetric(metric_name="tool_trajectory_avg_score", criterion=criterion)
    )
    actual, want = case.adk_invocations()
    adk = evaluator.evaluate_invocations(actual, want).overall_score
    assert adk == pytest.approx(expected, abs=1e-12)
    assert ours("tool_trajectory_avg_score", case, {"tool_trajectory_avg_score": criterion.model_dump()}).value == round(adk, 6)


@pytest.mark.parametrize(("label", "case", "expected"), ROUGE_CASES, ids=[c[0] for c in ROUGE_CASES])
def test_response_match_score_against_adk_live(label: str, case: Case, expected: float) -> None:
    _, final_response_match_v1 = _adk_evaluators()
    from google.adk.evaluation.eval_metrics import EvalMetric

    evaluator = final_response_match_v1.RougeEvaluator(EvalMetric(metric_name="response_match_score", threshold=0.8))
    actual, want = case.adk_invocations()
    adk = evaluator.evaluate_invocations(actual, want).overall_score
    assert adk == pytest.approx(expected, abs=1e-12)
    assert ours("response_match_score", case).value == round(adk, 6)


def test_tokenizer_is_adks() -> None:
    assert adk_tokens("Running, runners ran! Café 東京 3.14") == ["run", "runner", "ran", "café", "東", "京", "3", "14"]
    assert rouge_1("", "") == 0.0 and rouge_1("the same words", "the same words") == 1.0


def test_match_type_as_adk_reads_it() -> None:
    assert match_type(None) == "EXACT"
    assert match_type({"match_type": "in-order"}) == "IN_ORDER" and match_type({"matchType": "ANY_ORDER"}) == "ANY_ORDER"
    assert match_type({"match_type": 1}) == "IN_ORDER"
    with pytest.raises(ValueError, match="match_type 'sometimes' is not one of EXACT, IN_ORDER, ANY_ORDER"):
        match_type({"match_type": "sometimes"})


def test_unscored_when_adk_could_not_pair_or_nothing_is_known() -> None:
    two_turns = Case([[LOOKUP], [REFUND]], [[LOOKUP]])
    assert ours("tool_trajectory_avg_score", two_turns).explanation == "the run has 2 turn(s), the reference 1: ADK cannot pair them"
    # A golden reference lists the arguments to check, not all of them: ADK's comparison is not for it.
    golden = Question(id="q", user_inputs=["a"], reference_data=ReferenceData(reference_tool_interactions=[], reference_response="x"))
    result = REGISTRY["tool_trajectory_avg_score"].score(golden, Trace(tool_interactions=[]), MetricContext())
    assert result.explanation == "no per-turn reference tool calls from ADK's eval data (tool_usage_accuracy scores this reference)"
    result = REGISTRY["response_match_score"].score(golden, Trace(final_response="x"), MetricContext())
    assert result.explanation == "no per-turn reference responses from ADK's eval data (response_match scores this reference)"
    unsplit = Trace(turns=[Turn(), Turn()], tool_interactions=[ToolInteraction(tool_name="lookup_order")])
    result = REGISTRY["tool_trajectory_avg_score"].score(Case([[], []], [[], []]).question(), unsplit, MetricContext())
    assert result.explanation == "the run's tool calls are not attributed to its turns (ADK compares them turn by turn)"
    # A one-turn run's calls belong to its turn even where the source does not say so.
    one_turn = Question(id="q", user_inputs=["a"], reference_data=ReferenceData(turn_tool_calls=[[ReferenceToolCall(tool_name="x")]]))
    assert (
        REGISTRY["tool_trajectory_avg_score"]
        .score(one_turn, Trace(tool_interactions=[ToolInteraction(tool_name="x")]), MetricContext())
        .value
        == 1.0
    )
    no_responses = Trace(turns=[Turn(), Turn(response="b")])
    question = Question(id="q", user_inputs=["a", "b"], reference_data=ReferenceData(turn_references=["a", "b"]))
    assert REGISTRY["response_match_score"].score(question, no_responses, MetricContext()).explanation == (
        "the run's response to each turn was not recorded"
    )


def test_transfer_counts_only_where_the_reference_names_it() -> None:
    # The reference does not name the transfer: it is an agent step, so the one call left matches.
    question = Case([[TRANSFER, REFUND]], [[REFUND]]).question()
    assert (
        REGISTRY["tool_trajectory_avg_score"].score(question, Case([[TRANSFER, REFUND]], [[REFUND]]).trace(), MetricContext()).value == 1.0
    )


def test_agreement_with_the_scores_adk_recorded() -> None:
    case = Case([[LOOKUP, REFUND]], [[REFUND]], [[("Refunded 10 on order A1.", False)]], ["Your order A1 was refunded 10."])
    trace = case.trace().model_copy(
        update={"recorded_metrics": {"score.tool_trajectory_avg_score": 0.0, "score.response_match_score": 0.35}}
    )
    score = REGISTRY["adk_agreement"].score(case.question(), trace, MetricContext())
    assert score.value == 0.5
    assert score.details["compared"]["tool_trajectory_avg_score"] == {"adk": 0.0, "ours": 0.0, "agrees": True}
    assert score.details["compared"]["response_match_score"] == {"adk": 0.35, "ours": 0.727273, "agrees": False}
    assert score.explanation == "1 of 2 recorded ADK score(s) reproduced; differs: response_match_score ADK 0.35 vs ours 0.7273"
    assert REGISTRY["adk_agreement"].score(case.question(), case.trace(), MetricContext()).explanation == (
        "the source recorded no ADK score to compare with"
    )


def test_agreement_per_invocation_names_the_turns_that_differ() -> None:
    case = Case([[LOOKUP], [LOOKUP, REFUND]], [[LOOKUP], [REFUND]])
    # ADK recorded the case's mean right but scored the turns the other way round.
    trace = case.trace().model_copy(
        update={
            "recorded_metrics": {"score.tool_trajectory_avg_score": 0.5},
            "recorded_turn_scores": {"tool_trajectory_avg_score": [0.0, 1.0], "response_match_score": [None, None]},
        }
    )
    score = REGISTRY["adk_agreement"].score(case.question(), trace, MetricContext())
    assert score.value == 0.0
    entry = score.details["compared"]["tool_trajectory_avg_score"]
    assert (entry["adk_per_turn"], entry["ours_per_turn"], entry["differs"]) == ([0.0, 1.0], [1.0, 0.0], ["turn 1", "turn 2"])
    assert score.explanation == (
        "0 of 1 recorded ADK score(s) reproduced; differs: tool_trajectory_avg_score (turn 1, turn 2: turn 1 ADK 0 vs ours 1; turn 2 ADK 1 vs ours 0)"
    )
    agreeing = trace.model_copy(update={"recorded_turn_scores": {"tool_trajectory_avg_score": [1.0, 0.0]}})
    assert REGISTRY["adk_agreement"].score(case.question(), agreeing, MetricContext()).value == 1.0


def test_historic_fields_are_fields_no_longer_and_their_new_names_are() -> None:
    """The table of fields older ADK versions wrote stays true of the pinned ADK."""
    import importlib

    from agent_eval_action.datasets.adk.schema import HISTORIC_FIELDS

    homes = {"EvalMetric": "google.adk.evaluation.eval_metrics", "CacheMetadata": "google.adk.models.cache_metadata"}
    assert {historic.model for historic in HISTORIC_FIELDS} == set(homes)
    for historic in HISTORIC_FIELDS:
        model = getattr(importlib.import_module(homes[historic.model]), historic.model)
        assert historic.name not in model.model_fields, historic
        assert historic.renamed_to is None or historic.renamed_to in model.model_fields, historic
