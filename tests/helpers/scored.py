"""Scored datasets made from plain values, for the comparison and the gate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agent_eval_action.datasets import LoadedDataset
from agent_eval_action.metrics import MetricContext
from agent_eval_action.models.results import DatasetResult, QuestionResult
from agent_eval_action.models.scores import Score
from agent_eval_action.scoring.scorer import Scorer

SCORER = Scorer.for_names(["tool_usage_accuracy"], MetricContext())


def dataset(values: Mapping[str, Sequence[float | None]], metric: str = "tool_usage_accuracy", errors: int = 0) -> DatasetResult:
    questions = [QuestionResult(id=qid, run=k, scores={metric: Score(value=v)}) for qid, vs in values.items() for k, v in enumerate(vs)]
    questions += [QuestionResult(id=f"err{i}", status="error", error="boom") for i in range(errors)]
    return SCORER.summarize(LoadedDataset(path="d.json", name="d", format="golden", records=iter(())), questions)
