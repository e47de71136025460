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
# Where the Vertex AI evaluation service is asked instead of Google's endpoint for the location.
BASE_URL_ENV = "AGENT_EVAL_VERTEX_BASE_URL"


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

    async def evaluate_dataset(self, request: dict[str, Any]) -> str:
        """One evaluation as ADK's Vertex facade asks it (``run/judges/adk_worker.py``: its metrics
        and dataset as JSON), by the SDK's ``evals.evaluate`` as ADK calls it: the result's JSON
        (what the facade reads: the summary and each case's metric results). A case the service
        could not score (the SDK keeps its error in the result) raises, so it reads as an outage."""
        return await asyncio.to_thread(self._evaluate_dataset, request)

    def _evaluate_dataset(self, request: dict[str, Any]) -> str:
        import pandas as pd

        # The types of the client's own module (``vertexai.types`` may be another package's,
        # which this client's ``evals.evaluate`` refuses).
        from vertexai._genai import types
        from vertexai._genai._evals_metric_loaders import LazyLoadedPrebuiltMetric

        metrics = [
            LazyLoadedPrebuiltMetric(m["prebuilt"], m.get("version"), **(m.get("kwargs") or {}))
            if "prebuilt" in m
            else types.Metric.model_validate(m["metric"])
            for m in request["metrics"]
        ]
        data = request["dataset"]
        dataset = (
            types.EvaluationDataset(eval_dataset_df=pd.DataFrame(data["rows"]))
            if "rows" in data
            else types.EvaluationDataset.model_validate({"eval_cases": data["eval_cases"]})
        )
        result = self.client.evals.evaluate(dataset=dataset, metrics=metrics)
        unscored = [
            m.error_message or "the evaluation service returned no score"
            for case in result.eval_case_results or []
            for candidate in case.response_candidate_results or []
            for m in (candidate.metric_results or {}).values()
            if m.score is None
        ]
        if unscored or not result.eval_case_results:  # not kept in the cache: asked again next time
            raise RuntimeError(unscored[0] if unscored else "the evaluation service returned no result")
        return str(result.model_dump_json(include={"summary_metrics", "eval_case_results"}, exclude_none=True))


def managed_from_env(env: Mapping[str, str] | None = None) -> ManagedJudge | None:
    env = os.environ if env is None else env
    project = env.get("GOOGLE_CLOUD_PROJECT")
    credentials = env.get("GOOGLE_APPLICATION_CREDENTIALS")
    if not project or not credentials or not Path(credentials).is_file():
        return None
    options: dict[str, Any] = {}
    if env.get(BASE_URL_ENV):  # the service elsewhere (a private endpoint, a proxy, a test's loopback)
        from google.genai import types

        options["http_options"] = types.HttpOptions(base_url=env[BASE_URL_ENV])
    return ManagedJudge(vertex_client(project, env.get("GOOGLE_CLOUD_LOCATION", "us-central1"), **options))


def vertex_client(project: str, location: str, **kwargs: Any) -> Any:
    import vertexai

    _quiet_sdk()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the pinned SDK's Client works; its successor is not released here
        return vertexai.Client(project=project, location=location, **kwargs)


def _quiet_sdk() -> None:
    """The evaluation SDK's own output off: a progress bar on stderr for every evaluation, and a
    traceback logged for every case it could not score (ours says what runs, and why a score is
    missing, once)."""
    import functools
    import logging

    from vertexai._genai import _evals_common, _evals_metric_handlers

    for module in (_evals_common, _evals_metric_handlers):
        bar: Any = getattr(module, "tqdm", None)
        if isinstance(bar, type):  # the tqdm class, not yet wrapped
            module.tqdm = functools.partial(bar, disable=True)  # type: ignore[attr-defined]
    logging.getLogger("vertexai._genai").setLevel(logging.CRITICAL)
