"""The environment's changes, named: what a PR's re-run reason says."""

from __future__ import annotations

from agent_eval_action.run.agent.fingerprint import Environment, environment_changes

BEFORE = {
    "interpreter": "cpython 3.11.9 x86_64",
    "distribution tabulate": "0.9.0 #aaaa",
    "distribution helper": "1.0 #bbbb",
    "distribution shop": "(the repository's code)",
    "agent": "app.agent:root_agent",
    "pyproject.toml dependencies": "1111",
    "requirements.txt": "2222",
}


def test_each_changed_part_is_named_and_an_unchanged_one_is_not() -> None:
    now = {
        **BEFORE,
        "distribution tabulate": "0.10.0 #cccc",
        "distribution helper": "1.0 #dddd",
        "distribution rich": "13.0 #eeee",
        "requirements.txt": "3333",
        "agent": "app.agent:experimental",
    }
    del now["pyproject.toml dependencies"]
    assert environment_changes(BEFORE, Environment(now)) == [
        "agent app.agent:root_agent → app.agent:experimental",
        "distribution helper 1.0 (other files)",
        "distribution rich 13.0 added",
        "distribution tabulate 0.9.0 → 0.10.0",
        "pyproject.toml dependencies",
        "requirements.txt",
    ]
    assert environment_changes(BEFORE, Environment(dict(BEFORE))) == []
    assert Environment(dict(BEFORE)).fingerprint == Environment(dict(reversed(BEFORE.items()))).fingerprint


def test_a_baseline_without_parts_or_an_environment_not_described_says_so() -> None:
    assert environment_changes(None, Environment(BEFORE)) == ["the agent's environment, recorded by an older version"]
    assert environment_changes(BEFORE, None) == ["the agent's environment could not be described here"]
