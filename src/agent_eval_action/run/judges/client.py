"""The judge model behind google-genai: Gemini API keys or Vertex AI. Credentials are read from
the environment only when present; nothing probes the network to discover them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agent_eval_action.agent_worker.model.origin import model_call_origin, tag
from agent_eval_action.agent_worker.model.pacing import key_id

NO_CREDENTIALS = (
    "skipped: no judge credentials (set AGENT_EVAL_JUDGE_API_KEY or GOOGLE_API_KEY, or GOOGLE_GENAI_USE_VERTEXAI=true with "
    "GOOGLE_CLOUD_PROJECT and GOOGLE_APPLICATION_CREDENTIALS)"
)
SCHEMA = {
    "type": "OBJECT",
    "properties": {"score": {"type": "NUMBER"}, "explanation": {"type": "STRING"}},
    "required": ["score", "explanation"],
}


@dataclass(frozen=True)
class Answer:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


class JudgeClient(Protocol):
    async def generate(self, model: str, prompt: str) -> Answer: ...


class GenaiJudge:
    """google-genai's async client, asking for JSON that matches :data:`SCHEMA`. ``key``: which
    quota its calls count against (``agent_worker.model.pacing.key_id``), without the secret."""

    def __init__(self, client: Any, key: str = ""):
        self.client = client
        self.key = key

    async def generate_text(self, model: str, prompt: str, config: dict[str, Any]) -> Answer:
        return await _text_answer(self, model, prompt, config)

    async def generate(self, model: str, prompt: str) -> Answer:
        from google.genai import types

        config = types.GenerateContentConfig(temperature=0.0, response_mime_type="application/json", response_schema=SCHEMA)
        return await _ask(self, model, prompt, config)


async def _text_answer(judge: GenaiJudge, model: str, prompt: str, config: dict[str, Any]) -> Answer:
    """One of ADK's judge requests as ADK's Gemini model sends it: the prompt as the user's
    content, the criterion's ``judge_model_config`` (plain text back, no schema)."""
    from google.genai import types

    settings = types.GenerateContentConfig.model_validate(config) if config else None
    return await _ask(judge, model, prompt, settings)


async def _ask(judge: GenaiJudge, model: str, prompt: str, config: Any) -> Answer:
    """One judge request, its answer and what it used."""
    try:
        response = await judge.client.aio.models.generate_content(model=model, contents=prompt, config=config)
    except Exception as error:
        # The judge's model call itself failed (a status, its transport, a reply it could not
        # read): the model's, retried as such (run/retry.py), never the PR's.
        tag(error, model_call_origin(error))
        raise
    usage = response.usage_metadata
    return Answer(
        text=response.text or "",
        input_tokens=int(getattr(usage, "prompt_token_count", 0) or 0),
        output_tokens=int(getattr(usage, "candidates_token_count", 0) or 0) + int(getattr(usage, "thoughts_token_count", 0) or 0),
        cached_tokens=int(getattr(usage, "cached_content_token_count", 0) or 0),
    )


def judge_from_env(env: Mapping[str, str] | None = None) -> JudgeClient | None:
    """A judge client when credentials are configured, else None (judge metrics are then skipped)."""
    env = os.environ if env is None else env
    from google import genai
    from google.genai import types

    base_url = env.get("AGENT_EVAL_JUDGE_BASE_URL")
    options = types.HttpOptions(base_url=base_url) if base_url else None
    # A key for the judge alone keeps judging apart from the agent's own model access.
    key = env.get("AGENT_EVAL_JUDGE_API_KEY") or env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY")
    vertex = env.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true")
    if vertex:
        project = env.get("GOOGLE_CLOUD_PROJECT")
        credentials = env.get("GOOGLE_APPLICATION_CREDENTIALS")
        if not project or not credentials or not Path(credentials).is_file():
            return None
        location = env.get("GOOGLE_CLOUD_LOCATION", "us-central1")
        quota = key_id({"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": project, "GOOGLE_CLOUD_LOCATION": location})
        return GenaiJudge(genai.Client(vertexai=True, project=project, location=location, http_options=options), quota)
    if key:
        return GenaiJudge(genai.Client(api_key=key, http_options=options), key_id({"GOOGLE_API_KEY": key}))
    return None
