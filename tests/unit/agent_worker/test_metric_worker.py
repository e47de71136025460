"""What a custom metric returns, as the score the metric process sends; the question and trace
as the function reads them."""

from __future__ import annotations

import math
from typing import Any

from agent_eval_action.agent_worker import protocol
from agent_eval_action.agent_worker.metric_worker import answer, view
from agent_eval_action.models.scores import Score


def sent(value: object) -> dict[str, Any]:
    score: dict[str, Any] = answer(7, "m:f", value)[protocol.RESULT]
    return score


def test_numbers_none_and_scores_become_scores() -> None:
    assert sent(3) == {protocol.VALUE: 3.0, protocol.EXPLANATION: "m:f", protocol.DETAILS: {"source": "custom"}}
    assert sent(None)[protocol.VALUE] is None and sent(None)[protocol.EXPLANATION] == "m:f returned None"
    ours = sent(Score(value=0.5, explanation="half", details={"k": 1}))
    assert ours == {protocol.VALUE: 0.5, protocol.EXPLANATION: "half", protocol.DETAILS: {"k": 1}}
    assert sent({"value": None, "explanation": "no reference"})[protocol.VALUE] is None


def test_anything_else_is_unscored_with_the_reason() -> None:
    for value in ("many", True, math.inf, {"value": math.nan, "explanation": "x"}):
        score = sent(value)
        assert score[protocol.VALUE] is None
        assert "not a finite number, None or a Score" in score[protocol.EXPLANATION], score


def test_fields_read_as_attributes_or_keys() -> None:
    trace = view({"final_response": "hi", "tool_interactions": [{"tool_name": "t"}]})
    assert trace.final_response == trace["final_response"] == "hi"
    assert trace.tool_interactions[0].tool_name == "t"
