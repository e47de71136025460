"""Evaluating dataset files: load, plan, run the agent where a dataset has no recorded runs
(inference, ``run/inference.py``), score (``scoring/``).

Shared by ``evaluate``, ``check``, ``baseline update``, ``convert`` and the Python API. The
steps hand typed values to each other: a :class:`Plan` (what is ready to score, what the
baseline's scores cover, the :class:`InferenceRequest` for the rest), the
:class:`InferenceResult`, and the scores; so each is callable alone (a recorded inference
result scores without running anything).
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from agent_eval_action.config import Config
from agent_eval_action.core.collector import LIBRARY, Collector
from agent_eval_action.core.errors import DatasetError, UsageError
from agent_eval_action.core.logs import log
from agent_eval_action.core.models import DatasetResult, Problem, QuestionResult, RunStats
from agent_eval_action.datasets import LoadedDataset, Record, load_dataset
from agent_eval_action.metrics import MetricContext
from agent_eval_action.run.inference import Inference, InferenceRequest, InferenceResult, Judges
from agent_eval_action.run.progress import Progress
from agent_eval_action.scoring.reuse import question_hash, split_reusable
from agent_eval_action.scoring.scorer import Scorer

RECORDED_FORMATS = ("csv", "jsonl", "adk_history")


@dataclass(frozen=True)
class Plan:
    """A dataset sorted before inference: ``ready``, the records that carry their runs and the
    file's problems, scored as they are; ``carried``, the baseline's results of the unchanged
    questions (``scoring/reuse.py``), not run again; ``hashes``, the content hash of each
    question run now; ``request``, the questions the agent must run."""

    dataset: LoadedDataset
    ready: list[Record | DatasetError]
    request: InferenceRequest
    carried: list[QuestionResult] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FileEvaluation:
    """One file evaluated: its result (None when it could not be: see ``problems``), and with
    compare-with = "base", the base's run of the same questions and what that run made."""

    result: DatasetResult | None
    problems: list[Problem]
    base: DatasetResult | None = None
    base_questions: int = 0
    base_calls: int = 0


class Evaluation:
    """The datasets of one run, evaluated file by file; owns the run's :class:`Inference` (the
    agent's processes and event loop) and its :class:`Judges` until :meth:`close`.

    ``collector``: the cyclic garbage collector's policy while scoring, said by whoever owns the
    process (the command line: ``core.collector.OWN_PROCESS``; a library call leaves it alone).
    ``workdir``: the folder a run from a subfolder also imports from."""

    def __init__(self, config: Config, err: TextIO | None = None, *, collector: Collector = LIBRARY, workdir: Path | None = None):
        self.config = config
        self.err = err or sys.stderr
        self.collector = collector
        self.inference = Inference(config, progress=self.err, workdir=workdir)
        self.judges = Judges(config, self.inference.pacer) if config.judges or config.metric_definitions or config.managed_metrics else None

    def beside(self, config: Config, workdir: Path) -> None:
        """compare-with = "base": the base's agent (its config, its checkout) runs beside ours."""
        self.inference.beside(config, workdir)

    def evaluate(self, path: str, reuse: DatasetResult | None = None, also: tuple[str, ...] = ()) -> FileEvaluation:
        """Loads, runs and scores one file. ``also``: where the file may resolve besides the
        repository (one the user named); ``reuse``: a baseline whose unchanged questions need
        not run again (``reuse.py`` says when)."""
        scorer = self.scorer()
        try:
            dataset = load_dataset(path, also)
            if self.config.shard:
                from agent_eval_action.scoring.shards import keep_shard

                keep_shard(dataset, self.config.shard)
            if dataset.format in RECORDED_FORMATS and self.judges is None:  # every row holds its run: stream it
                done = self._streamed(dataset, scorer)
            else:
                plan = self.plan(dataset, reuse)
                self.inference.launch(plan.request.question_runs)
                done = self.score(plan, self._infer(plan, scorer), scorer)
        except (DatasetError, UsageError) as error:
            return FileEvaluation(
                result=None,
                problems=[Problem(path=path, message=error.message() if isinstance(error, DatasetError) else f"{path}: {error}")],
            )
        if done.result is not None:
            for warning in done.result.warnings:
                log.warning(warning)
        return done

    def scorer(self) -> Scorer:
        """The run's scorer, every setting given to it here."""
        c = self.config
        custom = []
        if c.custom_metrics:
            from agent_eval_action.metrics.custom import custom_metrics

            custom = custom_metrics(c)
        return Scorer.for_names(
            c.metrics,
            MetricContext(prices=c.price_table()),
            custom=custom,
            seed=c.seed,
            workers=c.processes(),
            pass_thresholds=c.pass_thresholds(),
            configured_thresholds=c.configured_thresholds(),
            collector=self.collector,
        )

    def plan(self, dataset: LoadedDataset, reuse: DatasetResult | None = None) -> Plan:
        """Sorts the dataset's records: ready to score, reused from ``reuse``, or to run."""
        items = list(dataset.records)
        to_run = [item for item in items if isinstance(item, Record) and item.trace is None]
        ready = [item for item in items if not (isinstance(item, Record) and item.trace is None)]
        runs = self.config.runs
        if not to_run:
            return Plan(dataset=dataset, ready=ready, request=InferenceRequest(dataset.name, [], runs))
        carried, to_run = split_reusable(to_run, reuse, runs)
        hashes = {record.question.id: question_hash(record.question) for record in to_run}
        return Plan(dataset=dataset, ready=ready, request=InferenceRequest(dataset.name, to_run, runs), carried=carried, hashes=hashes)

    def _infer(self, plan: Plan, scorer: Scorer) -> InferenceResult:
        if not plan.request.records:
            return InferenceResult(records=[])
        # The scorer sets itself up (importing ROUGE and its stemmer) while the agent runs.
        preparing = threading.Thread(target=scorer.prepare, name="agent-eval-prepare", daemon=True)
        preparing.start()
        try:
            return self.inference.perform(plan.request)
        finally:
            preparing.join()

    def score(self, plan: Plan, inference: InferenceResult, scorer: Scorer | None = None) -> FileEvaluation:
        """Scores what the plan had ready and what inference ran (judged first when judges are
        configured); with the base's runs in ``inference``, those too, as ours were."""
        scorer = scorer or self.scorer()
        dataset = plan.dataset
        items = [*plan.ready, *inference.records]
        judged = None
        if self.judges is not None:
            judged = self.judges.judge([item for item in items if isinstance(item, Record)], self.inference.loop)
        ours = scorer.for_dataset(dataset, carried=plan.carried, hashes=plan.hashes, extra=judged.scores if judged else None)
        result = ours.score_dataset(dataset, items)
        result.model_calls = inference.model_calls
        if judged is not None:
            result.judge_usage = judged.usage
        if self.inference.base is None or dataset.format in RECORDED_FORMATS:
            return FileEvaluation(result=result, problems=ours.problems)
        # The base's runs of the questions this dataset ran, scored as ours were; the questions
        # whose scores ours reused carry the same scores (they ran on neither side).
        theirs = scorer.for_dataset(dataset, carried=plan.carried, hashes=plan.hashes)
        theirs.prepare()
        base = theirs.score_dataset(dataset, [*plan.ready, *inference.base] if inference.base is not None else [])
        base.path, base.agent_fingerprint = result.path, None
        ran_beside = inference.base is not None
        return FileEvaluation(
            result=result,
            problems=ours.problems,
            base=base,
            base_questions=len(plan.request.records) if ran_beside else 0,
            base_calls=inference.base_model_calls,
        )

    def _streamed(self, dataset: LoadedDataset, scorer: Scorer) -> FileEvaluation:
        progress = Progress(f"scoring {dataset.name}", 0, stream=self.err, mode=self.config.progress)
        scoring = scorer.for_dataset(dataset, progress=progress.set_done)
        try:
            return FileEvaluation(result=scoring.score_dataset(dataset), problems=scoring.problems)
        finally:
            progress.close()

    def traced(self, dataset: LoadedDataset) -> list[Record | DatasetError]:
        """Every record with a trace: recorded ones as they are, the others run through the agent."""
        plan = self.plan(dataset)
        if not plan.request.records:
            return plan.ready
        return [*plan.ready, *self.inference.perform(plan.request).records]

    def stats(self) -> RunStats | None:
        """How the agent ran over the whole run (None when nothing ran it or judged it)."""
        stats = self.inference.stats()
        spent = self.judges.spent if self.judges is not None else None
        if stats is None and spent is None:
            return None
        stats = stats or RunStats(concurrency=str(self.config.concurrency))
        stats.judge_budget = spent
        return stats

    def close(self) -> None:
        self.inference.close()
