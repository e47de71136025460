"""run_records over a scripted runner (the boundary the worker pool, the in-process runner and
the HTTP runner implement): results in input order run by run, a transient error asked again, a
runner's error (with the run it interrupted) and a timeout as that question's result, and a
spent budget skipping what has not started. Nothing waits on a clock."""

from __future__ import annotations

import asyncio
from collections import Counter

from agent_eval_action.datasets import Record
from agent_eval_action.models.questions import Question
from agent_eval_action.models.traces import LlmCall, Trace
from agent_eval_action.run.budget import Budget
from agent_eval_action.run.run_pool import RunSettings, keep_partial, run_records


class Scripted:
    """Answers each question by its first user input: ``ok``, ``flaky`` (a 429 the first time),
    ``fails`` (an error after a tool call), ``slow`` (its time runs out)."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()

    async def run_question(self, question: Question, timeout_s: float) -> Trace:
        self.asked[question.id] += 1
        said = question.user_inputs[0]
        if said == "flaky" and self.asked[question.id] == 1:
            raise RuntimeError("429 RESOURCE_EXHAUSTED")
        if said == "fails":
            error = ValueError("the tool broke")
            keep_partial(error, Trace(final_response="half done"))
            raise error
        if said == "slow":
            raise TimeoutError
        await asyncio.sleep(0)
        return Trace(final_response=f"{question.id} #{self.asked[question.id]}", llm_calls=[LlmCall(model="m")])


def records(*said: str) -> list[Record]:
    return [Record(question=Question(id=f"q{i}", user_inputs=[text])) for i, text in enumerate(said)]


SETTINGS = RunSettings(concurrency=2, timeout_s=7, backoff_initial_s=0.0, backoff_max_s=0.0)


def test_results_come_in_input_order_run_by_run() -> None:
    runner = Scripted()
    done = asyncio.run(run_records(records("ok", "ok", "ok"), runner, RunSettings(concurrency=2, runs=2)))

    assert [(r.question.id, r.run) for r in done] == [("q0", 0), ("q0", 1), ("q1", 0), ("q1", 1), ("q2", 0), ("q2", 1)]
    assert sorted(str(r.trace.final_response) for r in done if r.trace is not None) == [
        "q0 #1", "q0 #2", "q1 #1", "q1 #2", "q2 #1", "q2 #2"
    ]  # fmt: skip


def test_a_transient_error_is_asked_again_and_a_runners_error_is_the_questions_result() -> None:
    runner = Scripted()
    flaky, fails, slow = asyncio.run(run_records(records("flaky", "fails", "slow"), runner, SETTINGS))

    assert flaky.trace is not None and flaky.trace.final_response == "q0 #2" and flaky.trace.error is None
    # The run the error interrupted is kept, with the error.
    assert fails.trace is not None
    assert (fails.trace.final_response, fails.trace.error) == ("half done", "ValueError: the tool broke")
    assert runner.asked["q1"] == 1  # not transient: not asked again
    assert slow.trace is not None and slow.trace.error == "timed out after 7 s"


def test_a_spent_budget_skips_the_questions_not_started() -> None:
    runner = Scripted()
    budget = Budget(max_calls=1)
    done = asyncio.run(run_records(records("ok", "ok", "ok"), runner, RunSettings(concurrency=1), budget=budget))

    assert done[0].trace is not None and done[0].trace.final_response == "q0 #1"
    assert [r.trace.skipped for r in done[1:] if r.trace is not None] == [
        "budget max-model-calls 1 reached: not run; raise it or select fewer questions"
    ] * 2
    assert (budget.calls, budget.skipped) == (1, 2)
    assert sum(runner.asked.values()) == 1
