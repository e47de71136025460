"""Evaluating dataset files: load, run the agent where a dataset has no recorded runs, score.

Shared by ``evaluate``, ``check``, ``baseline update``, ``convert`` and the Python API.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO, cast

from agent_eval_action.config import Config
from agent_eval_action.core import interrupt
from agent_eval_action.core.errors import DatasetError, UsageError
from agent_eval_action.core.logs import log
from agent_eval_action.core.models import BudgetUse, DatasetResult, ModelCalls, Problem, Question, RunStats, Trace
from agent_eval_action.datasets import LoadedDataset, Record, load_dataset
from agent_eval_action.metrics import MetricContext
from agent_eval_action.run.adaptive import Limiter
from agent_eval_action.run.budget import Budget
from agent_eval_action.run.progress import Progress
from agent_eval_action.run.run_pool import QuestionRunner, RunSettings, run_records
from agent_eval_action.scoring.scorer import Scorer

RECORDED_FORMATS = ("csv", "jsonl", "adk_history")


@dataclass
class Evaluation:
    config: Config
    err: TextIO = field(default_factory=lambda: sys.stderr)
    problems: list[Problem] = field(default_factory=list)
    _runner: QuestionRunner | None = None
    _runner_error: UsageError | None = None
    _reuse: DatasetResult | None = None
    _model_calls: ModelCalls | None = None
    _pool: Any = None
    _event_loop: asyncio.AbstractEventLoop | None = None
    _judge_setup: tuple[list[Any], Any, Any] | None = None
    # One limiter and one budget for every dataset of the run: what the limiter learnt of the
    # model API carries over, and the budget is the run's, not each dataset's.
    _limiter: Limiter | None = None
    _budget: Budget | None = None
    _judge_budget: BudgetUse | None = None
    # compare-with = "base": the merge-base's agent (its config, its checkout), run beside this
    # one question by question in its own workers, on this loop, limiter and budget (see
    # :meth:`beside`); what it scored, dataset by dataset, and what it ran.
    twin: Evaluation | None = None
    twin_results: list[DatasetResult] = field(default_factory=list)
    twin_questions: int = 0
    twin_calls: int = 0
    _twin_items: list[Record | DatasetError] | None = None
    # The folder a run from a subfolder also imports from (default: the working directory); the
    # base's checkout for the twin.
    workdir: Path | None = None

    def beside(self, twin: Evaluation) -> None:
        """Runs ``twin`` (the base's agent) beside this one from now on: the same event loop, so
        both sides' questions go through one limiter and one budget, interleaved."""
        twin._event_loop = self._loop()
        self.twin = twin

    def settings(self) -> RunSettings:
        c = self.config
        fixed = None if c.concurrency == "auto" else c.concurrency
        return RunSettings(concurrency=fixed, max_concurrency=c.max_concurrency, timeout_s=c.timeout, retries=c.retries, runs=c.runs)

    def budget(self) -> Budget:
        if self._budget is None:
            c = self.config
            self._budget = Budget(c.max_model_calls, c.max_cost_usd, prices=c.price_table())
        return self._budget

    def stats(self) -> RunStats | None:
        """How the agent ran over the whole run (None when nothing ran it or judged it)."""
        if self._limiter is None and self._judge_budget is None:
            return None
        stats = self._limiter.stats() if self._limiter is not None else RunStats(concurrency=str(self.config.concurrency))
        if self._budget is not None and self._budget.limited:
            stats.budget = self._budget.use()
        stats.judge_budget = self._judge_budget
        return stats

    def runner(self) -> QuestionRunner:
        """The agent runner, built on first use: worker processes under the agent's Python by
        default. A failure to load the agent is remembered: every dataset that needs it reports it."""
        if self._runner_error is not None:
            raise self._runner_error
        if self._runner is None:
            try:
                self._runner = self._make_runner()
            except UsageError as error:
                self._runner_error = error
                raise
        return self._runner

    def _make_runner(self) -> QuestionRunner:
        c = self.config
        if c.agent_url:
            from agent_eval_action.run.http_runner import HttpAgentRunner

            return HttpAgentRunner.from_config(c)
        if c.agent and c.in_process:
            from agent_eval_action.run.adk_runner import AdkRunner
            from agent_eval_action.run.agent_loader import load_agent
            from agent_eval_action.run.worker_pool import agent_spec

            return AdkRunner(
                load_agent(agent_spec(c.agent), c.import_root()),
                capture_spans=c.capture_spans,
                model_cache=self._model_cache(),
                user_simulator=c.user_simulator.settings(),
            )
        if c.agent:
            pool = self._pool or self._new_pool()
            self._pool = pool
            log.info("starting %d agent worker process(es) for %s with %s", pool.settings.workers, c.agent, pool.settings.python)
            self._loop().run_until_complete(pool.start())
            log.info(
                "agent loaded: %s (google-adk %s, Python %s)",
                pool.info.get("app_name"),
                pool.info.get("adk_version"),
                pool.info.get("python"),
            )
            return cast("QuestionRunner", pool)
        raise UsageError("this dataset has no recorded runs; pass --agent module:attr (e.g. app.agent:root_agent) or --agent-url URL")

    def _new_pool(self) -> Any:
        import os

        from agent_eval_action.run.agent_env import agent_environment
        from agent_eval_action.run.worker_pool import WorkerPool, WorkerSettings

        c = self.config
        assert c.agent is not None
        env = agent_environment(os.environ, also_withhold=[c.agent_auth_env], pass_through=c.agent_env.allow, remove=c.agent_env.withhold)
        if c.import_root().resolve() != Path.cwd().resolve():
            # The agent runs from the project's folder; a module beside a run from a subfolder still imports.
            here = str(self.workdir or Path.cwd())
            env["PYTHONPATH"] = os.pathsep.join([*([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []), here])
        python = c.agent_python or sys.executable
        return WorkerPool(
            WorkerSettings(
                agent=c.agent,
                python=os.path.abspath(python) if os.sep in python else python,
                cwd=c.import_root(),
                env=env,
                capture_spans=c.capture_spans,
                workers=c.agent_worker_count(),
                model_cache=self._model_cache(),
                user_simulator=c.user_simulator.settings(),
            )
        )

    def _launch_workers(self) -> None:
        """With an agent to run in worker processes, starts them as soon as a dataset needs the
        agent, before its questions are read and sorted into reused and to run: they import ADK
        and load the agent meanwhile (closed unused if every question's score is reused)."""
        c = self.config
        if interrupt.requested():
            return
        if self._pool is None and self._runner is None and c.agent and not c.agent_url and not c.in_process:
            self._pool = self._new_pool()
            self._loop().run_until_complete(self._pool.launch())
        if self.twin is not None:
            self.twin._launch_workers()

    def _custom_metrics(self) -> list[Any]:
        if not self.config.custom_metrics:
            return []
        from agent_eval_action.metrics.custom import custom_metrics

        return custom_metrics(self.config)

    def _model_cache(self) -> str | None:
        if self.config.compare_with == "base":
            return None  # both sides ask the model now: a replay would hide the drift the base run is there to see
        return str(Path(self.config.model_cache).resolve()) if self.config.model_cache else None

    def evaluate_file(self, path: str, reuse: DatasetResult | None = None, also: tuple[str, ...] = ()) -> DatasetResult | None:
        """The dataset's result, or None when the file could not be evaluated (see :attr:`problems`).
        ``also``: where the file may resolve besides the repository (one the user named).

        ``reuse``: a baseline whose unchanged questions need not run again (``reuse.py`` says when)."""
        self._reuse = reuse
        scorer = self._scorer()
        try:
            dataset = load_dataset(path, also)
            if dataset.format not in RECORDED_FORMATS:  # its questions need the agent
                self._launch_workers()
            # ADK criteria that came with the dataset say how ADK's metrics are computed for it.
            scorer.context = replace(scorer.context, criteria=dataset.criterion_options)
            if self.config.shard:
                self._keep_shard(dataset)
            self._model_calls = None
            result = self._score(dataset, scorer)
            result.model_calls = self._model_calls
            if self.twin is not None and dataset.format not in RECORDED_FORMATS:
                self.twin_results.append(self._score_twin(dataset, scorer, result))
        except (DatasetError, UsageError) as error:
            self.problems.append(Problem(path=path, message=error.message() if isinstance(error, DatasetError) else f"{path}: {error}"))
            return None
        self.problems.extend(scorer.problems)
        for warning in result.warnings:
            log.warning(warning)
        return result

    def _scorer(self) -> Scorer:
        return Scorer.for_names(
            self.config.metrics,
            MetricContext(prices=self.config.price_table()),
            custom=self._custom_metrics(),
            seed=self.config.seed,
            workers=self.config.worker_count(),
            pass_thresholds=self.config.pass_thresholds(),
            configured_thresholds=self.config.configured_thresholds(),
        )

    def _score_twin(self, dataset: LoadedDataset, scorer: Scorer, ours: DatasetResult) -> DatasetResult:
        """The base's runs of the questions this dataset ran, scored as ours were; the questions
        whose scores ours reused carry the same scores (they ran on neither side)."""
        items, self._twin_items = self._twin_items or [], None
        twin = self._scorer()
        twin.context, twin.carried, twin.hashes = scorer.context, scorer.carried, scorer.hashes
        twin.prepare()
        result = twin.score_dataset(dataset, items)
        result.path, result.agent_fingerprint = ours.path, None
        return result

    def _keep_shard(self, dataset: LoadedDataset) -> None:
        from agent_eval_action.scoring.shards import in_shard, parse_shard

        assert self.config.shard is not None
        index, count = parse_shard(self.config.shard)
        source = dataset.records
        dataset.batches = None  # the slice is taken record by record
        # File problems are reported by the first shard only, so a merge lists them once.
        dataset.records = (
            item
            for item in source
            if (index == 1 if isinstance(item, DatasetError) else in_shard(dataset.name, item.question.id, index, count))
        )

    def _score(self, dataset: LoadedDataset, scorer: Scorer) -> DatasetResult:
        if self.config.judges or self.config.metric_definitions or self.config.managed_metrics:
            return self._score_with_judges(dataset, scorer)
        if dataset.format in RECORDED_FORMATS:  # every row holds its run: stream it
            progress = Progress(f"scoring {dataset.name}", 0, stream=self.err, mode=self.config.progress)
            scorer.progress = progress.set_done
            try:
                return scorer.score_dataset(dataset)
            finally:
                progress.close()
        return scorer.score_dataset(dataset, self.traced(dataset, scorer))

    def traced(self, dataset: LoadedDataset, scorer: Scorer | None = None) -> list[Record | DatasetError]:
        """Every record with a trace: recorded ones as they are, the others run through the agent
        (but for those whose baseline scores are reused: they go to ``scorer.carried``)."""
        items = list(dataset.records)
        to_run = [item for item in items if isinstance(item, Record) and item.trace is None]
        if not to_run:
            return items
        ready = [item for item in items if not (isinstance(item, Record) and item.trace is None)]
        settings = self.settings()
        if scorer is not None:
            from agent_eval_action.scoring.reuse import question_hash, split_reusable

            scorer.carried, to_run = split_reusable(to_run, self._reuse, settings.runs)
            scorer.hashes = {record.question.id: question_hash(record.question) for record in to_run}
            if not to_run:
                return ready
        if interrupt.requested():  # Ctrl-C, SIGTERM: nothing more starts
            return [*ready, *_interrupted(to_run, settings.runs)]
        preparing = None
        if scorer is not None:  # the scorer sets itself up while the agent runs
            import threading

            preparing = threading.Thread(target=scorer.prepare, name="agent-eval-prepare", daemon=True)
            preparing.start()
        try:
            runner = self.runner()
            twin = self._twin_runner()
        except UsageError:
            if not interrupt.requested():
                raise
            return [*ready, *_interrupted(to_run, settings.runs)]
        sides = 1 if twin is None else 2
        progress = Progress(dataset.name, len(to_run) * settings.runs * sides, stream=self.err, mode=self.config.progress)
        if self._limiter is None:
            self._limiter = settings.limiter()
        if twin is None:
            run = run_records(to_run, runner, settings, progress, limiter=self._limiter, budget=self.budget())
            ran = self._loop().run_until_complete(run)
        else:
            ran, theirs = self._run_beside(to_run, runner, twin, settings, progress)
            self._twin_items = [*ready, *theirs]
        progress.close()
        self._model_calls = _model_calls(ran)
        if preparing is not None:
            preparing.join()
        return [*ready, *ran]

    def _twin_runner(self) -> QuestionRunner | None:
        if self.twin is None:
            return None
        try:
            return self.twin.runner()
        except UsageError as error:
            raise UsageError(f"the base's agent (compare-with = base) could not be run: {error}") from None

    def _run_beside(
        self, to_run: list[Record], ours: QuestionRunner, theirs: QuestionRunner, settings: RunSettings, progress: Progress
    ) -> tuple[list[Record], list[Record]]:
        """Each question run by both agents, the base's first, interleaved (base q1, ours q1, base
        q2, ...) in one pool: both sides meet the same minutes, model version, machine, limiter
        and budget. Returns our runs and the base's."""
        assert self.twin is not None
        copies = [Record(question=r.question.model_copy(), run=r.run) for r in to_run]
        base_side = {id(copy.question) for copy in copies}
        both = _Beside(ours, theirs, base_side)
        interleaved = [record for pair in zip(copies, to_run, strict=True) for record in pair]
        run = run_records(interleaved, both, settings, progress, limiter=self._limiter, budget=self.budget())
        done = self._loop().run_until_complete(run)
        mine = [r for r in done if id(r.question) not in base_side]
        base = [r for r in done if id(r.question) in base_side]
        self.twin_questions += len(to_run)
        self.twin_calls += sum(len(r.trace.llm_calls or []) for r in base if r.trace is not None)
        return mine, base

    def _score_with_judges(self, dataset: LoadedDataset, scorer: Scorer) -> DatasetResult:
        from agent_eval_action.run.judges.engine import JudgeEngine, JudgeSettings

        items = self.traced(dataset, scorer)
        if self._judge_setup is None:
            from agent_eval_action.run.judges.client import judge_from_env
            from agent_eval_action.run.judges.managed import managed_from_env
            from agent_eval_action.run.judges.setup import judge_metrics

            metrics = judge_metrics(self.config)
            managed = managed_from_env() if any(m.managed for m in metrics) else None
            self._judge_setup = (metrics, judge_from_env(), managed)
        metrics, client, managed = self._judge_setup
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
        engine = JudgeEngine(metrics, settings, client, managed)
        if self._judge_budget is not None:  # the judges' budget is the run's: carry what was spent
            engine.budget.spend(self._judge_budget.calls, self._judge_budget.cost_usd, units=self._judge_budget.calls)
        records = [item for item in items if isinstance(item, Record)]
        if interrupt.requested():  # Ctrl-C, SIGTERM: no judge call starts; the scores say why
            from agent_eval_action.core.models import Score

            unjudged = Score(value=None, explanation="not judged: the run was interrupted")
            scorer.extra = {(r.question.id, r.run): {m.name: unjudged for m in metrics} for r in records}
        else:
            scorer.extra = self._loop().run_until_complete(engine.score(records))
        result = scorer.score_dataset(dataset, items)
        result.judge_usage = engine.usage
        if engine.budget.limited:
            spent = engine.budget.use()
            if self._judge_budget is not None:
                spent.skipped += self._judge_budget.skipped
            self._judge_budget = spent
        return result

    def _loop(self) -> asyncio.AbstractEventLoop:
        # One loop for every dataset: the agent's runner and sessions must not outlive their loop.
        if self._event_loop is None:
            self._event_loop = asyncio.new_event_loop()
        return self._event_loop

    def close(self) -> None:
        if self.twin is not None:  # its workers only: the loop is ours
            self.twin._close_pool()
            self.twin._event_loop = None
        self._close_pool()
        if self._event_loop is not None:
            self._event_loop.close()
            self._event_loop = None

    def _close_pool(self) -> None:
        if self._pool is not None and self._event_loop is not None:
            self._event_loop.run_until_complete(self._pool.close())
            self._pool = None


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
    total = sum(len(t.llm_calls or []) for t in traces)
    return ModelCalls(live=max(total - replayed, 0), replayed=replayed)
