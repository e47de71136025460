"""Running questions against a deployed ADK API server (``adk api_server``, Cloud Run, Agent Engine
behind the same routes): create a session, ``POST /run`` per turn, read the session back."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

from agent_eval_action.config import Config
from agent_eval_action.models.questions import Question
from agent_eval_action.models.traces import Trace
from agent_eval_action.system.errors import ConfigError
from agent_eval_action.traces.adk_events import trace_from_run

USER_ID = "agent-eval"


class AgentServerError(Exception):
    """The server answered with an error status; ``status_code`` lets retries tell 503 from 400."""

    def __init__(self, status_code: int, what: str, body: str):
        self.status_code = status_code
        super().__init__(f"{what} answered HTTP {status_code}: {body[:300]}")


class HttpAgentRunner:
    """Implements ``run_pool.QuestionRunner`` over HTTP with ``requests`` (one thread per question in flight)."""

    def __init__(
        self, base_url: str, *, app_name: str | None = None, token: str | None = None, concurrency: int = 8, timeout_s: float = 300.0
    ):
        import requests
        from requests.adapters import HTTPAdapter

        if not base_url.startswith(("http://", "https://")):
            raise ConfigError("--agent-url", f"{base_url!r} is not an http(s) URL")
        self.base = base_url.rstrip("/")
        self.app_name = app_name
        self.timeout_s = timeout_s
        self.http = requests.Session()
        adapter = HTTPAdapter(pool_connections=1, pool_maxsize=concurrency)
        self.http.mount("http://", adapter)
        self.http.mount("https://", adapter)
        if token:
            # Kept only in the session's headers: never printed, never in an error message.
            self.http.headers["Authorization"] = f"Bearer {token}"
        self.pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="agent-eval-http")

    @classmethod
    def from_config(cls, config: Config) -> HttpAgentRunner:
        assert config.agent_url is not None
        return cls(
            config.agent_url,
            app_name=config.app_name,
            token=os.environ.get(config.agent_auth_env) or None,
            concurrency=config.most_in_flight(),
            timeout_s=config.timeout,
        )

    async def run_question(self, question: Question, timeout_s: float) -> Trace:
        if question.conversation_scenario is not None:
            return Trace(
                skipped="conversation scenarios need --agent: ADK's user simulator plays the user beside the agent, not over --agent-url"
            )
        return await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(self.pool, self._run, question), timeout_s)

    def _app(self, question: Question) -> str:
        app = self.app_name or next(iter(question.agents_evaluated), None)
        if not app:
            raise ConfigError("--app-name", f"question {question.id!r} names no agent in agents_evaluated; pass --app-name")
        return app

    def _call(self, method: str, path: str, what: str, json: Any = None) -> Any:
        response = self.http.request(method, self.base + path, json=json, timeout=self.timeout_s)
        if response.status_code >= 400:
            raise AgentServerError(response.status_code, what, response.text)
        return response.json() if response.content else None

    def _run(self, question: Question) -> Trace:
        app = self._app(question)
        sessions = f"/apps/{quote(app, safe='')}/users/{USER_ID}/sessions"
        session = self._call("POST", sessions, "creating a session", json={"state": question.initial_state})
        session_id = session["id"]
        events: list[dict[str, Any]] = []
        times: list[tuple[float, float]] = []
        try:
            for text in question.user_inputs:
                body = {
                    "appName": app,
                    "userId": USER_ID,
                    "sessionId": session_id,
                    "newMessage": {"role": "user", "parts": [{"text": text}]},
                }
                started, clock = time.time(), time.perf_counter()
                answer = self._call("POST", "/run", "POST /run", json=body)
                times.append((started, time.perf_counter() - clock))
                events.extend(event for event in answer or [] if isinstance(event, dict))
            final = self._call("GET", f"{sessions}/{quote(session_id, safe='')}", "reading the session")
        finally:
            with contextlib.suppress(Exception):  # cleanup only; the run's result stands
                self._call("DELETE", f"{sessions}/{quote(session_id, safe='')}", "deleting the session")
        state = final.get("state") if isinstance(final, dict) else None
        return trace_from_run(
            question, events, final_state=state if isinstance(state, dict) else None, turn_times=times, app_name=app, models={}
        )
