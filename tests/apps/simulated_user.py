"""A scripted model for ADK's user simulator, registered in ADK's model registry as ``scripted-user*``.

It says, in order, what the conversation plan lists as ``SAY[...]`` (ADK's simulator sends the
starting prompt itself), then ADK's stop signal. Every prompt it is given is kept in ``PROMPTS``.
No network.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator

from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.models.registry import LLMRegistry
from google.genai import types

PROMPTS: list[str] = []
STOP = "</finished>"


class ScriptedUser(BaseLlm):
    model: str = "scripted-user"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"scripted-user.*"]

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        prompt = "".join(p.text or "" for c in llm_request.contents for p in c.parts or [])
        PROMPTS.append(prompt)
        lines = re.findall(r"SAY\[(.*?)\]", prompt)
        said = len(re.findall(r"^user: ", prompt, flags=re.MULTILINE))  # the starting prompt included
        text = lines[said - 1] if 0 < said <= len(lines) else STOP
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def register() -> None:
    LLMRegistry.register(ScriptedUser)


register()
