"""Property tests: no malformed input reaches a traceback, and nothing that loads crashes a metric."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_eval_action.errors import DatasetError
from agent_eval_action.inside import OUTSIDE
from agent_eval_action.loaders import Record, load_dataset
from agent_eval_action.metrics import MetricContext
from agent_eval_action.scoring import Scorer
from tests.factories import csv_row, customer_service_runs, write_csv, write_jsonl

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)
KEYS = ["id", "user_inputs", "agents_evaluated", "metadata", "reference_data", "extra"]
REF_KEYS = ["reference_tool_interactions", "reference_trajectory", "reference_state_variables", "reference_response", "custom"]
question = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6) | st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=5),
        "user_inputs": st.lists(st.text(max_size=5), max_size=3),
        "agents_evaluated": st.lists(st.text(max_size=5), max_size=2),
        "reference_data": st.dictionaries(st.sampled_from(REF_KEYS), json_values, max_size=4),
    }
)
SCORER = Scorer.for_names([], MetricContext(prices={"gemini": {"input": 1, "output": 1}}))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# Temporary files are made under a temporary working directory: inputs must lie inside it.
pytestmark = pytest.mark.usefixtures("in_tmp")


def drain(path: Path) -> list[Record]:
    """Loads everything; only DatasetError may come out, and every record must score cleanly."""
    try:
        dataset = load_dataset(str(path))
    except DatasetError as error:
        assert OUTSIDE not in error.reason  # the loader must have been reached
        return []
    good = [item for item in dataset.records if not isinstance(item, DatasetError)]
    for record in good:
        if record.trace is not None:
            result = SCORER.score_record(record)
            crashed = [name for name, score in result.scores.items() if score.explanation.startswith("metric failed")]
            assert not crashed, (crashed, result)
    return good


@SETTINGS
@given(st.one_of(json_values, st.fixed_dictionaries({"golden_questions": st.lists(question, max_size=4)})))
def test_any_json_as_golden(content: Any) -> None:
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        path = Path(tmp) / "x_golden.json"
        path.write_text(json.dumps(content))
        drain(path)


@SETTINGS
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["query", "expected_tool_use", "reference", "data", "name", "initial_session"]), json_values, max_size=4
        ),
        max_size=3,
    )
)
def test_any_test_json(content: Any) -> None:
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        path = Path(tmp) / "x.test.json"
        path.write_text(json.dumps(content))
        drain(path)


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(["eval_set_id", "eval_cases", "evalCases", "name"]),
        json_values
        | st.lists(
            st.dictionaries(
                st.sampled_from(["eval_id", "conversation", "session_input", "final_session_state", "conversation_scenario"]),
                json_values,
                max_size=4,
            ),
            max_size=3,
        ),
        max_size=3,
    ).filter(lambda d: "eval_cases" in d or "evalCases" in d)
)
def test_any_eval_set(content: Any) -> None:
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        path = Path(tmp) / "x.evalset.json"
        path.write_text(json.dumps(content))
        drain(path)


COLUMNS = [
    "user_inputs",
    "agents_evaluated",
    "reference_data",
    "extracted_data",
    "session_state",
    "final_session_state",
    "session_trace",
    "latency_data",
    "sub_agent_trace",
    "trace_summary",
    "metric.duration_sec",
    "status",
    "final_response",
]
cell = st.one_of(st.text(max_size=10), json_values.map(json.dumps))


@SETTINGS
@given(st.data())
def test_any_cell_in_a_realistic_csv(data: st.DataObject) -> None:
    """Corrupt cells of real rows one at a time: each bad row is an error, never a crash."""
    rows = [csv_row(run) for run in customer_service_runs()[:2]]
    for row in rows:
        for column in data.draw(st.lists(st.sampled_from(COLUMNS), max_size=3, unique=True)):
            row[column] = data.draw(cell)
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        drain(write_csv(Path(tmp) / "runs.csv", rows))
        drain(
            write_jsonl(
                Path(tmp) / "runs.jsonl", [{k: data.draw(json_values) if k in COLUMNS[:3] else v for k, v in row.items()} for row in rows]
            )
        )


@SETTINGS
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["name", "span_id", "parent_span_id", "start_time", "end_time", "attributes"]), json_values, max_size=6
        ),
        max_size=5,
    )
)
def test_any_spans(spans: list[Any]) -> None:
    row = {
        "question_id": "q",
        "user_inputs": "hi",
        "session_trace": json.dumps(spans),
        "reference_data": json.dumps({"reference_trajectory": ["a"]}),
    }
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        drain(write_csv(Path(tmp) / "r.csv", [row]))


SPAN_ATTRS = [
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.request.model",
    "gen_ai.agent.name",
    "gen_ai.tool.name",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.tool.call.id",
    "gcp.vertex.agent.llm_response",
    "gcp.vertex.agent.tool_call_args",
    "error.type",
    "gen_ai.operation.name",
]
NAMES = ["invoke_agent a", "generate_content m", "call_llm", "execute_tool t", "agent_run [b]", "invocation", "execute_tool (merged tools)"]


@SETTINGS
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "name": st.sampled_from(NAMES),
                "start_time": json_values,
                "end_time": json_values,
                "attributes": st.dictionaries(st.sampled_from(SPAN_ATTRS), json_values | json_values.map(json.dumps), max_size=6),
            }
        ),
        max_size=6,
    )
)
def test_adk_shaped_spans_with_hostile_attribute_values(spans: list[Any]) -> None:
    row = {
        "question_id": "q",
        "user_inputs": "hi",
        "session_trace": json.dumps(spans),
        "reference_data": json.dumps({"reference_trajectory": ["a"], "reference_tool_interactions": [{"tool_name": "t"}]}),
    }
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        assert len(drain(write_csv(Path(tmp) / "r.csv", [row]))) == 1


EVENT_KEYS = ["author", "invocationId", "content", "actions", "usageMetadata", "partial", "errorCode", "errorMessage", "modelVersion"]


@SETTINGS
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(EVENT_KEYS),
            json_values
            | st.fixed_dictionaries(
                {
                    "parts": st.lists(
                        st.dictionaries(
                            st.sampled_from(["text", "functionCall", "functionResponse", "thought"]),
                            json_values
                            | st.fixed_dictionaries({"name": json_values, "args": json_values, "id": json_values, "response": json_values}),
                            max_size=2,
                        ),
                        max_size=3,
                    )
                }
            ),
            max_size=6,
        ),
        max_size=6,
    )
)
def test_adk_shaped_events_with_hostile_values(events: list[Any]) -> None:
    session = {"id": "s", "appName": "a", "state": {}, "events": events}
    row = {"question_id": "q", "user_inputs": "hi", "final_session_state": json.dumps(session)}
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        assert len(drain(write_csv(Path(tmp) / "r.csv", [row]))) == 1
