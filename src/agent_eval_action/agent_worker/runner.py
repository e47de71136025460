"""One question on a real ADK ``Runner``: a new session, the user inputs sent as turns, and what
the run left behind (events as JSON dicts, the final state, turn times, spans) as plain data.

The same code runs in the worker process and, with ``--in-process``, in ours.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any

from . import protocol
from .app_details import AppDetailsRecorder
from .loader import LoadedAgent
from .model.calls import Tally
from .model.pacing import Permits
from .span_capture import SpanCapture

USER_ID = "agent-eval"
# The attribute a question's error carries its partial run in: what the run did before the
# agent raised (events, state, turn times, spans), so its tool calls are not lost with it.
PARTIAL = "agent_eval_partial_run"


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


class AgentSessions:
    """A Runner with an in-memory session service for one loaded agent; many questions may run
    on it at once in one event loop."""

    def __init__(
        self,
        agent: LoadedAgent,
        *,
        capture_spans: bool = True,
        spans: SpanCapture | None = None,
        model_cache: str | None = None,
        pacing: Permits | None = None,
    ):
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.genai import types

        logging.getLogger("google_adk").setLevel(logging.ERROR)
        self._types = types
        from .model.calls import install, route_for
        from .model.pacing import LocalPermits

        # Every model call a question makes goes through the route: cached, paced, counted.
        self.route = route_for(pacing if pacing is not None else LocalPermits(), model_cache)
        install()
        self.app_name = agent.app_name
        self.sessions = InMemorySessionService()
        if agent.is_app:
            self.runner = Runner(app=agent.target, session_service=self.sessions)
        else:
            self.runner = Runner(app_name=agent.app_name, agent=agent.target, session_service=self.sessions)
        self.models = models_by_agent(agent.root_agent)
        self.app_details = AppDetailsRecorder()
        self.app_details.register(self.runner)
        self.spans = spans if spans is not None else (SpanCapture.install() if capture_spans else None)

    async def run(self, question: dict[str, Any]) -> dict[str, Any]:
        """``question``: {id, user_inputs, initial_state} (or a ``conversation_scenario`` with its
        ``user_simulator`` settings). Raises what the agent raised."""
        from .model.calls import routing

        with routing(self.route) as tally:
            if question.get(protocol.CONVERSATION_SCENARIO) is not None:
                return await self._scenario(question, tally)
            return await self._conversation(question, tally)

    async def _conversation(self, question: dict[str, Any], tally: Tally) -> dict[str, Any]:
        session = await self.sessions.create_session(
            app_name=self.app_name, user_id=USER_ID, state=dict(question.get(protocol.INITIAL_STATE) or {})
        )
        events: list[dict[str, Any]] = []
        times: list[list[float]] = []
        spans: list[dict[str, Any]] = []
        details: list[dict[str, Any]] = []
        try:
            for text in question[protocol.USER_INPUTS]:
                message = self._types.Content(role="user", parts=[self._types.Part(text=text)])
                started, clock = time.time(), time.perf_counter()
                turn_spans: list[dict[str, Any]] = []
                self.app_details.turn(session.id)
                try:
                    if self.spans is not None:
                        with self.spans.turn(str(question[protocol.ID])) as turn_spans:
                            await self._turn(session.id, message, events)
                    else:
                        await self._turn(session.id, message, events)
                finally:
                    spans.extend(turn_spans)
                times.append([started, time.perf_counter() - clock])
            final = await self.sessions.get_session(app_name=self.app_name, user_id=USER_ID, session_id=session.id)
        except Exception as error:
            # The agent raised mid-question: what it did until then (the tool calls that
            # succeeded, the state they wrote) goes with the error, not down with it.
            try:
                partial = await self.sessions.get_session(app_name=self.app_name, user_id=USER_ID, session_id=session.id)
            except Exception:  # noqa: BLE001 - the state is lost; the events and the agent's error still go
                partial = None
            _attach(error, self._result(events, partial, times, spans, tally, self.app_details.seen(session.id)))
            raise
        finally:
            # Taken whatever ended the question (a timeout cancels it): none is kept past it.
            details = self.app_details.take(session.id)
            await self.sessions.delete_session(app_name=self.app_name, user_id=USER_ID, session_id=session.id)
        return self._result(events, final, times, spans, tally, details)

    @staticmethod
    def _result(
        events: list[dict[str, Any]],
        session: Any,
        times: list[list[float]],
        spans: list[dict[str, Any]],
        tally: Tally,
        app_details: list[dict[str, Any]],
    ) -> dict[str, Any]:
        state = dict(session.state) if session is not None else None
        return protocol.run_result(events, state, times, spans, replayed=tally.replayed, live=tally.live, app_details=app_details)

    async def _turn(self, session_id: str, message: Any, events: list[dict[str, Any]]) -> None:
        async for event in self.runner.run_async(user_id=USER_ID, session_id=session_id, new_message=message):
            events.append(event.model_dump(mode="json", exclude_none=True))

    async def _scenario(self, question: dict[str, Any], tally: Tally) -> dict[str, Any]:
        """A conversation scenario, played out by ADK's own user simulator (``scenarios.py``)."""
        import os

        from .scenarios import ScenarioSkipped, run_scenario

        play = run_scenario(
            self.runner,
            self.sessions,
            app_name=self.app_name,
            user_id=USER_ID,
            scenario=question[protocol.CONVERSATION_SCENARIO],
            simulator=question.get(protocol.USER_SIMULATOR) or {},
            state=question.get(protocol.INITIAL_STATE) or {},
            environ=os.environ,
            recorder=self.app_details,
        )
        spans: list[dict[str, Any]] = []
        try:
            if self.spans is not None:
                with self.spans.turn(str(question[protocol.ID])) as spans:
                    done = await play
            else:
                done = await play
        except ScenarioSkipped as skipped:
            return protocol.skipped(skipped.reason)
        events = [event.model_dump(mode="json", exclude_none=True) for event in done.events]
        turn_times = [list(t) for t in done.turn_times]
        return protocol.run_result(
            events, done.final_state, turn_times, spans, replayed=tally.replayed, live=tally.live, app_details=done.app_details
        )


def _attach(error: BaseException, partial: dict[str, Any]) -> None:
    """Gives ``error`` the run it interrupted; an exception that takes no attributes keeps none."""
    with contextlib.suppress(AttributeError, TypeError):
        setattr(error, PARTIAL, partial)


def partial_run(error: BaseException) -> dict[str, Any] | None:
    """The run ``error`` interrupted, as :meth:`AgentSessions.run` would have returned it (None: none kept)."""
    found = getattr(error, PARTIAL, None)
    return found if isinstance(found, dict) else None
