"""Running questions through the user's ADK agent in this process: a real ``Runner`` with an
``InMemorySessionService``, one session per question, the user inputs sent as turns."""

from __future__ import annotations

import logging
import time
from typing import Any

from agent_eval_action.adk_events import trace_from_run
from agent_eval_action.agent_loader import LoadedAgent
from agent_eval_action.models import Question, Trace
from agent_eval_action.span_capture import SpanCapture
from agent_eval_action.spans import RawSpan

USER_ID = "agent-eval"


def models_by_agent(agent: Any) -> dict[str, str]:
    """Agent name -> model name, through the whole agent tree."""
    out: dict[str, str] = {}
    stack = [agent]
    while stack:
        node = stack.pop()
        model = getattr(node, "model", None)
        name = model if isinstance(model, str) else getattr(model, "model", None)
        if isinstance(name, str) and name:
            out[node.name] = name
        stack.extend(getattr(node, "sub_agents", None) or [])
    return out


class AdkRunner:
    """Implements ``run_pool.QuestionRunner`` for an agent loaded in this process."""

    def __init__(self, agent: LoadedAgent, *, capture_spans: bool = True, user_simulator: dict[str, Any] | None = None):
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.genai import types

        logging.getLogger("google_adk").setLevel(logging.ERROR)
        self._types = types
        self.app_name = agent.app_name
        self.sessions = InMemorySessionService()
        if agent.is_app:
            self.runner = Runner(app=agent.target, session_service=self.sessions)
        else:
            self.runner = Runner(app_name=agent.app_name, agent=agent.target, session_service=self.sessions)
        self.models = models_by_agent(agent.root_agent)
        self.spans = SpanCapture.install() if capture_spans else None
        # [user-simulator] settings, laid over those the dataset gives.
        self.user_simulator = dict(user_simulator or {})

    async def run_question(self, question: Question) -> Trace:
        if question.conversation_scenario is not None:
            return await self._scenario(question)
        session = await self.sessions.create_session(app_name=self.app_name, user_id=USER_ID, state=dict(question.initial_state))
        events: list[dict[str, Any]] = []
        times: list[tuple[float, float]] = []
        spans: list[RawSpan] = []
        try:
            for text in question.user_inputs:
                message = self._types.Content(role="user", parts=[self._types.Part(text=text)])
                started, clock = time.time(), time.perf_counter()
                if self.spans is not None:
                    with self.spans.turn(question.id) as turn_spans:
                        await self._turn(session.id, message, events)
                    spans.extend(turn_spans)
                else:
                    await self._turn(session.id, message, events)
                times.append((started, time.perf_counter() - clock))
            final = await self.sessions.get_session(app_name=self.app_name, user_id=USER_ID, session_id=session.id)
        finally:
            await self.sessions.delete_session(app_name=self.app_name, user_id=USER_ID, session_id=session.id)
        return trace_from_run(
            question,
            events,
            final_state=dict(final.state) if final is not None else None,
            turn_times=times,
            app_name=self.app_name,
            models=self.models,
            spans=spans,
        )

    async def _turn(self, session_id: str, message: Any, events: list[dict[str, Any]]) -> None:
        async for event in self.runner.run_async(user_id=USER_ID, session_id=session_id, new_message=message):
            events.append(event.model_dump(mode="json", exclude_none=True))

    async def _scenario(self, question: Question) -> Trace:
        from agent_eval_action.agent_worker.scenarios import ScenarioSkipped, run_scenario

        play = run_scenario(
            self.runner,
            self.sessions,
            app_name=self.app_name,
            user_id=USER_ID,
            scenario=question.conversation_scenario or {},
            simulator={**question.user_simulator, **self.user_simulator},
            state=question.initial_state,
        )
        spans: list[RawSpan] = []
        try:
            if self.spans is not None:
                with self.spans.turn(question.id) as spans:
                    done = await play
            else:
                done = await play
        except ScenarioSkipped as skipped:
            return Trace(app_name=self.app_name, skipped=skipped.reason)
        events = [event.model_dump(mode="json", exclude_none=True) for event in done.events]
        return trace_from_run(
            question,
            events,
            final_state=done.final_state,
            turn_times=done.turn_times,
            app_name=self.app_name,
            models=self.models,
            spans=spans,
        )
