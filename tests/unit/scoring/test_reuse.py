"""Question-level reuse: a question's scores are carried over from the baseline only when it is
provably the same work (same content hash, every run ok, at least as many runs as asked for)."""

from __future__ import annotations

from agent_eval_action.datasets import Record
from agent_eval_action.models.questions import Question, ReferenceData, ReferenceToolCall
from agent_eval_action.models.results import DatasetResult, QuestionResult
from agent_eval_action.models.scores import Score
from agent_eval_action.scoring.reuse import pooled_runs, question_hash, same_code, split_reusable


def question(qid: str, text: str = "what is the price of apple", **extra: object) -> Question:
    return Question.model_validate({"id": qid, "user_inputs": [text], **extra})


def stored(q: Question, runs: int = 1, status: str = "ok", content_hash: str | None = None) -> list[QuestionResult]:
    digest = question_hash(q) if content_hash is None else content_hash
    return [
        QuestionResult.model_validate(
            {"id": q.id, "run": k, "status": status, "scores": {"m": Score(value=0.5 + k / 10)}, "content_hash": digest}
        )
        for k in range(runs)
    ]


def baseline(*results: list[QuestionResult]) -> DatasetResult:
    return DatasetResult(path="d.json", name="d", format="golden", questions=[r for rs in results for r in rs])


def test_the_hash_ignores_the_line_and_key_order_and_sees_every_field_that_matters() -> None:
    q = question("q1", metadata={"a": 1, "b": 2})
    assert question_hash(q) == question_hash(q.model_copy(update={"line": 42}))
    assert question_hash(q) == question_hash(question("q1", metadata={"b": 2, "a": 1}))
    assert len(question_hash(q)) == 20
    changed = [
        question("q1", "what is the price of pear", metadata={"a": 1, "b": 2}),
        question("q1", metadata={"a": 1, "b": 3}),
        question("q1", metadata={"a": 1, "b": 2}, initial_state={"cart": []}),
        question("q2", metadata={"a": 1, "b": 2}),
        q.model_copy(update={"reference_data": ReferenceData(reference_tool_interactions=[ReferenceToolCall(tool_name="lookup")])}),
    ]
    assert len({question_hash(c) for c in changed} | {question_hash(q)}) == len(changed) + 1


def test_without_a_baseline_everything_runs() -> None:
    records = [Record(question=question("q1"))]
    assert split_reusable(records, None, runs=1) == ([], records)


def test_an_unchanged_question_is_carried_over_marked_reused_and_an_edited_one_runs() -> None:
    same, edited = question("q1"), question("q2")
    base = baseline(stored(same), stored(question("q2", "the old wording")))
    carried, to_run = split_reusable([Record(question=same), Record(question=edited)], base, runs=1)
    assert [(r.id, r.reused, r.scores["m"].value) for r in carried] == [("q1", True, 0.5)]
    assert [r.question.id for r in to_run] == ["q2"]
    assert not base.questions[0].reused  # the baseline itself is left as it was


def test_every_run_is_carried_when_the_run_count_matches() -> None:
    q = question("q1")
    carried, to_run = split_reusable([Record(question=q)], baseline(stored(q, runs=3)), runs=3)
    assert [r.run for r in carried] == [0, 1, 2] and to_run == []


def test_a_different_run_count_runs_the_question_again() -> None:
    q = question("q1")
    assert split_reusable([Record(question=q)], baseline(stored(q, runs=1)), runs=3)[0] == []
    # A baseline of more runs (baseline-runs) stands for a run of fewer: every stored run is carried.
    assert len(split_reusable([Record(question=q)], baseline(stored(q, runs=3)), runs=1)[0]) == 3


def test_a_question_that_failed_or_was_skipped_in_the_baseline_runs_again() -> None:
    q = question("q1")
    for status in ("error", "skipped"):
        carried, to_run = split_reusable([Record(question=q)], baseline(stored(q, status=status)), runs=1)
        assert carried == [] and len(to_run) == 1, status


def test_a_baseline_without_hashes_reuses_nothing() -> None:
    """Results written before hashes were stored (content_hash None) cannot prove the question unchanged."""
    q = question("q1")
    old = [r.model_copy(update={"content_hash": None}) for r in stored(q)]
    assert split_reusable([Record(question=q)], baseline(old), runs=1)[0] == []


def test_a_question_new_in_this_pr_runs() -> None:
    carried, to_run = split_reusable([Record(question=question("new"))], baseline(stored(question("q1"))), runs=1)
    assert carried == [] and [r.question.id for r in to_run] == ["new"]


def test_baseline_update_pools_the_runs_that_still_stand_and_asks_only_for_the_rest() -> None:
    kept, edited, fresh, old = question("kept"), question("edited"), question("fresh"), question("old")
    before = baseline(stored(kept, runs=5), stored(edited.model_copy(update={"user_inputs": ["before"]}), runs=5), stored(old, runs=1))
    before.agent_fingerprint = "abc"
    records = [Record(question=q) for q in (kept, edited, fresh, old)]
    carried, need = pooled_runs(records, before, "abc", 5)
    # An unchanged question keeps its newest 4 runs and refreshes one (a record ages out within 5
    # updates); an older baseline's one run is kept and topped up.
    assert sorted({r.id for r in carried}) == ["kept", "old"]
    assert [r.run for r in carried if r.id == "kept"] == [0, 1, 2, 3]
    assert need == {"kept": 1, "edited": 5, "fresh": 5, "old": 4}
    # Other agent code (or code not committed: no hash): nothing stands.
    assert pooled_runs(records, before, "xyz", 5) == ([], {q.id: 5 for q in (kept, edited, fresh, old)})
    assert not same_code(None, None) and same_code("abc", "abc")
