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
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from agent_eval_action.config import Config
from agent_eval_action.datasets import LoadedDataset, Record, load_dataset
from agent_eval_action.metrics import MetricContext
from agent_eval_action.models.results import DatasetResult, Problem, QuestionResult, RunStats
from agent_eval_action.models.scores import JudgeUsage
from agent_eval_action.repo.observed import IMPORTED, RepositoryInputs
from agent_eval_action.run.agent.fingerprint import Environment
from agent_eval_action.run.inference import Inference, InferenceRequest, InferenceResult, Judges
from agent_eval_action.run.judges.adk import adk_judged_criteria
from agent_eval_action.run.progress import Progress
from agent_eval_action.scoring.reuse import pooled_runs, question_hash, split_reusable
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.service.references import AgentNames, unknown_names
from agent_eval_action.system import interrupt, reaper
from agent_eval_action.system.collector import LIBRARY, Collector
from agent_eval_action.system.errors import AgentLoadError, DatasetError, UsageError
from agent_eval_action.system.logs import log
from agent_eval_action.text.markdown import plural
from agent_eval_action.verdict.drift import finished
from agent_eval_action.verdict.noise import fewest_runs, gate_settings
from agent_eval_action.verdict.outages import outage_cause
from agent_eval_action.verdict.pass_test import drift_to_rerun, to_rerun

if TYPE_CHECKING:
    from agent_eval_action.run.metric_worker import MetricWorker

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
    # The import names of the baseline the carried runs come from: their observed inputs are read with them.
    carried_imports: tuple[str, ...] = ()
    # `baseline update`: questions that keep some of their stored runs and need fewer new ones,
    # one request per count, and the run number each question's new runs start at.
    partial: tuple[InferenceRequest, ...] = ()
    first_run: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class History:
    """What the base knows of a dataset before this run: its stored baseline and the agent code's
    hash it was made with. ``pool``: `baseline update` keeps the stored runs that still stand
    (``reuse.still_valid``) and runs each question up to ``baseline_runs``; otherwise the check
    re-runs questions in doubt against it (and, with compare-with = "base", pools its runs that
    still stand for the base's code, ``base_fingerprint``, with the base's runs now)."""

    stored: DatasetResult | None
    fingerprint: str | None = None
    pool: bool = False
    base_fingerprint: str | None = None


@dataclass(frozen=True)
class FileEvaluation:
    """One file evaluated: its result (None when it could not be: see ``problems``), and with
    compare-with = "base", the base's run of the same questions and what that run made."""

    result: DatasetResult | None
    problems: list[Problem]
    base: DatasetResult | None = None
    base_questions: int = 0
    base_reruns: int = 0
    base_calls: int = 0
    # `baseline update`: the questions a model/API outage kept from running, said in a line with
    # the cause; their previous record is kept whole in ``result`` (empty: all recorded).
    unrecorded: str = ""


class Evaluation:
    """The datasets of one run, evaluated file by file; owns the run's :class:`Inference` (the
    agent's processes and event loop) and its :class:`Judges` until :meth:`close`.

    ``collector``: the cyclic garbage collector's policy while scoring, said by whoever owns the
    process (the command line: ``system.collector.OWN_PROCESS``; a library call leaves it alone).
    ``workdir``: the folder a run from a subfolder also imports from."""

    def __init__(
        self,
        config: Config,
        err: TextIO | None = None,
        *,
        collector: Collector = LIBRARY,
        workdir: Path | None = None,
        inputs: RepositoryInputs | None = None,
        environment: Environment | None = None,
    ):
        self.config = config
        # What the agent's reads are named and hashed by (None: not recorded), and the
        # environment the runs are made in (run/agent/fingerprint.py) and its fingerprint.
        self.inputs = inputs
        self.environment = environment
        self.fingerprint = environment.fingerprint if environment is not None else None
        self.imported: set[str] = set()  # the module names the run's workers imported so far
        self.err = err or sys.stderr
        self.collector = collector
        self.inference = Inference(config, progress=self.err, workdir=workdir)
        self.judges = Judges(config, self.inference.pacer) if config.judges or config.metric_definitions or config.managed_metrics else None
        # ADK's judged criteria of a dataset's test_config.json (or its eval history): judged too.
        self._adk_judges: Judges | None = None
        self.metric_worker: MetricWorker | None = None

    def beside(self, config: Config, workdir: Path, env: Mapping[str, str] | None = None) -> None:
        """compare-with = "base": the base's agent (its config, its checkout, ``env`` laid over
        its environment) runs beside ours."""
        self.inference.beside(config, workdir, env)

    def evaluate(
        self, path: str, reuse: DatasetResult | None = None, also: tuple[str, ...] = (), history: History | None = None
    ) -> FileEvaluation:
        """Loads, runs and scores one file. ``also``: where the file may resolve besides the
        repository (one the user named); ``reuse``: a baseline whose unchanged questions need
        not run again (``reuse.py`` says when); ``history``: the stored baseline the runs pool
        with (`baseline update`) or the questions in doubt are re-run against (a check)."""
        scorer = self.scorer()
        try:
            dataset = load_dataset(path, also)
            if self.config.shard:
                from agent_eval_action.scoring.shards import keep_shard

                keep_shard(dataset, self.config.shard)
            self._skip_criteria(dataset)
            judged = self.judges is not None or bool(adk_judged_criteria(dataset.criterion_options))
            if dataset.format in RECORDED_FORMATS and not judged:  # every row holds its run: stream it
                done = self._streamed(dataset, scorer)
            else:
                plan = self.plan(dataset, reuse, history if history is not None and history.pool else None)
                self.inference.launch(plan.request.question_runs + sum(r.question_runs for r in plan.partial))
                inference = self._infer(plan, scorer)
                rerunning = history is not None and not history.pool and bool(plan.request.records)
                # Until the re-runs end, each round's summaries are read only for their pass
                # thresholds: their intervals (a bootstrap a metric, a third of a small check's
                # own CPU over its rounds) are computed once, on the last. And each round scores
                # only the runs it added: the others' records are those an earlier round scored.
                scoring = replace(scorer, intervals=False, scored={}) if rerunning else scorer
                done = self.score(plan, inference, scoring)
                if history is not None and history.pool:
                    done = self._keep_previous(plan, inference, scorer, done, history)
                if history is not None and rerunning:  # (history named again for the type checker)
                    done = self._rerun(plan, inference, scoring, done, history)
                    for result in (done.result, done.base):
                        if result is not None:
                            scorer.add_intervals(result)
                # On the result the file's evaluation ends with: a round of re-runs, or a record
                # kept from the previous baseline, scores again from the dataset's own warnings.
                if done.result is not None:
                    done.result.warnings += self._unknown_names(plan)
        except (DatasetError, UsageError) as error:
            if isinstance(error, AgentLoadError) and error.setting == "--agent":  # named as given: the flag, or the config's key
                error = AgentLoadError(self.config.named(error.setting), error.reason)
            said = error.message() if isinstance(error, DatasetError) else f"{path}: {error}"
            return FileEvaluation(result=None, problems=[Problem(path=path, message=said)])
        if done.result is not None:
            for warning in done.result.warnings:
                log.warning(warning)
        return done

    def _unknown_names(self, plan: Plan) -> list[str]:
        """The tools and agents the questions the agent ran name that it does not have
        (service/references.py, as ``validate`` tells them), said beside their runs."""
        tree = self.inference.agent_tree() if plan.request.records or plan.partial else {}
        if not tree:
            return []
        questions = {r.question.id: r.question for request in (plan.request, *plan.partial) for r in request.records}
        return [u.message() for u in unknown_names(AgentNames.of(tree), plan.dataset.path, list(questions.values()))]

    def scorer(self) -> Scorer:
        """The run's scorer, every setting given to it here."""
        c = self.config
        custom = []
        if c.custom_metrics:
            from agent_eval_action.metrics.custom import custom_metrics

            custom = custom_metrics(c, self._metric_worker())
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

    def plan(self, dataset: LoadedDataset, reuse: DatasetResult | None = None, pool: History | None = None) -> Plan:
        """Sorts the dataset's records: ready to score, reused from ``reuse``, or to run; with
        ``pool`` (`baseline update`), the stored runs that still stand are kept and each question
        runs only up to ``baseline_runs``."""
        items = list(dataset.records)
        to_run = [item for item in items if isinstance(item, Record) and item.trace is None]
        ready = [item for item in items if not (isinstance(item, Record) and item.trace is None)]
        runs = self.config.runs
        if not to_run:
            return Plan(dataset=dataset, ready=ready, request=InferenceRequest(dataset.name, [], runs))
        hashes = {record.question.id: question_hash(record.question) for record in to_run}
        if pool is not None:
            want = max(self.config.baseline_runs, runs)
            carried, need = pooled_runs(
                to_run,
                pool.stored,
                pool.fingerprint,
                want,
                inputs=self.inputs,
                environment=self.fingerprint,
                errored=lambda run: not outage_cause(run.error, run.error_origin),
            )
            counts = sorted(set(need.values()), reverse=True)
            by_count = {n: [r for r in to_run if need.get(r.question.id) == n] for n in counts}
            full = by_count.pop(want, [])
            partial = tuple(InferenceRequest(dataset.name, records, n) for n, records in by_count.items())
            return Plan(
                dataset=dataset,
                ready=ready,
                request=InferenceRequest(dataset.name, full, want),
                carried=carried,
                hashes={q: h for q, h in hashes.items() if q in need},
                partial=partial,
                first_run={q: want - n for q, n in need.items()},
                carried_imports=_imports(pool.stored) if carried else (),
            )
        carried, to_run = split_reusable(to_run, reuse, runs, inputs=self.inputs, environment=self.fingerprint)
        hashes = {q: h for q, h in hashes.items() if any(r.question.id == q for r in to_run)}
        return Plan(
            dataset=dataset,
            ready=ready,
            request=InferenceRequest(dataset.name, to_run, runs),
            carried=carried,
            hashes=hashes,
            carried_imports=_imports(reuse) if carried else (),
        )

    def _infer(self, plan: Plan, scorer: Scorer) -> InferenceResult:
        if not plan.request.records and not plan.partial:
            return InferenceResult(records=[])
        # The scorer sets itself up (importing ROUGE and its stemmer) while the agent runs, and
        # ADK's evaluator process for a dataset with ADK's judged criteria starts.
        judges = self._judges_of(adk=True) if adk_judged_criteria(plan.dataset.criterion_options) else None

        def prepare() -> None:
            scorer.prepare()
            if judges is not None:
                judges.start_adk_worker()

        preparing = threading.Thread(target=prepare, name="agent-eval-prepare", daemon=True)
        preparing.start()
        try:
            done = self.inference.perform(plan.request)
            for request in plan.partial:
                more = self.inference.perform(request)
                renumbered = [replace(r, run=plan.first_run.get(r.question.id, 0) + r.run) for r in more.records]
                done = InferenceResult(records=[*done.records, *renumbered], base=done.base, model_calls=done.model_calls)
            return done
        finally:
            preparing.join()

    def _rerun(self, plan: Plan, inference: InferenceResult, scorer: Scorer, done: FileEvaluation, history: History) -> FileEvaluation:
        """The sequential re-runs: while some question's runs leave a fall in doubt against the
        base's record (``verdict/noise.py``), it runs once more (beside the base's agent, on both
        sides: the base's record is this job's runs), until each is decided, reaches its cap, or the
        budget or an interrupt stops them."""
        by_id = {r.question.id: r.question for r in plan.request.records}
        # The cap as the comparison will take it: from every question of the dataset (reused ones too).
        questions = len({q.id for q in done.result.questions}) if done.result is not None else len(by_id)
        beside = self.inference.base is not None
        stored = history.stored
        shortest = fewest_runs(stored.questions) if stored is not None and not beside else None
        settings = gate_settings(self.config, questions, whole=plan.dataset.whole, record=shortest)
        ours = Counter(r.question.id for r in inference.records)
        theirs = Counter(r.question.id for r in inference.base or [])
        for _ in range(4 * settings.cap):  # each round adds a run to a question under its cap: this bounds them
            if done.result is None or interrupt.requested():
                break
            against = done.base if beside else history.stored
            if against is None:
                break
            again = to_rerun(done.result, against, settings)
            # Drift in doubt (the base's finished runs now, as the drift is read, against its stored
            # record) runs on too: on both sides, as the base's record is this job's runs.
            if beside and stored is not None and done.base is not None and (fresh := finished(done.base)) is not None:
                again = sorted({*again, *drift_to_rerun(fresh, stored, settings)})
            again = [q for q in again if q in by_id]
            if not again:
                break
            # Beside the base's agent, a question in doubt runs once more on both sides: the base's
            # record is this job's runs, and only runs made now can show the stored ones stale.
            ran = self.inference.perform(InferenceRequest(plan.dataset.name, [Record(question=by_id[q]) for q in again], 1))
            new: list[Record] = []
            new_base: list[Record] = []
            for record in ran.records:
                new.append(replace(record, run=ours[record.question.id]))
                ours[record.question.id] += 1
            for record in ran.base or []:
                new_base.append(replace(record, run=theirs[record.question.id]))
                theirs[record.question.id] += 1
            if all(r.trace is not None and r.trace.skipped for r in new):
                break  # the budget is spent (or an interrupt came): nothing more can decide them
            base_records = [*(inference.base or []), *new_base] if inference.base is not None else None
            inference = InferenceResult(records=[*inference.records, *new], base=base_records, model_calls=inference.model_calls)
            done = self.score(plan, inference, scorer)
        return done

    def _keep_previous(
        self, plan: Plan, inference: InferenceResult, scorer: Scorer, done: FileEvaluation, history: History
    ) -> FileEvaluation:
        """`baseline update` in an outage: a question whose new runs the model/API kept from running
        is not recorded (an outage is never the base's record); its previous record is kept as it
        was, and the update says so (exit 3)."""
        if done.result is None:
            return done
        causes = {q.id: cause for q in done.result.questions if q.status == "error" and (cause := outage_cause(q.error, q.error_origin))}
        if not causes:
            return done
        previous = [r for r in (history.stored.questions if history.stored is not None else []) if r.id in causes]
        kept = replace(plan, carried=[*(r for r in plan.carried if r.id not in causes), *previous])
        ran = replace(inference, records=[r for r in inference.records if r.question.id not in causes])
        again = self.score(kept, ran, scorer)
        cause = Counter(causes.values()).most_common(1)[0][0]
        ids = sorted(causes)
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        said = f"{plural(len(ids), 'question')} could not be recorded ({shown}: {cause}); " + (
            "their previous record is kept" if previous else "they have no previous record"
        )
        return replace(again, unrecorded=said)

    def _skip_criteria(self, dataset: LoadedDataset) -> None:
        """The dataset's ADK criteria the config skips (``[gate] skip-criteria``): neither computed nor gated."""
        for name in self.config.gate.skip_criteria:
            if name in dataset.criteria:
                dataset.criteria.pop(name)
                dataset.criterion_options.pop(name, None)
                dataset.warnings.append(f"{dataset.path}: criterion {name!r} is skipped ([gate] skip-criteria): not computed, not gated")

    def _judges_of(self, adk: bool) -> Judges | None:
        """The judges of a dataset: the config's, else (``adk``: it has ADK's judged criteria) the run's ADK judges."""
        if not adk:
            return self.judges
        if self.judges is None:
            self._adk_judges = self._adk_judges or Judges(self.config, self.inference.pacer, only_adk=True)
        return self.judges or self._adk_judges

    def score(self, plan: Plan, inference: InferenceResult, scorer: Scorer | None = None) -> FileEvaluation:
        """Scores what the plan had ready and what inference ran (judged first when judges are
        configured); with the base's runs in ``inference``, those too, as ours were."""
        scorer = scorer or self.scorer()
        dataset = plan.dataset
        items = [*plan.ready, *inference.records]
        judged = None
        adk = adk_judged_criteria(dataset.criterion_options)
        judges = self._judges_of(bool(adk))
        if judges is not None:
            judged = judges.judge([item for item in items if isinstance(item, Record)], self.inference.loop, adk)
        ours = scorer.for_dataset(dataset, carried=plan.carried, hashes=plan.hashes, extra=judged.scores if judged else None)
        result = ours.score_dataset(dataset, items)
        result.model_calls = inference.model_calls
        self._observed(result, inference, plan.carried_imports)
        if judged is not None:
            result.judge_usage = judged.usage
        if self.inference.base is None or dataset.format in RECORDED_FORMATS:
            return FileEvaluation(result=result, problems=ours.problems)
        # The base's runs of the questions this dataset ran, scored as ours were, judged ones too
        # (a judged metric the base's runs never had would be met by one side only: a fall read
        # into every question whose PR run missed it); the questions whose scores ours reused, or
        # whose runs were ready, carry the same scores, judged ones included (they ran on neither side).
        base_items = [*plan.ready, *inference.base] if inference.base is not None else []
        ready = {(r.question.id, r.run) for r in plan.ready if isinstance(r, Record)}
        extra = {key: scores for key, scores in judged.scores.items() if key in ready} if judged is not None else {}
        if judges is not None and inference.base:
            base_judged = judges.judge(inference.base, self.inference.loop, adk)
            extra |= base_judged.scores
            result.judge_usage = _together(result.judge_usage, base_judged.usage)  # what the check's judging cost
        theirs = scorer.for_dataset(dataset, carried=plan.carried, hashes=plan.hashes, extra=extra)
        theirs.prepare()
        base = theirs.score_dataset(dataset, base_items)
        base.path, base.agent_fingerprint = result.path, None
        ran_beside = inference.base is not None
        return FileEvaluation(
            result=result,
            problems=ours.problems,
            base=base,
            base_questions=len(plan.request.records) if ran_beside else 0,
            base_reruns=max(0, len(inference.base or []) - plan.request.question_runs) if ran_beside else 0,
            base_calls=inference.base_model_calls,
        )

    def _observed(self, result: DatasetResult, inference: InferenceResult, carried_imports: tuple[str, ...] = ()) -> None:
        """Each run's observed inputs (what its worker saw the agent read) on its result, and the
        environment it ran in on the dataset's: what a later run's reuse compares. Runs carried
        from a baseline keep theirs, and its import names (``carried_imports``) stay with them: a
        baseline made again of the same runs keeps its bytes."""
        if self.inputs is None or self.environment is None or result.format in RECORDED_FORMATS:
            return
        result.environment = self.environment.fingerprint
        result.environment_parts = dict(self.environment.parts)
        traces = [(r, r.trace) for r in inference.records if isinstance(r, Record) and r.trace is not None and r.trace.observed is not None]
        for _, trace in traces:
            self.imported.update((trace.observed or {}).get(IMPORTED, []))
        imports = set(carried_imports)
        if traces or not carried_imports:
            imports |= self.imported
        result.imports = sorted(imports)
        seen: dict[tuple[str, int], dict[str, str]] = {}
        for record, trace in traces:
            seen[(record.question.id, record.run)] = self.inputs.record(trace.observed or {}, self.imported)
        for question in result.questions:
            if not question.reused and (question.id, question.run) in seen:
                question.inputs = seen[(question.id, question.run)]

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

    @property
    def base_killed(self) -> list[str]:
        """How the base's workers were killed from outside (compare-with = "base"), if they were."""
        return self.inference.base.killed() if self.inference.base is not None else []

    def stats(self) -> RunStats | None:
        """How the agent ran over the whole run (None when nothing ran it or judged it)."""
        stats = self.inference.stats()
        judges = self.judges or self._adk_judges
        spent = judges.spent if judges is not None else None
        if stats is None and spent is None:
            return None
        stats = stats or RunStats(concurrency=str(self.config.concurrency))
        stats.judge_budget = spent
        return stats

    def _metric_worker(self) -> MetricWorker:
        """The run's process for custom metrics, started on first use (an import error there is
        a ConfigError naming the setting)."""
        if self.metric_worker is None:
            from agent_eval_action.run.metric_worker import metric_worker

            self.metric_worker = metric_worker(self.config)
        return self.metric_worker

    def close(self) -> None:
        self.inference.close()
        if self.metric_worker is not None:
            self.metric_worker.close()
        for judges in (self.judges, self._adk_judges):
            if judges is not None:
                judges.close()
        # What the agent started and left running (a daemon in a session of its own) dies now,
        # before anything is written; only where the command line made this process its
        # subreaper (system/reaper.py), never in a library caller's process.
        reaper.reap()


def _imports(baseline: DatasetResult | None) -> tuple[str, ...]:
    return tuple(baseline.imports or ()) if baseline is not None else ()


def _together(one: JudgeUsage | None, other: JudgeUsage | None) -> JudgeUsage | None:
    """Two judgings' usage summed (None when neither judged)."""
    if one is None or other is None:
        return one or other
    return JudgeUsage(**{name: getattr(one, name) + getattr(other, name) for name in JudgeUsage.model_fields})
