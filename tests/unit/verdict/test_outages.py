"""Infrastructure is not the PR: model/API errors are told from the agent's own."""

from __future__ import annotations

import pytest

from agent_eval_action.verdict.outages import KILLED, MODEL_FAULT, main_cause, outage_cause

KEY = "no API key or credentials for the model: set GOOGLE_API_KEY (or the Vertex AI credentials) in the step's env"


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        ("ValueError: Missing key inputs argument! To use the Google AI API, provide (`api_key`) arguments.", KEY),
        ("ClientError: 400 INVALID_ARGUMENT. {'error': {'message': 'API key not valid. Please pass a valid API key.'}}", KEY),
        ("ClientError: 403 PERMISSION_DENIED. {'error': {'message': 'Method doesn't allow unregistered callers'}}", KEY),
        ("ConnectError: [Errno 111] Connection refused", "the model API could not be reached (connection refused, DNS or network)"),
        ("ClientError: 429 RESOURCE_EXHAUSTED. quota", "the model API's quota stayed exhausted after the retries (429)"),
        ("ServerError: 500 INTERNAL. {}", "the model API failed (5xx)"),
        ("ServerError: 503 UNAVAILABLE. overloaded", "the model API failed (5xx)"),
    ],
)
def test_model_and_api_errors_are_not_the_prs(error: str, cause: str) -> None:
    assert outage_cause(error) == cause


@pytest.mark.parametrize(
    "error",
    [
        "KeyError: 'order_id'",
        "timed out after 300 s",
        "ToolError: lookup_order failed: 500 rows",
        "the agent's process died (exit 1)",
        None,
    ],
)
def test_the_agents_own_errors_stay_the_prs(error: str | None) -> None:
    assert outage_cause(error) is None


def test_the_main_cause_is_said_once_with_its_count() -> None:
    errors = ["ConnectError: refused"] * 2 + ["ValueError: Missing key inputs argument!"] * 3 + ["KeyError: 'x'"]
    assert main_cause((e, None) for e in errors) == (KEY, 5)
    assert main_cause([("KeyError: 'x'", None)]) is None


@pytest.mark.parametrize(
    "error",
    [
        "URLError: <urlopen error [Errno 111] Connection refused>",
        "ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded",
        "ServerError: 503 UNAVAILABLE. a tool's own backend",
        "RuntimeError: No API key for the weather service",
    ],
)
def test_an_error_raised_in_the_agents_code_is_the_prs_whatever_its_text(error: str) -> None:
    assert outage_cause(error, "agent") is None


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        ("RemoteProtocolError: peer closed connection without sending complete message body", MODEL_FAULT),
        ("UnknownApiResponseError: Failed to parse response as JSON", MODEL_FAULT),
        ("timed out after 20 s", MODEL_FAULT),
        ("ConnectError: [Errno 111] Connection refused", "the model API could not be reached (connection refused, DNS or network)"),
        ("ServerError: 503 UNAVAILABLE. overloaded", "the model API failed (5xx)"),
    ],
)
def test_an_error_of_the_model_call_is_an_outage_named_by_its_text(error: str, cause: str) -> None:
    assert outage_cause(error, "model") == cause


def test_a_worker_killed_from_outside_is_an_outage() -> None:
    assert outage_cause("the agent process was killed by signal SIGKILL while running this question", "outside") == KILLED
