"""Conversation scenarios: the agent in conversation with ADK's own user simulator.

Runs where the agent runs (the agent worker, under the agent's own interpreter), so it imports
only the standard library and google-adk. The loop is ADK's own
(``EvaluationGenerator._generate_inferences_from_root_agent``): the simulator is asked for the
next user message given every event so far (a user event recorded before each turn's agent
events); a message is sent to the agent as one turn; anything but a message (the simulator's
stop signal, the turn limit) ends the conversation. The first message is the scenario's
starting prompt, as ADK's ``LlmBackedUserSimulator`` sends it.
"""

from __future__ import annotations

import contextlib
import copy
import os
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# ADK's LlmBackedUserSimulatorConfig default, named in messages when the settings name none.
DEFAULT_MODEL = "gemini-2.5-flash"
TRUE = ("1", "true", "yes")


class ScenarioSkipped(Exception):
    """The scenario cannot run here; ``reason`` says why (no credentials for the simulator's
    model, no user simulator in this google-adk). A skip, not a failure of the agent."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


@dataclass
class ScenarioRun:
    """One played-out scenario."""

    # ADK Event objects in order; each turn's events follow a user Event holding what the
    # simulator said (author "user", the turn's invocation id), as ADK's eval records them.
    events: list[Any]
    # (epoch seconds at the start, seconds the agent took) per turn; the simulator's own time is left out.
    turn_times: list[tuple[float, float]]
    # The session's state at the end (None if the session was gone).
    final_state: dict[str, Any] | None
    # Why the conversation ended: ADK's user-simulator Status value ("stop_signal_detected",
    # "turn_limit_reached", "no_message_generated").
    stop: str
    # Per turn, the agents' instructions and tools as their first model request of the turn held
    # them (ADK's ``AppDetails`` JSON, ``app_details.py``); empty without a recorder.
    app_details: list[dict[str, Any]] = field(default_factory=list)


def simulator_unavailable(model: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Why the user simulator's ``model`` cannot be called in this environment, or None.

    A Gemini model needs ``GOOGLE_API_KEY`` / ``GEMINI_API_KEY``, or Vertex AI
    (``GOOGLE_GENAI_USE_VERTEXAI`` with ``GOOGLE_CLOUD_PROJECT``). Other models in ADK's model
    registry (LiteLlm, one registered by the user) are assumed callable: their credentials are
    their own business.
    """
    env = os.environ if environ is None else environ
    from google.adk.models.registry import LLMRegistry

    try:
        llm_class = LLMRegistry.resolve(model)
    except (ValueError, ImportError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return f"the user simulator's model {model!r} is not in ADK's model registry ({first})"
    from google.adk.models.google_llm import Gemini

    if not issubclass(llm_class, Gemini):
        return None
    if env.get("GOOGLE_GENAI_USE_VERTEXAI", "").strip().lower() in TRUE:
        if env.get("GOOGLE_CLOUD_PROJECT") or env.get("GOOGLE_API_KEY"):
            return None
        return f"no credentials for the user simulator's model {model}: GOOGLE_GENAI_USE_VERTEXAI is set without GOOGLE_CLOUD_PROJECT"
    if env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY"):
        return None
    return (
        f"no credentials for the user simulator's model {model}: set GOOGLE_API_KEY (or GOOGLE_GENAI_USE_VERTEXAI=true "
        "with GOOGLE_CLOUD_PROJECT), or name another model in [user-simulator]"
    )


async def run_scenario(
    runner: Any,
    session_service: Any,
    *,
    app_name: str,
    user_id: str,
    scenario: Mapping[str, Any],
    simulator: Mapping[str, Any] | None = None,
    state: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    recorder: Any = None,
) -> ScenarioRun:
    """Plays ``scenario`` out against the agent behind ``runner`` in a new session, which is deleted at the end.

    ``scenario`` is ADK's ConversationScenario as a dict (``starting_prompt``,
    ``conversation_plan``, optional ``user_persona``); ``simulator`` holds
    LlmBackedUserSimulatorConfig settings (``model``, ``max_allowed_invocations``,
    ``custom_instructions``, ...), ADK's defaults where absent; ``state`` seeds the session;
    ``recorder``: the runner's ``AppDetailsRecorder``, told of each turn (ADK's eval records a
    scenario's app details as a static case's).
    Raises ScenarioSkipped when the simulator cannot run here, ValueError for settings or a
    scenario ADK refuses; the agent's own exceptions propagate as they do for a static question.
    """
    try:
        from google.adk.evaluation.conversation_scenarios import ConversationScenario
        from google.adk.evaluation.simulation.llm_backed_user_simulator import LlmBackedUserSimulator, LlmBackedUserSimulatorConfig
        from google.adk.evaluation.simulation.user_simulator import Status
        from google.adk.events.event import Event
    except ImportError as error:
        raise ScenarioSkipped(f"this google-adk has no user simulator ({error})") from None
    from pydantic import ValidationError

    try:
        config = LlmBackedUserSimulatorConfig.model_validate(dict(simulator or {}))
        plan = ConversationScenario.model_validate(dict(scenario))
    except ValidationError as error:
        raise ValueError(f"ADK refuses the scenario or the user simulator's settings: {error}") from None
    reason = simulator_unavailable(config.model, environ)
    if reason is not None:
        raise ScenarioSkipped(reason)
    with warnings.catch_warnings():  # ADK marks its simulator experimental on every construction
        warnings.simplefilter("ignore", UserWarning)
        user = LlmBackedUserSimulator(config=config, conversation_scenario=plan)
    session = await session_service.create_session(app_name=app_name, user_id=user_id, state=dict(state or {}))
    events: list[Any] = []
    times: list[tuple[float, float]] = []
    try:
        while True:
            step = await user.get_next_user_message(copy.deepcopy(events))
            if step.status != Status.SUCCESS or step.user_message is None:
                stop = str(step.status.value)
                break
            started, clock = time.time(), time.perf_counter()
            if recorder is not None:
                recorder.turn(session.id)
            invocation_id = None
            turn = runner.run_async(user_id=user_id, session_id=session.id, new_message=step.user_message)
            async with contextlib.aclosing(turn) as agen:
                async for event in agen:
                    if invocation_id is None:
                        invocation_id = event.invocation_id
                        events.append(Event(content=step.user_message, author="user", invocation_id=invocation_id))
                    events.append(event)
            times.append((started, time.perf_counter() - clock))
        final = await session_service.get_session(app_name=app_name, user_id=user_id, session_id=session.id)
    finally:
        details = recorder.take(session.id) if recorder is not None else []  # whatever ended the conversation
        await session_service.delete_session(app_name=app_name, user_id=user_id, session_id=session.id)
    return ScenarioRun(
        events=events, turn_times=times, final_state=dict(final.state) if final is not None else None, stop=stop, app_details=details
    )
