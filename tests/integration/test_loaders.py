"""Each loader on realistic files of every variant, through the public load_dataset()."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import pytest

from agent_eval_action import evaluate
from agent_eval_action.datasets import Record, load_dataset
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.traces.spans import MISMATCHED_NOTE
from tests.helpers.factories import csv_row, customer_service_runs, write_csv, write_jsonl
from tests.helpers.values import present

# The datasets are made in tmp_path: work there, as inputs must lie inside the working directory's repository.
pytestmark = pytest.mark.usefixtures("in_tmp")

RUNS = {run.qid: run for run in customer_service_runs()}
T = TypeVar("T")


def records(path: Path) -> tuple[list[Record], list[DatasetError], list[str]]:
    dataset = load_dataset(str(path))
    good: list[Record] = []
    bad: list[DatasetError] = []
    for item in dataset.records:
        if isinstance(item, DatasetError):
            bad.append(item)
        else:
            good.append(item)
    return good, bad, dataset.warnings


def golden(tmp_path: Path, questions: list[Any], name: str = "cs_golden.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"golden_questions": questions}, indent=2))
    return path


GOOD_Q = {
    "id": "q_billing_01",
    "user_inputs": ["Hi", "I have a billing question"],
    "agents_evaluated": ["customer_service"],
    "metadata": {"complexity": "high"},
    "reference_data": {
        "reference_tool_interactions": [{"tool_name": "access_cart_information", "input_arguments": {"customer_id": "123"}}],
        "reference_trajectory": ["GreetingAgent", "BillingSupportAgent", "PaymentTool"],
        "reference_state_variables": {"customer_intent": "refund", "refund_amount": 50.0},
        "expected_response": "Sure",
        "my_rubric": "be polite",
    },
}


class TestGolden:
    def test_seed_example_loads_with_custom_keys_kept(self, tmp_path: Path) -> None:
        good, bad, warnings = records(golden(tmp_path, [GOOD_Q]))
        assert not bad and not warnings
        question = good[0].question
        assert question.user_inputs == ["Hi", "I have a billing question"]
        assert present(question.reference_data.reference_tool_interactions)[0].input_arguments == {"customer_id": "123"}
        assert question.reference_data.reference_response == "Sure"
        assert question.reference_data.custom == {"my_rubric": "be polite"}
        assert question.line == 4
        assert good[0].trace is None

    def test_unknown_question_key_warns_by_name(self, tmp_path: Path) -> None:
        good, bad, warnings = records(golden(tmp_path, [{**GOOD_Q, "updated_datetime": "2024-01-01"}]))
        assert len(good) == 1 and not bad
        assert warnings == [f"{tmp_path / 'cs_golden.json'}: question 'q_billing_01' has unknown key 'updated_datetime' (ignored)"]

    @pytest.mark.parametrize(
        ("change", "pointer", "reason"),
        [
            ({"user_inputs": "Hi"}, "$.golden_questions[1].user_inputs", "expected a list of strings, got str"),
            ({"user_inputs": ["Hi", 3]}, "$.golden_questions[1].user_inputs[1]", "expected a string, got int"),
            ({"agents_evaluated": None}, "$.golden_questions[1].agents_evaluated", "expected a list of strings"),
            (
                {"reference_data": {"reference_tool_interactions": [{"input_arguments": {}}]}},
                "$.golden_questions[1].reference_data.reference_tool_interactions[0].tool_name",
                "missing",
            ),
            (
                {"reference_data": {"reference_state_variables": []}},
                "$.golden_questions[1].reference_data.reference_state_variables",
                "expected an object",
            ),
        ],
    )
    def test_bad_question_names_file_question_and_path(self, tmp_path: Path, change: dict[str, Any], pointer: str, reason: str) -> None:
        path = golden(tmp_path, [GOOD_Q, {**GOOD_Q, "id": "q2", **change}])
        good, bad, _ = records(path)
        assert [r.question.id for r in good] == ["q_billing_01"]  # the valid one still loads
        message = bad[0].message()
        assert str(path) in message and "question 'q2'" in message and pointer in message and reason in message

    @pytest.mark.parametrize(
        ("change", "pointer", "reason"),
        [
            # A misspelt key of a reference call read as "no arguments": any call passed (a false green).
            (
                {"reference_data": {"reference_tool_interactions": [{"tool_name": "t", "input_args": {"customer_id": "999"}}]}},
                "$.golden_questions[0].reference_data.reference_tool_interactions[0].input_args",
                "unknown key 'input_args' in a tool call (did you mean `input_arguments`?)",
            ),
            (
                {"reference_data": {"reference_tool_interactions": [{"tool_name": "t", "argumnets": {}}]}},
                "$.golden_questions[0].reference_data.reference_tool_interactions[0].argumnets",
                "unknown key 'argumnets' in a tool call; a tool call has tool_name and input_arguments",
            ),
            # The question's own keys: the one typed is named, not "user_inputs is missing".
            (
                {"user_input": ["Hi"], "user_inputs": None},
                "$.golden_questions[0].user_input",
                "unknown key 'user_input' (did you mean `user_inputs`?)",
            ),
            ({"refrence_data": {}}, "$.golden_questions[0].refrence_data", "unknown key 'refrence_data' (did you mean `reference_data`?)"),
            # reference_data keeps custom keys, but not a near-certain misspelling of one a metric reads.
            (
                {"reference_data": {"refrence_trajectory": ["a"]}},
                "$.golden_questions[0].reference_data.refrence_trajectory",
                "unknown key 'refrence_trajectory' (did you mean `reference_trajectory`?)",
            ),
            (
                {"reference_data": {"reference_state": {"a": 1}}},
                "$.golden_questions[0].reference_data.reference_state",
                "unknown key 'reference_state' (did you mean `reference_state_variables`?)",
            ),
        ],
    )
    def test_a_misspelt_key_anywhere_in_a_question_is_an_error_with_the_closest_name(
        self, tmp_path: Path, change: dict[str, Any], pointer: str, reason: str
    ) -> None:
        question = {k: v for k, v in {**GOOD_Q, **change}.items() if v is not None}
        path = golden(tmp_path, [question])
        good, bad, _ = records(path)
        assert not good
        assert bad[0].message() == f"{path}, question 'q_billing_01', at {pointer}: {reason}"

    def test_real_files_extra_keys_still_load(self, tmp_path: Path) -> None:
        """The workshop's golden files carry updated_datetime; ADK's test files and recorded calls
        bring tool_input, mock_tool_output, call_id; reference_data keeps the user's own keys."""
        call = {"tool_name": "t", "tool_input": {"a": 1}, "mock_tool_output": "x", "call_id": "c1", "output_result": {}}
        reference = {"reference_tool_interactions": [call], "reference_notes": "n", "reference": "r", "rubric": "x"}
        question = {**GOOD_Q, "updated_datetime": "2026-01-09", "reference_data": reference}
        good, bad, warnings = records(golden(tmp_path, [question]))
        assert not bad and len(good) == 1
        assert present(good[0].question.reference_data.reference_tool_interactions)[0].input_arguments == {"a": 1}
        assert "unknown key 'updated_datetime' (ignored)" in warnings[0]

    def test_missing_required_field(self, tmp_path: Path) -> None:
        question = {k: v for k, v in GOOD_Q.items() if k != "reference_data"}
        _, bad, _ = records(golden(tmp_path, [question]))
        assert "$.golden_questions[0].reference_data: required field is missing" in bad[0].message()

    def test_duplicate_id(self, tmp_path: Path) -> None:
        good, bad, _ = records(golden(tmp_path, [GOOD_Q, GOOD_Q]))
        assert len(good) == 1 and "duplicate id" in bad[0].message() and "[1].id" in bad[0].message()

    def test_file_level_errors(self, tmp_path: Path) -> None:
        broken = tmp_path / "broken_golden.json"
        broken.write_text('{"golden_questions": [\n  {"id": "x",}\n]}')
        with pytest.raises(DatasetError, match=r"at line 2, column 14: not valid JSON"):
            load_dataset(str(broken))
        wrong = tmp_path / "wrong.json"
        wrong.write_text('{"golden_questions": {}}')
        with pytest.raises(DatasetError, match=r"\$\.golden_questions: expected a list of questions"):
            load_dataset(str(wrong))
        with pytest.raises(DatasetError, match="no such file"):
            load_dataset(str(tmp_path / "missing.json"))
        other = tmp_path / "other.json"
        other.write_text('{"hello": 1}')
        with pytest.raises(DatasetError, match="unrecognised dataset"):
            load_dataset(str(other))


def by_id(path: Path) -> dict[str, Record]:
    good, bad, _ = records(path)
    assert not bad, [b.message() for b in bad]
    return {r.question.id: r for r in good}


class TestSimulationCsv:
    @pytest.mark.parametrize("naming", ["current", "legacy"])
    def test_extracted_with_spans(self, tmp_path: Path, naming: str) -> None:
        path = write_csv(tmp_path / "runs.csv", [csv_row(run, naming=naming) for run in RUNS.values()])
        loaded = by_id(path)
        trace = loaded["q_discount_01"].trace
        assert trace is not None
        assert [c.tool_name for c in trace.tool_interactions or []] == ["transfer_to_agent", "access_cart_information", "generate_qr_code"]
        assert present(trace.tool_interactions)[2].input_arguments["discount_value"] == 10.0
        # The trace keeps the transfer as recorded; metrics count it as an agent step (calls.py).
        assert [(s.kind, s.name) for s in trace.trajectory or []] == [
            ("agent", "customer_service"),
            ("tool", "transfer_to_agent"),
            ("agent", "promotions_agent"),
            ("tool", "access_cart_information"),
            ("tool", "generate_qr_code"),
        ]
        assert trace.root_agent == "customer_service"
        assert trace.final_state == {"customer_id": "123", "discount_value": 10, "qr_generated": True}
        assert trace.latency_source == "session_trace spans" and trace.latency_s == pytest.approx(1.5)
        assert trace.llm_calls is not None and len(trace.llm_calls) == 5  # one per call, one closing per agent
        assert {c.model for c in trace.llm_calls} == {"gemini-2.5-flash"}
        assert trace.llm_calls[0].input_tokens == 1800 and trace.llm_calls[0].cached_tokens == 600
        assert trace.recorded_metrics["duration_sec"] == 1.5
        assert trace.recorded_metrics["score.tool_trajectory_avg_score"] == 1.0
        two_turns = loaded["q_cart_01"].trace
        assert two_turns is not None and [t.duration_s for t in two_turns.turns] == [pytest.approx(1.5), pytest.approx(1.5)]
        crm = loaded["q_crm_01"].trace
        assert crm is not None and present(crm.tool_interactions)[0].error == "CRM timeout"

    def test_session_object_with_events(self, tmp_path: Path) -> None:
        path = write_csv(tmp_path / "runs.csv", [csv_row(run, variant="session") for run in RUNS.values()])
        trace = by_id(path)["q_discount_01"].trace
        assert trace is not None
        assert [c.tool_name for c in trace.tool_interactions or []] == ["transfer_to_agent", "access_cart_information", "generate_qr_code"]
        assert present(trace.tool_interactions)[1].output_result == {"items": [{"sku": "soil-01", "qty": 2}], "subtotal": 25.98}
        assert trace.final_state == RUNS["q_discount_01"].state
        assert trace.final_response == "Here is your QR code for 10% off."
        assert trace.latency_source == "latency_data" and trace.latency_s == 1.5
        assert trace.llm_calls is not None and len(trace.llm_calls) == 4
        crm = by_id(path)["q_crm_01"].trace
        assert crm is not None and present(crm.tool_interactions)[0].error == "CRM timeout"
        appointment = by_id(path)["q_appointment_01"].trace
        assert appointment is not None and [t.response for t in appointment.turns] == [
            "(customer_service answered turn 1)",
            "You're booked for Saturday 9-12.",
        ]

    def test_metrics_only_with_transcript(self, tmp_path: Path) -> None:
        path = write_csv(tmp_path / "runs.csv", [csv_row(run, variant="metrics_only") for run in RUNS.values()])
        trace = by_id(path)["q_discount_01"].trace
        assert trace is not None
        assert trace.tool_interactions is None and trace.final_state is None
        assert [(s.kind, s.name) for s in trace.trajectory or []] == [
            ("agent", "customer_service"),
            ("tool", "transfer_to_agent"),
            ("agent", "promotions_agent"),
            ("tool", "access_cart_information"),
            ("tool", "generate_qr_code"),
        ]
        assert trace.latency_s is None and trace.recorded_metrics["duration_sec"] == 1.5

    def test_bare_state_dict_and_agent_name_list_summary(self, tmp_path: Path) -> None:
        row = {
            "question_id": "q1",
            "user_inputs": "where do I live?",
            "final_session_state": json.dumps({"state": "CA", "zip": 94000}),
            "trace_summary": json.dumps(["root", "billing"]),
        }
        trace = by_id(write_csv(tmp_path / "r.csv", [row]))["q1"].trace
        assert trace is not None and trace.final_state == {"state": "CA", "zip": 94000}  # a bare dict, despite its "state" key
        assert [(s.kind, s.name) for s in trace.trajectory or []] == [("agent", "root"), ("agent", "billing")]

    def test_session_state_column_and_failed_status(self, tmp_path: Path) -> None:
        rows = [
            {
                "question_id": "q1",
                "user_inputs": json.dumps(["hi"]),
                "session_state": json.dumps({"id": "s", "app_name": "a", "state": {"k": 1}, "events": []}),
                "status": "success",
            },
            {"question_id": "q2", "user_inputs": "hi", "status": "error", "error": "429 RESOURCE_EXHAUSTED"},
        ]
        loaded = by_id(write_csv(tmp_path / "r.csv", rows))
        assert present(loaded["q1"].trace).final_state == {"k": 1}
        assert present(loaded["q2"].trace).error == "429 RESOURCE_EXHAUSTED"

    def test_bad_cell_names_row_and_column_and_others_load(self, tmp_path: Path) -> None:
        rows = [csv_row(run) for run in list(RUNS.values())[:3]]
        rows[1]["extracted_data"] = '{"tool_interactions": [oops'
        rows[2]["metric.duration_sec"] = "fast"  # no metric needs it: the row stays, the cell is left out
        rows.append(csv_row(RUNS["q_care_01"]))
        rows[3]["user_inputs"] = ""
        path = write_csv(tmp_path / "runs.csv", rows)
        good, bad, warnings = records(path)
        assert [r.question.id for r in good] == ["q_cart_01", "q_discount_02", "q_care_01"]
        assert "row 2, column extracted_data: not valid JSON" in bad[0].message()
        assert "question 'q_discount_01'" in bad[0].message()
        assert len(bad) == 1
        # A run without the user's input (and no session to read it from) is scored, as the seed
        # pipeline scores it; the metrics that need the turns say so.
        assert good[2].question.user_inputs == []
        assert warnings == [
            f"{path}: column 'metric.duration_sec' holds values that are not numbers: they are left out",
            f"{path}: a row without user_inputs (and no user message in its session) is scored without the user's turns",
        ]
        discount = good[1].trace
        assert discount is not None and "duration_sec" not in discount.recorded_metrics and discount.latency_source == "session_trace spans"

    def test_turn_scores_column(self, tmp_path: Path) -> None:
        """ADK's per-invocation scores as convert writes them; a cell of another shape is left out
        (only adk_agreement reads it), with one warning, and the row stays."""
        rows = [
            {"question_id": "q1", "user_inputs": "hi", "turn_scores": json.dumps({"response_match_score": [0.25, None], "x": [None]})},
            {"question_id": "q2", "user_inputs": "hi", "turn_scores": json.dumps({"response_match_score": ["high"]})},
            {"question_id": "q3", "user_inputs": "hi", "turn_scores": "[0.5]"},
        ]
        path = write_csv(tmp_path / "r.csv", rows)
        good, bad, warnings = records(path)
        assert not bad and [present(r.trace).recorded_turn_scores for r in good] == [{"response_match_score": [0.25, None]}, {}, {}]
        assert warnings == [f"{path}: column 'turn_scores' holds values that are not {{metric: [score or null, ...]}}: they are left out"]

    def test_ids_runs_and_duplicates(self, tmp_path: Path) -> None:
        rows = [
            {"question_id": "q1", "session_id": "a", "user_inputs": "hi"},
            {"question_id": "q1", "session_id": "b", "user_inputs": "hi"},
            {"question_id": "q1", "session_id": "b", "user_inputs": "hi"},
            {"eval_id": "e9", "user_inputs": "hi"},
            {"final_response": "no id"},
        ]
        good, bad, _ = records(write_csv(tmp_path / "r.csv", rows))
        assert [(r.question.id, r.run) for r in good] == [("q1", 0), ("q1", 1), ("e9", 0)]
        assert "duplicate run of session 'b'" in bad[0].message()
        assert "row 5: no question_id or eval_id" in bad[1].message()

    def test_a_misspelt_key_in_a_reference_data_cell_names_row_and_path(self, tmp_path: Path) -> None:
        reference = {"reference_tool_interactions": [{"tool_name": "access_cart_information", "input_args": {"customer_id": "9"}}]}
        row = {"question_id": "q", "user_inputs": '["hi"]', "reference_data": json.dumps(reference)}
        for path in (write_csv(tmp_path / "r.csv", [row]), write_jsonl(tmp_path / "r.jsonl", [{**row, "reference_data": reference}])):
            good, bad, _ = records(path)
            assert not good
            assert "reference_tool_interactions[0].input_args: unknown key 'input_args' in a tool call" in bad[0].message()
            assert "(did you mean `input_arguments`?)" in bad[0].message() and "question 'q'" in bad[0].message()

    def test_a_misspelt_column_is_named_with_the_closest_one(self, tmp_path: Path) -> None:
        _, _, warnings = records(write_csv(tmp_path / "r.csv", [{"question_id": "q", "user_inputs": "hi", "refernce_data": "{}"}]))
        assert warnings == [f"{tmp_path / 'r.csv'}: unknown column(s) 'refernce_data' (did you mean `reference_data`?) (ignored)"]

    def test_unknown_column_warns(self, tmp_path: Path) -> None:
        _, _, warnings = records(write_csv(tmp_path / "r.csv", [{"question_id": "q", "user_inputs": "hi", "mystery": "1"}]))
        assert warnings == [f"{tmp_path / 'r.csv'}: unknown column(s) 'mystery' (ignored)"]

    def test_jsonl_native_and_string_cells(self, tmp_path: Path) -> None:
        run = RUNS["q_discount_01"]
        string_row = csv_row(run)
        native_row = {k: json.loads(v) if v[:1] in "[{" else v for k, v in csv_row(run).items()}
        native_row["question_id"] = native_row["session_id"] = "native"
        path = write_jsonl(tmp_path / "runs.jsonl", [string_row, native_row])
        path.write_text(path.read_text() + "\nnot json\n")
        good, bad, _ = records(path)
        assert [r.question.id for r in good] == ["q_discount_01", "native"]
        assert good[0].trace == good[1].trace
        assert "line 4: not valid JSON" in bad[0].message()


class TestAdk:
    def test_old_test_json_is_one_conversation(self, tmp_path: Path) -> None:
        path = tmp_path / "home_automation.test.json"
        path.write_text(
            json.dumps(
                [
                    {
                        "query": "Turn off device_2",
                        "expected_tool_use": [{"tool_name": "set_device_info", "tool_input": {"device_id": "device_2", "status": "OFF"}}],
                        "reference": "Done.",
                    },
                    {"query": "Thanks", "expected_tool_use": [], "reference": "You're welcome."},
                ]
            )
        )
        (tmp_path / "test_config.json").write_text(
            json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": {"threshold": 0.8}}})
        )
        dataset = load_dataset(str(path))
        assert dataset.name == "home_automation" and dataset.format == "adk_test"
        assert dataset.criteria == {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
        (record,) = list(dataset.records)
        assert isinstance(record, Record)
        assert record.question.user_inputs == ["Turn off device_2", "Thanks"]
        assert record.question.reference_data.turn_references == ["Done.", "You're welcome."]
        calls = present(record.question.reference_data.reference_tool_interactions)
        assert calls[0].input_arguments == {"device_id": "device_2", "status": "OFF"}

    def test_old_multi_case_form(self, tmp_path: Path) -> None:
        path = tmp_path / "cases.test.json"
        path.write_text(
            json.dumps(
                [
                    {
                        "name": "roll",
                        "data": [{"query": "Roll a die", "expected_tool_use": [{"tool_name": "roll_die", "tool_input": {"sides": 6}}]}],
                        "initial_session": {"state": {"x": 1}, "app_name": "dice", "user_id": "u"},
                    },
                    {"name": "bad", "data": [{"expected_tool_use": []}]},
                ]
            )
        )
        good, bad, _ = records(path)
        assert (
            good[0].question.id == "roll" and good[0].question.initial_state == {"x": 1} and good[0].question.agents_evaluated == ["dice"]
        )
        assert "question 'bad'" in bad[0].message() and "$[1].data[0].query" in bad[0].message()

    @pytest.mark.parametrize("style", ["snake", "camel"])
    def test_eval_set(self, tmp_path: Path, style: str) -> None:
        def k(name: str) -> str:
            if style == "snake":
                return name
            head, *rest = name.split("_")
            return head + "".join(p.title() for p in rest)

        case = {
            k("eval_id"): "case_1",
            "conversation": [
                {
                    k("invocation_id"): "i1",
                    k("user_content"): {"role": "user", "parts": [{"text": "What's in my cart?"}]},
                    k("final_response"): {"role": "model", "parts": [{"text": "Two bags of soil."}]},
                    k("intermediate_data"): {
                        k("tool_uses"): [{"name": "access_cart_information", "args": {"customer_id": "123"}}],
                        k("tool_responses"): [],
                        k("intermediate_responses"): [],
                    },
                },
            ],
            k("session_input"): {k("app_name"): "customer_service", k("user_id"): "u", "state": {"customer_id": "123"}},
            k("final_session_state"): {"cart_checked": True},
        }
        scenario = {k("eval_id"): "sim", k("conversation_scenario"): {"starting_prompt": "hi", "conversation_plan": "x"}}
        path = tmp_path / "cs.evalset.json"
        path.write_text(json.dumps({k("eval_set_id"): "cs", "name": "Customer service", k("eval_cases"): [case, scenario]}))
        dataset = load_dataset(str(path))
        assert dataset.format == "adk_evalset" and dataset.name == "Customer service"
        items = list(dataset.records)
        good = [r for r in items if isinstance(r, Record)]
        assert len(good) == len(items) == 2, items
        question = good[0].question
        assert question.user_inputs == ["What's in my cart?"]
        assert question.initial_state == {"customer_id": "123"}
        assert question.reference_data.reference_state_variables == {"cart_checked": True}
        assert question.reference_data.reference_response == "Two bags of soil."
        assert present(question.reference_data.reference_tool_interactions)[0].tool_name == "access_cart_information"
        assert [[c.tool_name for c in turn] for turn in question.reference_data.turn_tool_calls or []] == [["access_cart_information"]]
        simulated = good[1].question
        assert simulated.user_inputs == ["hi"] and simulated.conversation_scenario == {"starting_prompt": "hi", "conversation_plan": "x"}

    def test_what_adks_eval_case_schema_refuses_is_refused(self, tmp_path: Path) -> None:
        both = {"eval_id": "both", "conversation": [], "conversation_scenario": {"starting_prompt": "hi", "conversation_plan": "x"}}
        no_plan = {"eval_id": "no_plan", "conversation_scenario": {"starting_prompt": "hi"}}
        persona = {
            "eval_id": "persona",
            "conversation_scenario": {"starting_prompt": "hi", "conversation_plan": "x", "user_persona": "nobody"},
        }
        typo = {"eval_id": "typo", "conversation": [{"user_content": {"parts": [{"text": "hi"}]}, "final_respnse": {}}]}
        path = tmp_path / "bad.evalset.json"
        path.write_text(json.dumps({"eval_set_id": "bad", "eval_cases": [both, no_plan, persona, typo]}))
        _, bad, _ = records(path)
        refused = "(an eval case: ADK's schema refuses it)"
        assert [e.message() for e in bad] == [
            f"{path}, question 'both', at $.eval_cases[0]: value error, Exactly one of conversation and conversation_scenario must be "
            f"provided in an EvalCase. {refused}",
            f"{path}, question 'no_plan', at $.eval_cases[1].conversation_scenario.conversation_plan: required field is missing {refused}",
            f"{path}, question 'persona', at $.eval_cases[2]: nobody not found in registry. (an eval case: ADK refuses it)",
            f"{path}, question 'typo', at $.eval_cases[3].conversation[0].final_respnse: not a field of ADK's schema "
            f"(did you mean `final_response`?) {refused}",
        ]

    def test_per_turn_tool_calls_of_the_old_format(self, tmp_path: Path) -> None:
        path = tmp_path / "two.test.json"
        path.write_text(json.dumps([{"query": "a", "expected_tool_use": [{"tool_name": "x", "tool_input": {}}]}, {"query": "b"}]))
        ((record,), _, _) = records(path)
        assert [[c.tool_name for c in turn] for turn in record.question.reference_data.turn_tool_calls or []] == [["x"], []]

    def test_a_misspelt_key_of_an_old_test_file_names_the_closest(self, tmp_path: Path) -> None:
        path = tmp_path / "one.test.json"
        path.write_text(json.dumps([{"query": "a", "refrence": "Hello"}]))
        _, (error,), _ = records(path)
        assert error.message().endswith("at $[0].refrence: unknown key 'refrence' (did you mean `reference`?)")
        path.write_text(json.dumps([{"query": "a", "expected_tool_use": [{"tool_name": "x", "tool_inputs": {"a": 1}}]}]))
        _, (error,), _ = records(path)
        assert error.message().endswith(
            "at $[0].expected_tool_use[0].tool_inputs: unknown key 'tool_inputs' in a tool call (did you mean `tool_input`?)"
        )

    @pytest.mark.parametrize(
        ("name", "what"),
        [
            ("test_config.json", "ADK's eval criteria"),
            ("eval_config.json", "ADK's eval config"),
            ("session_input.json", "ADK's session input"),
            ("conversation_scenarios.json", "ADK's conversation scenarios"),
            ("123.session.json", "an ADK session"),
        ],
    )
    def test_adks_own_files_are_not_datasets(self, tmp_path: Path, name: str, what: str) -> None:
        path = tmp_path / name
        path.write_text("{}")
        with pytest.raises(DatasetError, match=f"this is {what}.*, not a dataset"):
            load_dataset(str(path))


class TestWorkshopFiles:
    """Files of our own making shaped like the workshop repository's (tests/helpers/workshop.py says how)."""

    def test_simulation_rows_keep_list_and_text_metric_cells(self, tmp_path: Path) -> None:
        from tests.helpers.workshop import simulation_csv

        path = simulation_csv(tmp_path / "run_20260112_014831.csv")
        good, bad, warnings = records(path)
        assert not bad and [r.question.id for r in good] == ["22e1e449", "68e57b06", "6446f647", "c8fa2069", "68b39c35"]
        # One warning for the column, however many rows hold lists; a list counts its items.
        assert warnings == [
            f"{path}: column 'metric.unique_tools' holds values that are not numbers: a list counts as its number of items, "
            "other values are left out"
        ]
        assert [present(r.trace).recorded_metrics["unique_tools"] for r in good] == [1.0, 4.0, 3.0, 2.0, 0.0]
        first = good[0].trace
        assert first is not None and "score.safety_v1" not in first.recorded_metrics  # an empty cell is no score
        assert first.recorded_metrics["score.hallucinations_v1"] == 0.9375
        # The session's events, not the producer's spans, give the steps and the model calls.
        assert [(s.kind, s.name) for s in first.trajectory or []] == [
            ("agent", "customer_service_agent"),
            ("tool", "sync_ask_for_approval"),
        ]
        assert [(c.tool_name, c.turn) for c in first.tool_interactions or []] == [("sync_ask_for_approval", 1)]
        assert first.llm_calls is not None and len(first.llm_calls) == 5
        assert sum(c.input_tokens + c.output_tokens + c.thoughts_tokens for c in first.llm_calls) == first.recorded_metrics["total_tokens"]
        # Spans whose trace ids no OpenTelemetry SDK writes (each its own) are made up: no timing.
        assert first.latency_s is None and first.missing == {"timing": MISMATCHED_NOTE}
        assert [t.response for t in first.turns][-1] == "I can generate a QR code for 15% off your next purchase."

    def test_two_runs_of_each_scenario_are_runs_and_read_as_written(self, tmp_path: Path) -> None:
        """run_20260111_115619.csv: rows from two eval histories, two runs of each of two scenarios,
        no user_inputs column, and the simulated user said other things in each run. Its runs were
        refused as "one id, different questions" (the user's turns read from each session made
        each row a question of its own): what a row asks is what it states, and its session's user
        turns are what that run's user said. Every figure the converter wrote is read back."""
        from tests.helpers import workshop as w

        chats = {c.qid: c for c in w.conversations()}
        runs = [(chats[qid], run) for qid, run in [("68b39c35", 0), ("c8fa2069", 0), ("c8fa2069", 1), ("68b39c35", 1)]]
        rows = [w.early_row(w.simulated(chat, run), run) for chat, run in runs]
        path = w.write_rows(tmp_path / "run_20260111_115619.csv", rows, w.EARLY_COLUMNS)
        results = evaluate([str(path)])
        assert not results.problems, results.problems
        (dataset,) = results.datasets
        scored = {(q.id, q.run): q for q in dataset.questions}
        assert sorted(scored) == [("68b39c35", 0), ("68b39c35", 1), ("c8fa2069", 0), ("c8fa2069", 1)]
        good, bad, _ = records(path)
        assert not bad
        for (chat, run), row, record in zip(runs, rows, good, strict=True):
            question = scored[(chat.qid, run)]
            trace = present(record.trace)
            assert question.status == "ok"
            assert len(trace.turns) == len(record.question.user_inputs) == row["metric.turn_count"]
            assert record.question.user_inputs == [t.user for t in w.simulated(chat, run).turns]
            assert question.scores["total_tokens"].value == row["metric.total_tokens"]
            assert question.scores["tool_calls"].value == row["metric.tool_calls"]
            assert question.scores["latency"].value == row["metric.duration_sec"]
            assert question.scores["score.hallucinations_v1"].value == row["score.hallucinations_v1"]
            assert question.scores["score.safety_v1"].value == row["score.safety_v1"]

    def test_the_same_rows_as_jsonl_with_native_lists(self, tmp_path: Path) -> None:
        from tests.helpers.workshop import conversations, row

        path = write_jsonl(tmp_path / "runs.jsonl", [row(c) for c in conversations()])
        good, bad, warnings = records(path)
        assert not bad and len(good) == 5 and len(warnings) == 1
        assert [present(r.trace).recorded_metrics["unique_tools"] for r in good] == [1.0, 4.0, 3.0, 2.0, 0.0]

    def test_scenario_eval_set_with_its_configs(self, tmp_path: Path) -> None:
        from tests.helpers.workshop import scenario_case

        (tmp_path / "eval_config.json").write_text(json.dumps({"criteria": {"hallucinations_v1": {"threshold": 0.5}}}))
        (tmp_path / "test_config.json").write_text(
            json.dumps(
                {
                    "criteria": {
                        "safety_v1": {"threshold": 0.8},
                        "tool_trajectory_avg_score": {"threshold": 0.9, "match_type": "IN_ORDER"},
                    },
                    "user_simulator_config": {"model": "gemini-2.5-flash", "max_allowed_invocations": 20},
                }
            )
        )
        path = tmp_path / "eval_set_with_scenarios.evalset.json"
        cases = [
            scenario_case("2c79e2d0", "I'm thinking about planting some Petunias.", "Ask for soil; add it to the cart."),
            scenario_case("b961b0eb", "I found a coupon for 15% off.", "Insist on matching the coupon.", user_persona="NOVICE"),
        ]
        path.write_text(json.dumps({"eval_set_id": "eval_set_with_scenarios", "name": "eval_set_with_scenarios", "eval_cases": cases}))
        dataset = load_dataset(str(path))
        good = [r for r in dataset.records if isinstance(r, Record)]
        assert [r.question.user_inputs for r in good] == [["I'm thinking about planting some Petunias."], ["I found a coupon for 15% off."]]
        assert good[0].question.conversation_scenario == {
            "starting_prompt": "I'm thinking about planting some Petunias.",
            "conversation_plan": "Ask for soil; add it to the cart.",
        }
        assert present(good[1].question.conversation_scenario)["user_persona"] == "NOVICE"
        assert good[0].question.user_simulator == {"model": "gemini-2.5-flash", "max_allowed_invocations": 20}
        assert good[0].question.agents_evaluated == ["customer_service"]
        assert dataset.criteria == {"safety_v1": 0.8, "tool_trajectory_avg_score": 0.9}
        assert dataset.criterion_options == {
            "safety_v1": {"threshold": 0.8},
            "tool_trajectory_avg_score": {"threshold": 0.9, "match_type": "IN_ORDER"},
        }
        assert dataset.warnings == []
        with pytest.raises(DatasetError, match=r"ADK's eval config .*, not a dataset"):
            load_dataset(str(tmp_path / "eval_config.json"))

    def test_bad_criteria_name_the_config_and_key(self, tmp_path: Path) -> None:
        (tmp_path / "test_config.json").write_text(
            json.dumps({"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match_type": "LOOSE"}}})
        )
        path = tmp_path / "a.test.json"
        path.write_text(json.dumps([{"query": "hi"}]))
        with pytest.raises(DatasetError) as raised:
            load_dataset(str(path))
        assert raised.value.message() == (
            f"{tmp_path / 'test_config.json'}, at $.criteria.tool_trajectory_avg_score.match_type: "
            "match_type 'LOOSE' is not one of EXACT, IN_ORDER, ANY_ORDER"
        )


def test_a_baseline_named_as_a_dataset_is_said_to_be_a_results_file(tmp_path: Path) -> None:
    """`validate evaluation` walks into evaluation/baselines/: what it finds there is named for what it is."""
    baseline = tmp_path / "cs.json"
    baseline.write_text(json.dumps({"datasets": [], "schema_version": 2, "tool_version": "0.1"}))
    with pytest.raises(DatasetError, match="this is a results file of agent-eval-action"):
        load_dataset(str(baseline))


def test_a_misspelt_reference_is_named_since_no_metric_would_check_it(tmp_path: Path) -> None:
    dataset = tmp_path / "cs_golden.json"
    questions = [
        {
            "id": f"q{i}",
            "user_inputs": ["hi"],
            "agents_evaluated": ["cs"],
            "reference_data": {"reference_final_state": {"a": 1}, "rubric": "x"},
        }
        for i in range(2)
    ]
    dataset.write_text(json.dumps({"golden_questions": questions}))
    loaded = load_dataset(str(dataset))
    list(loaded.records)
    (warning,) = loaded.warnings
    assert "reference_data keys no metric reads (kept for judges' prompts): reference_final_state (2 questions)" in warning
    assert "rubric" not in warning  # a custom key of the judges' is no misspelling
