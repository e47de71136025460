"""A results or baseline file read without its questions (what a trend reads of each past
baseline): the outline of a file as our writer lays it out is the file's JSON with every
dataset's questions emptied, and a file laid out otherwise is read whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_eval_action.models.results import DatasetResult, QuestionResult, Results
from agent_eval_action.models.scores import MetricSummary, Score
from agent_eval_action.repo.results_io import dumps, outline_text
from agent_eval_action.text.jsonish import loads
from tests.helpers.repos import ROOT

EXAMPLE_BASELINE = ROOT / "examples" / "customer_service" / "evaluation" / "baselines" / "datasets" / "customer_service_golden.json"


def _without_questions(text: str) -> Any:
    data = json.loads(text)
    for dataset in data["datasets"]:
        dataset["questions"] = []
    return data


def _results() -> Results:
    """Two datasets, one with runs whose text holds what a questions list looks like."""
    tricky = QuestionResult(
        id="q1",
        scores={"latency": Score(value=1.5, explanation='"questions": [\n      ]', details={"note": "]\n"})},
        error=None,
    )
    runs = [tricky, QuestionResult(id="q1", run=1, scores={"latency": Score(value=2.0)}), QuestionResult(id="q2", scores={})]
    summary = {"latency": MetricSummary(mean=1.75, n=2, unscored=0, direction="lower")}
    return Results(
        datasets=[
            DatasetResult(path="a.csv", name="a", format="csv", questions=runs, summary=summary),
            DatasetResult(path="b.csv", name="b", format="csv", questions=[], summary={}),
        ]
    )


def test_the_outline_of_our_files_is_the_file_without_its_questions() -> None:
    texts = [dumps(_results()), dumps(_results(), packed=True), Path(EXAMPLE_BASELINE).read_text()]
    for text in texts:
        outline = outline_text(text)
        assert outline is not None and len(outline) < len(text)
        assert json.loads(outline) == _without_questions(text)
        assert loads(outline, finite=True, depth=None)[0] == _without_questions(text)


def test_a_file_laid_out_otherwise_has_no_outline_and_is_read_whole() -> None:
    text = dumps(_results())
    compact = json.dumps(json.loads(text))  # one line: no list opens at a line's end
    assert outline_text(compact) is None
    # The list opened after something else on its line, or never closed at its key's indentation.
    assert outline_text(text.replace('      "questions": [\n', '      "x": 1, "questions": [\n', 1)) is None
    assert outline_text(text.replace("\n      ]", "\n        ]")) is None
    assert outline_text('{"datasets": []}\n') is None
