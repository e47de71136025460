"""Running questions through the user's ADK agent in this process (``--in-process``, for
debugging): the worker's own code (``agent_worker``), called directly, so the traces are the
same as from a worker process."""

from __future__ import annotations

from agent_eval_action.adk_events import trace_from_run
from agent_eval_action.agent_loader import LoadedAgent
from agent_eval_action.agent_worker.runner import AgentSessions
from agent_eval_action.models import Question, Trace
from agent_eval_action.spans import RawSpan


class AdkRunner:
    """Implements ``run_pool.QuestionRunner`` for an agent loaded in this process."""

    def __init__(self, agent: LoadedAgent, *, capture_spans: bool = True, model_cache: str | None = None):
        self.sessions = AgentSessions(agent, capture_spans=capture_spans, model_cache=model_cache)
        self.model_cache = model_cache
        self.app_name = agent.app_name

    async def run_question(self, question: Question) -> Trace:
        result = await self.sessions.run({"id": question.id, "user_inputs": question.user_inputs, "initial_state": question.initial_state})
        trace = trace_from_run(
            question,
            result["events"],
            final_state=result["final_state"],
            turn_times=[(a, b) for a, b in result["turn_times"]],
            app_name=self.app_name,
            models=self.sessions.models,
            spans=[RawSpan(**span) for span in result["spans"]],
        )
        trace.replayed_model_calls = result["replayed_model_calls"] if self.model_cache else None
        return trace
