"""The model-call cache with a multi-agent app, through the CLI: a root agent that transfers every
question to one of two sub-agents (``tests/apps/desk``, whose scripted model counts its calls
across the worker processes), each question opening with the same greeting."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.helpers.commands import cli
from tests.helpers.values import timings

ROOT = Path(__file__).resolve().parents[2]
CACHE = ".cache/models"


def desk_repo(path: Path, questions: int) -> Path:
    """The desk app and ``questions`` two-turn questions: the greeting, then a price or a delivery."""
    path.mkdir(parents=True)
    shutil.copytree(ROOT / "tests" / "apps" / "desk", path / "desk", ignore=shutil.ignore_patterns("__pycache__"))
    golden = []
    for i in range(questions):
        item = ["apple", "pear"][i % 2]
        ask, tool = (f"{i}: the price of {item}", "lookup_price") if i % 3 else (f"{i}: the delivery of {item}", "lookup_delivery")
        golden.append(
            {
                "id": f"q{i:02d}",
                "user_inputs": ["hello", ask],
                "agents_evaluated": ["desk"],
                "reference_data": {"reference_tool_interactions": [{"tool_name": tool, "input_arguments": {"item": item}}]},
            }
        )
    (path / "questions.json").write_text(json.dumps({"golden_questions": golden}, indent=1))
    return path


def evaluate(repo: Path, out: str, *extra: str, env: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """Runs ``evaluate`` with the cache; returns the model calls that reached the model (agent, what the user said)."""
    counter = repo / "calls.txt"
    counter.write_text("")
    (repo / "calls.txt.requests").write_text("")
    args = ("evaluate", "questions.json", "--agent", "desk", "--model-cache", CACHE, "--output-dir", out, *extra)
    done = cli(repo, *args, env={"CALLS_FILE": str(counter), **(env or {})})
    assert done.returncode == 0, done.stdout + done.stderr
    return [(agent, said) for agent, said in (line.split("\t", 1) for line in counter.read_text().splitlines())]


def results(repo: Path, out: str) -> dict[str, Any]:
    (dataset,) = json.loads((repo / out / "results.json").read_text())["datasets"]
    return dict(dataset)


def scores(dataset: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    timing = timings()
    return {q["id"]: {m: s["value"] for m, s in q["scores"].items() if m not in timing} for q in dataset["questions"]}


def test_a_second_run_of_a_transferring_app_makes_no_model_call(tmp_path: Path) -> None:
    repo = desk_repo(tmp_path / "repo", 6)
    # Per question: the greeting, the root's transfer, the sub-agent's lookup and its answer; the
    # greeting is one request for all six (the first answer is replayed to the others).
    first_calls = evaluate(repo, "first", "--concurrency", "1")
    assert sorted({agent for agent, _ in first_calls}) == ["billing", "desk", "shipping"]
    assert [said for agent, said in first_calls if agent == "desk"].count("hello") == 1
    assert len(first_calls) == 1 + 6 * 3
    first = results(repo, "first")
    assert first["model_calls"] == {"live": 19, "replayed": 5}
    assert all(q["scores"]["tool_usage_accuracy"]["value"] == 1.0 for q in first["questions"]), scores(first)

    assert evaluate(repo, "second", "--concurrency", "1") == []  # unchanged code: not one call, transfers included
    second = results(repo, "second")
    assert second["model_calls"] == {"live": 0, "replayed": 24}
    assert scores(second) == scores(first)


def test_identical_requests_in_flight_at_once_make_one_model_call(tmp_path: Path) -> None:
    repo = desk_repo(tmp_path / "repo", 6)
    # The model answers the greeting only once all six greetings reached the model step, in both
    # worker processes: every one is in flight when the answer comes, so each waits for it.
    calls = evaluate(repo, "out", "--concurrency", "6", "--workers", "2", env={"GREETING_BARRIER": "6"})
    assert len((repo / "calls.txt.requests").read_text().splitlines()) == 6
    assert [said for _, said in calls].count("hello") == 1
    assert len(calls) == 1 + 6 * 3
    dataset = results(repo, "out")
    assert dataset["model_calls"] == {"live": 19, "replayed": 5}
    assert all(q["scores"]["tool_usage_accuracy"]["value"] == 1.0 for q in dataset["questions"]), scores(dataset)
