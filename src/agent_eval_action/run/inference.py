"""Inference: running questions through the agent (and the judges through their model), apart
from scoring them, as ADK's ``BaseEvalService`` keeps ``perform_inference`` apart from
``evaluate``. An :class:`InferenceRequest` goes in, an :class:`InferenceResult` comes out; what
is scored of it is the caller's business (``service/evaluation.py``).

An :class:`Inference` holds what one run's datasets share: the agent's runner (worker processes
by default), the event loop they live on, the limiter that learns the model API's pace, and the
budget. Nothing of one request is kept for the next."""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agent_eval_action.config import Config
from agent_eval_action.datasets import Record
from agent_eval_action.datasets.adk.config import ADK_VERTEX as VERTEX
from agent_eval_action.models.plan import runner_for
from agent_eval_action.models.questions import Question
from agent_eval_action.models.results import BudgetUse, ModelCalls, RunStats
from agent_eval_action.models.scores import JudgeUsage, Score
from agent_eval_action.models.traces import Trace
from agent_eval_action.run.adaptive import Limiter
from agent_eval_action.run.breaker import Breaker
from agent_eval_action.run.budget import Budget, live_calls
from agent_eval_action.run.pacing import Pacer, Quota
from agent_eval_action.run.progress import Progress
from agent_eval_action.run.run_pool import QuestionRunner, RunSettings, run_records
from agent_eval_action.run.workers import start as worker_start
from agent_eval_action.system import interrupt
from agent_eval_action.system.errors import UsageError
from agent_eval_action.system.logs import log

if TYPE_CHECKING:
    from agent_eval_action.run.agent.loader import LoadedAgent
    from agent_eval_action.run.judges.adk import AdkJudgeWorker
    from agent_eval_action.run.judges.client import JudgeClient
    from agent_eval_action.run.judges.engine import JudgeMetric
    from agent_eval_action.run.judges.managed import ManagedJudge
    from agent_eval_action.run.workers.pool import WorkerPool

NO_AGENT = "this dataset has no recorded runs; pass --agent module:attr (e.g. app.agent:root_agent) or --agent-url URL"


@dataclass(frozen=True)
class InferenceRequest:
    """Questions to run through the agent, each ``runs`` times. ``name``: what the progress line
    calls them (the dataset's name)."""

    name: str
    records: Sequence[Record]
    runs: int = 1

    @property
    def question_runs(self) -> int:
        return len(self.records) * self.runs


@dataclass(frozen=True)
class InferenceResult:
    """What the agent did: every question's runs, in request order, run by run (a question the
    run could not start carries its reason as ``trace.skipped``). ``base``: compare-with = "base",
    the base's agent's runs of the same questions (None when it ran none). ``model_calls``: live
    and replayed model calls, when the model-call cache was on."""

    records: list[Record]
    base: list[Record] | None = None
    model_calls: ModelCalls | None = None

    @property
    def base_model_calls(self) -> int:
        return sum(len(r.trace.llm_calls or []) for r in self.base or [] if r.trace is not None)


def run_settings(config: Config) -> RunSettings:
    fixed = None if config.concurrency == "auto" else config.concurrency
    # How many runs a question gets is the request's (InferenceRequest.runs), not the settings'.
    return RunSettings(concurrency=fixed, max_concurrency=config.max_concurrency, timeout_s=config.timeout, retries=config.retries)


class Inference:
    """Runs questions through the agent ``config`` names, over every dataset of one run.

    ``workdir``: the folder a run from a subfolder also imports from (default: the working
    directory); the base's checkout for the base's agent. ``progress``: where the progress line goes."""

    def __init__(
        self,
        config: Config,
        *,
        progress: TextIO,
        workdir: Path | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        pacer: Pacer | None = None,
    ):
        self.config = config
        self.progress = progress
        self.workdir = workdir
        # One loop for every dataset: the agent's runner and sessions must not outlive their loop.
        # A loop handed in is its giver's to close (the base's agent runs on ours).
        # The command line may have started the agent's workers on a loop of its own already.
        self.loop = loop or worker_start.claim_loop() or asyncio.new_event_loop()
        self._owns_loop = loop is None
        self.settings = run_settings(config)
        # One limiter and one budget for every dataset of the run: what the limiter learnt of the
        # model API carries over, and the budget is the run's, not each dataset's.
        self.limiter: Limiter | None = None
        self.budget = Budget(config.max_model_calls, config.max_cost_usd, prices=config.price_table())
        # And one breaker: a model API found down stays down for the rest of the run (breaker.py).
        self.breaker = Breaker()
        # One pacing of the model calls per model and key for the run: the agent's (and the
        # base's) workers and the judges ask it for every call (pacing.py).
        self.pacer = pacer or Pacer({model: Quota(q.rpm, q.tpm) for model, q in config.quota.items()})
        self._pool: WorkerPool | None = None
        self._runner: QuestionRunner | None = None
        self._runner_error: UsageError | None = None
        self._killed: list[str] = []
        # The agent's tree (agent_worker/tree.py), asked once of the runner that loaded it: {} when it could not say.
        self._tree: dict[str, Any] | None = None
        self._loaded: LoadedAgent | None = None
        # Set in the agent's environment besides what run/agent/env.py gives it.
        self.extra_env: dict[str, str] = {}
        # compare-with = "base": the merge-base's agent, run beside this one question by question.
        self.base: Inference | None = None

    def beside(self, config: Config, workdir: Path, env: Mapping[str, str] | None = None) -> None:
        """Runs the base's agent (its config, its checkout, ``env`` laid over its environment:
        base_run.base_paths) beside this one from now on: on this loop, so both sides' questions
        go through one limiter and one budget, interleaved."""
        self.base = Inference(config, progress=self.progress, workdir=workdir, loop=self.loop, pacer=self.pacer)
        # Its files are hashed before and after the run (base_run.py): nothing of its own may
        # write there, bytecode included.
        self.base.extra_env = {"PYTHONDONTWRITEBYTECODE": "1", **(env or {})}

    def launch(self, question_runs: int) -> None:
        """With an agent to run in worker processes, starts them as soon as the questions to run
        are known, before they are scored or their scorer is set up: they import ADK and load the
        agent meanwhile. ``question_runs`` sizes the pool when ``workers`` is not set."""
        if interrupt.requested() or question_runs == 0:
            return
        c = self.config
        if self._pool is None and self._runner is None and runner_for(c.agent, c.agent_url, c.in_process) == "workers":
            self._pool = self._new_pool(question_runs)
            self.loop.run_until_complete(self._pool.launch())
        if self.base is not None:
            self.base.launch(question_runs)

    def perform(self, request: InferenceRequest) -> InferenceResult:
        """Every question of ``request`` run through the agent (and the base's, beside it)."""
        records = list(request.records)
        if not records:
            return InferenceResult(records=[])
        settings = replace(self.settings, runs=request.runs)
        if interrupt.requested():  # Ctrl-C, SIGTERM: nothing more starts
            return InferenceResult(records=_interrupted(records, settings.runs))
        try:
            runner = self.runner(request.question_runs)
            base = self._base_runner(request.question_runs)
        except UsageError:
            if not interrupt.requested():
                raise
            return InferenceResult(records=_interrupted(records, settings.runs))
        sides = 1 if base is None else 2
        progress = Progress(request.name, len(records) * settings.runs * sides, stream=self.progress, mode=self.config.progress)
        if self.limiter is None:
            self.limiter = settings.limiter()
            # A quota paces the calls; "too much at once" (a 429 naming no delay) halves the limit.
            self.limiter.paced = self.pacer.questions_served
            self.pacer.on_congestion = self.limiter.congested
        theirs: list[Record] | None = None
        try:
            if base is None:
                ran = self.loop.run_until_complete(
                    run_records(records, runner, settings, progress, limiter=self.limiter, budget=self.budget, breaker=self.breaker)
                )
            else:
                ran, theirs = self._run_beside(records, runner, base, settings, progress)
        finally:
            progress.close()
        return InferenceResult(records=ran, base=theirs, model_calls=_model_calls(ran))

    def stats(self) -> RunStats | None:
        """How the agent ran over the whole run (None when nothing ran it)."""
        if self.limiter is None:
            return None
        stats = self.limiter.stats()
        stats.throttled = self.pacer.throttled()
        stats.paced = self.pacer.describe() or None
        if self.budget.limited:
            stats.budget = self.budget.use()
        return stats

    def killed(self) -> list[str]:
        """How this agent's worker processes were killed by signals nothing of ours sent."""
        return [*self._killed, *(self._pool.killed if self._pool is not None else [])]

    def runner(self, question_runs: int | None = None) -> QuestionRunner:
        """The agent runner, built on first use: worker processes under the agent's Python by
        default. A failure to load the agent is remembered: every dataset that needs it reports it."""
        if self._runner_error is not None:
            raise self._runner_error
        if self._runner is None:
            try:
                self._runner = self._make_runner(question_runs)
            except UsageError as error:
                self._runner_error = error
                raise
        return self._runner

    def agent_tree(self) -> dict[str, Any]:
        """The agent's tree (``agent_worker.tree``: its agents, tools and sub-agents) as the loaded
        agent has it, with its ``app_name``, asked once; {} when no agent of ours was loaded (over HTTP, not yet, or
        it failed) or it could not be described."""
        if self._tree is None and self._runner is not None:
            self._tree = {}
            try:
                if self._loaded is not None:
                    from agent_eval_action.agent_worker.tree import agent_tree

                    self._tree = {**agent_tree(self._loaded.root_agent), "app_name": self._loaded.app_name}
                elif self._pool is not None and self._runner is self._pool:
                    self._tree = {**self.loop.run_until_complete(self._pool.describe()), "app_name": self._pool.info.get("app_name")}
            except Exception as error:  # noqa: BLE001 - the names are a hint beside the run: a failure to describe them is only logged
                log.info("the agent's tools and sub-agents could not be described: %s", error)
        return self._tree or {}

    def _base_runner(self, question_runs: int) -> QuestionRunner | None:
        if self.base is None:
            return None
        try:
            return self.base.runner(question_runs)
        except UsageError as error:
            raise UsageError(f"the base's agent (compare-with = base) could not be run: {error}") from None

    def _make_runner(self, question_runs: int | None) -> QuestionRunner:
        c = self.config
        runner = runner_for(c.agent, c.agent_url, c.in_process)
        if runner == "http":
            from agent_eval_action.run.http_runner import HttpAgentRunner

            return HttpAgentRunner.from_config(c)
        if runner == "in_process":
            from agent_eval_action.run.agent.in_process import AdkRunner
            from agent_eval_action.run.agent.loader import load_agent
            from agent_eval_action.run.workers.start import agent_spec

            assert c.agent is not None
            self._loaded = load_agent(agent_spec(c.agent), c.import_root())
            return AdkRunner(
                self._loaded,
                capture_spans=c.capture_spans,
                model_cache=self._model_cache(),
                user_simulator=c.user_simulator.settings(),
                pacer=self.pacer,
            )
        if runner == "workers":
            assert c.agent is not None
            pool = self._pool or self._new_pool(question_runs)
            self._pool = pool
            log.info("starting %d agent worker process(es) for %s with %s", pool.settings.workers, c.agent, pool.settings.python)
            self.loop.run_until_complete(pool.start())
            log.info(
                "agent loaded: %s (google-adk %s, Python %s)",
                pool.info.get("app_name"),
                pool.info.get("adk_version"),
                pool.info.get("python"),
            )
            return pool
        raise UsageError(NO_AGENT)

    def _new_pool(self, question_runs: int | None) -> WorkerPool:
        from agent_eval_action.run.agent.env import agent_environment
        from agent_eval_action.run.workers.pool import WorkerPool
        from agent_eval_action.run.workers.start import WorkerSettings

        c = self.config
        assert c.agent is not None
        env = agent_environment(os.environ, also_withhold=[c.agent_auth_env], pass_through=c.agent_env.allow, remove=c.agent_env.withhold)
        env.update(self.extra_env)
        if c.import_root().resolve() != Path.cwd().resolve():
            # The agent runs from the project's folder; a module beside a run from a subfolder still imports.
            here = str(self.workdir or Path.cwd())
            env["PYTHONPATH"] = os.pathsep.join([*([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []), here])
        return WorkerPool(
            WorkerSettings(
                agent=c.agent,
                python=worker_start.interpreter(c.agent_python),
                cwd=c.import_root(),
                env=env,
                capture_spans=c.capture_spans,
                workers=c.agent_worker_count(question_runs),
                model_cache=self._model_cache(),
                user_simulator=c.user_simulator.settings(),
                warm_start=c.warm_start,
            ),
            self.pacer,
        )

    def _model_cache(self) -> str | None:
        # Off for both sides when the base runs beside (the check's plan unsets it): a replay would hide drift.
        return str(Path(self.config.model_cache).resolve()) if self.config.model_cache else None

    def _run_beside(
        self, to_run: list[Record], ours: QuestionRunner, theirs: QuestionRunner, settings: RunSettings, progress: Progress
    ) -> tuple[list[Record], list[Record]]:
        """Each question run by both agents, interleaved, which side first alternating (base q1,
        ours q1, ours q2, base q2, ...) in one pool: both sides meet the same minutes, model version, machine, limiter
        and budget. Returns our runs and the base's."""
        copies = [Record(question=r.question.model_copy(), run=r.run) for r in to_run]
        base_side = {id(copy.question) for copy in copies}
        both = _Beside(ours, theirs, base_side)
        # Which side starts first alternates question by question: a side always first would meet
        # the pool's start (and its queue) first every time, and an A/A pair would read as faster.
        interleaved = [record for i, pair in enumerate(zip(copies, to_run, strict=True)) for record in (pair if i % 2 == 0 else pair[::-1])]
        done = self.loop.run_until_complete(
            run_records(interleaved, both, settings, progress, limiter=self.limiter, budget=self.budget, breaker=self.breaker)
        )
        mine = [r for r in done if id(r.question) not in base_side]
        base = [r for r in done if id(r.question) in base_side]
        return mine, base

    def close(self) -> None:
        if self.base is not None:  # its workers only: the loop is ours
            self.base.close()
        if self._pool is not None and not self.loop.is_closed():
            self.loop.run_until_complete(self._pool.close())
        if self._pool is not None:
            self._killed += self._pool.killed
        self._pool = None
        worker_start.discard()  # started for a run that did not need them
        if self._owns_loop and not self.loop.is_closed():
            self.loop.close()


@dataclass(frozen=True)
class Judged:
    """The judges' scores of one dataset's runs, by (question id, run), and what asking cost."""

    scores: dict[tuple[str, int], dict[str, Score]]
    usage: JudgeUsage | None = None


class Judges:
    """The LLM judges of one run: set up on first use; their budget is the run's, carried from
    dataset to dataset."""

    def __init__(self, config: Config, pacer: Pacer | None = None, *, only_adk: bool = False):
        self.config = config
        # Only ADK's judged criteria of the datasets' configs: none of the config's judges.
        self.only_adk = only_adk
        self._adk_worker: AdkJudgeWorker | None = None
        # The run's pacing, shared with the agent's workers: a judge of the same model and key
        # counts against the same quota.
        self.pacer = pacer
        self._setup: tuple[list[JudgeMetric], JudgeClient | None, ManagedJudge | None] | None = None
        self.spent: BudgetUse | None = None

    def judge(
        self, records: Sequence[Record], loop: asyncio.AbstractEventLoop, adk_criteria: Mapping[str, dict[str, Any]] | None = None
    ) -> Judged:
        """``adk_criteria``: the dataset's criteria that ADK's judged evaluators compute."""
        from agent_eval_action.run.judges.adk import AdkJudgeWorker
        from agent_eval_action.run.judges.engine import JudgeEngine, JudgeSettings

        metrics, client, managed = self._set_up()
        if managed is None and any(name in VERTEX for name in adk_criteria or {}):
            managed = self._vertex
        if adk_criteria and self._adk_worker is None:
            self._adk_worker = AdkJudgeWorker()  # started on its first request (or ahead), kept for the run's datasets
        judge = self.config.judge
        settings = JudgeSettings(
            concurrency=judge.concurrency,
            rate_limit=judge.rate_limit,
            retries=judge.retries,
            timeout_s=judge.timeout,
            cache_dir=Path(judge.cache_dir) if judge.cache_dir else None,
            prices=self.config.price_table(),
            max_calls=judge.max_calls,
            max_cost_usd=judge.max_cost_usd,
        )
        engine = JudgeEngine(metrics, settings, client, managed, pacer=self.pacer, adk_criteria=adk_criteria, adk_worker=self._adk_worker)
        if self.spent is not None:  # the judges' budget is the run's: carry what was spent
            engine.budget.spend(self.spent.calls, self.spent.cost_usd, units=self.spent.calls)
        if interrupt.requested():  # Ctrl-C, SIGTERM: no judge call starts; the scores say why
            unjudged = Score(value=None, explanation="not judged: the run was interrupted")
            scores = {(r.question.id, r.run): dict.fromkeys([*(m.name for m in metrics), *(adk_criteria or {})], unjudged) for r in records}
        else:
            scores = loop.run_until_complete(engine.score(records))
        if engine.budget.limited:
            spent = engine.budget.use()
            if self.spent is not None:
                spent.skipped += self.spent.skipped
            self.spent = spent
        return Judged(scores=scores, usage=engine.usage)

    @functools.cached_property
    def _vertex(self) -> ManagedJudge | None:
        """The Vertex AI evaluation service for ADK's Vertex-backed criteria, looked for once: when
        its SDK and credentials are here (else those criteria say they could not be computed)."""
        from agent_eval_action.run.judges.managed import managed_from_env

        try:
            return managed_from_env()
        except ImportError:  # the vertex extra is not installed
            return None

    def start_adk_worker(self) -> None:
        """ADK's evaluator process started now (while the agent runs), not at its first request."""
        from agent_eval_action.run.judges.adk import AdkJudgeWorker

        if self._adk_worker is None:
            self._adk_worker = AdkJudgeWorker()
        self._adk_worker.start()

    def close(self) -> None:
        """Ends the process of ADK's evaluators, if one was started."""
        if self._adk_worker is not None:
            self._adk_worker.close()

    def _set_up(self) -> tuple[list[JudgeMetric], JudgeClient | None, ManagedJudge | None]:
        if self._setup is None:
            from agent_eval_action.run.judges.client import judge_from_env
            from agent_eval_action.run.judges.managed import managed_from_env
            from agent_eval_action.run.judges.setup import judge_metrics

            metrics = [] if self.only_adk else judge_metrics(self.config)
            managed = managed_from_env() if any(m.managed for m in metrics) else None
            self._setup = (metrics, judge_from_env(), managed)
        return self._setup


class _Beside:
    """A runner over both sides: a question runs on the base's agent when it is one of the base's
    copies (``base_side``: their ids), else on ours."""

    def __init__(self, ours: QuestionRunner, theirs: QuestionRunner, base_side: set[int]):
        self.ours, self.theirs, self.base_side = ours, theirs, base_side

    async def run_question(self, question: Question, timeout_s: float) -> Trace:
        side = self.theirs if id(question) in self.base_side else self.ours
        return await side.run_question(question, timeout_s)


def _interrupted(records: list[Record], runs: int) -> list[Record]:
    return [Record(question=r.question, trace=Trace(skipped=interrupt.REASON), run=n) for n in range(runs) for r in records]


def _model_calls(records: list[Record]) -> ModelCalls | None:
    """Live and replayed model calls of the runs, when the model-call cache was on."""
    traces = [r.trace for r in records if r.trace is not None and r.trace.replayed_model_calls is not None]
    if not traces:
        return None
    replayed = sum(t.replayed_model_calls or 0 for t in traces)
    return ModelCalls(live=sum(live_calls(t) for t in traces), replayed=replayed)
