"""Score loaded datasets: every record through every selected metric, then aggregate."""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from sys import intern
from typing import Any, Protocol

from agent_eval_action.datasets import LoadedDataset, Record
from agent_eval_action.datasets.base import Converted, Row, RunResolver
from agent_eval_action.metrics import REGISTRY, Metric, MetricContext, new_run
from agent_eval_action.models.questions import DatasetFormat
from agent_eval_action.models.results import DatasetResult, Problem, QuestionResult
from agent_eval_action.models.scores import GIVEN_FIELDS, MetricSummary, Score, scored
from agent_eval_action.models.stored import constructed, filled
from agent_eval_action.models.traces import Transcript
from agent_eval_action.scoring import aggregate
from agent_eval_action.scoring.aggregate import bootstrap_mean_ci, pass_bound, seed_for, summarize_values
from agent_eval_action.scoring.reuse import question_key
from agent_eval_action.system.collector import LIBRARY, Collector, few_collections
from agent_eval_action.system.errors import DatasetError, UsageError

RECORDED_PREFIX = "score."
# Below this file size a second process costs more than it saves.
PARALLEL_MIN_BYTES = 8 * 2**20
Progress = Callable[[int], None]
# (row number, question id, session, pointer, its score or the reason it has none, its question's content key)
BatchItem = tuple[int, str, str | None, str, QuestionResult | str, str | None]
# A question result as plain tuples: it crosses the process boundary several times faster
# than pickled models or JSON that pydantic validates again, and it was validated when made.
# Its scores as their names, a tuple that a batch's questions scored by the same metrics share
# (pickled once a batch), and each score's figures. The transcript crosses as its JSON text: half
# the cost of pickling the models.
Packed = tuple[str, str, str | None, str | None, tuple[str, ...], list[tuple[float | None, str, dict[str, Any]]], str | None, str | None]
PackedItem = tuple[int, str, str | None, str, Packed | str, str | None]


class DatasetInfo(Protocol):
    """What a summary says of its dataset: a ``LoadedDataset`` or a ``DatasetResult`` has it."""

    path: str
    name: str
    format: DatasetFormat
    warnings: list[str]
    criteria: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class Scorer:
    """Every setting comes in through the constructor (or :meth:`for_names`); what one dataset
    brings (its criteria, the scores reused or judged elsewhere) through :meth:`for_dataset`."""

    metrics: Sequence[Metric]
    context: MetricContext
    seed: int = 0
    # Processes for large tables (1: score in this process only).
    workers: int = 1
    # Metric -> value a run must reach (higher is better) or stay under (lower) to pass.
    pass_thresholds: dict[str, float] = field(default_factory=dict)
    # The metrics whose pass threshold the config sets: a dataset's own criteria (ADK
    # test_config.json) replace the defaults but never these.
    configured_thresholds: frozenset[str] = frozenset()
    # Scores computed elsewhere (LLM judges), by (question id, run).
    extra: dict[tuple[str, int], dict[str, Score]] = field(default_factory=dict)
    progress: Progress | None = None
    problems: list[Problem] = field(default_factory=list)
    # Results taken over unchanged (question-level reuse), summarized with the new ones.
    carried: list[QuestionResult] = field(default_factory=list)
    # Question id -> content hash, recorded on the results of questions the agent ran.
    hashes: dict[str, str] = field(default_factory=dict)
    # The cyclic collector while scoring: the owner of the process says (``system.collector``).
    collector: Collector = LIBRARY
    # Each metric's 95% interval in its summary. Off for summaries only read for their pass
    # thresholds (a check's rounds of re-runs), whose last one :meth:`add_intervals` completes.
    intervals: bool = True
    # Runs scored before, by their record (its id, the record kept alive beside its judged scores
    # and result): a check's rounds of re-runs score the same records again, and each round
    # scores only the runs it added. None: every record scored.
    scored: dict[int, tuple[Record, dict[str, Score] | None, QuestionResult]] | None = None

    @classmethod
    def for_names(cls, names: Sequence[str], context: MetricContext, *, custom: Sequence[Metric] = (), **kwargs: object) -> Scorer:
        """The named metrics (built-in or ``custom``); no names: every built-in and custom one."""
        available = {**REGISTRY, **{m.name: m for m in custom}}
        chosen = [available[name] for name in names] if names else list(available.values())
        return cls(metrics=chosen, context=context, **kwargs)  # type: ignore[arg-type]

    def for_dataset(
        self,
        dataset: LoadedDataset,
        *,
        carried: Sequence[QuestionResult] = (),
        hashes: dict[str, str] | None = None,
        extra: dict[tuple[str, int], dict[str, Score]] | None = None,
        progress: Progress | None = None,
    ) -> Scorer:
        """A scorer for one dataset, with its own problems: the ADK criteria that came with it
        say how ADK's metrics are computed; ``carried``: results reused unchanged; ``hashes``:
        the content hashes of the questions run now; ``extra``: scores judged elsewhere."""
        return replace(
            self,
            context=replace(self.context, criteria=dataset.criterion_options),
            carried=list(carried),
            hashes=dict(hashes or {}),
            extra=dict(extra or {}),
            progress=progress,
            problems=[],
        )

    def prepare(self) -> None:
        """The metrics' slow set-up (importing ROUGE and its stemmer) and the summaries' imports,
        done ahead: called from a thread while the agent runs, it costs the run nothing. A set-up
        that fails is left to its metric's scoring, which meets the same error and reports it on
        each run as the metric's failure, the other metrics scored."""
        aggregate.prepare()
        for metric in self.metrics:
            if metric.prepare is not None:
                with contextlib.suppress(Exception):
                    metric.prepare()

    def score_record(self, record: Record) -> QuestionResult:
        """One run scored, with its question's content key (``reuse.question_key``): a question
        renamed later, its content unchanged, is still paired with this run."""
        scored = self._score_record(record)
        scored.content_key = record.content_key or question_key(record.question)
        return scored

    def _score_record(self, record: Record) -> QuestionResult:
        trace = record.trace
        if trace is None:
            raise UsageError("no trace to score")
        transcript = Transcript.of(record.question, trace)
        if trace.error:
            return QuestionResult(
                id=record.question.id,
                run=record.run,
                status="error",
                error=trace.error,
                error_origin=trace.error_origin,  # type: ignore[arg-type]  # one of protocol.ORIGINS, as the runner set it
                transcript=transcript,
            )
        if trace.skipped:
            # Not run, so nothing is known: every metric unscored with the reason, never a zero.
            why = f"skipped: {trace.skipped}"
            return QuestionResult(
                id=record.question.id,
                run=record.run,
                status="skipped",
                skip_reason=trace.skipped,
                scores={metric.name: Score(value=None, explanation=why) for metric in self.metrics},
            )
        scores: dict[str, Score] = {}
        new_run()
        for metric in self.metrics:
            try:
                scores[metric.name] = metric.score(record.question, trace, self.context)
            except Exception as error:  # noqa: BLE001 - one metric's bug must not lose the others
                scores[metric.name] = scored(value=None, explanation=f"metric failed: {type(error).__name__}: {error}")
        scores.update(self.extra.get((record.question.id, record.run), {}))
        for key, value in sorted(trace.recorded_metrics.items()):
            if key.startswith(RECORDED_PREFIX):
                scores[key] = scored(value=value, explanation="recorded by the producer", details={"source": key})
        return QuestionResult(id=record.question.id, run=record.run, scores=scores, transcript=transcript)

    def score_dataset(self, dataset: LoadedDataset, records: Iterable[Record | DatasetError] | None = None) -> DatasetResult:
        """Scores every record that carries a trace; problems go to :attr:`problems`."""
        with few_collections(self.collector):
            if records is None and self._worth_processes(dataset):
                return self._score_in_processes(dataset)
            return self._score_dataset(dataset, records)

    def _worth_processes(self, dataset: LoadedDataset) -> bool:
        # Custom metrics are scored by the run's metric process, which forked scorers cannot share.
        if self.workers < 2 or dataset.batches is None or any(m.name not in REGISTRY for m in self.metrics):
            return False
        try:
            return os.path.getsize(dataset.path) >= PARALLEL_MIN_BYTES
        except OSError:
            return False

    def _score_in_processes(self, dataset: LoadedDataset) -> DatasetResult:
        """Worker processes score beside this one. A file they can read too (CSV) is cut into
        pieces that they parse; where the cuts and the parser disagree (a quote out of place, a
        row the tokenizer refuses), the file is read here and its rows are sent to them."""
        batches = dataset.batches
        assert batches is not None
        # Before the workers fork: they inherit ROUGE's modules and the summaries' imports, which
        # each process would otherwise import again on its first row (this one needs them too).
        self.prepare()
        if batches.cuts is not None and batches.convert_cut is not None:
            kept = list(dataset.warnings)
            try:
                return self._pooled(dataset, batches.cuts(), batches.convert_cut, lambda cut: cut.rows)
            except Exception:  # noqa: BLE001 - Uncut, or what a cut numbered after a misread one raised with a wrong row
                # The whole file's read meets the same error, if it is one, and names its row.
                dataset.warnings[:] = kept
        return self._pooled(dataset, batches.read(), batches.convert, len)

    def _pooled(
        self, dataset: LoadedDataset, pieces: Iterator[Any], convert: Callable[[Any], Converted], size: Callable[[Any], int]
    ) -> DatasetResult:
        """Hands ``pieces`` (raw rows, or cuts of the file) out to ``workers`` processes, which
        convert and score them, while fewer than two per worker are in flight; else this process
        converts and scores the piece itself, so the work balances itself whatever the machine.
        Runs are numbered afterwards, in file order.
        """
        import multiprocessing
        from concurrent.futures import Future, ProcessPoolExecutor

        spec = (
            [m.name for m in self.metrics],
            dict(self.context.prices),
            dict(self.context.criteria),
            self.seed,
            [m for m in self.metrics if m.name not in REGISTRY],
            self.collector,
        )
        parts: list[list[BatchItem]] = []
        pending: list[Future[tuple[list[PackedItem], list[str]]]] = []

        def collect(future: Future[tuple[list[PackedItem], list[str]]]) -> None:
            items, warnings = future.result()
            parts.append([(*item[:4], _unpack(item[4]), item[5]) for item in items])
            dataset.warnings.extend(w for w in warnings if w not in dataset.warnings)

        done = 0
        # fork: the children inherit the imported modules instead of importing them again.
        with ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("fork")) as pool:
            try:
                for piece in pieces:
                    for future in [f for f in pending if f.done()]:
                        pending.remove(future)
                        collect(future)
                    if len(pending) < 2 * self.workers:
                        pending.append(pool.submit(_score_batch, convert, dataset.path, piece, *spec))
                    else:
                        rows, warnings = convert(piece)
                        dataset.warnings.extend(w for w in warnings if w not in dataset.warnings)
                        parts.append(self._score_rows(rows, dataset.path))
                    done += size(piece)
                    if self.progress is not None:
                        self.progress(done)
                for future in pending:
                    collect(future)
            except Exception:
                pool.shutdown(cancel_futures=True)  # the pieces not yet begun are not waited for
                raise
        resolver = RunResolver(dataset.path)
        results: list[QuestionResult] = []
        for _, question_id, session, pointer, payload, content in sorted((i for part in parts for i in part), key=lambda i: i[0]):
            if isinstance(payload, str):
                self.problems.append(Problem(path=dataset.path, message=payload))
                continue
            run = resolver.admit(question_id, session, pointer, content)
            if isinstance(run, DatasetError):
                self.problems.append(Problem(path=dataset.path, message=run.message()))
                continue
            payload.run = run
            results.append(payload)
        self.problems.extend(Problem(path=dataset.path, message=error.message()) for error in resolver.uneven())
        return self.summarize(dataset, results)

    def _score_rows(self, rows: Iterable[Row], path: str) -> list[BatchItem]:
        out: list[BatchItem] = []
        for row in rows:
            if isinstance(row.item, DatasetError):
                out.append((row.number, "", None, row.pointer, row.item.message(), None))
                continue
            if row.item.trace is None:
                raise UsageError(f"{path}: {row.pointer} holds no recorded run")
            scored = self.score_record(row.item)
            # The rows of one id are told apart by what they ask, hashed (``base.question_key``).
            out.append((row.number, row.item.question.id, row.session, row.pointer, scored, row.content or scored.content_key))
        return out

    def _score_dataset(self, dataset: LoadedDataset, records: Iterable[Record | DatasetError] | None) -> DatasetResult:
        results: list[QuestionResult] = []
        for item in records if records is not None else dataset.records:
            if isinstance(item, DatasetError):
                self.problems.append(Problem(path=item.path, message=item.message()))
                continue
            if item.trace is None:
                raise UsageError(
                    "this dataset has no recorded runs; pass --agent module:attr (e.g. app.agent:root_agent) or --agent-url URL"
                )
            scored = self._scored_before(item)
            if scored is None:
                scored = self.score_record(item)
                if self.scored is not None:
                    judged = self.extra.get((item.question.id, item.run))
                    self.scored[id(item)] = (item, dict(judged) if judged is not None else None, scored)
            scored.content_hash = self.hashes.get(scored.id)
            results.append(scored)
            if self.progress is not None:
                self.progress(len(results))
        summary = self.summarize(dataset, [*self.carried, *results])
        # Runs carried over as reused (a PR's unchanged questions); a baseline's pooled runs are its own.
        summary.reused = sum(1 for r in self.carried if r.reused)
        return summary

    def _seed(self, dataset: str, metric: str) -> int:
        """The seed of a metric's bootstrap interval: the same in a summary and in :meth:`add_intervals`."""
        return seed_for(dataset, metric, base=self.seed)

    def _scored_before(self, record: Record) -> QuestionResult | None:
        """The result of this very record scored before (:attr:`scored`), with the same scores
        judged elsewhere; None: it is to be scored."""
        if self.scored is None:
            return None
        before = self.scored.get(id(record))
        if before is None or before[0] is not record or before[1] != self.extra.get((record.question.id, record.run)):
            return None
        return before[2]

    def _threshold(self, dataset: DatasetInfo, name: str) -> float | None:
        """The pass threshold ``name`` is judged with: the dataset's own criterion (ADK
        test_config.json) unless the config sets one, else the configured or default one."""
        if name in dataset.criteria and name not in self.configured_thresholds:
            return dataset.criteria[name]
        return self.pass_thresholds.get(name)

    def summarize(self, dataset: DatasetInfo, questions: list[QuestionResult]) -> DatasetResult:
        """Aggregates per-question scores into the dataset's summary; questions in (id, run) order.
        ``dataset``: a loaded dataset, or a result whose questions are summarized again (merged shards)."""
        questions = sorted(questions, key=lambda q: (q.id, q.run))
        names: dict[str, str] = {m.name: m.direction for m in self.metrics}
        # Scores from elsewhere: LLM judges' (in ``extra``) are judged; recorded ``score.*`` ones are measured.
        kinds: dict[str, str] = {m.name: m.kind for m in self.metrics}
        kinds.update({name: "judge" for scores in self.extra.values() for name in scores})
        units = {m.name: m.unit for m in self.metrics}
        # One pass over the questions builds every metric's column (the scored values with their
        # question ids, whether each passed its threshold, the reasons for the unscored ones) and
        # judges each run's missed thresholds. Each Score is read once; on large tables the reads,
        # not the arithmetic, are what summarizing costs.
        columns: dict[str, _Column] = {name: _Column() for name in names}
        # Each judged metric's threshold, and what ``passes`` compares a score with, made once.
        limits = {
            name: (limit, *pass_bound(limit, direction))
            for name, direction in names.items()
            if (limit := self._threshold(dataset, name)) is not None
        }
        for question in questions:
            question_id = question.id
            missed = []
            for key, score in question.scores.items():
                column = columns.get(key)
                if column is None:
                    names[key] = "higher"
                    column = columns[key] = _Column()
                    limit = self._threshold(dataset, key)
                    if limit is not None:
                        limits[key] = (limit, *pass_bound(limit, "higher"))
                value = score.value
                if value is None:
                    column.unscored[score.explanation or "unscored"] += 1
                    continue
                column.ids.append(question_id)
                column.values.append(value)
                judged = limits.get(key)
                if judged is not None:
                    passed = value <= judged[1] if judged[2] else value >= judged[1]
                    column.passed.append(passed)
                    if not passed:
                        missed.append(key)
            # Set even when empty: in memory the run reads as judged (written, an empty list is
            # left out). Carried and merged runs are judged again, as this run's own are.
            question.failed_thresholds = missed
        summary = {}
        for name, direction in names.items():
            column = columns[name]
            if not column.values and not column.unscored:
                continue
            summary[name] = summarize_values(
                column.values,
                column.unscored,
                direction=direction,
                seed=self._seed(dataset.name, name),
                percentiles=direction == "lower",
                interval=self.intervals,
            )
            summary[name].kind = kinds.get(name, "trace")  # type: ignore[assignment]
            summary[name].unit = units.get(name)
            if name in limits:
                summary[name].pass_threshold = limits[name][0]
                _pass_rates(summary[name], column.ids, column.passed)
        return DatasetResult(
            path=dataset.path,
            name=dataset.name,
            format=dataset.format,
            summary=summary,
            questions=questions,
            warnings=list(dataset.warnings),
            criteria=dict(dataset.criteria),
        )

    def add_intervals(self, result: DatasetResult) -> None:
        """Each metric's 95% interval on a summary made without them (``intervals`` off), as
        :meth:`summarize` would have given it: the bootstrap of the same values with the same seed."""
        values: dict[str, list[float]] = {name: [] for name, summary in result.summary.items() if summary.ci95 is None}
        if not values:
            return
        for question in result.questions:
            for key, score in question.scores.items():
                column = values.get(key)
                if column is not None and score.value is not None:
                    column.append(score.value)
        for name, column in values.items():
            result.summary[name].ci95 = bootstrap_mean_ci(column, self._seed(result.name, name))


def _score_batch(
    convert: Callable[[Any], Converted],
    path: str,
    batch: Any,
    names: list[str],
    prices: dict[str, Any],
    criteria: dict[str, Any],
    seed: int,
    custom: list[Metric],
    collector: Collector,
) -> tuple[list[PackedItem], list[str]]:
    """A worker process's share: convert and score one batch of raw rows."""
    scorer = Scorer.for_names(names, MetricContext(prices=prices, criteria=criteria), seed=seed, custom=custom, collector=collector)
    with few_collections(collector):
        rows, warnings = convert(batch)
        items = scorer._score_rows(rows, path)
    packed: dict[tuple[str, ...], tuple[str, ...]] = {}
    return [(*item[:4], _pack(item[4], packed), item[5]) for item in items], warnings


def _pack(payload: QuestionResult | str, names: dict[tuple[str, ...], tuple[str, ...]] | None = None) -> Packed | str:
    """``names``: the tuples of score names packed so far, each packed as the first one equal to it."""
    if isinstance(payload, str):
        return payload
    scores = payload.scores
    named = tuple(scores)
    if names is not None:
        named = names.setdefault(named, named)
    figures = [(score.value, score.explanation, score.details) for score in scores.values()]
    transcript = payload.transcript.model_dump_json() if payload.transcript is not None else None
    return (payload.id, payload.status, payload.error, payload.skip_reason, named, figures, transcript, payload.content_key)


_new = object.__new__
_ALL_GIVEN = GIVEN_FIELDS[True, True]
_validate_transcript = Transcript.__pydantic_validator__.validate_json


def _unpack(payload: Packed | str) -> QuestionResult | str:
    if isinstance(payload, str):
        return payload
    question_id, status, error, skip_reason, names, figures, transcript, content_key = payload
    # Explanations are templated (a few hundred distinct among 780,000 scores of 20,000 rows):
    # each arrives as its own string, and one copy of each is kept (-24 MB of peak at 20,000 rows).
    scores = {name: _score(value, intern(why), details) for name, (value, why, details) in zip(names, figures, strict=True)}
    return constructed(
        QuestionResult,
        failed_thresholds=[],  # judged in summarize
        content_key=content_key,
        id=question_id,
        status=status,
        error=error,
        skip_reason=skip_reason,
        run=0,
        scores=scores,
        transcript=_validate_transcript(transcript) if transcript is not None else None,
    )


def _score(value: float | None, explanation: str, details: dict[str, Any]) -> Score:
    """A Score from a worker's figures, which were validated and rounded where it was made: what
    ``Score.model_construct`` makes, at a fraction of its cost (its per-call field loop over
    defaults was most of rebuilding a row here: 25 scores a row, ~1.6 us each)."""
    return filled(_new(Score), {"value": value, "explanation": explanation, "details": details}, _ALL_GIVEN)


@dataclass
class _Column:
    ids: list[str] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    passed: list[bool] = field(default_factory=list)  # filled where the metric has a pass threshold
    unscored: Counter[str] = field(default_factory=Counter)


def _pass_rates(summary: MetricSummary, ids: list[str], passed: list[bool]) -> None:
    """Pass rate over the scored runs; ``ids[i]`` is the question of the run whose outcome is ``passed[i]``."""
    if not passed:
        return
    if len(ids) != len(passed):
        raise ValueError(f"{len(ids)} question ids for {len(passed)} outcomes")
    runs = Counter(ids)  # counted in C: a dict of lists a question cost 0.2 s at 20,000 rows
    summary.pass_rate = sum(passed) / len(passed)
    summary.runs = max(runs.values())
    if summary.runs > 1:
        failing = {question_id for question_id, outcome in zip(ids, passed, strict=True) if not outcome}
        summary.pass_hat_k = (len(runs) - len(failing)) / len(runs)
