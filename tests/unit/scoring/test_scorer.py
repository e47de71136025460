"""What crosses from a worker process back to the main one is rebuilt exactly as scored."""

from __future__ import annotations

import pickle

from agent_eval_action.models.results import QuestionResult
from agent_eval_action.models.scores import Score
from agent_eval_action.models.traces import Transcript, TranscriptTurn
from agent_eval_action.scoring.scorer import _pack, _score, _unpack


def _question() -> QuestionResult:
    return QuestionResult(
        id="q1",
        scores={
            "tool_usage_accuracy": Score(value=0.5, explanation="1 of 2 calls", details={"missing": [{"tool_name": "refund"}]}),
            "response_match_score": Score(value=None, explanation="no reference answer"),
            "latency_ms": Score(value=1234.5, explanation="", details={}),
        },
        transcript=Transcript(turns=[TranscriptTurn(user="hi", response="hello")], final_state={"cart": [1, 2]}),
    )


def test_a_question_packed_in_a_worker_is_rebuilt_equal_and_writes_the_same_bytes() -> None:
    question = _question()
    rebuilt = _unpack(pickle.loads(pickle.dumps(_pack(question))))
    assert isinstance(rebuilt, QuestionResult)
    assert rebuilt == question
    assert rebuilt.model_dump_json() == question.model_dump_json()
    assert all(type(score) is Score for score in rebuilt.scores.values())


def test_a_rebuilt_result_is_what_model_construct_makes_and_its_score_names_cross_once_a_batch() -> None:
    """The main process builds results without model_construct's loop over every field: the same
    model, field for field, with a fields-set of its own (pydantic adds to it what is assigned)."""
    question = _question()
    names: dict[tuple[str, ...], tuple[str, ...]] = {}
    packed, again = _pack(question, names), _pack(question.model_copy(), names)
    assert not isinstance(packed, str) and not isinstance(again, str)
    assert packed[4] is again[4]  # one tuple of names: pickled once for the batch
    rebuilt = _unpack(pickle.loads(pickle.dumps(packed)))
    assert isinstance(rebuilt, QuestionResult)
    made = QuestionResult.model_construct(
        failed_thresholds=[],
        content_key=question.content_key,
        id=question.id,
        status=question.status,
        error=question.error,
        skip_reason=question.skip_reason,
        run=0,
        scores=dict(rebuilt.scores),
        transcript=rebuilt.transcript,
    )
    for attribute in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"):
        assert getattr(rebuilt, attribute) == getattr(made, attribute), attribute
    assert list(rebuilt.__dict__) == list(made.__dict__)
    other = _unpack(pickle.loads(pickle.dumps(packed)))
    assert isinstance(other, QuestionResult)
    rebuilt.content_hash = "abc"
    assert "content_hash" in rebuilt.model_fields_set and "content_hash" not in other.model_fields_set


def test_a_rebuilt_score_is_what_model_construct_makes() -> None:
    """The main process builds scores without pydantic's model_construct (its cost was most of
    rebuilding a row): the result must be the same model, field for field, so that it compares,
    copies, changes and serialises alike."""
    details = {"mismatches": ["discount: missing"]}
    fast, slow = _score(0.25, "why", details), Score.model_construct(value=0.25, explanation="why", details=details)
    for attribute in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"):
        assert getattr(fast, attribute) == getattr(slow, attribute), attribute
    assert fast == slow and fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_copy(update={"value": 1.0}).value == 1.0 and fast.value == 0.25
    fast.explanation = "changed"  # each score its own fields: changing one leaves the others as they were
    assert _score(0.25, "why", {}).explanation == "why"
    # Scores share the set of the fields they were given (GIVEN_FIELDS), and one assigned a field
    # takes a set of its own first: what pydantic says was set stays true of every other.
    bare, other = Score(value=0.5), Score(value=0.5)
    assert bare.__pydantic_fields_set__ is other.__pydantic_fields_set__
    bare.explanation = "given later"
    assert bare.model_fields_set == {"value", "explanation"} and other.model_fields_set == {"value"}
    assert fast.model_fields_set is not _score(0.1, "", {}).model_fields_set


def test_each_run_s_missed_thresholds_are_judged_once_when_its_dataset_is_summarized() -> None:
    """Judged with the threshold and direction the summary records; carried runs judged again alike."""
    from agent_eval_action.datasets import LoadedDataset
    from agent_eval_action.metrics import MetricContext
    from agent_eval_action.scoring.scorer import Scorer

    scorer = Scorer.for_names(
        ["latency", "tool_usage_accuracy"], MetricContext(), pass_thresholds={"latency": 2.0, "tool_usage_accuracy": 1.0}
    )
    stale = QuestionResult(id="c", scores={"latency": Score(value=1.0)}, failed_thresholds=["latency"])
    questions = [
        QuestionResult(id="a", scores={"latency": Score(value=3.0), "tool_usage_accuracy": Score(value=0.5)}),
        QuestionResult(id="b", scores={"latency": Score(value=2.0), "tool_usage_accuracy": Score(value=None)}),
        stale,
    ]
    result = scorer.summarize(LoadedDataset(path="d.json", name="d", format="golden", records=iter(())), questions)
    assert {q.id: q.failed_thresholds for q in result.questions} == {"a": ["latency", "tool_usage_accuracy"], "b": [], "c": []}
    assert all("failed_thresholds" in q.model_fields_set for q in result.questions)
    unthresholded = Scorer.for_names(["latency"], MetricContext()).summarize(
        LoadedDataset(path="d.json", name="d", format="golden", records=iter(())),
        [QuestionResult(id="a", scores={"latency": Score(value=9.0)})],
    )
    assert unthresholded.questions[0].failed_thresholds == []


def test_pass_rates_over_repeated_runs_count_runs_and_questions_whatever_the_order_of_ids() -> None:
    """pass_rate over the runs, runs the most any question had, pass^k the share of questions whose
    every run passed; a score at its threshold passes, whichever way is better."""
    from agent_eval_action.datasets import LoadedDataset
    from agent_eval_action.metrics import MetricContext
    from agent_eval_action.scoring.scorer import Scorer

    scorer = Scorer.for_names(
        ["latency", "tool_usage_accuracy"], MetricContext(), pass_thresholds={"latency": 2.0, "tool_usage_accuracy": 1.0}
    )
    runs: dict[str, list[tuple[float, float | None]]] = {  # question -> (latency, tool_usage_accuracy) of each run
        "b": [(2.0, 1.0), (1.0, 1.0), (2.5, 1.0)],
        "a": [(1.0, 0.5), (1.0, 0.5)],
        "c": [(0.5, 1.0)],
        "d": [(1.0, None), (3.0, 1.0)],
    }
    questions = [
        QuestionResult(id=qid, run=run, scores={"latency": Score(value=lat), "tool_usage_accuracy": Score(value=tools, explanation="x")})
        for qid, scores in runs.items()
        for run, (lat, tools) in enumerate(scores)
    ]
    result = scorer.summarize(LoadedDataset(path="d.json", name="d", format="golden", records=iter(())), questions)
    latency, tools = result.summary["latency"], result.summary["tool_usage_accuracy"]
    # latency: b passes, passes, fails; a passes twice; c passes; d passes, fails.
    assert (latency.pass_rate, latency.runs, latency.pass_hat_k) == (6 / 8, 3, 2 / 4)
    # tools: b passes three times; a fails twice; c passes; d's first is unscored.
    assert (tools.pass_rate, tools.runs, tools.pass_hat_k) == (round(5 / 7, 6), 3, 3 / 4)
    assert {(q.id, q.run): q.failed_thresholds for q in result.questions if q.failed_thresholds} == {
        ("a", 0): ["tool_usage_accuracy"], ("a", 1): ["tool_usage_accuracy"], ("b", 2): ["latency"], ("d", 1): ["latency"]
    }  # fmt: skip


def test_rows_rebuilt_from_workers_keep_one_copy_of_each_explanation() -> None:
    """Explanations are templated: the main process keeps one string of each, however many rows
    (and batches, each its own pickle) bring it."""
    rows = [
        QuestionResult(id=f"q{i}", scores={"m": Score(value=1.0, explanation="".join(["no reference ", "response"]))}) for i in range(2)
    ]
    first, second = (_unpack(pickle.loads(pickle.dumps(_pack(row)))) for row in rows)
    assert isinstance(first, QuestionResult) and isinstance(second, QuestionResult)
    assert first.scores["m"].explanation == "no reference response"
    assert first.scores["m"].explanation is second.scores["m"].explanation


def test_intervals_added_after_a_summary_without_them_are_the_ones_a_whole_summary_gives() -> None:
    """A check's rounds of re-runs summarize without intervals and add them to the last round's
    summaries: each metric's ci95 is then what summarizing with them gives, to the byte, whatever
    its values (few distinct, many, huge ones that are scaled, one alone, a score from elsewhere)."""
    import dataclasses
    import random

    from agent_eval_action.datasets import LoadedDataset
    from agent_eval_action.metrics import MetricContext
    from agent_eval_action.scoring.scorer import Scorer

    draw = random.Random(7)
    questions = [
        QuestionResult(
            id=f"q{i:03d}",
            run=run,
            scores={
                "tool_usage_accuracy": Score(value=draw.choice([0.0, 0.5, 1.0])),
                "latency": Score(value=draw.uniform(0.1, 9.0)),
                "total_tokens": Score(value=draw.uniform(1e305, 1e306)),  # summed, they would overflow: scaled
                "cost_usd": Score(value=None, explanation="no price") if i % 3 else Score(value=draw.random() / 1000),
                "response_match": Score(value=0.25) if i == 0 and run == 0 else Score(value=None, explanation="no reference"),
                "judged_tone": Score(value=draw.random()),
            },
        )
        for i in range(150)
        for run in range(1 + i % 2)
    ]
    dataset = LoadedDataset(path="d.json", name="d", format="golden", records=iter(()))
    names = ["tool_usage_accuracy", "latency", "total_tokens", "cost_usd", "response_match"]
    scorer = Scorer.for_names(names, MetricContext(), seed=3, pass_thresholds={"tool_usage_accuracy": 1.0})
    whole = scorer.summarize(dataset, [q.model_copy(deep=True) for q in questions])
    light = dataclasses.replace(scorer, intervals=False).summarize(dataset, [q.model_copy(deep=True) for q in questions])
    assert all(s.ci95 is None for s in light.summary.values())
    assert sum(s.ci95 is not None for s in whole.summary.values()) == 5  # all but response_match's one value
    scorer.add_intervals(light)
    assert light.model_dump_json() == whole.model_dump_json()


def test_a_scorer_that_keeps_what_it_scored_scores_each_record_once_unless_its_judged_scores_change() -> None:
    """A check's rounds of re-runs score the same records again: with ``scored`` kept, a round
    scores only the records it has not scored (the runs it added, a record whose judged scores
    changed), and its results are what scoring every record gives."""
    import dataclasses

    from agent_eval_action.datasets import LoadedDataset, Record
    from agent_eval_action.metrics import MetricContext
    from agent_eval_action.metrics.registry import Metric
    from agent_eval_action.models.questions import Question
    from agent_eval_action.scoring.scorer import Scorer
    from tests.helpers.publishing import _records

    calls: list[str] = []

    def counted(question: Question, trace: object, context: object) -> Score:
        calls.append(question.id)
        return Score(value=1.0)

    metric = Metric(name="counted", direction="higher", description="calls counted", score=counted)
    dataset = LoadedDataset(path="d.json", name="d", format="golden", records=iter(()))
    fresh = Scorer.for_names(["tool_usage_accuracy", "latency", "counted"], MetricContext(), custom=[metric])
    keeping = dataclasses.replace(fresh, scored={})
    records = _records(4, {1})  # four runs and one that crashed (no metric scores it)
    first = keeping.for_dataset(dataset).score_dataset(dataset, records)
    assert len(calls) == 4
    again = [*records, Record(question=records[1].question, trace=records[1].trace, run=1)]
    second = keeping.for_dataset(dataset).score_dataset(dataset, again)
    assert calls[4:] == ["q01"]  # only the run added
    assert second.model_dump_json() == fresh.for_dataset(dataset).score_dataset(dataset, again).model_dump_json()
    assert first.questions[0] is second.questions[0]
    judged = {("q02", 0): {"judged_tone": Score(value=0.5)}}
    del calls[:]
    third = keeping.for_dataset(dataset, extra=judged).score_dataset(dataset, again)
    assert calls == ["q02"]  # its judged scores changed: scored again, with them
    assert third.model_dump_json() == fresh.for_dataset(dataset, extra=judged).score_dataset(dataset, again).model_dump_json()
