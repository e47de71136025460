"""Score loaded datasets: every record through every selected metric, then aggregate."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from agent_eval_action.aggregate import seed_for, summarize
from agent_eval_action.errors import DatasetError, UsageError
from agent_eval_action.loaders import LoadedDataset, Record
from agent_eval_action.metrics import REGISTRY, Metric, MetricContext
from agent_eval_action.models import DatasetResult, Problem, QuestionResult, Score

RECORDED_PREFIX = "score."
Progress = Callable[[int], None]


@dataclass(kw_only=True)
class Scorer:
    metrics: Sequence[Metric]
    context: MetricContext
    seed: int = 0
    progress: Progress | None = None
    problems: list[Problem] = field(default_factory=list)

    @classmethod
    def for_names(cls, names: Sequence[str], context: MetricContext, **kwargs: object) -> Scorer:
        chosen = [REGISTRY[name] for name in names] if names else list(REGISTRY.values())
        return cls(metrics=chosen, context=context, **kwargs)  # type: ignore[arg-type]

    def score_record(self, record: Record) -> QuestionResult:
        trace = record.trace
        if trace is None:
            raise UsageError("no trace to score")
        if trace.error:
            return QuestionResult(id=record.question.id, run=record.run, status="error", error=trace.error)
        scores: dict[str, Score] = {}
        for metric in self.metrics:
            try:
                scores[metric.name] = metric.score(record.question, trace, self.context)
            except Exception as error:  # noqa: BLE001 - one metric's bug must not lose the others
                scores[metric.name] = Score(value=None, explanation=f"metric failed: {type(error).__name__}: {error}")
        for key, value in sorted(trace.recorded_metrics.items()):
            if key.startswith(RECORDED_PREFIX):
                scores[key] = Score(value=value, explanation="recorded by the producer", details={"source": key})
        return QuestionResult(id=record.question.id, run=record.run, scores=scores)

    def score_dataset(self, dataset: LoadedDataset, records: Iterable[Record | DatasetError] | None = None) -> DatasetResult:
        """Scores every record that carries a trace; problems go to :attr:`problems`."""
        results: list[QuestionResult] = []
        for item in records if records is not None else dataset.records:
            if isinstance(item, DatasetError):
                self.problems.append(Problem(path=item.path, message=item.message()))
                continue
            if item.trace is None:
                raise UsageError(f"{dataset.path}: this dataset has no recorded runs; pass --agent module:attr to run the agent on it")
            results.append(self.score_record(item))
            if self.progress is not None:
                self.progress(len(results))
        return self.summarize(dataset, results)

    def summarize(self, dataset: LoadedDataset, questions: list[QuestionResult]) -> DatasetResult:
        names: dict[str, str] = {m.name: m.direction for m in self.metrics}
        for question in questions:
            for key in question.scores:
                names.setdefault(key, "higher")
        summary = {}
        for name, direction in names.items():
            scores = [q.scores[name] for q in questions if name in q.scores]
            if not scores:
                continue
            summary[name] = summarize(
                scores,
                direction=direction,
                seed=seed_for(dataset.name, name, base=self.seed),
                percentiles=direction == "lower",
            )
        return DatasetResult(
            path=dataset.path,
            name=dataset.name,
            format=dataset.format,
            summary=summary,
            questions=questions,
            warnings=list(dataset.warnings),
        )
