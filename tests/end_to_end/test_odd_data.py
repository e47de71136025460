"""Odd values in recorded data and baselines, through the CLI as a subprocess: each is exit 2
naming the file (and row, column) or a score, never a crash, and results.json stays strict JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import recorded_repo
from tests.helpers.commands import cli
from tests.helpers.factories import csv_row, runs, write_csv
from tests.helpers.repos import commit, git

ROWS = 4


def rows() -> list[dict[str, Any]]:
    return [csv_row(run) for run in runs(ROWS)]


def write_jsonl(path: Path, items: list[dict[str, Any]], lines: dict[int, str] | None = None) -> None:
    text = [json.dumps(item) for item in items]
    for index, line in (lines or {}).items():
        text[index] = line
    path.write_text("\n".join(text) + "\n")


def strict(path: Path) -> dict[str, Any]:
    """results.json, refusing NaN and Infinity as any JSON reader but Python's would."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"{path} holds {name}")

    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)
    return data


def evaluate(where: Path, name: str) -> tuple[Any, dict[str, Any]]:
    done = cli(where, "evaluate", name, "--output-dir", "out")
    assert done.returncode in (0, 1, 2), done.stdout + done.stderr
    return done, strict(where / "out" / "results.json")


def scored(results: dict[str, Any]) -> int:
    return sum(len(d["questions"]) for d in results["datasets"])


@pytest.mark.parametrize(
    ("fmt", "column", "cell"),
    [
        ("csv", "metric.duration_sec", "Infinity"),
        ("csv", "score.tool_trajectory_avg_score", "-inf"),
        ("jsonl", "score.quality", "Infinity"),
        ("jsonl", "metric.total_tokens", "1e999"),
    ],
)
def test_infinity_in_a_recorded_cell_is_that_rows_error(tmp_path: Path, fmt: str, column: str, cell: str) -> None:
    items = rows()
    if fmt == "csv":
        items[1][column] = cell
        write_csv(tmp_path / "runs.csv", items)
    else:
        line = json.dumps({**items[1], column: 0.5}).replace('"' + column + '": 0.5', f'"{column}": {cell}')
        write_jsonl(tmp_path / "runs.jsonl", items, {1: line})
    done, results = evaluate(tmp_path, f"runs.{fmt}")
    assert done.returncode == 2, done.stdout + done.stderr
    unit = "row" if fmt == "csv" else "line"
    assert f"runs.{fmt}, question 'q_discount_01_01', at {unit} 2, column {column}: " in done.stderr
    assert "is not a finite number" in done.stderr
    assert scored(results) == ROWS - 1  # the other rows are still scored
    (problem,) = results["problems"]
    assert problem["path"] == f"runs.{fmt}"


def test_two_recorded_scores_of_1e308_are_averaged_without_overflow(tmp_path: Path) -> None:
    items = [{**row, "score.quality": 1e308 if i < 2 else 0.5} for i, row in enumerate(rows())]
    write_jsonl(tmp_path / "runs.jsonl", items)
    done, results = evaluate(tmp_path, "runs.jsonl")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = results["datasets"][0]["summary"]["score.quality"]
    assert summary["n"] == ROWS and summary["mean"] == pytest.approx(1e308 / 2)  # (2 * 1e308 + 2 * 0.5) / 4


def test_a_nan_in_a_recorded_cell_is_unscored(tmp_path: Path) -> None:
    items = rows()
    line = json.dumps({**items[1], "score.quality": 0.5}).replace('"score.quality": 0.5', '"score.quality": NaN')
    write_jsonl(tmp_path / "runs.jsonl", [{**row, "score.quality": 0.5} for row in items], {1: line})
    done, results = evaluate(tmp_path, "runs.jsonl")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = results["datasets"][0]["summary"]["score.quality"]
    assert summary["n"] == ROWS - 1 and summary["mean"] == 0.5


def test_a_lone_surrogate_is_replaced_with_a_warning_naming_the_file(tmp_path: Path) -> None:
    items = rows()
    items[1]["final_response"] = "half an emoji: PLACEHOLDER"
    line = json.dumps(items[1]).replace("PLACEHOLDER", "\\ud83d")
    write_jsonl(tmp_path / "runs.jsonl", items, {1: line})
    csv_items = rows()
    csv_items[2]["final_session_state"] = csv_items[2]["final_session_state"].replace("{", '{"note": "\\udc00 low half", ', 1)
    write_csv(tmp_path / "runs.csv", csv_items)
    for name in ("runs.jsonl", "runs.csv"):
        done, results = evaluate(tmp_path, name)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"warning: {name}: lone surrogates" in done.stderr and "U+FFFD" in done.stderr
        assert scored(results) == ROWS
        assert "\ufffd" in (tmp_path / "out" / "results.json").read_text(encoding="utf-8")


def test_a_dataset_nested_1100_levels_deep_is_refused_naming_the_file(tmp_path: Path) -> None:
    golden = {
        "golden_questions": [
            {
                "id": "q1",
                "user_inputs": ["hi"],
                "agents_evaluated": ["a"],
                "reference_data": {"reference_response": "x"},
                "metadata": {"x": "DEEP"},
            }
        ]
    }
    (tmp_path / "deep_golden.json").write_text(json.dumps(golden).replace('"DEEP"', "[" * 1100 + "]" * 1100))
    done = cli(tmp_path, "validate", "deep_golden.json")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "deep_golden.json: nested more than 200 levels deep" in done.stderr
    # In a recorded file the deep cell is its row's error; the other rows are scored.
    items = rows()
    items[0]["final_session_state"] = '{"state": ' + "[" * 1100 + "]" * 1100 + "}"
    write_csv(tmp_path / "runs.csv", items)
    done, results = evaluate(tmp_path, "runs.csv")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "runs.csv, question 'q_cart_01_00', at row 1, column final_session_state: nested more than 200 levels deep" in done.stderr
    assert scored(results) == ROWS - 1


# main with the recorded dataset and its committed baseline, checked out on branch pr.
template = recorded_repo.template  # made once per test process, copied for each test
repo = recorded_repo.repo
BASELINE = "evaluation/baselines/datasets/cs_runs.csv.json"


def tamper(repo: Path, old: str, new: str) -> None:
    """The base branch's baseline edited; the PR (merged with it) changes the agent."""
    git(repo, "checkout", "-q", "main")
    path = repo / BASELINE
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    commit(repo, "tamper with the baseline")
    git(repo, "checkout", "-q", "pr")
    git(repo, "merge", "-q", "main")
    (repo / "app" / "agent.py").write_text("root_agent = 1\n")
    commit(repo, "change the agent")


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_base_baseline_with_a_non_finite_number_could_not_be_checked(repo: Path, number: str) -> None:
    tamper(repo, '"value":1.0', f'"value":{number}')
    done = cli(repo, "run", "--base", "main")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{BASELINE} at " in done.stderr and "baseline file is corrupt" in done.stderr
    results = strict(repo / "agent-eval-results" / "results.json")
    assert results["gate"]["outcome"] == "unchecked"
    assert "could not be checked" in (repo / "agent-eval-results" / "comment.md").read_text()


def test_a_base_baseline_of_1e308_is_compared_without_overflow(repo: Path) -> None:
    tamper(repo, '"value":1.0', '"value":1e308')
    done = cli(repo, "run", "--base", "main")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    results = strict(repo / "agent-eval-results" / "results.json")
    assert results["gate"]["outcome"] in ("passed", "failed")


def adk_history(tmp_path: Path) -> tuple[Path, str]:
    from tests.helpers.adk_files import history

    path = history(tmp_path / "shop.evalset_result.json", with_session=False)
    return path, path.read_text()


@pytest.mark.parametrize(
    ("field", "number", "pointer"),
    [
        ('"score": ', "Infinity", "$.eval_case_results[0].overall_eval_metric_results[0].score"),
        ('"duration": ', "-Infinity", "$.eval_case_results[0].eval_metric_result_per_invocation[0].actual_invocation.duration"),
    ],
)
def test_infinity_in_adk_eval_history_is_that_cases_error(tmp_path: Path, field: str, number: str, pointer: str) -> None:
    path, text = adk_history(tmp_path)
    start = text.index(field) + len(field)
    end = start + min(text.index(",", start) - start, text.index("\n", start) - start)
    path.write_text(text[:start] + number + text[end:])
    done, _ = evaluate(tmp_path, path.name)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{path.name}, question 'refund_case', at {pointer}: " in done.stderr and "is not a finite number" in done.stderr


def test_a_negative_duration_in_adk_eval_history_is_that_cases_error(tmp_path: Path) -> None:
    """Scored, -10 s would be a latency faster than any run: refused, naming file, case and place."""
    path, text = adk_history(tmp_path)
    field = '"duration": '
    start = text.index(field) + len(field)
    end = start + min(text.index(",", start) - start, text.index("\n", start) - start)
    path.write_text(text[:start] + "-10.0" + text[end:])
    done, results = evaluate(tmp_path, path.name)
    assert done.returncode == 2, done.stdout + done.stderr
    pointer = "$.eval_case_results[0].eval_metric_result_per_invocation[0].actual_invocation.duration"
    assert f"{path.name}, question 'refund_case', at {pointer}: -10.0 is a negative duration" in done.stderr, done.stderr
    assert not [q for d in results["datasets"] for q in d["questions"] if (q["scores"].get("latency") or {}).get("value", 0) < 0]


def test_a_lone_surrogate_in_adk_eval_history_is_replaced_with_a_warning(tmp_path: Path) -> None:
    path, text = adk_history(tmp_path)
    path.write_text(text.replace('"text": "', '"text": "\\ud83d ', 1))
    done, results = evaluate(tmp_path, path.name)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert f"warning: {path.name}: lone surrogates" in done.stderr
    assert scored(results) == 1


def test_a_non_finite_adk_criterion_is_refused(tmp_path: Path) -> None:
    (tmp_path / "shop.test.json").write_text('[{"query": "hi", "expected_tool_use": [], "reference": "hello"}]')
    (tmp_path / "test_config.json").write_text('{"criteria": {"tool_trajectory_avg_score": NaN}}')
    done = cli(tmp_path, "validate", "shop.test.json")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "test_config.json" in done.stderr and "needs a finite numeric threshold" in done.stderr


@pytest.mark.parametrize(
    ("setting", "where"),
    [
        ("[gate.metrics.tool_usage_accuracy]\npass-threshold = inf", "gate.metrics.tool_usage_accuracy.pass_threshold"),
        ("[gate.metrics.tool_usage_accuracy]\nmin = nan", "gate.metrics.tool_usage_accuracy.min"),
        ('[gate]\nmax-regression = "nan%"', "gate.max_regression"),
    ],
)
def test_a_non_finite_number_in_the_config_is_a_config_error(tmp_path: Path, setting: str, where: str) -> None:
    write_csv(tmp_path / "runs.csv", rows())
    (tmp_path / "agent-eval.toml").write_text(f'datasets = ["runs.csv"]\n{setting}\n')
    done = cli(tmp_path, "evaluate")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"agent-eval.toml: {where}: " in done.stderr and "finite" in done.stderr


def test_an_infinite_duration_in_latency_data_is_that_rows_error(tmp_path: Path) -> None:
    items = [{k: v for k, v in row.items() if k != "session_trace"} for row in rows()]  # latency from latency_data
    for row in items:
        row["latency_data"] = {"duration_seconds": 1.5}
    line = json.dumps({**items[2], "latency_data": {"children": [{"name": "turn 1", "duration_seconds": 1e308}] * 2}})
    write_jsonl(tmp_path / "runs.jsonl", items, {2: line})
    done, results = evaluate(tmp_path, "runs.jsonl")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "at line 3, column latency_data: its duration (inf) is not a finite number" in done.stderr
    assert scored(results) == ROWS - 1
    assert results["datasets"][0]["summary"]["latency"]["mean"] == 1.5
