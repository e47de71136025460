"""What each agent's model requests said of the app, turn by turn, as ADK's eval records it for
its judged criteria (``app_details``): for each agent that asked the model in an invocation, the
system instruction and the tool declarations of its first request. ADK's eval takes them from a
plugin that sees every request before the model does (``_RequestIntercepterPlugin``); so does
this one, registered on the question's ``Runner``. It changes nothing of the request.

Requests are kept by session, so questions running at once in one worker never mix; an
AgentTool's agent runs in a session of its own, whose requests ADK's eval never sees either.
"""

from __future__ import annotations

from typing import Any

NAME = "agent_eval_app_details"


def _instruction(value: Any) -> str:
    if isinstance(value, str):
        return value
    parts = getattr(value, "parts", None) or []
    return "\n".join(str(p.text) for p in parts if getattr(p, "text", None))


def _tool(tool: Any) -> Any:
    """A tool declaration as ADK's prompts dump it (set, non-default, non-None fields)."""
    dump = getattr(tool, "model_dump", None)
    return dump(mode="json", exclude_unset=True, exclude_defaults=True, exclude_none=True) if dump else str(tool)


class AppDetailsRecorder:
    """Session id -> its turns in order, each ``{"agent_details": {agent: {name, instructions,
    tool_declarations}}}``: a turn is opened by :meth:`turn` before it runs, so a turn that asks
    no model (a callback's answer, an agent without a model) keeps its place, empty, as ADK's
    eval gives such an invocation an empty ``AppDetails``."""

    def __init__(self) -> None:
        self.sessions: dict[str, list[dict[str, Any]]] = {}

    def turn(self, session_id: str) -> None:
        self.sessions.setdefault(session_id, []).append({"agent_details": {}})

    def saw(self, session_id: str, agent: str, request: Any) -> None:
        turns = self.sessions.get(session_id)
        if not turns:
            return  # not a question's session: an AgentTool's, or one not asked for
        agents = turns[-1]["agent_details"]
        if agent in agents:
            return
        config = getattr(request, "config", None)
        agents[agent] = {
            "name": agent,
            "instructions": _instruction(getattr(config, "system_instruction", None)),
            "tool_declarations": [_tool(t) for t in getattr(config, "tools", None) or []],
        }

    def seen(self, session_id: str) -> list[dict[str, Any]]:
        return list(self.sessions.get(session_id, []))

    def take(self, session_id: str) -> list[dict[str, Any]]:
        return self.sessions.pop(session_id, [])

    def register(self, runner: Any) -> bool:
        """Adds the recording plugin to ``runner``; False when this ADK has no plugins to add to."""
        try:
            from google.adk.plugins.base_plugin import BasePlugin
        except ImportError:
            return False
        recorder = self

        class _Plugin(BasePlugin):
            async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
                context = getattr(callback_context, "_invocation_context", None)
                session = getattr(getattr(context, "session", None), "id", None)
                agent = getattr(callback_context, "agent_name", None)
                if session and agent:
                    recorder.saw(str(session), str(agent), llm_request)
                return

        manager = getattr(runner, "plugin_manager", None)
        if manager is None or not hasattr(manager, "register_plugin"):
            return False
        try:
            manager.register_plugin(_Plugin(name=NAME))
        except ValueError:  # already registered on this runner
            return True
        return True
