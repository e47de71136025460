"""ADK's eval files without runs: an EvalSet as ADK's own models write it (its expected
invocations made with ADK's types), the workshop's scenario cases with the test_config.json beside
them, and the old .test.json turn lists."""

from __future__ import annotations

import json
from pathlib import Path

from agent_eval_action.datasets import Record
from agent_eval_action.datasets.adk import load_eval_set, load_test_json
from agent_eval_action.system.errors import DatasetError
from tests.helpers import workshop
from tests.helpers.adk_files import ANSWERS, INPUTS, expected_invocations


def test_an_eval_set_as_adk_writes_it(tmp_path: Path) -> None:
    from google.adk.evaluation.eval_case import EvalCase, SessionInput
    from google.adk.evaluation.eval_set import EvalSet

    case = EvalCase(
        eval_id="refund_case",
        conversation=expected_invocations(),
        session_input=SessionInput(app_name="shop", user_id="u", state={"tier": "gold"}),
    )
    path = tmp_path / "shop.evalset.json"
    path.write_text(EvalSet(eval_set_id="shop_set", name="Shop", eval_cases=[case]).model_dump_json(indent=2))
    (tmp_path / "test_config.json").write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0}}))

    dataset = load_eval_set(str(path), json.loads(path.read_text()))
    (record,) = list(dataset.records)

    assert (dataset.format, dataset.name, dataset.criteria) == ("adk_evalset", "Shop", {"tool_trajectory_avg_score": 1.0})
    assert isinstance(record, Record) and record.trace is None
    question = record.question
    assert (question.id, question.user_inputs, question.initial_state) == ("refund_case", INPUTS, {"tier": "gold"})
    assert question.reference_data.reference_response == ANSWERS[-1]
    assert [[call.tool_name for call in turn] for turn in question.reference_data.turn_tool_calls or []] == [
        ["lookup_order"], ["transfer_to_agent", "refund"]
    ]  # fmt: skip
    assert question.reference_data.turn_tool_calls is not None
    assert question.reference_data.turn_tool_calls[1][1].input_arguments == {"order_id": "A1", "amount": 10}


def test_scenario_cases_get_the_simulators_settings_from_test_config(tmp_path: Path) -> None:
    cases = [workshop.scenario_case("petunias", "I want to plant petunias.", "Ask about soil, then buy it.")]
    path = tmp_path / "scenarios.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "scenarios", "eval_cases": cases}))
    (tmp_path / "test_config.json").write_text(json.dumps({"criteria": {}, "user_simulator_config": {"max_allowed_invocations": 4}}))

    (record,) = list(load_eval_set(str(path), json.loads(path.read_text())).records)

    assert isinstance(record, Record)
    assert record.question.user_inputs == ["I want to plant petunias."]
    assert record.question.conversation_scenario == {
        "starting_prompt": "I want to plant petunias.", "conversation_plan": "Ask about soil, then buy it."
    }  # fmt: skip
    assert record.question.user_simulator == {"max_allowed_invocations": 4}
    assert record.question.agents_evaluated == [workshop.APP]


def test_a_duplicate_eval_id_is_refused_and_the_first_kept(tmp_path: Path) -> None:
    case = workshop.scenario_case("same", "hi", "chat")
    path = tmp_path / "dupes.evalset.json"
    first, second = list(load_eval_set(str(path), {"eval_set_id": "d", "eval_cases": [case, case]}).records)

    assert isinstance(first, Record) and first.question.id == "same"
    assert isinstance(second, DatasetError)
    assert (second.reason, second.pointer) == ("duplicate eval_id", "$.eval_cases[1].eval_id")


def test_an_old_test_file_is_one_conversation_named_after_the_file(tmp_path: Path) -> None:
    turns = [
        {"query": "Turn off device_2", "expected_tool_use": [{"tool_name": "set_device_info", "tool_input": {"device_id": "device_2"}}],
         "reference": "Done."},
        {"query": "Thanks", "expected_tool_use": [], "reference": "You're welcome."},
    ]  # fmt: skip
    dataset = load_test_json(str(tmp_path / "home_automation.test.json"), turns)
    (record,) = list(dataset.records)

    assert dataset.format == "adk_test"
    assert isinstance(record, Record)
    assert (record.question.id, record.question.user_inputs) == ("home_automation", ["Turn off device_2", "Thanks"])
    assert record.question.reference_data.turn_references == ["Done.", "You're welcome."]
    calls = record.question.reference_data.reference_tool_interactions or []
    assert [(call.tool_name, call.input_arguments) for call in calls] == [("set_device_info", {"device_id": "device_2"})]
