"""ADK's LLM-judged criteria computed by ADK's own evaluator classes, in a process of their own:
``python -m agent_eval_action.run.judges.adk_worker`` (ADK's Vertex-backed evaluators import the
Vertex AI SDK at import time, seconds of it: they are imported only when a criterion asks for
one; the process that decides the gate never imports any).

The judge model is never called from here. Each request carries one eval case's invocations (as
ADK's ``Invocation`` JSON), the criterion as written and the judge's answers known so far, keyed
by :func:`request_key`. ADK's evaluator runs as ``adk eval`` runs it (the evaluator ADK's
registry gives for the metric, case and turn rubrics copied onto the actual invocations as
ADK's ``LocalEvalService`` copies them), with a judge model that answers each request from those
answers: the k-th identical request gets the k-th answer, as ADK samples ``num_samples`` times.
A request with no answer yet is listed in ``needs`` (with how many times it was asked) and the
result is dropped; the caller asks the judge model through its own path (cache, pacing,
retries, budget) and sends the case again with the answers. ``hallucinations_v1`` asks in two
rounds (its segmenter, then its validator); the others in one.

ADK's Vertex-backed criteria (``safety_v1``, ``response_evaluation_score``, the ``multi_turn_*``
ones) run the same way: ADK's evaluator builds the Vertex AI evaluation dataset and metric as
``adk eval`` does, and its facade's one service call (``_perform_eval``) is answered from what
the caller asked the Vertex AI evaluation service (a ``need`` with ``"vertex": {"metrics",
"dataset"}``; the answer is the ``EvaluationResult`` JSON the facade reads).

One JSON object a line each way. Request: ``{"metric", "criterion", "actual": [invocation],
"expected": [invocation] | null, "case_rubrics": [rubric] | null, "answers": {key: [text]}}``.
Answer: ``{"needs": [{"key", "model", "config", "prompt", "count"}]}`` (or ``{"key", "vertex",
"count"}``) or ``{"result": {...}}`` or ``{"error": "..."}``.
"""

from __future__ import annotations

import hashlib
import json
import sys
import traceback
from collections import Counter
from collections.abc import AsyncGenerator
from typing import IO, Any


def request_key(model: str, config: dict[str, Any], prompt: str) -> str:
    """What identifies one judge request: its model, its settings (ADK's judge config as sent,
    without the HTTP options) and its prompt."""
    return hashlib.sha256(json.dumps([model, config, prompt], sort_keys=True, ensure_ascii=False).encode()).hexdigest()


# ADK's LLM-judged evaluators by metric, each the class ADK's registry gives for it (a unit test
# holds the two equal). Their modules import without the Vertex AI SDK, which the registry and
# ADK's local eval service import with the Vertex-backed evaluators (4-6 s a process): a run
# without a Vertex-backed criterion never pays it.
JUDGE_EVALUATORS = {
    "final_response_match_v2": ("google.adk.evaluation.final_response_match_v2", "FinalResponseMatchV2Evaluator"),
    "rubric_based_final_response_quality_v1": (
        "google.adk.evaluation.rubric_based_final_response_quality_v1",
        "RubricBasedFinalResponseQualityV1Evaluator",
    ),
    "rubric_based_tool_use_quality_v1": ("google.adk.evaluation.rubric_based_tool_use_quality_v1", "RubricBasedToolUseV1Evaluator"),
    "rubric_based_multi_turn_trajectory_quality_v1": (
        "google.adk.evaluation.rubric_based_multi_turn_trajectory_evaluator",
        "RubricBasedMultiTurnTrajectoryEvaluator",
    ),
    "hallucinations_v1": ("google.adk.evaluation.hallucinations_v1", "HallucinationsV1Evaluator"),
    "per_turn_user_simulator_quality_v1": (
        "google.adk.evaluation.simulation.per_turn_user_simulator_quality_v1",
        "PerTurnUserSimulatorQualityV1",
    ),
}


def evaluator_for(metric: Any) -> Any:
    """A new evaluator of ``metric`` (ADK's ``EvalMetric``), as ADK's registry makes it; the
    Vertex-backed ones (and any other) from the registry itself."""
    import importlib

    where = JUDGE_EVALUATORS.get(metric.metric_name)
    if where is not None:
        module, name = where
        try:
            evaluator = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            pass  # an ADK that moved it: its registry knows where
        else:
            return evaluator(eval_metric=metric)
    from google.adk.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY

    return DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(eval_metric=metric)


def copy_rubrics(rubrics: list[Any] | None, expected: list[Any] | None, actual: list[Any]) -> None:
    """The case's rubrics onto every actual invocation, then each expected invocation's onto its
    actual one, as ADK's ``LocalEvalService`` copies them (``_copy_eval_case_rubrics_to_actual_invocations``,
    ``_copy_invocation_rubrics_to_actual_invocations``; a unit test holds them equal): its module
    imports the Vertex AI SDK."""

    def add(invocation: Any, more: list[Any]) -> None:
        if not invocation.rubrics:
            invocation.rubrics = []
        ids = {r.rubric_id for r in invocation.rubrics}
        for rubric in more:
            if rubric.rubric_id in ids:
                raise ValueError(f"Rubric with rubric_id '{rubric.rubric_id}' already exists.")
            invocation.rubrics.append(rubric)
            ids.add(rubric.rubric_id)

    if rubrics:
        for invocation in actual:
            add(invocation, rubrics)
    for mine, theirs in zip(actual, expected or [], strict=False):
        if theirs.rubrics:
            add(mine, theirs.rubrics)


class _Unanswered(Exception):
    """A judge request whose answer the caller has not sent yet."""


def _judge_class(answers: dict[str, list[str]], needs: dict[str, dict[str, Any]], texts: list[dict[str, Any]]) -> Any:
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    asked: Counter[str] = Counter()

    class ReplayJudge(BaseLlm):
        """ADK's judge model, answered from what the caller asked the real judge."""

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[Any, None]:
            prompt = "".join(p.text or "" for c in llm_request.contents or [] for p in c.parts or [])
            config = (
                llm_request.config.model_dump(mode="json", exclude_none=True, exclude={"http_options", "automatic_function_calling"})
                if llm_request.config is not None
                else {}
            )
            model = llm_request.model or self.model
            key = request_key(model, config, prompt)
            index = asked[key]
            asked[key] += 1
            known = answers.get(key, [])
            if index >= len(known):
                need = needs.setdefault(key, {"key": key, "model": model, "config": config, "prompt": prompt, "count": 0})
                need["count"] = max(need["count"], index + 1)
                raise _Unanswered(key)
            texts.append({"key": key, "sample": index, "text": known[index]})
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=known[index])]))

    return ReplayJudge


def _metric_json(metric: Any) -> dict[str, Any]:
    """A Vertex AI eval metric as JSON: a prebuilt one by name and version (resolved where the
    service is called, as the SDK resolves it), any other as its fields."""
    if hasattr(metric, "metric_kwargs") and hasattr(metric, "version"):  # the SDK's LazyLoadedPrebuiltMetric
        return {"prebuilt": str(metric.name), "version": metric.version, "kwargs": dict(metric.metric_kwargs)}
    return {"metric": metric.model_dump(mode="json", exclude_none=True)}


def _dataset_json(dataset: Any) -> dict[str, Any]:
    """A Vertex AI ``EvaluationDataset`` as JSON: its table's rows (single-turn criteria) or its cases."""
    frame = getattr(dataset, "eval_dataset_df", None)
    if frame is not None:
        return {"rows": json.loads(frame.to_json(orient="records"))}
    return {"eval_cases": [case.model_dump(mode="json", exclude_none=True) for case in dataset.eval_cases or []]}


def _vertex_replay(answers: dict[str, list[str]], needs: dict[str, dict[str, Any]], used: list[str]) -> None:
    """ADK's Vertex facade without a client of its own (it would read credentials here), its
    service call answered from ``answers``; an unanswered one is listed in ``needs`` and reads as
    no result (the evaluator goes on to its other turns, and the reply is the needs)."""
    from google.adk.evaluation import vertex_ai_eval_facade as facade

    def init(self: Any, threshold: float, metric_name: Any, expected_invocations_required: bool = False) -> None:
        self._threshold = threshold
        self._metric_name = metric_name
        self._expected_invocations_required = expected_invocations_required

    def perform(self: Any, dataset: Any, metrics: Any) -> Any:
        request = {"metrics": [_metric_json(m) for m in metrics], "dataset": _dataset_json(dataset)}
        key = hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
        known = answers.get(key)
        if not known:
            needs.setdefault(key, {"key": key, "vertex": request, "count": 1})
            return None
        from vertexai import types

        used.append(key)
        return types.EvaluationResult.model_validate_json(known[0])

    facade._VertexAiEvalFacade.__init__ = init  # type: ignore[method-assign]
    facade._VertexAiEvalFacade._perform_eval = perform  # type: ignore[method-assign]


def _unanswered_unscored(evaluator: Any) -> None:
    """A sample whose judge request is not answered yet reads as no score, so the evaluator asks
    every request of the case in one round (ADK's user simulator judge lets the error out)."""
    from google.adk.evaluation.llm_as_judge import AutoRaterScore

    sample = evaluator._sample_llm

    async def answered_or_none(llm_request: Any) -> Any:
        try:
            return await sample(llm_request)
        except _Unanswered:
            return AutoRaterScore()

    evaluator._sample_llm = answered_or_none


def _tools_typed(invocation: Any) -> Any:
    """The tool declarations of ``app_details`` as ADK's eval holds them (``types.Tool``, not the
    JSON the spans recorded), so ADK's prompts dump them as they dump their own."""
    from google.genai import types
    from pydantic import ValidationError

    def typed(declaration: Any) -> Any:
        try:
            return types.Tool.model_validate(declaration) if isinstance(declaration, dict) else declaration
        except ValidationError:  # the agent's google-genai is newer than ours: its JSON as it is
            return declaration

    for details in (invocation.app_details.agent_details if invocation.app_details else {}).values():
        details.tool_declarations = [typed(t) for t in details.tool_declarations]
    return invocation


async def evaluate(request: dict[str, Any]) -> dict[str, Any]:
    from google.adk.evaluation.eval_case import Invocation
    from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
    from google.adk.evaluation.eval_rubrics import Rubric

    name = request["metric"]
    criterion = request["criterion"]
    actual = [_tools_typed(Invocation.model_validate(i)) for i in request["actual"]]
    expected = [Invocation.model_validate(i) for i in request["expected"]] if request.get("expected") is not None else None
    copy_rubrics([Rubric.model_validate(r) for r in request.get("case_rubrics") or []], expected, actual)
    # As ADK's AgentEvaluator reads test_config.json (a number, or an object ADK's criterion reads).
    config = EvalConfig.model_validate({"criteria": {name: criterion}})
    (metric,) = [m for m in get_eval_metrics_from_config(config) if m.metric_name == name]
    evaluator: Any = evaluator_for(metric)
    needs: dict[str, dict[str, Any]] = {}
    texts: list[dict[str, Any]] = []
    samples: list[dict[str, Any]] = []
    judge = _judge_class(request.get("answers") or {}, needs, texts)
    if hasattr(evaluator, "_judge_model"):  # an LLM-as-judge evaluator (the Vertex-backed ones have none)
        evaluator._judge_model = judge(model=str(getattr(evaluator._judge_model, "model", "judge")))
        _keep_samples(evaluator, samples)
    elif hasattr(evaluator, "_llm"):  # the user simulator's judge (per_turn_user_simulator_quality_v1)
        evaluator._llm = judge(model=str(getattr(evaluator._llm, "model", "judge")))
        _unanswered_unscored(evaluator)
    scenario = None
    if request.get("conversation_scenario") is not None:
        from google.adk.evaluation.eval_case import ConversationScenario

        scenario = ConversationScenario.model_validate(request["conversation_scenario"])
    used: list[str] = []
    if name not in JUDGE_EVALUATORS:  # a Vertex-backed criterion: its facade answered from the caller's answers
        _vertex_replay(request.get("answers") or {}, needs, used)
    result = evaluator.evaluate_invocations(actual_invocations=actual, expected_invocations=expected, conversation_scenario=scenario)
    if hasattr(result, "__await__"):
        result = await result
    if needs:
        return {"needs": list(needs.values())}
    return {
        "result": {
            "score": result.overall_score,
            "status": result.overall_eval_status.name,
            "per_turn": [r.score for r in result.per_invocation_results],
            "per_turn_status": [r.eval_status.name for r in result.per_invocation_results],
            "rubric_scores": [_rubric(r) for r in result.overall_rubric_scores or []],
            "turn_rubric_scores": [[_rubric(s) for s in r.rubric_scores or []] for r in result.per_invocation_results],
            "samples": samples,
            "judge_calls": len(texts) + len(used),
        }
    }


def _keep_samples(evaluator: Any, into: list[dict[str, Any]]) -> None:
    """Each sample's verdict and the judge's text, kept beside the majority ADK takes of them
    (one entry a turn ADK judged). Only observed: what ADK computes is left as it is."""
    aggregate = getattr(evaluator, "aggregate_per_invocation_samples", None)
    convert = getattr(evaluator, "convert_auto_rater_response_to_score", None)
    single = getattr(evaluator, "_evaluate_single_sample", None)
    if aggregate is None or convert is None or single is None:
        return  # hallucinations_v1: its own two-step sampling, its result only
    pending: list[str] = []
    text_of: dict[int, str] = {}

    def converted(response: Any) -> Any:
        content = response.content
        pending.append("".join(p.text or "" for p in (content.parts or [] if content is not None else [])))
        return convert(response)

    async def one(*args: Any, **kwargs: Any) -> Any:
        # ADK's samples run one at a time (its judge's parallelism_limit, 1 unless set): the text
        # just converted is this sample's.
        result = await single(*args, **kwargs)
        if pending:
            text_of[id(result)] = pending.pop()
        return result

    def kept(per_invocation_samples: list[Any]) -> Any:
        chosen = aggregate(per_invocation_samples)
        into.append(
            {
                "samples": [{**_sample(s), "text": text_of.get(id(s))} for s in per_invocation_samples],
                "majority": {**_sample(chosen), "text": text_of.get(id(chosen))},
            }
        )
        return chosen

    evaluator.convert_auto_rater_response_to_score = converted
    evaluator._evaluate_single_sample = one
    evaluator.aggregate_per_invocation_samples = kept


def _rubric(score: Any) -> dict[str, Any]:
    return {"rubric_id": score.rubric_id, "score": score.score, "rationale": score.rationale}


def _sample(result: Any) -> dict[str, Any]:
    return {"score": result.score, "rubric_scores": [_rubric(s) for s in result.rubric_scores or []]}


def serve(stdin: IO[str], stdout: IO[str]) -> None:
    import asyncio
    import logging

    logging.getLogger("google_adk").setLevel(logging.CRITICAL)  # the failed samples of unanswered requests
    loop = asyncio.new_event_loop()
    stdout.write(json.dumps({"ready": True}) + "\n")
    stdout.flush()
    for line in stdin:
        if not line.strip():
            continue
        try:
            answer = loop.run_until_complete(evaluate(json.loads(line)))
        except Exception as error:  # noqa: BLE001 - said to the caller, which leaves the score unscored
            answer = {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc(limit=5)}
        stdout.write(json.dumps(answer, default=str) + "\n")
        stdout.flush()


def main() -> None:
    try:
        import warnings

        warnings.simplefilter("ignore")
        # Fails early where ADK's evaluation modules cannot import (the Vertex-backed evaluators
        # are imported when a criterion asks for one: evaluator_for).
        import google.adk.evaluation.eval_config
        import google.adk.evaluation.llm_as_judge  # noqa: F401
    except Exception as error:  # noqa: BLE001 - the caller says it in one line
        sys.stdout.write(json.dumps({"ready": False, "error": f"{type(error).__name__}: {error}"}) + "\n")
        sys.stdout.flush()
        return
    serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    main()
