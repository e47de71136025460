"""Golden JSON as convert writes it (``write_golden``, from an ADK eval set read here), read back
into the same questions; a bad question refused with its file place, the others kept."""

from __future__ import annotations

import json
from pathlib import Path

from agent_eval_action.datasets import Record
from agent_eval_action.datasets.adk import load_test_json
from agent_eval_action.datasets.convert import write_golden
from agent_eval_action.datasets.golden import load_golden
from agent_eval_action.system.errors import DatasetError


def test_golden_json_as_convert_writes_it_reads_back_the_same_questions(tmp_path: Path) -> None:
    turns = [
        {"query": "Roll a die", "expected_tool_use": [{"tool_name": "roll_die", "tool_input": {"sides": 6}}], "reference": "4"},
        {"query": "Again", "expected_tool_use": [], "reference": "2"},
    ]
    (source,) = [r for r in load_test_json(str(tmp_path / "dice.test.json"), turns).records if isinstance(r, Record)]
    path = tmp_path / "dice.golden.json"
    assert write_golden([source.question], path, agent_name="dice") == 1

    text = path.read_text()
    dataset = load_golden(str(path), json.loads(text), text)
    (record,) = list(dataset.records)

    assert dataset.format == "golden" and dataset.warnings == []
    assert isinstance(record, Record)
    assert record.question.user_inputs == ["Roll a die", "Again"]
    assert record.question.agents_evaluated == ["dice"]
    assert record.question.reference_data.reference_response == "2"
    calls = record.question.reference_data.reference_tool_interactions or []
    assert [(call.tool_name, call.input_arguments) for call in calls] == [("roll_die", {"sides": 6})]


def test_a_bad_question_is_refused_with_its_place_and_line(tmp_path: Path) -> None:
    questions = [
        {"id": "ok", "user_inputs": ["hi"], "agents_evaluated": ["dice"], "reference_data": {}},
        {"id": "bad", "user_inputs": ["hello"], "reference_data": {}},
    ]
    text = json.dumps({"golden_questions": questions}, indent=2)
    good, bad = list(load_golden(str(tmp_path / "g.json"), json.loads(text), text).records)

    assert isinstance(good, Record) and good.question.id == "ok"
    assert isinstance(bad, DatasetError) and bad.question_id == "bad"
    assert (bad.pointer, bad.reason) == ("$.golden_questions[1].agents_evaluated", "required field is missing")
