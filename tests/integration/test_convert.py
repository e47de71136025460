"""convert: ADK files to golden JSON, runs to the simulation table and back, ADK eval history."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action.datasets import Record, load_dataset
from tests.helpers.commands import run_cli
from tests.helpers.values import present

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "customer_service"
GOLDEN = EXAMPLE / "evaluation" / "datasets" / "customer_service_golden.json"


# Inputs must lie inside the working directory's repository: tests work in tmp_path, on copies.
pytestmark = pytest.mark.usefixtures("in_tmp")


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of the example project (agent and datasets) to work in."""
    return Path(shutil.copytree(EXAMPLE, tmp_path / EXAMPLE.name))


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("GOOGLE_API_KEY", None)
    return run_cli(args, cwd=cwd, env=env)


def records(path: Path) -> list[Record]:
    return [r for r in load_dataset(str(path)).records if isinstance(r, Record)]


def test_test_json_to_golden(tmp_path: Path) -> None:
    source = tmp_path / "raw_logs.test.json"
    source.write_text(
        json.dumps(
            [
                {
                    "query": "What's in my cart?",
                    "expected_tool_use": [{"tool_name": "access_cart_information", "tool_input": {"customer_id": "123"}}],
                    "reference": "Two bags.",
                },
                {"query": "Thanks", "expected_tool_use": [], "reference": "Welcome."},
            ]
        )
    )
    result = cli(
        "convert", str(source), "--to", "golden", "-o", str(tmp_path / "my_new_golden.json"), "--agent-name", "my_agent", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    (record,) = records(tmp_path / "my_new_golden.json")
    question = record.question
    assert question.id == "raw_logs" and question.agents_evaluated == ["my_agent"]
    assert question.user_inputs == ["What's in my cart?", "Thanks"]
    assert present(question.reference_data.reference_tool_interactions)[0].input_arguments == {"customer_id": "123"}
    assert question.reference_data.reference_response == "Welcome."
    assert question.metadata["turn_references"] == ["Two bags.", "Welcome."]


def _scores(results: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(results.read_text())
    return {q["id"]: {k: v["value"] for k, v in q["scores"].items()} for q in data["datasets"][0]["questions"]}


def test_agent_runs_round_trip_through_csv_and_jsonl(tmp_path: Path, example: Path) -> None:
    golden = example / GOLDEN.relative_to(EXAMPLE)
    direct = cli("evaluate", str(golden), "--agent", "customer_service", "--output-dir", str(tmp_path / "direct"), cwd=example)
    assert direct.returncode == 0, direct.stderr
    expected = _scores(tmp_path / "direct" / "results.json")
    for fmt in ("csv", "jsonl"):
        target = example / f"runs.{fmt}"
        made = cli("convert", str(golden), "--to", fmt, "-o", str(target), "--agent", "customer_service", cwd=example)
        assert made.returncode == 0, made.stderr
        again = cli("evaluate", str(target), "--output-dir", str(tmp_path / fmt), cwd=example)
        assert again.returncode == 0, again.stderr
        got = _scores(tmp_path / fmt / "results.json")
        for qid, scores in expected.items():
            for metric in ("tool_usage_accuracy", "tool_call_precision", "trajectory_accuracy", "trajectory_exact_match",
                           "state_management_fidelity", "response_match", "llm_calls", "input_tokens", "output_tokens", "tool_calls"):  # fmt: skip
                assert got[qid].get(metric) == scores.get(metric), (fmt, qid, metric)
            assert got[qid]["turn_latency"] is not None


def _eval_history(path: Path) -> None:
    """An eval history file written by ADK's own models from a real run of the shop test app."""
    from google.adk.evaluation.eval_case import IntermediateData, Invocation
    from google.adk.evaluation.eval_metrics import EvalMetricResult, EvalMetricResultPerInvocation
    from google.adk.evaluation.eval_result import EvalCaseResult, EvalSetResult
    from google.adk.evaluation.evaluator import EvalStatus
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    from tests.apps.shop.agent import root_agent

    async def run() -> Any:
        service = InMemorySessionService()
        runner = Runner(app_name="shop", agent=root_agent, session_service=service)
        session = await service.create_session(app_name="shop", user_id="u")
        async for _ in runner.run_async(
            user_id="u", session_id=session.id, new_message=types.Content(role="user", parts=[types.Part(text="I want a refund")])
        ):
            pass
        return await service.get_session(app_name="shop", user_id="u", session_id=session.id)

    session = asyncio.run(run())
    user = types.Content(role="user", parts=[types.Part(text="I want a refund")])
    actual = Invocation(user_content=user, final_response=types.Content(role="model", parts=[types.Part(text="Refunded 10 on order A1.")]))
    expected = Invocation(
        user_content=user,
        final_response=types.Content(role="model", parts=[types.Part(text="Your order A1 was refunded 10.")]),
        intermediate_data=IntermediateData(tool_uses=[types.FunctionCall(name="refund", args={"order_id": "A1", "amount": 10})]),
    )
    metric = EvalMetricResult(metric_name="tool_trajectory_avg_score", threshold=1.0, score=0.0, eval_status=EvalStatus.FAILED)
    case = EvalCaseResult(
        eval_set_id="shop_set", eval_id="refund_case", final_eval_status=EvalStatus.FAILED, overall_eval_metric_results=[metric],
        eval_metric_result_per_invocation=[EvalMetricResultPerInvocation(actual_invocation=actual, expected_invocation=expected, eval_metric_results=[metric])],
        session_id=session.id, session_details=session, user_id="u",
    )  # fmt: skip
    result = EvalSetResult(
        eval_set_result_id="r1", eval_set_result_name="shop_shop_set_1", eval_set_id="shop_set", eval_case_results=[case]
    )
    path.write_text(result.model_dump_json(indent=2))


def test_adk_eval_history_is_a_recorded_dataset(tmp_path: Path) -> None:
    history = tmp_path / "shop_shop_set_1.evalset_result.json"
    _eval_history(history)
    (record,) = records(history)
    assert record.question.id == "refund_case" and record.question.user_inputs == ["I want a refund"]
    assert record.question.reference_data.reference_response == "Your order A1 was refunded 10."
    trace = record.trace
    assert trace is not None and trace.error is None
    assert [c.tool_name for c in trace.tool_interactions or []] == ["transfer_to_agent", "lookup_order", "refund"]
    assert trace.final_state == {"last_order": "A1", "lookups": 1, "refund": {"order_id": "A1", "amount": 10}}
    assert trace.final_response == "Refunded 10 on order A1."
    result = cli("evaluate", str(history), "--output-dir", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    scores = _scores(tmp_path / "out" / "results.json")["refund_case"]
    assert scores["tool_usage_accuracy"] == 1.0 and scores["tool_call_precision"] == 0.5
    golden = cli("convert", str(history), "--to", "golden", "-o", str(tmp_path / "g.json"), "--agent-name", "shop", cwd=tmp_path)
    assert golden.returncode == 0, golden.stderr
    (converted,) = records(tmp_path / "g.json")
    assert present(converted.question.reference_data.reference_tool_interactions)[0].tool_name == "refund"
    table = cli("convert", str(history), "--to", "csv", "-o", str(tmp_path / "h.csv"), cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    (row,) = records(tmp_path / "h.csv")
    assert row.trace is not None and row.trace.final_state == trace.final_state


def test_history_as_json_string_and_bad_input(tmp_path: Path) -> None:
    history = tmp_path / "h.evalset_result.json"
    _eval_history(history)
    history.write_text(json.dumps(history.read_text()))  # older ADK wrote the JSON as a string
    assert len(records(history)) == 1
    bad = cli("convert", "nowhere.json", "--to", "golden", "-o", str(tmp_path / "x.json"), cwd=tmp_path)
    assert bad.returncode == 2 and "nowhere.json: no such file" in bad.stderr


def test_golden_without_agent_cannot_become_runs(tmp_path: Path) -> None:
    golden = Path(shutil.copy(GOLDEN, tmp_path))
    result = cli("convert", str(golden), "--to", "csv", "-o", str(tmp_path / "r.csv"), cwd=tmp_path)
    assert result.returncode == 2
    assert "pass --agent module:attr" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_recorded_rows_rewritten(tmp_path: Path, fmt: str) -> None:
    source = Path(shutil.copy(ROOT / "examples" / "recorded" / "customer_service_runs.csv", tmp_path))
    result = cli("convert", str(source), "--to", fmt, "-o", str(tmp_path / f"r.{fmt}"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    before = {r.question.id: present(r.trace) for r in records(source)}
    after = {r.question.id: present(r.trace) for r in records(tmp_path / f"r.{fmt}")}
    for qid, trace in before.items():
        assert after[qid].tool_interactions == trace.tool_interactions
        assert after[qid].final_state == trace.final_state


def _recorded(path: Path) -> dict[tuple[str, int], tuple[dict[str, float], dict[str, list[float | None]]]]:
    """Each run's recorded figures (``metric.*``, ``score.*``) and per-invocation scores, as read."""
    return {(r.question.id, r.run): (present(r.trace).recorded_metrics, present(r.trace).recorded_turn_scores) for r in records(path)}


# The figures of the model calls' usage, which convert carries for a run whose spans it cannot
# write (a table row keeps its spans' figures, not its spans; an eval history has none), and
# agent_handoffs, which such carriers must not fake (0 for "no spans").
USAGE_METRICS = ["total_tokens", "cost_usd", "max_call_tokens", "grounding_chunks", "output_tokens", "cached_tokens"]


def _scored(path: Path) -> dict[tuple[str, int], dict[str, float | None]]:
    """The recorded scores (``score.*``) and the usage figures as evaluated."""
    from agent_eval_action import evaluate

    results = evaluate([str(path)], metrics=[*USAGE_METRICS, "agent_handoffs"])
    assert not results.problems, results.problems
    return {(q.id, q.run): {name: s.value for name, s in q.scores.items()} for d in results.datasets for q in d.questions}


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_convert_keeps_every_recorded_score(tmp_path: Path, fmt: str) -> None:
    """The seed pipeline's adk_score.<metric>, metric.* and score.* columns and an ADK eval
    history's recorded results (overall and per invocation) read back the same after convert, and
    so do the token figures (the model's tool-use prompt tokens, grounding chunks included)."""
    from tests.helpers import adk_files
    from tests.helpers import seed_pipeline as seed

    rows = [
        seed.sim_row(),
        seed.sim_row(question_id="second", session_id="s2", **{"adk_score.safety_v1": 0.5, "adk_score.hallucinations_v1": None}),
        seed.live_row(
            **{
                "metric.duration_sec": 6.8,
                "metric.tool_calls": 9,
                "metric.unique_tools": ["a", "b"],
                "metric.cache_hit_rate": 0.123456789,
                "score.my_judge": 0.25,
            }
        ),
    ]
    sources = [
        seed.write_jsonl(tmp_path / "processed_interaction_sim.jsonl", rows),
        adk_files.history(tmp_path / "shop_shop_set_1.evalset_result.json", with_session=True),
        Path(shutil.copy(adk_files.ADK_1_HISTORY, tmp_path / adk_files.ADK_1_HISTORY.name)),
    ]
    for source in sources:
        before = _recorded(source)
        assert any(figures for figures, _ in before.values()), source
        target = tmp_path / f"{source.name}.{fmt}"
        done = cli("convert", str(source), "--to", fmt, "-o", str(target), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        after = _recorded(target)
        assert after.keys() == before.keys()
        for run, (figures, per_turn) in before.items():
            # Every recorded figure kept (convert may add the ones it computes, never change one).
            assert {name: after[run][0].get(name) for name in figures} == pytest.approx(figures, abs=1e-6), (source.name, run)
            assert after[run][1] == per_turn, (source.name, run)
        got, expected = _scored(target), _scored(source)
        if source.name.endswith(".evalset_result.json"):
            # The history's criteria came with it: its Vertex-backed safety_v1 is gated on the score
            # ADK recorded. A table keeps that score (score.safety_v1), not the criterion.
            for scores in expected.values():
                scores.pop("safety_v1", None)
        if source.suffix == ".jsonl":  # a table row keeps its spans' figures, not its spans: convert writes none
            assert {run: scores.pop("agent_handoffs") for run, scores in got.items()} == dict.fromkeys(got)
            for scores in expected.values():
                del scores["agent_handoffs"]
        assert got == expected, source.name
    sim = _recorded(sources[0])
    assert sim[("df4c7efb", 0)][0]["score.hallucinations_v1"] == 0.975
    assert sim[("retail_001_full_pipeline", 0)][0]["score.my_judge"] == 0.25
    assert _recorded(sources[1])[("refund_case", 0)][1]["response_match_score"] == pytest.approx(adk_files.ADK_ROUGE_PER_TURN)
    live = _scored(sources[0])[("retail_001_full_pipeline", 0)]
    assert live["grounding_chunks"] == 5 and live["total_tokens"] == sum(c.usage.total for c in seed.CALLS)
    assert _scored(sources[1])[("refund_case", 0)]["agent_handoffs"] is None
