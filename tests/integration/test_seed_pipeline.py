"""Files shaped as the seed pipeline writes them (jcarah/accelerate_context_engineering_workshop,
``evaluation/src/evaluation/core/``; tests/helpers/seed_pipeline.py says which writer each shape
follows), read and scored here. Each expected figure is computed in the test from the
pipeline's own formula in ``deterministic_metrics.py`` (the function is named beside it);
where our definition differs on purpose (docs/metrics.md says why) the test states the
relation between the two numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action import evaluate
from agent_eval_action.models.results import QuestionResult
from tests.helpers import seed_pipeline as seed
from tests.helpers.commands import cli
from tests.helpers.repos import ROOT


def scored(path: Path) -> dict[str, QuestionResult]:
    results = evaluate([str(path)])
    assert not results.problems, results.problems
    return {q.id: q for dataset in results.datasets for q in dataset.questions}


def value(question: QuestionResult, metric: str) -> float | None:
    return question.scores[metric].value


def llm_responses(spans: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(span name, parsed response) of each span holding a model response, in file order: what
    every function of deterministic_metrics.py iterates over."""
    out = []
    for span in spans:
        text = span["attributes"].get("gcp.vertex.agent.llm_response")
        if text:
            out.append((span["name"], json.loads(text)))
    return out


USAGE_KEYS = ("prompt_token_count", "candidates_token_count", "cached_content_token_count", "thoughts_token_count",
              "tool_use_prompt_token_count", "total_token_count")  # fmt: skip


def usages(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each model response's usage as the pipeline reads it: ``usage.get(key, 0)`` (ADK leaves out the
    counts that are None)."""
    return [{k: r["usage_metadata"].get(k) or 0 for k in USAGE_KEYS} for _, r in llm_responses(spans) if r.get("usage_metadata")]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], QuestionResult]:
    row = seed.live_row()
    path = seed.write_jsonl(tmp_path_factory.mktemp("live") / "processed_interaction_app.jsonl", [row])
    (question,) = scored(path).values()
    return row, question


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], QuestionResult]:
    row = seed.sim_row()
    path = seed.write_jsonl(tmp_path_factory.mktemp("sim") / "processed_interaction_sim.jsonl", [row])
    (question,) = scored(path).values()
    return row, question


def test_the_pipelines_rows_are_runs_not_errors(live: Any, sim: Any) -> None:
    """Its status {"boolean": "success"} is an OK status (item 1)."""
    for row, question in (live, sim):
        assert row["status"] == {"boolean": "success"}
        assert question.status == "ok" and question.error is None


def test_a_failed_status_in_every_shape_it_is_written(tmp_path: Path) -> None:
    rows = [
        seed.sim_row(question_id="dict", status={"boolean": "failed"}),
        seed.sim_row(question_id="text", status="{'boolean': 'failed'}"),  # a CSV cell of str(dict)
        seed.sim_row(question_id="ok_text", status="{'boolean': 'success'}"),
        seed.sim_row(question_id="word", status="success"),
        # interactions.process_single_question writes it as JSON text, with the error on failure.
        seed.sim_row(question_id="json", status=json.dumps({"boolean": "success"})),
        seed.sim_row(question_id="raised", status=json.dumps({"boolean": "failed", "error_message": "503 Service Unavailable"})),
    ]
    questions = scored(seed.write_jsonl(tmp_path / "runs.jsonl", rows))
    assert {q: questions[q].status for q in questions} == {
        "dict": "error", "text": "error", "ok_text": "ok", "word": "ok", "json": "ok", "raised": "error"
    }  # fmt: skip
    assert questions["dict"].error == "recorded status 'failed'"
    assert questions["raised"].error == "503 Service Unavailable"


def test_adk_scores_are_recorded_scores_without_warning_and_convert_keeps_them(sim: Any, tmp_path: Path) -> None:
    """Its adk_score.<metric> columns (converters.AdkHistoryConverter._process_single_run) (item 2)."""
    row, question = sim
    recorded = {name: v for name, v in seed.ADK_SCORES.items() if v is not None}
    assert {name.removeprefix("score."): s.value for name, s in question.scores.items() if name.startswith("score.")} == recorded
    path = seed.write_jsonl(tmp_path / "processed_interaction_sim.jsonl", [row])
    done = cli(tmp_path, "validate", str(path))
    assert done.returncode == 0 and "unknown column" not in done.stderr, done.stderr
    converted = cli(tmp_path, "convert", str(path), "--to", "jsonl", "--output", "out.jsonl")
    assert converted.returncode == 0, converted.stderr
    (written,) = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert {k.removeprefix("score."): v for k, v in written.items() if k.startswith("score.")} == recorded


def test_latency_and_turn_latency_from_the_invocations_of_latency_data(live: Any, sim: Any) -> None:
    """calculate_latency_metrics: total = sum of the ``invocation`` entries' duration_seconds,
    average turn = their mean (item 3). On the live row our figure is the spans' own nanoseconds,
    which the pipeline rounds to 0.1 ms in latency_data (equal here: the times are whole ms)."""
    for row, question in (live, sim):
        turns = [item["duration_seconds"] for item in row["latency_data"] if item.get("name") == "invocation"]
        assert len(turns) == 2
        assert value(question, "latency") == pytest.approx(sum(turns), abs=1e-6)
        assert value(question, "turn_latency") == pytest.approx(sum(turns) / len(turns), abs=1e-6)


def test_tool_failures_in_every_shape_adk_tools_answer(live: Any, sim: Any, tmp_path: Path) -> None:
    """calculate_tool_success_rate: a tool answer is a failure when its status is "error" or it
    holds "error" / "error_message" (item 4). Ours counts transfer_to_agent only where the
    reference names it (one definition of a tool call), so with a reference that names it,
    tool_error_rate = 1 - the pipeline's success rate."""
    row, question = live

    def success_rate(spans: list[dict[str, Any]]) -> float:
        answers = [json.loads(s["attributes"]["gcp.vertex.agent.tool_response"]) for s in spans
                   if s["name"].startswith("execute_tool ") and s["attributes"].get("gcp.vertex.agent.tool_response")]  # fmt: skip
        failed = [a for a in answers if isinstance(a, dict) and (a.get("status") == "error" or "error" in a or "error_message" in a)]
        return (len(answers) - len(failed)) / len(answers) if answers else 1.0

    assert success_rate(row["session_trace"]) == 0.5  # search_places' REQUEST_DENIED, generate_qr_code's refusal
    assert value(question, "tool_error_rate") == pytest.approx(2 / 3)  # transfer_to_agent is an agent step here
    naming = dict(row["reference_data"], reference_trajectory=["retail_location_strategy", "transfer_to_agent", "ReportAgent"])
    (with_transfer,) = scored(seed.write_jsonl(tmp_path / "r.jsonl", [seed.live_row(reference_data=naming)])).values()
    assert value(with_transfer, "tool_error_rate") == pytest.approx(1 - success_rate(row["session_trace"]), abs=1e-6)
    sim_row, sim_question = sim
    assert value(sim_question, "tool_error_rate") == pytest.approx(1 - success_rate(sim_row["session_trace"]), abs=1e-6)
    # A lone {"error": ...} (ADK's answer for an unknown tool) too.
    lone = seed.sim_row(
        extracted_data={"tool_interactions": [{"tool_name": "nope", "input_arguments": {}, "output_result": {"error": "no tool"}}]}
    )
    (unknown,) = scored(seed.write_jsonl(tmp_path / "lone.jsonl", [lone])).values()
    assert value(unknown, "tool_error_rate") == 1.0


def test_model_calls_and_tokens_with_the_agent_tools_calls_from_the_spans(live: Any) -> None:
    """calculate_token_usage counts every span with a model response: the AgentTool's call, in its
    own session, is in no event of the run's session (item 5); total_token_count includes the
    tool-use prompt tokens (item 7)."""
    row, question = live
    used = usages(row["session_trace"])
    assert len(used) == 7 and len([e for e in row["final_session_state"]["events"] if e["usageMetadata"]]) == 6
    assert value(question, "llm_calls") == len(used)
    assert value(question, "input_tokens") == sum(u["prompt_token_count"] for u in used)
    assert value(question, "cached_tokens") == sum(u["cached_content_token_count"] for u in used)
    assert value(question, "total_tokens") == sum(u["total_token_count"] for u in used)
    # Ours counts thinking as output ("completion_tokens" there is the candidates only).
    assert value(question, "output_tokens") == sum(u["candidates_token_count"] + u["thoughts_token_count"] for u in used)


def test_a_code_executing_agents_call_is_counted_once_as_the_pipeline_counts_it(tmp_path: Path) -> None:
    """The retail pipeline's numbers (llm_calls 9 against the pipeline's 8, tokens one call
    higher): for a response of an agent with ADK's BuiltInCodeExecutor, ADK yields the code
    executor's event first and gives the response's event a new id, so the call's span names an
    event the session does not hold. That call is the event's, not one more beyond the events.
    Run by a real ADK Runner; calculate_token_usage counts every span with a model response."""
    import subprocess
    import sys

    out = tmp_path / "processed_interaction_app.jsonl"
    done = subprocess.run([sys.executable, "-m", "tests.helpers.code_exec_run", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    row = json.loads(out.read_text())
    spans = row["session_trace"]
    events = row["final_session_state"]["events"]
    calls = [s for s in spans if s["name"] == "call_llm"]
    gap = next(s for s in calls if "executable_code" in s["attributes"]["gcp.vertex.agent.llm_response"])
    assert gap["attributes"]["gcp.vertex.agent.event_id"] not in {e["id"] for e in events}  # the case itself
    used = usages(spans)
    assert len(used) == 5 and len([e for e in events if e["usageMetadata"]]) == 4  # the AgentTool's call is in the spans only
    (question,) = scored(out).values()
    assert value(question, "llm_calls") == len(used)
    assert value(question, "input_tokens") == sum(u["prompt_token_count"] for u in used)
    assert value(question, "cached_tokens") == sum(u["cached_content_token_count"] for u in used)
    assert value(question, "total_tokens") == sum(u["total_token_count"] for u in used)
    assert value(question, "output_tokens") == sum(u["candidates_token_count"] + u["thoughts_token_count"] for u in used)


def test_cost_differs_from_the_pipelines_by_exactly_the_rules_we_add(live: Any) -> None:
    """calculate_token_usage prices prompt and candidates tokens only (gemini-2.5-flash: $0.30 and
    $2.50 per million). Ours also prices thinking as output and the model's tool-use prompts as
    input, and cached tokens at the cached price ($0.03): the difference is exactly that."""
    row, question = live
    used = usages(row["session_trace"])
    pipeline = sum(u["prompt_token_count"] / 1000 * 0.0003 + u["candidates_token_count"] / 1000 * 0.0025 for u in used)
    extra = (
        sum(
            u["thoughts_token_count"] * 2.5 + u["tool_use_prompt_token_count"] * 0.3 - u["cached_content_token_count"] * (0.3 - 0.03)
            for u in used
        )
        / 1_000_000
    )
    assert value(question, "cost_usd") == pytest.approx(pipeline + extra, abs=1e-6)


def test_tool_use_prompt_tokens_count_in_total_and_cost_on_the_simulation_path(sim: Any) -> None:
    row, question = sim
    used = usages(row["session_trace"])
    assert sum(u["tool_use_prompt_token_count"] for u in used) == 9
    assert value(question, "total_tokens") == sum(u["total_token_count"] for u in used)
    ours = sum(
        ((u["prompt_token_count"] + u["tool_use_prompt_token_count"] - u["cached_content_token_count"]) * 0.3
         + u["cached_content_token_count"] * 0.03 + (u["candidates_token_count"] + u["thoughts_token_count"]) * 2.5) / 1e6
        for u in used
    )  # fmt: skip
    assert value(question, "cost_usd") == pytest.approx(ours, abs=1e-6)


def test_a_row_without_user_inputs_is_scored(tmp_path: Path) -> None:
    """The pipeline scores such a row (item 6)."""
    row = seed.sim_row(user_inputs=[], final_session_state={"id": "s", "state": {}, "events": []})
    (question,) = scored(seed.write_jsonl(tmp_path / "r.jsonl", [row])).values()
    assert question.status == "ok"
    assert value(question, "llm_calls") == len(usages(row["session_trace"]))
    assert value(question, "score.safety_v1") == 1.0


def test_the_pipelines_deterministic_figures(live: Any) -> None:
    """Item 11: each figure as deterministic_metrics.py computes it on the live row."""
    row, question = live
    spans = row["session_trace"]
    used = usages(spans)
    # calculate_latency_metrics: LLM time is the "call_llm" spans', tool time the spans with
    # "execute_tool" or "tool_call" in their name; the first response is the end of the first
    # call_llm span in the file minus the earliest start.
    llm = sum((s["end_time"] - s["start_time"]) / 1e9 for s in spans if s["name"] == "call_llm")
    tools = sum((s["end_time"] - s["start_time"]) / 1e9 for s in spans if "execute_tool" in s["name"] or "tool_call" in s["name"])
    first = next(s for s in spans if s["name"] == "call_llm")
    root = min(s["start_time"] for s in spans if s.get("start_time"))
    assert value(question, "llm_time") == pytest.approx(llm, abs=1e-6)
    assert value(question, "tool_time") == pytest.approx(tools, abs=1e-6)
    assert value(question, "time_to_first_response") == pytest.approx((first["end_time"] - root) / 1e9, abs=1e-6)
    # calculate_thinking_metrics: thinking tokens, and thinking / (thinking + candidates).
    thoughts = sum(u["thoughts_token_count"] for u in used)
    assert value(question, "thinking_tokens") == thoughts
    assert value(question, "reasoning_ratio") == pytest.approx(
        thoughts / (thoughts + sum(u["candidates_token_count"] for u in used)), abs=1e-6
    )
    # calculate_context_saturation: the largest total_token_count of one call.
    assert value(question, "max_call_tokens") == max(u["total_token_count"] for u in used)
    # calculate_grounding_utilization: the grounding chunks of every model response.
    chunks = sum(len((r.get("grounding_metadata") or {}).get("grounding_chunks") or []) for _, r in llm_responses(spans))
    assert chunks == 5 and value(question, "grounding_chunks") == chunks
    # calculate_output_density: candidates tokens per model call with usage.
    assert value(question, "output_density") == pytest.approx(sum(u["candidates_token_count"] for u in used) / len(used), abs=1e-6)
    # calculate_agent_handoffs: invoke_agent / agent_run spans, and execute_tool spans of a tool
    # whose name ends in "Agent" or is transfer_to_agent.
    handoffs = [s for s in spans if s["name"].startswith(("invoke_agent ", "agent_run "))] + [
        s
        for s in spans
        if s["name"].startswith("execute_tool ") and (s["name"].endswith("Agent") or s["name"].endswith(" transfer_to_agent"))
    ]
    assert value(question, "agent_handoffs") == len(handoffs) == 6
    # calculate_cache_efficiency divides by prompt + cached, taking Gemini's prompt count to
    # exclude the cache; Gemini's prompt_token_count includes it, so ours divides by the prompt.
    prompt, cached = sum(u["prompt_token_count"] for u in used), sum(u["cached_content_token_count"] for u in used)
    ours = value(question, "cache_hit_rate")
    assert ours == pytest.approx(cached / prompt, abs=1e-6)
    assert ours is not None and ours / (1 + ours) == pytest.approx(cached / (prompt + cached), abs=1e-6)


def test_distinct_tools_as_the_pipeline_counts_them_where_the_reference_names_the_transfer(live: Any, tmp_path: Path) -> None:
    """calculate_tool_utilization: the distinct names of the execute_tool spans. Ours counts
    transfer_to_agent only where the reference names it."""
    row, question = live
    names = {s["name"].removeprefix("execute_tool ").strip() for s in row["session_trace"] if s["name"].startswith("execute_tool ")}
    assert value(question, "distinct_tools") == len(names - {"transfer_to_agent"}) == 3
    naming = dict(row["reference_data"], reference_trajectory=["transfer_to_agent"])
    (with_transfer,) = scored(seed.write_jsonl(tmp_path / "r.jsonl", [seed.live_row(reference_data=naming)])).values()
    assert value(with_transfer, "distinct_tools") == len(names) == 4


def test_made_up_span_times_are_not_read_and_say_why(sim: Any) -> None:
    """The converter's spans last 1 s each (its llm latency would be 1 s a model call): the row
    says it made them (base_url "simulation"), so no time is read from them (item 9)."""
    row, question = sim
    assert row["base_url"] == "simulation"
    for metric in ("llm_time", "tool_time", "time_to_first_response"):
        assert question.scores[metric].value is None
        assert "converter" in question.scores[metric].explanation
    # Figures that are no timings are read from the same spans.
    assert value(question, "agent_handoffs") == 2  # one invoke_agent span a turn, as the pipeline counts them


def test_span_times_by_their_unit_and_turns_by_the_traces_structure(tmp_path: Path) -> None:
    """Integers are nanoseconds whatever their size (the pipeline's tests use times of 1000 s);
    spans without ids are no turns each: the invocations are, the AgentTool's inside one not."""
    shifted = seed.live_row(question_id="early")
    offset = seed.T0 - 1_000 * 1_000_000_000
    shifted["session_trace"] = [
        dict(s, start_time=s["start_time"] - offset, end_time=s["end_time"] - offset) for s in shifted["session_trace"]
    ]
    bare = seed.live_row(question_id="bare", latency_data=None)
    bare["session_trace"] = [{k: v for k, v in s.items() if k not in ("span_id", "parent_span_id")} for s in bare["session_trace"]]
    questions = scored(seed.write_jsonl(tmp_path / "r.jsonl", [shifted, bare]))
    assert value(questions["early"], "latency") == pytest.approx(4.8, abs=1e-6)
    assert value(questions["bare"], "turn_latency") == pytest.approx(2.4, abs=1e-6)
    assert questions["bare"].scores["turn_latency"].details["per_turn"] == [3.0, 1.8]


DEFINITIONS = {
    "_documentation": "How the judges below are read: see the evaluation guide.",
    "metrics": {
        "_documentation": {"source_columns": "COLUMN:KEY reads a key of a JSON column"},
        "trajectory_accuracy": {
            "metric_type": "llm", "agents": ["customer_service", "app"],
            "score_range": {"min": 0, "max": 5, "description": "0=Completely wrong, 5=Perfect trajectory"},
            "dataset_mapping": {"prompt": {"source_column": "user_inputs"}, "response": {"source_column": "trace_summary"}},
            "template": "**User Request:**\n{prompt}\n\n**Agent Execution Trajectory:**\n{response}\n\nScore: [0-5]",
        },
        "state_management_fidelity": {
            "metric_type": "llm", "agents": ["customer_service"], "score_range": {"min": 0, "max": 5},
            "dataset_mapping": {
                "prompt": {"source_column": "user_inputs"},
                "response": {"template": "Target: {extracted_data_target_location}",
                             "source_columns": ["extracted_data:target_location"]},
            },
            "template": "Request {prompt}\nState {response}",
        },
        "_comment_managed_basic": "=== BASIC MANAGED METRICS (require only prompt + response) ===",
        "multi_turn_general_quality": {
            "metric_type": "llm", "is_managed": True, "managed_metric_name": "MULTI_TURN_GENERAL_QUALITY",
            "score_range": {"min": 0, "max": 1}, "agents": ["customer_service", "app"],
            "dataset_mapping": {"prompt": {"source_column": "user_inputs"}, "response": {"source_column": "final_response"}},
        },
        "agent_tool_use_quality": {
            "metric_type": "llm", "is_managed": True, "managed_metric_name": "TOOL_USE_QUALITY",
            "dataset_mapping": {
                "tool_declarations": {"source_column": "extracted_data:tool_declarations", "default": "[]"},
                "intermediate_events": {"source_column": "extracted_data:tool_interactions"},
            },
        },
        "tool_choice": {
            "description": "Rubric fields instead of a template.", "instruction": "Assess the tool calls.",
            "criteria": {"Selection": "Right tool?"}, "rating_scores": {"0": "wrong", "1": "poor", "2": "fine", "3": "perfect"},
            "metric_type": "llm", "dataset_mapping": {"declared": {"source_column": "extracted_data:tool_declarations", "default": "[]"},
                                                      "calls": {"source_column": "extracted_data:tool_interactions"}},
        },
        "token_usage": {"description": "Informational.", "metric_type": "deterministic", "range": "N/A"},
    },
}  # fmt: skip


def test_validate_accepts_the_pipelines_metric_definitions_and_lists_each_judge(tmp_path: Path) -> None:
    """Item 8: documentation entries, managed names in upper case, COLUMN:KEY sources."""
    path = tmp_path / "metric_definitions.json"
    path.write_text(json.dumps(DEFINITIONS, indent=2))
    done = cli(tmp_path, "validate", str(path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"ok: {path} (metric definitions, 5 judges)"
    assert lines[1:] == [
        "  judge trajectory_accuracy: judge, scores 0..5 (scored as trajectory_accuracy_judge: trajectory_accuracy is a deterministic metric here)",
        "  judge state_management_fidelity: judge, scores 0..5 "
        "(scored as state_management_fidelity_judge: state_management_fidelity is a deterministic metric here)",
        "  judge multi_turn_general_quality: managed multi_turn_general_quality_v2",
        "  judge agent_tool_use_quality: managed tool_use_quality_v2",
        "  judge tool_choice: judge, scores 0..3",
        "  skipped token_usage: not a judge: metric_type 'deterministic' is the pipeline's own code",
    ]


def test_validate_without_paths_lists_the_judges_of_the_configs_metric_definitions(tmp_path: Path) -> None:
    """``metric_definitions = [...]`` in agent-eval.toml: validate with no paths lists each judge of
    each file (its path as seen from the working directory, here a subfolder), and the datasets."""
    from tests.helpers.repos import new_repo

    repo = new_repo(tmp_path / "repo", {
        "agent-eval.toml": 'datasets = ["evaluation/datasets"]\nmetric_definitions = ["evaluation/metric_definitions.json"]\n',
        "evaluation/metric_definitions.json": json.dumps(DEFINITIONS, indent=2),
        "docs/README.md": "a subfolder to run from",
    })  # fmt: skip
    (repo / "evaluation" / "datasets").mkdir()
    seed.write_jsonl(repo / "evaluation" / "datasets" / "runs.jsonl", [seed.sim_row()])
    done = cli(repo / "docs", "validate")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "ok: ../evaluation/metric_definitions.json (metric definitions, 5 judges)"
    assert [line.split(":")[0] for line in lines[1:7]] == [
        "  judge trajectory_accuracy", "  judge state_management_fidelity", "  judge multi_turn_general_quality",
        "  judge agent_tool_use_quality", "  judge tool_choice", "  skipped token_usage",
    ]  # fmt: skip
    assert lines[7:] == ["ok: ../evaluation/datasets/runs.jsonl (jsonl, 1 valid question run)"]
    # With paths, the paths alone: the config's definitions are not listed.
    named = cli(repo, "validate", "evaluation/datasets/runs.jsonl")
    assert named.returncode == 0 and "metric definitions" not in named.stdout, named.stdout
    # A broken definitions file of the config is bad input, named with its fix.
    (repo / "evaluation" / "metric_definitions.json").write_text('{"judge": "not an object"}')
    broken = cli(repo, "validate")
    assert broken.returncode == 2
    assert "metric_definitions evaluation/metric_definitions.json: judge: each metric needs a name and an object" in broken.stderr


def test_the_definitions_prompts_read_the_mapped_columns(tmp_path: Path) -> None:
    import jinja2

    from agent_eval_action.config import Config
    from agent_eval_action.datasets import load_dataset
    from agent_eval_action.run.judges.prompts import judge_context
    from agent_eval_action.run.judges.setup import metric_definitions

    path = tmp_path / "metric_definitions.json"
    path.write_text(json.dumps(DEFINITIONS))
    judges = {e.judge.name: e.judge for e in metric_definitions(str(path), Config(), typed=True) if e.judge is not None}
    rows = seed.write_jsonl(tmp_path / "r.jsonl", [seed.live_row()])
    record = next(r for r in load_dataset(str(rows), also=[str(tmp_path)]).records if not isinstance(r, Exception))
    assert record.trace is not None
    context = judge_context(record.question, record.trace)

    def render(name: str) -> str:
        return jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(judges[name].template).render(**context)

    assert "Target: Austin" in render("state_management_fidelity_judge")
    choice = render("tool_choice")
    assert "Assess the tool calls." in choice and "### declared\n[]" in choice and '"search_places"' in choice
    assert "I want to open a gym in Austin." in render("trajectory_accuracy_judge")


def test_adk_history_response_match_score_without_an_expected_response_is_adks_zero(tmp_path: Path) -> None:
    """ADK's RougeEvaluator scores a turn whose expected invocation has no final response against
    "" (ROUGE 0.0) and records it (item 10); ours equals ADK's value, computed by ADK here."""
    from google.adk.evaluation.eval_case import Invocation
    from google.adk.evaluation.eval_metrics import EvalMetric
    from google.adk.evaluation.final_response_match_v1 import RougeEvaluator

    from tests.helpers.adk_files import history

    path = history(tmp_path / "shop.evalset_result.json", with_session=True)
    data = json.loads(path.read_text())
    (case,) = data["eval_case_results"]
    for item in case["eval_metric_result_per_invocation"]:
        item["expected_invocation"]["final_response"] = None
    actual = [Invocation.model_validate(i["actual_invocation"]) for i in case["eval_metric_result_per_invocation"]]
    expected = [Invocation.model_validate(i["expected_invocation"]) for i in case["eval_metric_result_per_invocation"]]
    adk = RougeEvaluator(EvalMetric(metric_name="response_match_score", threshold=0.5)).evaluate_invocations(actual, expected)
    for result in case["overall_eval_metric_results"]:
        if result["metric_name"] == "response_match_score":
            result["score"] = adk.overall_score
    for item, per in zip(case["eval_metric_result_per_invocation"], adk.per_invocation_results, strict=True):
        for result in item["eval_metric_results"]:
            if result["metric_name"] == "response_match_score":
                result["score"] = per.score
    path.write_text(json.dumps(data))
    (question,) = scored(path).values()
    assert adk.overall_score == 0.0
    assert value(question, "response_match_score") == pytest.approx(adk.overall_score, abs=1e-6)
    assert value(question, "adk_agreement") == 1.0


def test_the_docs_name_the_pipelines_figure_beside_ours() -> None:
    text = (ROOT / "docs" / "metrics.md").read_text()
    for ours, theirs in [
        ("cache_hit_rate", "cache_efficiency"), ("thinking_tokens", "thinking_metrics"), ("reasoning_ratio", "reasoning_ratio"),
        ("llm_time", "llm_latency_seconds"), ("tool_time", "tool_latency_seconds"),
        ("time_to_first_response", "time_to_first_response_seconds"), ("distinct_tools", "unique_tools_used"),
        ("agent_handoffs", "agent_handoffs"), ("max_call_tokens", "context_saturation"), ("grounding_chunks", "grounding_utilization"),
        ("output_density", "output_density"),
    ]:  # fmt: skip
        assert any(f"`{ours}`" in line and theirs in line for line in text.splitlines()), (ours, theirs)
