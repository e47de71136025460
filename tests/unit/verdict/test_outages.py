"""Infrastructure is not the PR: model/API errors are told from the agent's own."""

from __future__ import annotations

import pytest

from agent_eval_action.verdict.outages import main_cause, outage_cause

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
    assert main_cause(errors) == (KEY, 5)
    assert main_cause(["KeyError: 'x'"]) is None
