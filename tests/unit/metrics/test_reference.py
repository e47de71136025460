"""Reference-based metrics on hand-computed cases."""

from __future__ import annotations

from typing import Any

import pytest

from agent_eval_action.metrics import REGISTRY, MetricContext
from agent_eval_action.metrics.tools import match_calls
from agent_eval_action.metrics.values import matches, mismatches
from agent_eval_action.models.questions import Question, ReferenceData, ReferenceToolCall, ToolInteraction, TrajectoryStep, Turn
from agent_eval_action.models.traces import Trace

CTX = MetricContext()


def q(**reference: Any) -> Question:
    return Question(id="q", user_inputs=["hi"], agents_evaluated=["customer_service"], reference_data=ReferenceData(**reference))


def calls(*items: tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str]) -> list[ToolInteraction]:
    return [ToolInteraction(tool_name=i[0], input_arguments=i[1], error=i[2] if len(i) > 2 else None) for i in items]


def refs(*items: tuple[str, dict[str, Any]]) -> list[ReferenceToolCall]:
    return [ReferenceToolCall(tool_name=name, input_arguments=args) for name, args in items]


def score(name: str, question: Question, trace: Trace) -> float | None:
    return REGISTRY[name].score(question, trace, CTX).value


class TestValues:
    def test_numbers_compare_as_numbers(self) -> None:
        assert matches(10, 10.0)
        assert matches({"discount_value": 10}, {"discount_value": 10.0})
        assert matches(0.1 + 0.2, 0.3)
        assert not matches(10, 10.5)

    def test_bool_is_not_a_number(self) -> None:
        assert not matches(True, 1)
        assert not matches(1, True)

    def test_strings_trimmed_but_case_kept(self) -> None:
        assert matches("refund", " refund\n")
        assert not matches("refund", "Refund")

    def test_strings_are_not_numbers(self) -> None:
        assert not matches(10, "10")

    def test_nested_dicts_check_expected_keys_only(self) -> None:
        assert matches({"cart": {"subtotal": 25.98}}, {"cart": {"subtotal": 25.98, "items": []}, "other": 1})
        assert mismatches({"cart": {"subtotal": 25.98, "qty": 2}}, {"cart": {"subtotal": 25.0}}) == [
            "cart.subtotal: expected 25.98, got 25.0",
            "cart.qty: missing (expected 2)",
        ]

    def test_lists_element_by_element(self) -> None:
        assert matches([1, {"a": "x"}], [1.0, {"a": "x ", "b": 2}])
        assert mismatches([1, 2], [1]) == ["value: expected 2 items, got 1"]
        assert mismatches({"l": [1, 2]}, {"l": [1, 3]}) == ["l[1]: expected 2, got 3"]


class TestToolUsage:
    def test_all_reference_calls_made_numbers_as_numbers(self) -> None:
        question = q(
            reference_tool_interactions=refs(
                ("access_cart_information", {"customer_id": "123"}), ("generate_qr_code", {"discount_value": 10})
            )
        )
        trace = Trace(
            tool_interactions=calls(
                ("access_cart_information", {"customer_id": "123"}), ("generate_qr_code", {"discount_value": 10.0, "extra": True})
            )
        )
        assert score("tool_usage_accuracy", question, trace) == 1.0
        assert score("tool_call_precision", question, trace) == 1.0

    def test_missing_wrong_and_unexpected_are_listed(self) -> None:
        question = q(reference_tool_interactions=refs(("a", {"x": 1}), ("b", {"y": 2}), ("c", {})))
        trace = Trace(tool_interactions=calls(("a", {"x": 1}), ("b", {"y": 3}), ("d", {})))
        result = REGISTRY["tool_usage_accuracy"].score(question, trace, CTX)
        assert result.value == pytest.approx(1 / 3)
        assert [m["tool_name"] for m in result.details["missing"]] == ["c"]
        assert result.details["wrong_arguments"][0]["differences"] == ["y: expected 2, got 3"]
        assert [u["tool_name"] for u in result.details["unexpected"]] == ["d"]
        assert score("tool_call_precision", question, trace) == pytest.approx(1 / 3)

    def test_matching_is_one_to_one_and_maximal(self) -> None:
        # Greedy would give the first call to the argument-free reference and lose a match.
        reference = refs(("t", {}), ("t", {"x": 1}))
        actual = calls(("t", {"x": 1}), ("t", {"x": 2}))
        assert len(match_calls(reference, actual)) == 2
        # One call cannot satisfy two references.
        assert len(match_calls(refs(("t", {}), ("t", {})), calls(("t", {})))) == 1

    def test_transfer_is_an_agent_step_unless_referenced(self) -> None:
        trace = Trace(tool_interactions=calls(("transfer_to_agent", {"agent_name": "promo"}), ("a", {})))
        assert score("tool_call_precision", q(reference_tool_interactions=refs(("a", {}))), trace) == 1.0
        both = q(reference_tool_interactions=refs(("transfer_to_agent", {"agent_name": "promo"}), ("a", {})))
        assert score("tool_usage_accuracy", both, trace) == 1.0
        assert score("tool_call_precision", both, trace) == 1.0

    def test_no_reference_is_unscored_never_zero(self) -> None:
        result = REGISTRY["tool_usage_accuracy"].score(q(), Trace(tool_interactions=calls(("a", {}))), CTX)
        assert result.value is None and "no reference_tool_interactions" in result.explanation

    def test_unrecorded_calls_are_unscored(self) -> None:
        assert score("tool_usage_accuracy", q(reference_tool_interactions=refs(("a", {}))), Trace()) is None

    def test_empty_reference_means_no_calls_expected(self) -> None:
        question = q(reference_tool_interactions=[])
        assert score("tool_usage_accuracy", question, Trace(tool_interactions=[])) == 1.0
        assert score("tool_call_precision", question, Trace(tool_interactions=[])) == 1.0
        assert score("tool_call_precision", question, Trace(tool_interactions=calls(("a", {})))) == 0.0

    def test_no_calls_made_precision_unscored_accuracy_zero(self) -> None:
        question = q(reference_tool_interactions=refs(("a", {})))
        assert score("tool_usage_accuracy", question, Trace(tool_interactions=[])) == 0.0
        assert score("tool_call_precision", question, Trace(tool_interactions=[])) is None


def steps(*names: str) -> list[TrajectoryStep]:
    return [
        TrajectoryStep(kind="tool" if n.islower() and "_agent" not in n and n != "customer_service" else "agent", name=n) for n in names
    ]


class TestTrajectory:
    def test_lcs_over_reference_length(self) -> None:
        question = q(reference_trajectory=["A", "B", "C", "D"])
        trace = Trace(trajectory=[TrajectoryStep(kind="agent", name=n) for n in ["A", "C", "B", "D"]])
        assert score("trajectory_accuracy", question, trace) == 0.75
        assert score("trajectory_exact_match", question, trace) == 0.0
        assert score("trajectory_in_order_match", question, trace) == 0.0
        assert score("trajectory_any_order_match", question, trace) == 1.0
        assert score("trajectory_precision", question, trace) == 1.0
        assert score("trajectory_recall", question, trace) == 1.0

    def test_extra_steps(self) -> None:
        question = q(reference_trajectory=["A", "B"])
        trace = Trace(trajectory=[TrajectoryStep(kind="agent", name=n) for n in ["A", "X", "B", "Y"]])
        assert score("trajectory_in_order_match", question, trace) == 1.0
        assert score("trajectory_precision", question, trace) == 0.5
        assert score("trajectory_recall", question, trace) == 1.0
        assert score("trajectory_exact_match", question, trace) == 0.0

    def test_agent_only_reference_ignores_tool_steps(self) -> None:
        question = q(reference_trajectory=["root", "promotions_agent"])
        trace = Trace(
            trajectory=[
                TrajectoryStep(kind="agent", name="root"),
                TrajectoryStep(kind="agent", name="promotions_agent"),
                TrajectoryStep(kind="tool", name="generate_qr_code"),
            ]
        )
        result = REGISTRY["trajectory_exact_match"].score(question, trace, CTX)
        assert result.value == 1.0 and result.details["compared"] == "agent steps"

    def test_app_name_stands_for_root_agent(self) -> None:
        question = q(reference_trajectory=["customer_service", "lookup"])
        trace = Trace(
            app_name="customer_service",
            root_agent="root_agent",
            trajectory=[TrajectoryStep(kind="agent", name="root_agent"), TrajectoryStep(kind="tool", name="lookup")],
        )
        assert score("trajectory_exact_match", question, trace) == 1.0

    def test_repeated_steps_counted_as_multiset(self) -> None:
        question = q(reference_trajectory=["t", "t"])
        trace = Trace(trajectory=[TrajectoryStep(kind="tool", name="t")])
        assert score("trajectory_any_order_match", question, trace) == 0.0
        assert score("trajectory_recall", question, trace) == 0.5

    def test_missing_reference_or_trajectory_unscored(self) -> None:
        assert score("trajectory_accuracy", q(), Trace(trajectory=[])) is None
        assert score("trajectory_accuracy", q(reference_trajectory=["A"]), Trace()) is None
        assert score("trajectory_precision", q(reference_trajectory=["A"]), Trace(trajectory=[])) is None
        assert score("trajectory_accuracy", q(reference_trajectory=["A"]), Trace(trajectory=[])) == 0.0


class TestState:
    def test_share_of_variables_that_match(self) -> None:
        question = q(reference_state_variables={"customer_intent": "refund", "refund_amount": 50.00, "target_date": "2024-01-01"})
        trace = Trace(final_state={"customer_intent": " refund", "refund_amount": 50, "target_date": "2024-01-02", "other": 1})
        result = REGISTRY["state_management_fidelity"].score(question, trace, CTX)
        assert result.value == pytest.approx(2 / 3)
        assert result.details["mismatches"] == ["target_date: expected '2024-01-01', got '2024-01-02'"]

    def test_nested_state_is_one_variable(self) -> None:
        question = q(reference_state_variables={"appointment": {"date": "2024-11-23", "slot": {"from": 9}}, "x": 1})
        good = Trace(final_state={"appointment": {"date": "2024-11-23", "slot": {"from": 9.0, "to": 12}}, "x": 1})
        bad = Trace(final_state={"appointment": {"date": "2024-11-23", "slot": {"from": 10}}, "x": 1})
        assert score("state_management_fidelity", question, good) == 1.0
        result = REGISTRY["state_management_fidelity"].score(question, bad, CTX)
        assert result.value == 0.5 and result.details["mismatches"] == ["appointment.slot.from: expected 9, got 10"]

    def test_missing_variable_and_missing_state(self) -> None:
        question = q(reference_state_variables={"a": 1})
        assert score("state_management_fidelity", question, Trace(final_state={})) == 0.0
        assert score("state_management_fidelity", question, Trace()) is None
        assert score("state_management_fidelity", q(), Trace(final_state={"a": 1})) is None


class TestResponseMatch:
    def test_identical_and_partial(self) -> None:
        question = q(reference_response="Water a fern twice a week.")
        assert score("response_match", question, Trace(final_response="Water a fern twice a week.")) == pytest.approx(1.0)
        partial = score("response_match", question, Trace(final_response="Water it weekly."))
        assert partial is not None and 0 < partial < 1

    def test_per_turn_references(self) -> None:
        question = q(turn_references=["hello there", None, "bye now"], reference_response="bye now")
        trace = Trace(turns=[Turn(response="hello there"), Turn(response="?"), Turn(response="totally different")])
        result = REGISTRY["response_match"].score(question, trace, CTX)
        assert result.value == pytest.approx(0.5) and result.details["per_turn"] == [1.0, 0.0]

    def test_no_reference_unscored(self) -> None:
        assert score("response_match", q(), Trace(final_response="x")) is None
        assert score("response_match", q(reference_response="x"), Trace()) is None
