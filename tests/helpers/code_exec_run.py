"""A real ADK run of a pipeline like the seed pipeline's ``retail`` app, written as its processor
writes a live row (``processor.enrich_single_interaction``): the session as ADK's API server answers
``GET .../sessions/ID`` (camelCase) and the spans as ``/debug/trace/session/ID`` answers them
(legacy span names, integer ids, nanosecond times).

The root agent calls an AgentTool (its model call runs in a session of its own) and transfers to
a sub-agent with ADK's ``BuiltInCodeExecutor``: for each of that agent's responses ADK yields the
code executor's event first and gives the response's event a new id, so the span of that call
names an event id the session does not hold.

Run as ``python -m tests.helpers.code_exec_run OUT.jsonl`` (it sets the process's tracer provider,
so it runs in a process of its own).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncGenerator
from typing import Any

APP = "retail"
INPUTS = ["Analyze Capitol Hill for a coffee shop.", "Now the numbers, please."]
# (agent, prompt, candidates, cached, thoughts) of each model call, in the order they are made.
USAGE = {
    ("retail", 1): (1_000, 20, 400, 0),  # calls IntakeAgent
    ("IntakeAgent", 1): (300, 49, 0, 133),
    ("retail", 2): (1_500, 30, 1_000, 0),  # answers after the tool
    ("retail", 3): (1_900, 12, 0, 0),  # transfers to GapAnalysisAgent
    ("GapAnalysisAgent", 1): (2_200, 210, 800, 95),  # executes code and answers
}


def main(out: str) -> None:
    os.environ["ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN"] = "1"  # the legacy span names ADK 1.x wrote
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    row = asyncio.run(_run(exporter))
    with open(out, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(row, default=str) + "\n")


def _app() -> Any:
    from google.adk.agents import LlmAgent
    from google.adk.code_executors import BuiltInCodeExecutor
    from google.adk.models import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.tools.agent_tool import AgentTool
    from google.genai import types

    calls: dict[str, int] = {}

    class Scripted(BaseLlm):
        # ADK's built-in code execution is for Gemini 2 models only: it checks the model's name.
        model: str = "gemini-2.5-flash"

        async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
            agent = (llm_request.config.labels or {}).get("adk_agent_name", "")
            calls[agent] = calls.get(agent, 0) + 1
            n = calls[agent]
            prompt, candidates, cached, thoughts = USAGE[(agent, n)]
            usage = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=prompt,
                candidates_token_count=candidates,
                cached_content_token_count=cached or None,
                thoughts_token_count=thoughts or None,
                total_token_count=prompt + candidates + thoughts,
            )
            if agent == "retail" and n == 1:
                parts = [types.Part(function_call=types.FunctionCall(name="IntakeAgent", args={"request": INPUTS[0]}))]
            elif agent == "retail" and n == 2:
                parts = [types.Part(text="Parsed: Capitol Hill, coffee shop.")]
            elif agent == "retail":
                parts = [types.Part(function_call=types.FunctionCall(name="transfer_to_agent", args={"agent_name": "GapAnalysisAgent"}))]
            elif agent == "IntakeAgent":
                parts = [types.Part(text='{"target_location": "Capitol Hill"}')]
            else:
                parts = [
                    types.Part(executable_code=types.ExecutableCode(code="print(6 * 7)", language=types.Language.PYTHON)),
                    types.Part(code_execution_result=types.CodeExecutionResult(outcome=types.Outcome.OUTCOME_OK, output="42")),
                    types.Part(text="Zone score: 42."),
                ]
            yield LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=usage)

    model = Scripted()
    intake = LlmAgent(name="IntakeAgent", model=model, instruction="Parse the request.")
    gap = LlmAgent(name="GapAnalysisAgent", model=model, instruction="Compute.", code_executor=BuiltInCodeExecutor())
    return LlmAgent(name=APP, model=model, instruction="Orchestrate.", tools=[AgentTool(intake)], sub_agents=[gap])


async def _run(exporter: Any) -> dict[str, Any]:
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    runner = InMemoryRunner(agent=_app(), app_name=APP)
    session = await runner.session_service.create_session(app_name=APP, user_id="eval_user")
    for text in INPUTS:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id="eval_user", session_id=session.id, new_message=message):
            pass
    done = await runner.session_service.get_session(app_name=APP, user_id="eval_user", session_id=session.id)
    assert done is not None
    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.end_time)
    return {
        "status": {"boolean": "success"},
        "question_id": "retail_full_pipeline",
        "session_id": session.id,
        "base_url": "http://localhost:8502",
        "app_name": APP,
        "agents_evaluated": [APP],
        "user_inputs": INPUTS,
        "final_session_state": done.model_dump(mode="json", by_alias=True),
        "session_trace": [_debug_span(s) for s in spans],
    }


def _debug_span(span: Any) -> dict[str, Any]:
    """As ADK's API server's /debug/trace/session/ID lists a span."""
    return {
        "name": span.name,
        "span_id": span.context.span_id,
        "trace_id": span.context.trace_id,
        "start_time": span.start_time,
        "end_time": span.end_time,
        "attributes": dict(span.attributes or {}),
        "parent_span_id": span.parent.span_id if span.parent is not None else None,
    }


if __name__ == "__main__":
    main(sys.argv[1])
