"""What several metrics of one run compute alike (the trajectory's projection, the tool calls'
matching) is computed once for that run, and never given to another run or to the same objects
changed since they were scored."""

from __future__ import annotations

import threading

from agent_eval_action.datasets import Record
from agent_eval_action.metrics import MetricContext
from agent_eval_action.metrics.registry import new_run, per_run
from agent_eval_action.models.questions import Question, ReferenceData, ReferenceToolCall, ToolInteraction, TrajectoryStep
from agent_eval_action.models.traces import Trace
from agent_eval_action.scoring.scorer import Scorer

TRAJECTORY = [
    "trajectory_accuracy", "trajectory_exact_match", "trajectory_in_order_match",
    "trajectory_any_order_match", "trajectory_precision", "trajectory_recall",
]  # fmt: skip
TOOLS = ["tool_usage_accuracy", "tool_call_precision"]


def _record(steps: list[str], calls: list[str]) -> Record:
    question = Question(
        id="q",
        user_inputs=["hi"],
        reference_data=ReferenceData(
            reference_trajectory=["lookup", "refund"],
            reference_tool_interactions=[ReferenceToolCall(tool_name="lookup"), ReferenceToolCall(tool_name="refund")],
        ),
    )
    trace = Trace(
        final_response="done",
        trajectory=[TrajectoryStep(kind="tool", name=name) for name in steps],
        tool_interactions=[ToolInteraction(tool_name=name) for name in calls],
    )
    return Record(question=question, trace=trace)


def _values(scorer: Scorer, record: Record) -> dict[str, float | None]:
    return {name: score.value for name, score in scorer.score_record(record).scores.items()}


def test_a_run_is_projected_and_matched_once_for_all_its_metrics() -> None:
    counted: list[str] = []

    @per_run
    def asked(question: Question, trace: Trace) -> int:
        counted.append(question.id)
        return len(counted)

    record = _record(["lookup"], ["lookup"])
    new_run()
    assert [asked(record.question, record.trace) for _ in range(3)] == [1, 1, 1]  # type: ignore[arg-type]
    other = _record(["lookup"], ["lookup"])  # equal, but other objects: another run
    assert asked(other.question, other.trace) == 2  # type: ignore[arg-type]
    new_run()  # the scorer starts the next run: the same objects are computed again
    assert asked(record.question, record.trace) == 3  # type: ignore[arg-type]


def test_a_trace_changed_after_it_was_scored_is_scored_as_it_is_now() -> None:
    scorer = Scorer.for_names([*TRAJECTORY, *TOOLS], MetricContext())
    record = _record(["lookup"], ["lookup"])
    first = _values(scorer, record)
    assert first["trajectory_recall"] == 0.5 and first["tool_usage_accuracy"] == 0.5
    assert record.trace is not None
    record.trace.trajectory = [TrajectoryStep(kind="tool", name="lookup"), TrajectoryStep(kind="tool", name="refund")]
    record.trace.tool_interactions = [ToolInteraction(tool_name="lookup"), ToolInteraction(tool_name="refund")]
    assert _values(scorer, record) == dict.fromkeys([*TRAJECTORY, *TOOLS], 1.0)
    assert _values(scorer, _record(["refund"], [])) == {
        "trajectory_accuracy": 0.5, "trajectory_exact_match": 0.0, "trajectory_in_order_match": 0.0,
        "trajectory_any_order_match": 0.0, "trajectory_precision": 1.0, "trajectory_recall": 0.5,
        "tool_usage_accuracy": 0.0, "tool_call_precision": None,
    }  # fmt: skip


def test_threads_scoring_different_runs_at_once_each_get_their_own() -> None:
    """Scorers in threads (as an agent run scores its questions) interleave their metrics' calls:
    each run's scores are the ones it gives alone."""
    scorer = Scorer.for_names([*TRAJECTORY, *TOOLS], MetricContext())
    shapes = [(["lookup"], ["lookup"]), (["lookup", "refund"], ["lookup", "refund"]), (["refund"], []), ([], ["refund", "lookup"])]
    alone = [_values(scorer, _record(*shape)) for shape in shapes]
    wrong: list[tuple[int, dict[str, float | None]]] = []
    start = threading.Barrier(len(shapes))

    def score(index: int) -> None:
        start.wait()
        for _ in range(300):
            got = _values(scorer, _record(*shapes[index]))
            if got != alone[index]:
                wrong.append((index, got))

    threads = [threading.Thread(target=score, args=(i,)) for i in range(len(shapes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong, wrong[:3]
