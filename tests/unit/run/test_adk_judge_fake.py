"""The loopback judge of ADK's criteria answers from a prompt's facts only: a tool call's random
id is not one (its digits once made a contradicted price read as supported, one run in a few)."""

from __future__ import annotations

import json

from tests.fakes.adk_judge import AdkJudge


def _validator_prompt(context: str, sentence: str) -> str:
    return f"**Context Begin**\n{context}\n**Context End**\n**Sentences Begin**\n<sentence>{sentence}</sentence>\n**Sentences End**"


def test_a_tool_calls_id_is_not_a_fact_the_sentence_can_rest_on() -> None:
    call = {"id": "adk-928ba379-5eeb-4876-aa37-2a5399c90327", "name": "price", "args": {"item": "rake"}}
    output = {"id": call["id"], "name": "price", "response": {"item": "rake", "price": 25}}
    context = f"tool_calls:\n{json.dumps([call], indent=2)}\ntool_outputs:\n{json.dumps([output], indent=2)}"
    judge = AdkJudge()
    # 5399 holds "99" nowhere as a number, but 928 and 4876 are numbers of the id: never facts.
    assert "label: contradictory" in judge(_validator_prompt(context, "The rake costs $928."))
    assert "label: supported" in judge(_validator_prompt(context, "The rake costs $25."))
    assert "label: not_applicable" in judge(_validator_prompt(context, "Anything else?"))
