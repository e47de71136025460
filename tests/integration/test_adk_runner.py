"""A real ADK Runner driving scripted models: traces, concurrency, retries, timeouts, errors."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import pytest

from agent_eval_action.datasets import Record
from agent_eval_action.models.questions import Question, ReferenceData, ReferenceToolCall
from agent_eval_action.models.traces import Trace
from agent_eval_action.run.agent.in_process import AdkRunner
from agent_eval_action.run.agent.loader import load_agent
from agent_eval_action.run.run_pool import QuestionRunner, RunSettings, run_records
from agent_eval_action.system.errors import AgentLoadError
from tests.helpers.commands import run_cli

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "tests" / "apps"
# A generous timeout: nothing here asserts on it, and a busy machine must not turn a slow start into an error.
FAST = RunSettings(concurrency=8, timeout_s=60, retries=3, backoff_initial_s=0.01, backoff_max_s=0.05)


def q(qid: str, *inputs: str, state: dict | None = None) -> Record:
    return Record(question=Question(id=qid, user_inputs=list(inputs), agents_evaluated=["shop"], initial_state=state or {}))


@pytest.fixture(scope="module")
def shop() -> AdkRunner:
    return AdkRunner(load_agent("shop", cwd=APPS))


def run(runner: QuestionRunner, records: list[Record], settings: RunSettings = FAST) -> list[Record]:
    return asyncio.run(run_records(records, runner, settings))


def traced(record: Record) -> Trace:
    assert record.trace is not None, record.question.id  # every record the pool returns was run
    return record.trace


def test_multi_turn_tools_state_and_initial_state(shop: AdkRunner) -> None:
    (done,) = run(shop, [q("q1", "hello", "where is my order", "thanks", state={"lookups": 5})])
    trace = done.trace
    assert trace is not None and trace.error is None
    assert [t.user_input for t in trace.turns] == ["hello", "where is my order", "thanks"]
    assert [t.response for t in trace.turns] == ["shop: hello", "shop: where is my order", "shop: thanks"]
    assert all(t.duration_s is not None and t.duration_s > 0 for t in trace.turns)
    assert trace.tool_interactions is not None and [c.tool_name for c in trace.tool_interactions] == ["lookup_order"]
    call = trace.tool_interactions[0]
    assert call.input_arguments == {"order_id": "A1"} and call.output_result == {"order_id": "A1", "status": "shipped", "total": 10}
    assert call.call_id is None  # ADK's random ids are dropped
    assert trace.final_state == {"lookups": 6, "last_order": "A1"}
    assert trace.final_response == "shop: thanks"
    assert trace.llm_calls is not None and len(trace.llm_calls) == 4
    assert {c.model for c in trace.llm_calls} == {"scripted-shop"} and trace.llm_calls[0].cached_tokens == 8
    assert trace.latency_source == "measured" and trace.latency_s == pytest.approx(sum(t.duration_s or 0 for t in trace.turns))


def test_transfer_is_an_agent_step(shop: AdkRunner) -> None:
    (done,) = run(shop, [q("q2", "I want a refund")])
    trace = done.trace
    assert trace is not None and trace.error is None, trace
    # The trace keeps the transfer call as it happened; metrics count it as an agent step (calls.py).
    assert [(s.kind, s.name) for s in trace.trajectory or []] == [
        ("agent", "shop"),
        ("tool", "transfer_to_agent"),
        ("agent", "refunds"),
        ("tool", "lookup_order"),
        ("tool", "refund"),
    ]
    assert [c.tool_name for c in trace.tool_interactions or []] == ["transfer_to_agent", "lookup_order", "refund"]
    assert trace.final_state == {"last_order": "A1", "lookups": 1, "refund": {"order_id": "A1", "amount": 10}}
    assert [s.agent_name for s in trace.sub_agent_trace] == ["refunds"]


def test_spans_are_captured_per_question(shop: AdkRunner) -> None:
    done = run(shop, [q(f"s{i}", "where is my order") for i in range(5)])
    for record in done:
        names = [s.name for s in traced(record).spans]
        assert "agent_eval.turn" not in names  # only ADK's spans, none of another question's
        assert any(n.startswith("invoke_agent shop") for n in names), names
        assert sum(n.startswith("execute_tool lookup_order") for n in names) == 1


def test_failures_stay_with_their_question(shop: AdkRunner) -> None:
    records = [q("ok1", "hello"), q("boom", "boom please"), q("flaky", "flaky order"), q("ok2", "hello again")]
    done = {r.question.id: traced(r) for r in run(shop, records)}
    # The timeout apart, on the question alone whose model sleeps 30 s: the others never race a
    # 1 s timer (on a busy machine they lost it), and this one's 29 s margin is no race either.
    settings = RunSettings(concurrency=4, timeout_s=1.0, retries=0)
    done.update({r.question.id: traced(r) for r in run(shop, [q("slow", "slow answer")], settings)})
    assert done["ok1"].error is None and done["ok2"].error is None
    assert "tool exploded: test" in (done["boom"].error or "")
    assert done["slow"].error == "timed out after 1 s"
    flaky = done["flaky"]
    assert flaky.error is None, flaky.error  # 429 twice, then success
    assert [c.tool_name for c in flaky.tool_interactions or []] == ["lookup_order"]


def _before_the_error(trace: Trace) -> None:
    """A run whose second tool raised keeps its first call, its state write and the error."""
    assert "tool exploded: after the lookup" in (trace.error or ""), trace.error
    calls = trace.tool_interactions or []
    assert [c.tool_name for c in calls][:1] == ["lookup_order"], calls
    assert calls[0].output_result == {"order_id": "A1", "status": "shipped", "total": 10} and calls[0].error is None
    assert trace.final_state == {"last_order": "A1", "lookups": 1}
    assert trace.turns and trace.turns[0].user_input == "my order, then boom"


def test_an_error_keeps_what_the_run_did_before_it_in_process(shop: AdkRunner) -> None:
    """The question's result is the partial trace with the error, not an empty trace."""
    (done,) = run(shop, [q("partial", "my order, then boom")])
    _before_the_error(traced(done))


def test_an_error_keeps_what_the_run_did_before_it_in_a_worker() -> None:
    """The same through the worker process: the partial run crosses the protocol with the error."""
    from agent_eval_action.run.agent.env import agent_environment
    from agent_eval_action.run.workers.pool import WorkerPool
    from agent_eval_action.run.workers.start import WorkerSettings

    async def go() -> list[Record]:
        pool = WorkerPool(WorkerSettings(agent="shop", python=sys.executable, cwd=APPS, env=agent_environment(dict(os.environ))))
        await pool.start()
        try:
            # A generous timeout: the worker's start (ADK's import) must not decide this test on a busy machine.
            return await run_records([q("partial", "my order, then boom")], pool, RunSettings(concurrency=1, timeout_s=120, retries=0))
        finally:
            await pool.close()

    (done,) = asyncio.run(go())
    _before_the_error(traced(done))


def test_a_429_is_asked_again_inside_its_question_without_using_up_a_retry(shop: AdkRunner) -> None:
    """The model answers 429 twice: with no retry left to the question (and a fixed concurrency,
    which forgives none), the call itself is asked again, after the pacing's backoff."""
    settings = RunSettings(concurrency=1, timeout_s=60, retries=0)
    (done,) = run(shop, [q("f", "flaky once more")], settings)
    assert done.trace is not None and done.trace.error is None, done.trace
    assert done.trace.final_response and len(done.trace.llm_calls or []) == 1


def test_runs_are_distinct_sessions(shop: AdkRunner) -> None:
    done = run(shop, [q("a", "where is my order"), q("b", "hello")], RunSettings(concurrency=4, runs=3, timeout_s=60))
    assert [(r.question.id, r.run) for r in done] == [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1), ("b", 2)]
    assert [traced(r).final_state for r in done[:3]] == [{"last_order": "A1", "lookups": 1}] * 3


def test_concurrency_overlaps_questions(monkeypatch: pytest.MonkeyPatch) -> None:
    """All 16 questions are in flight at once: counted, never timed. Each waits until all 16 have
    started (an event, not a model latency the first might outlast on a busy machine); a pool
    that let fewer run at once would leave them waiting into their timeout, and fail here."""
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "customer_service"))
    inner = AdkRunner(load_agent("customer_service", cwd=ROOT / "examples" / "customer_service"))
    in_flight, most = 0, 0
    everyone = asyncio.Event()

    class Counting:
        async def run_question(self, question: Question, timeout_s: float) -> Trace:
            nonlocal in_flight, most
            in_flight += 1
            most = max(most, in_flight)
            if in_flight == 16:
                everyone.set()
            try:
                await everyone.wait()
                return await inner.run_question(question, timeout_s)
            finally:
                in_flight -= 1

    records = [
        Record(question=Question(id=f"c{i}", user_inputs=["Hi", "What's in my cart?"], agents_evaluated=["customer_service"]))
        for i in range(16)
    ]
    done = run(Counting(), records, RunSettings(concurrency=16, timeout_s=60))
    assert all(r.trace and r.trace.error is None for r in done)
    assert most == 16


def test_loading_errors_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(AgentLoadError, match="neither module:attr"):
        load_agent("no such thing!", cwd=tmp_path)
    # A module name that names nothing says so, with the agents that init would find here.
    with pytest.raises(
        AgentLoadError, match=re.escape(f"module 'nowhere.agent' was not found from {tmp_path.resolve()} (no module 'nowhere')")
    ):
        load_agent("nowhere.agent:root_agent", cwd=tmp_path)
    (tmp_path / "customer_service").mkdir()
    (tmp_path / "customer_service" / "agent.py").write_text("root_agent = 3\n")
    with pytest.raises(AgentLoadError, match=re.escape("(no module 'app'); found here: `customer_service.agent:root_agent`")):
        load_agent("app.agent:root_agent", cwd=tmp_path)
    # A file path is refused with the module:attr it stands for.
    with pytest.raises(
        AgentLoadError,
        match=re.escape("is a file: --agent takes module:attr") + ".*" + re.escape("give `--agent customer_service.agent:root_agent`"),
    ):
        load_agent("customer_service/agent.py", cwd=tmp_path)
    (tmp_path / "broken.py").write_text("raise ValueError('bad config')\n")
    with pytest.raises(AgentLoadError, match=r"raised ValueError: bad config \(.*broken.py:1\)"):
        load_agent("broken:root_agent", cwd=tmp_path)
    with pytest.raises(AgentLoadError, match=r"raised ValueError: bad config \(.*broken.py:1\)"):
        load_agent("broken", cwd=tmp_path)  # a bare module name fails as helpfully as module:attr
    (tmp_path / "notagent.py").write_text("root_agent = 3\n")
    with pytest.raises(AgentLoadError, match="is a int, not an ADK agent"):
        load_agent("notagent:root_agent", cwd=tmp_path)
    with pytest.raises(AgentLoadError, match="has no attribute 'missing'"):
        load_agent("notagent:missing", cwd=tmp_path)


def test_reference_metrics_on_a_real_run(shop: AdkRunner) -> None:
    from agent_eval_action.metrics import REGISTRY, MetricContext

    question = Question(
        id="r",
        user_inputs=["I want a refund"],
        agents_evaluated=["shop"],
        reference_data=ReferenceData(
            reference_tool_interactions=[ReferenceToolCall(tool_name="refund", input_arguments={"order_id": "A1", "amount": 10.0})],
            reference_trajectory=["shop", "refunds"],
            reference_state_variables={"refund": {"amount": 10}},
        ),
    )
    (done,) = run(shop, [Record(question=question)])
    ctx = MetricContext()
    assert done.trace is not None
    assert REGISTRY["tool_usage_accuracy"].score(question, done.trace, ctx).value == 1.0
    assert REGISTRY["tool_call_precision"].score(question, done.trace, ctx).value == 0.5  # lookup_order was extra
    assert REGISTRY["trajectory_exact_match"].score(question, done.trace, ctx).value == 1.0
    assert REGISTRY["state_management_fidelity"].score(question, done.trace, ctx).value == 1.0


def test_cli_evaluates_the_example_agent(tmp_path: Path) -> None:
    example = ROOT / "examples" / "customer_service"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("GOOGLE_API_KEY", None)
    result = run_cli(
        [
            "evaluate",
            "evaluation/datasets/customer_service_golden.json",
            "--agent",
            "customer_service.agent:root_agent",
            "--output-dir",
            str(tmp_path),
            "--runs",
            "2",
        ],
        cwd=example,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    dataset = json.loads((tmp_path / "results.json").read_text())["datasets"][0]
    assert sorted((q["id"], q["run"]) for q in dataset["questions"])[:2] == [("q_address_01", 0), ("q_address_01", 1)]
    summary = dataset["summary"]["tool_usage_accuracy"]
    assert summary["runs"] == 2 and summary["pass_rate"] == 0.875 and summary["pass_hat_k"] == 0.875
    assert "pass^2 (every run of a question passes): " in result.stdout
    questions = {q["id"]: q["scores"] for q in dataset["questions"]}
    assert len(questions) == 8
    assert questions["q_address_01"]["tool_usage_accuracy"]["value"] == 0.0  # the example agent lower-cases addresses
    assert all(s["tool_usage_accuracy"]["value"] == 1.0 for qid, s in questions.items() if qid != "q_address_01")
    assert all(s["trajectory_exact_match"]["value"] == 1.0 for s in questions.values())
    assert questions["q_cart_01"]["state_management_fidelity"]["value"] == 1.0  # state a tool wrote, scored from a live run
    # The example ships a regression for `make example`: its QR tool caps discounts below what the agent offers.
    assert questions["q_discount_01"]["state_management_fidelity"]["value"] == 0.0
    assert questions["q_appointment_01"]["turn_latency"]["details"]["source"] == "measured"


@pytest.mark.parametrize("named", [False, True], ids=["transfer not in the reference", "reference names the transfer"])
def test_one_definition_of_a_tool_call_for_every_metric_and_convert(shop: AdkRunner, named: bool) -> None:
    """One run (a transfer, a lookup, a refund): every count agrees, in the metrics and in convert's table."""
    from agent_eval_action.datasets.convert import run_row
    from agent_eval_action.metrics import MetricContext
    from agent_eval_action.scoring.scorer import Scorer

    transfer = [ReferenceToolCall(tool_name="transfer_to_agent", input_arguments={"agent_name": "refunds"})] if named else []
    expected = [*transfer, ReferenceToolCall(tool_name="refund", input_arguments={"order_id": "A1", "amount": 10})]
    question = Question(
        id="one_run",
        user_inputs=["I want a refund"],
        agents_evaluated=["shop"],
        reference_data=ReferenceData(
            reference_tool_interactions=expected,
            turn_tool_calls=[expected],  # as an ADK eval set gives them
            reference_trajectory=["shop", *(["transfer_to_agent"] if named else []), "refunds", "lookup_order", "refund"],
        ),
    )
    (done,) = run(shop, [Record(question=question)])
    scores = Scorer.for_names([], MetricContext()).score_record(done).scores
    calls = 3 if named else 2
    matched = len(transfer) + 1
    assert scores["tool_calls"].value == calls
    assert scores["tool_error_rate"].explanation == f"0 of {calls} tool call(s) failed"
    assert scores["tool_call_precision"].explanation == f"{matched} of {calls} calls expected"
    assert scores["tool_usage_accuracy"].value == 1.0
    assert scores["trajectory_exact_match"].value == 1.0
    assert scores["tool_trajectory_avg_score"].value == 0.0  # EXACT: lookup_order was not expected
    row = run_row(done)
    assert (row["metric.tool_calls"], row["metric.tool_errors"], row["metric.unique_tools"]) == (calls, 0, calls)
    # The trace keeps what happened; what counts is decided per question.
    assert row["trace_summary"] == ["agent:shop", "tool:transfer_to_agent", "agent:refunds", "tool:lookup_order", "tool:refund"]


def test_each_turn_keeps_what_its_agents_requests_said_of_the_app(shop: AdkRunner) -> None:
    """ADK's judged criteria read each turn's app_details (the system instruction and the tool
    declarations of each agent's first request), recorded as ADK's eval records them; four
    questions at once in one runner keep their own."""
    done = run(shop, [q(f"r{i}", "I want a refund", "where is my order") for i in range(4)])
    for record in done:
        details = traced(record).app_details
        assert details is not None and len(details) == 2, details
        first = details[0]
        assert first is not None and list(first["agent_details"]) == ["shop", "refunds"]
        shop_details, refunds = first["agent_details"]["shop"], first["agent_details"]["refunds"]
        assert "Shop assistant." in shop_details["instructions"] and "Refund orders." in refunds["instructions"]
        declared = {d["name"] for tool in shop_details["tool_declarations"] for d in tool.get("function_declarations", [])}
        assert {"lookup_order", "explode", "transfer_to_agent"} <= declared
        assert details[1] is not None and details[1]["agent_details"]


def test_an_agent_tools_requests_are_not_its_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    """An AgentTool's agent runs in a session of its own, which ADK's eval never sees: its
    requests are not in the turn's app_details (the advisor's are)."""
    from tests.apps.advisor.agent import model
    from tests.fakes.gemini_server import FakeGemini

    endpoint = FakeGemini(parts=model)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", endpoint.url)
    monkeypatch.setenv("GOOGLE_API_KEY", "loopback")
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    try:
        (done,) = run(AdkRunner(load_agent("advisor", cwd=APPS)), [q("a1", "should I buy share 1?")])
    finally:
        endpoint.close()
    trace = traced(done)
    assert trace.error is None, trace.error
    assert trace.app_details is not None and len(trace.app_details) == 1
    (turn,) = trace.app_details
    assert turn is not None and list(turn["agent_details"]) == ["advisor"]
    assert "Ask the researcher, then the writer." in turn["agent_details"]["advisor"]["instructions"]
