"""Vertex AI's managed (predefined) metrics: general quality, text quality, instruction
following, safety, multi-turn quality, grounding, hallucination ... through the evaluation API
of google-cloud-aiplatform (``vertexai.Client().evals``), which the older ``vertexai.evaluation``
module does not reach. The SDK is the ``vertex`` extra (the action's image has it): imported
only when a managed metric is configured, and its absence is a config error naming the extra."""

from __future__ import annotations

import asyncio
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_eval_action.system.errors import ConfigError

NO_VERTEX = "skipped: managed Vertex AI metrics need GOOGLE_CLOUD_PROJECT and GOOGLE_APPLICATION_CREDENTIALS"
EXTRA = "agent-eval-action[vertex]"


def _evals_constants(name: str) -> Any:
    """vertexai's table of predefined metrics; a ConfigError naming the extra when the SDK is
    not installed (the core install leaves it out)."""
    try:
        from vertexai._genai import _evals_constant
    except ImportError as error:
        raise ConfigError(
            f"managed metric {name!r}",
            f"Vertex AI's managed metrics need the Vertex AI SDK, which is not installed ({error}): "
            f'install the extra, `pip install "{EXTRA}"` (or `uv tool install "{EXTRA} @ ..."`); the action\'s image has it',
        ) from None
    return _evals_constant


def spec_name(name: str) -> str:
    """``general_quality`` -> its latest versioned spec (``general_quality_v2``); versioned names pass."""
    known = _evals_constants(name)
    if name in known.SUPPORTED_PREDEFINED_METRICS:
        return name
    latest = known.METRIC_LATEST_SPEC_NAME.get(name)
    if latest is None:
        choices = ", ".join(sorted(known.METRIC_LATEST_SPEC_NAME))
        raise ConfigError(f"managed metric {name!r}", f"is not a Vertex AI predefined metric; known: {choices}")
    return str(latest)


class ManagedJudge:
    def __init__(self, client: Any):
        self.client = client

    async def evaluate(self, spec: str, prompt: str, response: str) -> tuple[float | None, str]:
        config = {
            "metrics": [{"name": spec}],
            "instance": {"prompt": {"text": prompt}, "response": {"text": response}},
        }
        result = await asyncio.to_thread(self.client.evals.evaluate_instances, metric_config=config)
        first = (result.metric_results or [None])[0]
        if first is None:
            return None, "the evaluation service returned no result"
        error = getattr(first, "error", None)
        if error is not None and getattr(error, "code", None):
            return None, f"the evaluation service reported an error: {getattr(error, 'message', error)}"
        return first.score, first.explanation or ""


def managed_from_env(env: Mapping[str, str] | None = None) -> ManagedJudge | None:
    env = os.environ if env is None else env
    project = env.get("GOOGLE_CLOUD_PROJECT")
    credentials = env.get("GOOGLE_APPLICATION_CREDENTIALS")
    if not project or not credentials or not Path(credentials).is_file():
        return None
    return ManagedJudge(vertex_client(project, env.get("GOOGLE_CLOUD_LOCATION", "us-central1")))


def vertex_client(project: str, location: str, **kwargs: Any) -> Any:
    import vertexai

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the pinned SDK's Client works; its successor is not released here
        return vertexai.Client(project=project, location=location, **kwargs)
