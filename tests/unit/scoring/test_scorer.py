"""What crosses from a worker process back to the main one is rebuilt exactly as scored."""

from __future__ import annotations

import pickle

from agent_eval_action.core.models import QuestionResult, Score, Transcript, TranscriptTurn
from agent_eval_action.scoring.scorer import _pack, _score, _unpack


def _question() -> QuestionResult:
    return QuestionResult(
        id="q1",
        scores={
            "tool_usage_accuracy": Score(value=0.5, explanation="1 of 2 calls", details={"missing": [{"tool_name": "refund"}]}),
            "response_match_score": Score(value=None, explanation="no reference answer"),
            "latency_ms": Score(value=1234.5, explanation="", details={}),
        },
        transcript=Transcript(turns=[TranscriptTurn(user="hi", response="hello")], final_state={"cart": [1, 2]}),
    )


def test_a_question_packed_in_a_worker_is_rebuilt_equal_and_writes_the_same_bytes() -> None:
    question = _question()
    rebuilt = _unpack(pickle.loads(pickle.dumps(_pack(question))))
    assert isinstance(rebuilt, QuestionResult)
    assert rebuilt == question
    assert rebuilt.model_dump_json() == question.model_dump_json()
    assert all(type(score) is Score for score in rebuilt.scores.values())


def test_a_rebuilt_score_is_what_model_construct_makes() -> None:
    """The main process builds scores without pydantic's model_construct (its cost was most of
    rebuilding a row): the result must be the same model, field for field, so that it compares,
    copies, changes and serialises alike."""
    details = {"mismatches": ["discount: missing"]}
    fast, slow = _score(0.25, "why", details), Score.model_construct(value=0.25, explanation="why", details=details)
    for attribute in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"):
        assert getattr(fast, attribute) == getattr(slow, attribute), attribute
    assert fast == slow and fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_copy(update={"value": 1.0}).value == 1.0 and fast.value == 0.25
    fast.explanation = "changed"  # each score its own fields set: changing one leaves the others as they were
    assert _score(0.25, "why", {}).explanation == "why"
    assert fast.model_fields_set is not _score(0.1, "", {}).model_fields_set
