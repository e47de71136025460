"""Running questions through the user's ADK agent in this process (``--in-process``, for
debugging): the worker's own code (``agent_worker``), called directly, so the traces are the
same as from a worker process."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_eval_action.agent_worker import protocol
from agent_eval_action.agent_worker.model.origin import origin_of, tag
from agent_eval_action.agent_worker.runner import AgentSessions, partial_run
from agent_eval_action.models.questions import Question
from agent_eval_action.models.traces import Trace
from agent_eval_action.run.agent.loader import LoadedAgent
from agent_eval_action.run.pacing import Pacer
from agent_eval_action.run.run_pool import keep_partial
from agent_eval_action.run.workers.pool import question_request, trace_from_worker


class AdkRunner:
    """Implements ``run_pool.QuestionRunner`` for an agent loaded in this process."""

    def __init__(
        self,
        agent: LoadedAgent,
        *,
        capture_spans: bool = True,
        model_cache: str | None = None,
        user_simulator: dict[str, Any] | None = None,
        pacer: Pacer | None = None,
    ):
        self.sessions = AgentSessions(agent, capture_spans=capture_spans, model_cache=model_cache, pacing=pacer or Pacer())
        self.model_cache = model_cache
        self.app_name = agent.app_name
        # [user-simulator] settings, laid over those the dataset gives.
        self.user_simulator = dict(user_simulator or {})

    async def run_question(self, question: Question, timeout_s: float) -> Trace:
        try:
            result = await asyncio.wait_for(self.sessions.run(question_request(question, self.user_simulator)), timeout_s)
        except Exception as error:
            if origin_of(error) is None:
                tag(error, protocol.AGENT)  # not raised in a model call (pacing.py marks those): the agent's
            partial = partial_run(error)
            if partial is not None:
                keep_partial(error, self._trace(question, partial))
            raise
        return self._trace(question, result)

    def _trace(self, question: Question, result: dict[str, Any]) -> Trace:
        return trace_from_worker(
            question, result, app_name=self.app_name, models=self.sessions.models, model_cache=self.model_cache is not None
        )
