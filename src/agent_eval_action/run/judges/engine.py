"""Running judge metrics: concurrent, rate-limited, retried, cached on disk, sampled N times
(median). A judge that cannot answer leaves the question unscored with the reason, never 0."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from agent_eval_action.agent_worker import protocol
from agent_eval_action.agent_worker.model.origin import tag
from agent_eval_action.config import default_prices
from agent_eval_action.datasets import Record
from agent_eval_action.datasets.adk.config import ADK_VERTEX as VERTEX
from agent_eval_action.models.scores import NOT_COMPUTED, JudgeUsage, Score
from agent_eval_action.run.budget import SKIPPED, Budget
from agent_eval_action.run.judges.adk import AdkJudgeWorker, judge_case, vertex_score
from agent_eval_action.run.judges.client import NO_CREDENTIALS, Answer, JudgeClient
from agent_eval_action.run.judges.managed import NO_VERTEX
from agent_eval_action.run.judges.prompts import judge_context, user_turns
from agent_eval_action.run.pacing import Pacer, paced_call
from agent_eval_action.run.retry import RetryPolicy, call_with_retries, describe
from agent_eval_action.system.files import write_atomic

T = TypeVar("T")
NOT_COMPUTED_NO_JUDGE = (
    "not judged: no judge credentials for ADK's judged criteria (set AGENT_EVAL_JUDGE_API_KEY or GOOGLE_API_KEY, "
    "or GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT and GOOGLE_APPLICATION_CREDENTIALS)"
)


@dataclass(frozen=True, kw_only=True)
class JudgeMetric:
    name: str
    template: str
    low: float = 1.0
    high: float = 5.0
    model: str = "gemini-2.5-flash"
    samples: int = 1
    # Only questions whose agents_evaluated names one of these (empty: every question).
    agents: tuple[str, ...] = ()
    # A Vertex AI predefined metric spec (e.g. "general_quality_v2") instead of a prompt.
    managed: str | None = None


@dataclass(kw_only=True)
class JudgeSettings:
    concurrency: int = 8
    rate_limit: float = 0.0  # calls started per second; 0: no limit
    retries: int = 3
    timeout_s: float = 120.0
    backoff_initial_s: float = 1.0
    cache_dir: Path | None = None
    prices: dict[str, dict[str, float]] = field(default_factory=lambda: dict(default_prices()))
    # The judges' own spending limits ([judge] max-calls, max-cost-usd): apart from the agent's.
    max_calls: int | None = None
    max_cost_usd: float | None = None


class _BudgetSpent(Exception):
    """The judges' budget is spent: this call does not start."""


class _RateLimit:
    def __init__(self, per_second: float):
        self.interval = 1.0 / per_second if per_second > 0 else 0.0
        self.next = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            delay = self.next - now
            self.next = max(now, self.next) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


class JudgeEngine:
    def __init__(
        self,
        metrics: Sequence[JudgeMetric],
        settings: JudgeSettings,
        client: JudgeClient | None,
        managed: Any = None,
        *,
        pacer: Pacer | None = None,
        adk_criteria: Mapping[str, dict[str, Any]] | None = None,
        adk_worker: AdkJudgeWorker | None = None,
    ):
        from jinja2.sandbox import SandboxedEnvironment

        self.metrics = list(metrics)
        # ADK's judged criteria of the dataset (name -> the criterion as written), scored by ADK's
        # evaluators in ``adk_worker`` (run/judges/adk.py).
        self.adk_criteria = dict(adk_criteria or {})
        self.adk_worker = adk_worker
        self.settings = settings
        self.client = client
        self.managed = managed
        self.env = SandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        self.templates = {m.name: self.env.from_string(m.template) for m in self.metrics}
        self.usage = JudgeUsage()
        # The run's pacing (shared with the agent's workers): a throttled call waits as the API
        # says and is asked again, without using up a retry.
        self.pacer = pacer or Pacer()
        self._in_flight = 0
        self.budget = Budget(
            settings.max_calls,
            settings.max_cost_usd,
            calls_setting="[judge] max-calls",
            cost_setting="[judge] max-cost-usd",
        )

    async def score(self, records: Sequence[Record]) -> dict[tuple[str, int], dict[str, Score]]:
        """Scores of every judge metric for every record with a trace, keyed by (question id, run)."""
        out: dict[tuple[str, int], dict[str, Score]] = {}
        gate = asyncio.Semaphore(self.settings.concurrency)
        limit = _RateLimit(self.settings.rate_limit)
        jobs = []
        for record in records:
            if record.trace is None or record.trace.error or record.trace.skipped:
                continue
            scores = out.setdefault((record.question.id, record.run), {})
            for metric in self.metrics:
                if metric.agents and not set(metric.agents) & set(record.question.agents_evaluated):
                    continue
                if metric.managed and self.managed is None:
                    scores[metric.name] = Score(value=None, explanation=NO_VERTEX)
                    continue
                if not metric.managed and self.client is None:
                    scores[metric.name] = Score(value=None, explanation=NO_CREDENTIALS)
                    continue
                jobs.append(self._one(metric, record, scores, gate, limit))
            for name, criterion in self.adk_criteria.items():
                if name in VERTEX and (
                    f"score.{name}" in record.trace.recorded_metrics
                    or self.managed is None
                    or self.adk_worker is None
                    or self.adk_worker.broken is not None
                ):
                    # The score ADK recorded for the run (an eval history's) is ADK's; else the service, where it is here.
                    scores[name] = vertex_score(name, record.trace)
                elif name not in VERTEX and (self.client is None or self.adk_worker is None):
                    scores[name] = Score(value=None, explanation=NOT_COMPUTED_NO_JUDGE, details={NOT_COMPUTED: NOT_COMPUTED_NO_JUDGE})
                else:
                    jobs.append(self._adk(name, criterion, record, scores, gate, limit))
        await asyncio.gather(*jobs)
        return out

    async def _adk(
        self, name: str, criterion: dict[str, Any], record: Record, into: dict[str, Score], gate: asyncio.Semaphore, limit: _RateLimit
    ) -> None:
        assert record.trace is not None and self.adk_worker is not None

        async def ask(model: str, config: dict[str, Any], prompt: str, k: int) -> str | tuple[str, str]:
            return await self._adk_sample(model, config, prompt, k, gate, limit)

        async def ask_vertex(request: dict[str, Any]) -> str | tuple[str, str]:
            return await self._vertex_answer(request, gate, limit)

        into[name] = await judge_case(name, criterion, record.question, record.trace, self.adk_worker, ask, ask_vertex)

    async def _vertex_answer(self, request: dict[str, Any], gate: asyncio.Semaphore, limit: _RateLimit) -> str | tuple[str, str]:
        """One evaluation of ADK's Vertex facade, by the Vertex AI evaluation service: from the
        judge cache, else asked (rate-limited, retried, within the budget); ("budget" | "outage",
        why) when it could not be had."""
        key = hashlib.sha256(json.dumps(["adk-vertex", request], sort_keys=True).encode()).hexdigest()
        answer = self._cached(key)
        if answer is not None:
            self.usage.cached += 1
            return answer.text
        managed = self.managed

        async def evaluated() -> str:
            return str(await managed.evaluate_dataset(request))

        text = await self._asked(evaluated, gate, limit, "the Vertex AI evaluation service")
        if isinstance(text, tuple):
            return text
        self._store(key, Answer(text=text))
        self.budget.spend(1)
        self.usage.calls += 1
        return text

    async def _asked(self, call: Callable[[], Awaitable[T]], gate: asyncio.Semaphore, limit: _RateLimit, what: str) -> T | tuple[str, str]:
        """``call``'s answer (rate-limited, retried, within the budget), or ("budget" | "outage",
        why) when it could not be had: an unreachable ``what`` is an outage, never a fail."""
        try:
            return await self._retrying(call, gate, limit)
        except _BudgetSpent as spent:
            self.budget.skipped += 1
            return ("budget", f"not judged: {spent}")
        except Exception as error:  # noqa: BLE001 - the reason goes on the score
            self.usage.failed += 1
            return ("outage", f"not judged: {what} could not be reached ({describe(error)})")

    async def _adk_sample(
        self, model: str, config: dict[str, Any], prompt: str, k: int, gate: asyncio.Semaphore, limit: _RateLimit
    ) -> str | tuple[str, str]:
        """The k-th sample of one of ADK's judge requests: from the judge cache, else asked (paced,
        retried, within the budget); ("budget" | "outage", why) when it could not be had."""
        key = hashlib.sha256(json.dumps(["adk", model, config, prompt, k], sort_keys=True).encode()).hexdigest()
        answer = self._cached(key)
        if answer is not None:
            self.usage.cached += 1
            return answer.text
        client = self.client
        generate = getattr(client, "generate_text", None)
        if generate is None:
            return ("outage", "not judged: the judge client cannot send ADK's judge requests")
        quota = str(getattr(client, "key", ""))

        def call() -> Awaitable[Answer]:
            return paced_call(self.pacer, model, quota, lambda: generate(model, prompt, config), _tokens)

        asked = await self._asked(call, gate, limit, "the judge model")
        if isinstance(asked, tuple):
            return asked
        answer = asked
        self._store(key, answer)
        cost = _cost(model, answer, self.settings.prices)
        self.budget.spend(1, cost)
        self.usage.calls += 1
        self.usage.input_tokens += answer.input_tokens
        self.usage.output_tokens += answer.output_tokens
        self.usage.cost_usd += cost
        return answer.text

    async def _one(self, metric: JudgeMetric, record: Record, into: dict[str, Score], gate: asyncio.Semaphore, limit: _RateLimit) -> None:
        assert record.trace is not None
        if metric.managed:
            into[metric.name] = await self._managed(metric, record, gate, limit)
            return
        prompt = self.templates[metric.name].render(**judge_context(record.question, record.trace))
        results = await asyncio.gather(*(self._sample(metric, prompt, k, gate, limit) for k in range(metric.samples)))
        parsed = [r for r in results if isinstance(r, tuple)]
        failures = [r for r in results if isinstance(r, str)]
        if not parsed:
            if all(f.startswith(SKIPPED) for f in failures):
                self.budget.skipped += 1  # one score the budget did not let be asked
            into[metric.name] = Score(value=None, explanation=failures[0], details={"model": metric.model, "failures": failures})
            return
        raw = statistics.median(score for score, _ in parsed)
        explanation = min(parsed, key=lambda p: abs(p[0] - raw))[1]
        into[metric.name] = Score(
            value=(raw - metric.low) / (metric.high - metric.low),
            explanation=explanation,
            details={
                "raw_score": raw,
                "range": [metric.low, metric.high],
                "samples": [s for s, _ in parsed],
                "model": metric.model,
                "failures": failures,
            },
        )

    async def _managed(self, metric: JudgeMetric, record: Record, gate: asyncio.Semaphore, limit: _RateLimit) -> Score:
        assert record.trace is not None and metric.managed is not None
        prompt = "\n".join(user_turns(record.question, record.trace))
        response = record.trace.final_response or ""
        key = hashlib.sha256(json.dumps([metric.name, metric.managed, prompt, response]).encode()).hexdigest()
        cached = self._cached(key)
        raw: float | None
        if cached is not None:
            self.usage.cached += 1
            data = json.loads(cached.text)
            raw, explanation = data["score"], data["explanation"]
        else:
            try:
                managed = self.managed
                raw, explanation = await self._retrying(lambda: managed.evaluate(metric.managed, prompt, response), gate, limit)
                self.budget.spend(1)
            except _BudgetSpent as spent:
                self.budget.skipped += 1
                return Score(value=None, explanation=str(spent), details={"spec": metric.managed})
            except Exception as error:  # noqa: BLE001 - the service's failure is this score's reason
                self.usage.failed += 1
                return Score(value=None, explanation=f"managed metric call failed: {describe(error)}", details={"spec": metric.managed})
            self.usage.calls += 1
            if raw is not None:
                self._store(key, Answer(text=json.dumps({"score": raw, "explanation": explanation})))
        if raw is None:
            return Score(value=None, explanation=explanation, details={"spec": metric.managed})
        value = (float(raw) - metric.low) / (metric.high - metric.low)
        if not 0.0 <= value <= 1.0:
            return Score(
                value=None, explanation=f"score {raw} is outside {metric.low:g}..{metric.high:g}", details={"spec": metric.managed}
            )
        return Score(
            value=value, explanation=explanation, details={"spec": metric.managed, "raw_score": raw, "range": [metric.low, metric.high]}
        )

    async def _sample(
        self, metric: JudgeMetric, prompt: str, k: int, gate: asyncio.Semaphore, limit: _RateLimit
    ) -> tuple[float, str] | str:
        key = hashlib.sha256(json.dumps([metric.name, metric.model, prompt, k]).encode()).hexdigest()
        answer = self._cached(key)
        if answer is None:
            try:
                answer = await self._call(metric.model, prompt, gate, limit)
            except _BudgetSpent as spent:
                return str(spent)
            except Exception as error:  # noqa: BLE001 - the judge's failure is this score's reason
                self.usage.failed += 1
                return f"judge call failed: {describe(error)}"
            self._store(key, answer)
            cost = _cost(metric.model, answer, self.settings.prices)
            self.budget.spend(1, cost)
            self.usage.calls += 1
            self.usage.input_tokens += answer.input_tokens
            self.usage.output_tokens += answer.output_tokens
            self.usage.cost_usd += cost
        else:
            self.usage.cached += 1
        return parse_answer(answer.text, metric.low, metric.high)

    async def _call(self, model: str, prompt: str, gate: asyncio.Semaphore, limit: _RateLimit) -> Answer:
        client = self.client
        assert client is not None
        key = str(getattr(client, "key", ""))

        def ask() -> Awaitable[Answer]:
            return paced_call(self.pacer, model, key, lambda: client.generate(model, prompt), _tokens)

        return await self._retrying(ask, gate, limit)

    async def _retrying(self, call: Callable[[], Awaitable[T]], gate: asyncio.Semaphore, limit: _RateLimit) -> T:
        """One judge call in a concurrency slot, rate-limited, retried on 429 / 503 (the shared
        policy, backing off out of the slot), with a timeout per attempt."""

        @asynccontextmanager
        async def slot() -> AsyncIterator[None]:
            async with gate:
                if self.budget.limited:
                    while not self.budget.admits(self._in_flight):
                        if self.budget.reached() is not None or not self._in_flight:
                            raise _BudgetSpent(self.budget.skip_reason())
                        await asyncio.sleep(0.01)  # let the calls in flight count first
                self._in_flight += 1  # counted while it waits for the rate limit too
                try:
                    await limit.wait()
                    yield
                finally:
                    self._in_flight -= 1

        policy = RetryPolicy(retries=self.settings.retries, backoff_initial_s=self.settings.backoff_initial_s)

        async def timed() -> T:
            try:
                return await asyncio.wait_for(call(), self.settings.timeout_s)
            except TimeoutError as error:
                tag(error, protocol.MODEL)  # the judge's model did not answer in time
                raise

        return await call_with_retries(timed, policy, slot)

    def _cached(self, key: str) -> Answer | None:
        if self.settings.cache_dir is None:
            return None
        file = self.settings.cache_dir / key[:2] / f"{key}.json"
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            return Answer(text=str(data["text"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _store(self, key: str, answer: Answer) -> None:
        if self.settings.cache_dir is None:
            return
        file = self.settings.cache_dir / key[:2] / f"{key}.json"
        # A cache that cannot be written only costs money, never correctness; runs sharing it never
        # read half an answer.
        with contextlib.suppress(OSError):
            write_atomic(file, json.dumps({"text": answer.text}))


def parse_answer(text: str, low: float, high: float) -> tuple[float, str] | str:
    """(raw score, explanation), or the reason the answer is unusable."""
    try:
        data = json.loads(text)
    except ValueError:
        return f"judge answer is not JSON: {text[:120]!r}"
    if not isinstance(data, dict) or not isinstance(data.get("score"), int | float) or isinstance(data.get("score"), bool):
        return f"judge answer has no numeric score: {text[:120]!r}"
    score = float(data["score"])
    if not low <= score <= high:
        return f"judge score {score:g} is outside {low:g}..{high:g}"
    return score, str(data.get("explanation", ""))


def _tokens(answer: Answer) -> int:
    return answer.input_tokens + answer.output_tokens


def _cost(model: str, answer: Answer, prices: dict[str, dict[str, float]]) -> float:
    from agent_eval_action.metrics.trace_metrics import price_for, tokens_cost

    price = price_for(model, prices)
    if price is None:
        return 0.0
    return tokens_cost(price, answer.input_tokens, answer.output_tokens, answer.cached_tokens)
