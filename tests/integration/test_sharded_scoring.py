"""Scoring a large table in several processes gives exactly what one process gives."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action.datasets import load_dataset
from agent_eval_action.datasets.tabular import cuts, stream
from agent_eval_action.metrics import MetricContext
from agent_eval_action.models.results import Results
from agent_eval_action.repo.results_io import dumps
from agent_eval_action.scoring import scorer as scoring
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.system.collector import LIBRARY, Collector
from tests.helpers.factories import csv_row, customer_service_runs, write_csv, write_jsonl

# The datasets are made in tmp_path: work there, as inputs must lie inside the working directory's repository.
pytestmark = pytest.mark.usefixtures("in_tmp")


def _rows() -> list[dict[str, str]]:
    runs = customer_service_runs()
    rows = []
    for i in range(23):
        run = runs[i % len(runs)]
        row = csv_row(run, naming="legacy" if i % 2 else "current")
        row["session_id"] = f"s{i % 9}"  # repeats some (question, session) pairs: duplicates to refuse
        rows.append(row)
    rows[5]["extracted_data"] = "{broken"
    rows[7]["session_id"] = ""
    rows[13]["session_id"] = ""  # same question as row 7 without session: a duplicate id
    return rows


def _score(path: Path, workers: int, collector: Collector = LIBRARY) -> tuple[str, list[str]]:
    prices = {"gemini-2.5-flash": {"input": 1.0, "output": 2.0}}
    scorer = Scorer.for_names([], MetricContext(prices=prices), workers=workers, collector=collector)
    result = scorer.score_dataset(load_dataset(str(path)))
    return dumps(Results(datasets=[result])), [p.message for p in scorer.problems]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
@pytest.mark.parametrize("workers", [2, 3])
def test_sharded_equals_sequential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str, workers: int) -> None:
    rows = _rows()
    path = tmp_path / f"runs{suffix}"
    if suffix == ".csv":
        write_csv(path, rows)
    else:
        write_jsonl(path, rows)
    sequential, seq_problems = _score(path, workers=1)
    monkeypatch.setattr(scoring, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "CHUNK_ROWS", 4)  # several batches, some sent to workers
    monkeypatch.setattr(cuts, "CUT_ROWS", 4)  # a CSV file's workers read cuts of it
    sharded, shard_problems = _score(path, workers=workers)
    assert sharded == sequential
    assert shard_problems == seq_problems
    assert len(seq_problems) >= 3  # the broken cell and the duplicates were reported, in file order
    questions = json.loads(sequential)["datasets"][0]["questions"]
    assert len(questions) == 23 - len(seq_problems)
    assert any(q["run"] == 1 for q in questions)  # repeated runs with distinct sessions are numbered


@pytest.mark.parametrize("quirk", ["none", "blank-rows", "bare-quote", "unclosed-quote", "empty-cells", "field-past-the-header"])
def test_a_csv_file_cut_for_the_workers_scores_as_one_process_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quirk: str) -> None:
    """The workers parse cuts of a CSV file. Where the cuts cannot be trusted (a quote the scan
    misreads, a row the tokenizer refuses) the file is read whole and its rows sent: the results
    and the problems are the same either way, and a file without quirks is never read twice."""
    path = tmp_path / "runs.csv"
    write_csv(path, _rows())
    lines = path.read_bytes().decode().split("\r\n")  # a row a line: no cell here holds a newline
    row = lines[3]
    rest = row[row.index(",") :]  # after the first cell (eval_id), which the quirks change
    lines[8:8] = {
        "none": [],
        "blank-rows": ["", ""],
        "bare-quote": ['e"x' + rest],
        "unclosed-quote": ['"ex' + rest],
        "empty-cells": ["," * (len(_rows()[0]) - 1)],
        "field-past-the-header": [row + ",extra"],
    }[quirk]
    path.write_bytes("\r\n".join(lines).encode())
    sequential = _score(path, workers=1)

    monkeypatch.setattr(scoring, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(cuts, "CUT_ROWS", 3)
    whole_reads = []
    read_whole = stream._csv_rows

    def counted(*args: str | list[str]) -> Iterator[Any]:
        whole_reads.append(args)
        return read_whole(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(stream, "_csv_rows", counted)
    assert _score(path, workers=2) == sequential
    assert len(whole_reads) == (0 if quirk in ("none", "blank-rows") else 1)


def test_collector_resumes_after_scoring(tmp_path: Path) -> None:
    """Scoring pauses the cyclic garbage collector and must hand it back running, frozen or not."""
    import gc

    path = tmp_path / "runs.csv"
    write_csv(path, _rows())
    for freeze_above in (10**9, 0):  # too few new objects to freeze; then freeze whatever was made
        frozen = gc.get_freeze_count()
        _score(path, workers=1, collector=Collector(freeze_above=freeze_above))  # as the command line's own process says
        assert gc.isenabled()
        assert (gc.get_freeze_count() > frozen) == (freeze_above == 0)
    gc.unfreeze()


def test_a_library_call_never_freezes_the_callers_collector(tmp_path: Path) -> None:
    import gc

    path = tmp_path / "runs.csv"
    write_csv(path, _rows())
    frozen = gc.get_freeze_count()
    _score(path, workers=1)  # a library call: the scorer's default policy
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_workshop_rows_score_the_same_in_several_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workshop-shaped rows (metric.unique_tools lists, sessions, made-up spans) through worker processes."""
    from tests.helpers.workshop import simulation_csv

    path = simulation_csv(tmp_path / "runs.csv", 40)
    sequential, seq_problems = _score(path, workers=1)
    monkeypatch.setattr(scoring, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "CHUNK_ROWS", 4)
    sharded, shard_problems = _score(path, workers=2)
    assert sharded == sequential and seq_problems == shard_problems == []
    dataset = json.loads(sequential)["datasets"][0]
    assert len(dataset["questions"]) == 40 and {q["status"] for q in dataset["questions"]} == {"ok"}
    assert dataset["warnings"] == [
        f"{path}: column 'metric.unique_tools' holds values that are not numbers: a list counts as its number of items, "
        "other values are left out"
    ]
    assert dataset["summary"]["llm_calls"]["mean"] == 5.0 and dataset["summary"]["tool_calls"]["mean"] == 2.0


@pytest.mark.parametrize("workers", [1, 2])
def test_scoring_leaves_no_cyclic_garbage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """The command line scores with the cyclic collector paused and freezes what scoring made
    (system.collector): a reference cycle made per row is never freed, so a row may make none. (A
    worker's run rebuilt by model_construct without its failed_thresholds asked inspect.signature
    about the default_factory on every row: ~25 KB of cycles a row, +760 MB at 20,000 rows; a
    closure that called itself, in the tool-call matching, made a few more.)"""
    import gc

    path = tmp_path / "runs.csv"
    write_csv(path, _rows())
    monkeypatch.setattr(scoring, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "CHUNK_ROWS", 4)  # with 2 workers, some batches come back from them, some are scored here
    _score(path, workers=workers)  # first: what is made once (imports, pydantic's lazily built schemas) is made
    gc.collect()
    gc.disable()
    try:
        scored, _ = _score(path, workers=workers)  # a library call: the collector stays as it was found (paused)
        garbage = gc.collect()
    finally:
        gc.enable()
    assert len(json.loads(scored)["datasets"][0]["questions"]) == 15  # scored: the 23 rows less the bad and duplicate ones
    assert garbage == 0


def test_the_workers_inherit_what_the_metrics_prepared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A metric's slow set-up (ROUGE's import) is done once, here, before the workers fork: every
    row, in whichever process it is scored, finds it done, and no worker does it again."""
    import os

    from agent_eval_action.metrics.registry import REGISTRY, Metric
    from agent_eval_action.models.scores import Score

    prepared: list[int] = []  # the processes the set-up ran in (a forked worker scores with its copy)

    def score(*_: Any) -> Score:
        # 1.0: the set-up was done in the scoring process or in the one it was forked from.
        return Score(value=1.0 if prepared else 0.0, explanation=f"scored in {os.getpid()}")

    metric = Metric(
        name="prepared_ahead", direction="higher", description="test", score=score, prepare=lambda: prepared.append(os.getpid())
    )
    monkeypatch.setitem(REGISTRY, metric.name, metric)
    monkeypatch.setattr(scoring, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(cuts, "CUT_ROWS", 2)  # a cut of two rows each: most of them scored by the workers
    path = tmp_path / "runs.csv"
    write_csv(path, _rows())
    result = Scorer.for_names([metric.name], MetricContext(), workers=2).score_dataset(load_dataset(str(path)))
    assert prepared == [os.getpid()]  # once, in this process
    scored_in = {q.scores[metric.name].explanation for q in result.questions}
    assert len(scored_in) >= 2, scored_in  # rows were scored in more than one process: the workers took some
    assert {q.scores[metric.name].value for q in result.questions} == {1.0}


def test_a_set_up_that_fails_is_the_metrics_failure_on_each_run_and_the_others_are_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A metric's set-up that raises (its library broken or missing) does not stop the file's
    scoring: the metric is unscored on each run with the error, every other metric scored."""
    from agent_eval_action.metrics.registry import REGISTRY, Metric
    from agent_eval_action.models.scores import Score

    def set_up() -> None:
        raise ImportError("no module named 'stemmer'")

    def score(*_: Any) -> Score:
        set_up()  # as a metric meets its missing library when it scores
        return Score(value=1.0)

    metric = Metric(name="broken_set_up", direction="higher", description="test", score=score, prepare=set_up)
    monkeypatch.setitem(REGISTRY, metric.name, metric)
    monkeypatch.setattr(scoring, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(cuts, "CUT_ROWS", 2)
    path = tmp_path / "runs.csv"
    write_csv(path, _rows())
    result = Scorer.for_names([metric.name, "response_match"], MetricContext(), workers=2).score_dataset(load_dataset(str(path)))
    assert len(result.questions) >= 15
    for question in result.questions:
        broken = question.scores[metric.name]
        assert broken.value is None and broken.explanation == "metric failed: ImportError: no module named 'stemmer'", broken
        assert not question.scores["response_match"].explanation.startswith("metric failed"), question.scores["response_match"]
    assert any(q.scores["response_match"].value is not None for q in result.questions)
