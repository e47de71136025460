"""Every model call of a question goes through the worker's one door (cache, pacing, count),
whoever holds the model: a real ADK ``Runner`` over a workflow agent whose first agent consults an
``AgentTool`` (run by ADK in a ``Runner`` of its own), a model class that calls its parent's
method, and a callback that asks a model of its own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path

from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

from agent_eval_action.agent_worker.model.calls import Route, Tally, routing

ASKED: list[str] = []  # every call that reached a model's own code: the model's name


def _text(text: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


class Root(BaseLlm):
    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        ASKED.append(self.model)
        answered = any(p.function_response for c in llm_request.contents for p in c.parts or [])
        if answered:
            yield _text("done")
        else:
            call = types.FunctionCall(name="helper", args={"request": "look it up"})
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


class Plain(BaseLlm):
    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        ASKED.append(self.model)
        yield _text("found")


class Derived(Plain):
    """Calls its parent's method on the same request: one call, not two."""

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        async for response in super().generate_content_async(llm_request, stream):
            yield response


SIDE = Plain(model="side-model")


async def ask_a_model_of_its_own(callback_context: CallbackContext) -> None:
    request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text="a summary")])])
    async for _ in SIDE.generate_content_async(request):
        pass


class Recorded:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def acquire(self, model: str, key: str) -> int:
        self.asked.append(model)
        return len(self.asked)

    def spent(self, permit: int, outcome: str, *, retry_delay: float | None = None, tokens: int = 0) -> None:
        pass


def app() -> Runner:
    helper = LlmAgent(name="helper", model=Derived(model="helper-model"), instruction="Look things up.")
    root = LlmAgent(
        name="root", model=Root(model="root-model"), instruction="Ask the helper.", tools=[AgentTool(agent=helper)],
        after_agent_callback=ask_a_model_of_its_own,
    )  # fmt: skip
    closer = LlmAgent(name="closer", model=Plain(model="closer-model"), instruction="Close.")
    flow = SequentialAgent(name="flow", sub_agents=[root, closer])  # a workflow agent at the top
    return Runner(app_name="app", agent=flow, session_service=InMemorySessionService())


async def question(runner: Runner, route: Route | None) -> tuple[str, Tally | None]:
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="what is it?")])

    async def turn() -> str:
        texts = []
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            texts += [p.text for p in (event.content.parts if event.content else []) or [] if p.text]
        return texts[-1]

    if route is None:
        return await turn(), None
    with routing(route) as tally:
        return await turn(), tally


def test_every_model_call_goes_through_the_door_however_the_runners_nest(tmp_path: Path) -> None:
    ASKED.clear()
    permits = Recorded()
    route = Route(permits, cache=str(tmp_path / "cache"))
    answer, tally = asyncio.run(question(app(), route))
    assert answer == "found"  # the closer's, after the root's "done"
    # The root twice, the AgentTool's agent once (its class's parent's method is part of that
    # call), the callback's own model once, the workflow's second agent once: each paced once,
    # each counted live.
    assert sorted(ASKED) == ["closer-model", "helper-model", "root-model", "root-model", "side-model"]
    assert sorted(permits.asked) == sorted(ASKED)
    assert tally == Tally(live=5, replayed=0)

    ASKED.clear()
    answer, tally = asyncio.run(question(app(), Route(Recorded(), cache=str(tmp_path / "cache"))))
    assert answer == "found" and ASKED == []  # new models, a new route, the same cache: nothing asked
    assert tally == Tally(live=0, replayed=5)


def test_outside_a_question_a_model_is_called_as_it_is(tmp_path: Path) -> None:
    ASKED.clear()
    with routing(Route(Recorded(), cache=str(tmp_path))):
        pass  # the door is installed
    for _ in range(2):
        answer, tally = asyncio.run(question(app(), None))
        assert answer == "found" and tally is None
    assert len(ASKED) == 10  # nothing cached, nothing replayed
