"""The app_details recorder (agent_worker/app_details.py): per question's session, per turn, each
agent's first request; a turn without a model request keeps its place; other sessions (an
AgentTool's) are not recorded; nothing is kept once taken."""

from __future__ import annotations

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from agent_eval_action.agent_worker.app_details import AppDetailsRecorder


def _request(instruction: str, tool: str) -> LlmRequest:
    declaration = types.FunctionDeclaration(name=tool, description=f"the {tool} tool")
    return LlmRequest(
        config=types.GenerateContentConfig(system_instruction=instruction, tools=[types.Tool(function_declarations=[declaration])])
    )


def test_each_turn_keeps_each_agents_first_request_in_its_place() -> None:
    recorder = AppDetailsRecorder()
    recorder.turn("s")
    recorder.saw("s", "shop", _request("Shop assistant.", "lookup"))
    recorder.saw("s", "shop", _request("Changed later.", "lookup"))
    recorder.saw("inner", "researcher", _request("Find the facts.", "search"))  # an AgentTool's session
    recorder.turn("s")  # a turn a callback answered: no model request
    recorder.turn("s")
    recorder.saw("s", "refunds", _request("Refund orders.", "refund"))
    assert len(recorder.seen("s")) == 3
    first, empty, third = recorder.take("s")
    assert first == {
        "agent_details": {
            "shop": {
                "name": "shop",
                "instructions": "Shop assistant.",
                "tool_declarations": [{"function_declarations": [{"name": "lookup", "description": "the lookup tool"}]}],
            }
        }
    }
    assert empty == {"agent_details": {}} and list(third["agent_details"]) == ["refunds"]
    assert recorder.take("s") == [] and recorder.sessions == {}
