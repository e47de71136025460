"""A baseline's runs packed (a question's runs on one line, what they share once) read back
exactly as they were written, whatever differs between them."""

from __future__ import annotations

import pytest

from agent_eval_action.models.results import DatasetResult, QuestionResult, Results
from agent_eval_action.models.scores import Score
from agent_eval_action.models.traces import Transcript, TranscriptTurn
from agent_eval_action.repo.results_io import dumps, parse_results
from agent_eval_action.system.errors import DatasetError


def run(r: int, **fields: object) -> QuestionResult:
    scores = {
        "tool_usage_accuracy": Score(value=1.0, explanation="2 of 2 calls made"),
        "latency": Score(value=0.4 + r / 10, explanation=f"{0.4 + r / 10:.3f} s", details={"source": "measured"}),
    }
    transcript = Transcript(turns=[TranscriptTurn(user="hi", response="hello")], final_state={"n": 1})
    return QuestionResult(id="q1", run=r, scores=scores, transcript=transcript, content_hash="h", inputs={"app/agent.py": "abc"}, **fields)  # type: ignore[arg-type]


def test_runs_that_differ_in_every_way_read_back_as_written() -> None:
    odd = run(2, status="error", error="boom", error_origin="agent", failed_thresholds=["tool_usage_accuracy"])
    odd.scores.pop("tool_usage_accuracy")  # a metric one run lacks
    odd.scores["custom"] = Score(value=1.0, details={"flag": True})
    assert odd.transcript is not None
    odd.transcript.final_state = {"n": 1.0}  # 1 and 1.0 are one value in Python, two in the file
    other = run(1)
    other.scores["custom"] = Score(value=1.0, details={"flag": 1})
    questions = [run(0), other, odd, QuestionResult(id="q2", scores={"latency": Score(value=1.0)})]
    results = Results(datasets=[DatasetResult(path="d.csv", name="d", format="csv", questions=questions)])
    text = dumps(results, packed=True)
    lines = [line for line in text.splitlines() if line.strip().startswith('{"id":')]
    assert len(lines) == 2 and '"runs":' in lines[0] and '"runs":' not in lines[1]  # a lone run is written as it is
    assert lines[0].count('"tool_usage_accuracy":{') == 2  # not shared: in two runs' own, lacking in the third
    assert lines[0].count('"hello"') == 1 and lines[0].count('"app/agent.py"') == 1  # what all share: once
    back = parse_results(text, "b.json", what="baseline")
    assert back.model_dump() == results.model_dump()
    assert [q.run for q in back.datasets[0].questions] == [0, 1, 2, 0]
    back_odd = back.datasets[0].questions[2]
    assert back_odd.transcript is not None and repr(back_odd.transcript.final_state) == "{'n': 1.0}"
    assert back.datasets[0].questions[1].scores["custom"].details == {"flag": 1}
    assert back_odd.scores["custom"].details == {"flag": True}


def test_a_broken_packed_entry_names_the_file_and_the_fix() -> None:
    text = dumps(Results(datasets=[DatasetResult(path="d.csv", name="d", format="csv", questions=[run(0), run(1)])]), packed=True)
    broken = text.replace('"runs":[', '"runs":[1,', 1)
    with pytest.raises(DatasetError) as raised:
        parse_results(broken, "evaluation/baselines/d.csv.json", what="baseline")
    assert "evaluation/baselines/d.csv.json" in str(raised.value) and "baseline update" in str(raised.value)


def test_a_shared_score_is_made_once_for_every_run_and_a_bad_one_is_refused_where_it_is() -> None:
    results = Results(datasets=[DatasetResult(path="d.csv", name="d", format="csv", questions=[run(0), run(1), run(2)])])
    text = dumps(results, packed=True)
    back = parse_results(text, "b.json", what="baseline")
    assert back.model_dump() == results.model_dump()
    shared = [q.scores["tool_usage_accuracy"] for q in back.datasets[0].questions]
    assert all(score is shared[0] for score in shared)  # one object: nothing changes a score once made
    assert len({id(q.scores["latency"]) for q in back.datasets[0].questions}) == 3  # each run's own
    # Not a number: refused by the results' validation, at the score's place, as before.
    broken = text.replace('"value":1.0,"explanation":"2 of 2 calls made"', '"value":"high","explanation":"2 of 2 calls made"', 1)
    assert broken != text
    with pytest.raises(DatasetError) as raised:
        parse_results(broken, "evaluation/baselines/d.csv.json", what="baseline")
    assert "$.datasets.0.questions.0.scores.tool_usage_accuracy.value" in str(raised.value.pointer), raised.value
