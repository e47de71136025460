"""The CLI as a user runs it: a subprocess, real files, exit codes and written results."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.commands import run_cli
from tests.helpers.factories import csv_row, customer_service_runs, write_csv
from tests.helpers.repos import app_repo

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "recorded" / "customer_service_runs.csv"


@pytest.fixture
def example(tmp_path: Path) -> str:
    """The bundled example copied into the working directory: inputs must lie inside it."""
    shutil.copy(EXAMPLE, tmp_path / EXAMPLE.name)
    return EXAMPLE.name


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return run_cli(args, cwd=cwd, env=env)


def test_help_lists_commands(tmp_path: Path) -> None:
    # A process of its own (startup): `python -m agent_eval_action --help` as a user types it.
    result = run_cli(["--help"], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, subprocess=True)
    assert result.returncode == 0
    assert "validate" in result.stdout and "evaluate" in result.stdout and "exit codes" in result.stdout


def test_evaluate_bundled_example(tmp_path: Path, example: str) -> None:
    result = cli("evaluate", example, "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["schema_version"] == 2
    (dataset,) = data["datasets"]
    assert dataset["name"] == "customer_service_runs" and dataset["format"] == "csv"
    summary = dataset["summary"]
    assert summary["tool_usage_accuracy"]["mean"] == round(5 / 6, 6)  # q_discount_02 made 1 of 2 calls: (1+1+0.5+1+1+1)/6
    assert summary["state_management_fidelity"]["n"] == 6
    assert summary["response_match"]["unscored"] == 4
    assert {q["id"] for q in dataset["questions"]} == {r.qid for r in customer_service_runs()}
    assert "tool_usage_accuracy" in result.stdout and "wrote out/results.json" in result.stdout
    # The run that missed a pass threshold is named, with the metrics it missed.
    from agent_eval_action.metrics import default_pass_thresholds

    thresholds = default_pass_thresholds({})
    expected = {
        q["id"]
        for q in dataset["questions"]
        if any(name in thresholds and s["value"] is not None and s["value"] < thresholds[name] for name, s in q["scores"].items())
    }
    named = {line.split()[1].rstrip(":"): line for line in result.stdout.splitlines() if line.strip().startswith("failed ")}
    assert set(named) == expected and "q_discount_02" in expected, result.stdout
    assert "tool_usage_accuracy" in named["q_discount_02"]


def test_results_are_byte_stable(tmp_path: Path, example: str) -> None:
    cli("evaluate", example, "--output-dir", "a", cwd=tmp_path)
    cli("evaluate", example, "--output-dir", "b", cwd=tmp_path)
    assert (tmp_path / "a" / "results.json").read_bytes() == (tmp_path / "b" / "results.json").read_bytes()


def test_bad_input_exit_2_but_valid_datasets_still_written(tmp_path: Path, example: str) -> None:
    (tmp_path / "broken.json").write_text("{nope")
    golden = tmp_path / "cs_golden.json"
    golden.write_text(
        json.dumps({"golden_questions": [{"id": "q", "user_inputs": ["hi"], "agents_evaluated": ["a"], "reference_data": {}}]})
    )
    result = cli("evaluate", example, "broken.json", "cs_golden.json", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "broken.json, at line 1, column 2: not valid JSON" in result.stderr
    assert "cs_golden.json: this dataset has no recorded runs; pass --agent module:attr" in result.stderr
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [d["name"] for d in data["datasets"]] == ["customer_service_runs"]
    assert len(data["problems"]) == 2


def test_validate_reports_one_line_per_problem(tmp_path: Path, example: str) -> None:
    rows = [csv_row(run) for run in customer_service_runs()[:2]]
    rows[1]["reference_data"] = "{bad"
    write_csv(tmp_path / "runs.csv", rows)
    ok = cli("validate", example, cwd=tmp_path)
    assert ok.returncode == 0 and "ok:" in ok.stdout
    (tmp_path / "broken.json").write_text("{")
    bad = cli("validate", "runs.csv", "missing.json", "broken.json", cwd=tmp_path)
    assert bad.returncode == 2
    errors = [line for line in bad.stderr.splitlines() if line.startswith("error:")]
    assert sorted(errors) == [
        "error: broken.json, at line 1, column 2: not valid JSON: Expecting property name enclosed in double quotes",
        "error: missing.json: no such file",
        "error: runs.csv, question 'q_discount_01', at row 2, column reference_data: not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
    ]
    unmatched = cli("validate", "nothing/*.json", cwd=tmp_path)
    assert unmatched.returncode == 2 and unmatched.stdout == "1 problem: nothing/*.json (matched no files)\n", unmatched.stdout
    # Each file a line of the summary, those it could not read too (they were in the errors alone).
    assert sorted(bad.stdout.splitlines()) == [
        "1 problem: broken.json (not read: see the error below)",
        "1 problem: missing.json (not read: see the error below)",
        "1 problem: runs.csv (csv, 1 valid question run)",
    ]


def test_config_file_and_metric_selection(tmp_path: Path, example: str) -> None:
    (tmp_path / "agent-eval.toml").write_text(
        f'datasets = ["{example}"]\nmetrics = ["tool_usage_accuracy", "cost_usd"]\noutput-dir = "res"\n[prices."gemini-2.5-flash"]\ninput = 0\noutput = 0\n'
    )
    result = cli("evaluate", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "res" / "results.json").read_text())["datasets"][0]["summary"]
    assert set(summary) == {"tool_usage_accuracy", "cost_usd", "score.tool_trajectory_avg_score"}
    assert summary["cost_usd"]["mean"] == 0.0


def test_config_errors_name_the_setting(tmp_path: Path, example: str) -> None:
    (tmp_path / "agent-eval.toml").write_text('metrics = ["tool_usage_acuracy"]\n')
    result = cli("evaluate", example, cwd=tmp_path)
    assert result.returncode == 2
    assert "agent-eval.toml: metrics: Value error, unknown metric(s) tool_usage_acuracy" in result.stderr
    (tmp_path / "agent-eval.toml").write_text("datasetz = []\n")
    result = cli("evaluate", example, cwd=tmp_path)
    assert result.returncode == 2 and "agent-eval.toml: datasetz: unknown setting (did you mean `datasets`?)" in result.stderr


def test_wrong_flag_is_usage_error(tmp_path: Path) -> None:
    """Refused by the command's own parser (its usage, not the top level's), with the flag it most
    resembles where one does."""
    result = cli("evaluate", "--no-such-flag", cwd=tmp_path)
    assert result.returncode == 2 and "evaluate: error: unrecognized arguments: --no-such-flag\n" in result.stderr
    assert result.stderr.startswith("usage: python -m agent_eval_action evaluate "), result.stderr
    result = cli("check", "--bse", "main", cwd=tmp_path)
    assert result.returncode == 2 and "check: error: unrecognized arguments: --bse main (did you mean --base?)" in result.stderr
    # No suggestion that is the word's negation, nor one for a flag the command does not take at all.
    for wrong in ("--no-agent", "--version"):
        result = cli("check", wrong, cwd=tmp_path)
        assert result.returncode == 2 and f"unrecognized arguments: {wrong}\n" in result.stderr, result.stderr
    result = cli("baseline", "update", "--datsets=x.json", cwd=tmp_path)
    assert (
        result.returncode == 2
        and "baseline update: error: unrecognized arguments: --datsets=x.json (did you mean --datasets?)" in result.stderr
    )


def test_nothing_to_evaluate(tmp_path: Path) -> None:
    """Without a config the default datasets matching nothing is a project not set up: the error
    says so and how to set one up; with a config, it names the setting to check."""
    result = cli("evaluate", cwd=tmp_path)
    assert result.returncode == 2
    assert "matched no dataset files (no agent-eval.toml, nor [tool.agent-eval] in a pyproject.toml, was found" in result.stderr
    assert "`python -m agent_eval_action init` sets a project up" in result.stderr, result.stderr
    (tmp_path / "agent-eval.toml").write_text("[gate]\nmax-regression = 0.05\n")
    result = cli("evaluate", cwd=tmp_path)
    assert result.returncode == 2 and "init" not in result.stderr, result.stderr
    assert "matched no dataset files (check the spelling, the `datasets` setting or the --datasets flag" in result.stderr


def test_validate_skips_adks_own_files_in_an_eval_folder_with_one_line_each(tmp_path: Path) -> None:
    """A standard ADK eval folder: its eval set, a saved session, the test config. Only the eval set
    is a dataset; the others are named for what they are, and the folder validates."""
    case = {"eval_id": "cart", "conversation": [{"invocation_id": "i1", "user_content": {"role": "user", "parts": [{"text": "hi"}]}}]}
    (tmp_path / "eval" / "sessions").mkdir(parents=True)
    (tmp_path / "eval" / "shop.evalset.json").write_text(json.dumps({"eval_set_id": "shop", "eval_cases": [case]}))
    (tmp_path / "eval" / "test_config.json").write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0}}))
    session = {"id": "123", "appName": "shop", "userId": "u", "state": {}, "events": [], "lastUpdateTime": 0.0}
    (tmp_path / "eval" / "sessions" / "123.session.json").write_text(json.dumps(session))
    result = cli("validate", "eval", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        "skipped: eval/sessions/123.session.json: an ADK session (`adk run --save_session` writes it, `--resume` reads it), not a dataset",
        "skipped: eval/test_config.json: ADK's eval criteria (read beside the eval files), not a dataset",
        "ok: eval/shop.evalset.json (adk_evalset, 1 valid question)",
    ]
    named = cli("validate", "eval/sessions/123.session.json", cwd=tmp_path)
    assert named.returncode == 2 and "this is an ADK session" in named.stderr and "not a dataset" in named.stderr


def test_a_wrong_agent_gets_true_advice(tmp_path: Path) -> None:
    """The README's `app.agent:...` in a project whose agent is customer_service/agent.py, and the
    file path typed instead of module:attr: each names what was wrong and the module:attr init finds,
    and no "no datasets" follows (the datasets are set; the agent did not load)."""
    repo = app_repo(tmp_path / "repo", package="customer_service")
    question = {"id": "q1", "user_inputs": ["hi"], "agents_evaluated": ["shop"], "reference_data": {}}
    (repo / "shop_golden.json").write_text(json.dumps({"golden_questions": [question]}))
    (repo / "agent-eval.toml").write_text('datasets = ["shop_golden.json"]\n')
    wrong_module = cli("evaluate", "--agent", "app.agent:root_agent", cwd=repo)
    assert wrong_module.returncode == 2
    assert "module 'app.agent' was not found from" in wrong_module.stderr and "(no module 'app')" in wrong_module.stderr
    assert "found here: `customer_service.agent:root_agent`" in wrong_module.stderr
    a_file = cli("evaluate", "--agent", "customer_service/agent.py", cwd=repo)
    assert a_file.returncode == 2
    assert "is a file: --agent takes module:attr" in a_file.stderr
    assert "give `--agent customer_service.agent:root_agent`" in a_file.stderr
    for done in (wrong_module, a_file):
        assert "run from the directory" not in done.stderr and "no datasets to evaluate" not in done.stderr
        # Nothing was read, so nothing is shown: no empty line before what was written.
        assert done.stdout.startswith("wrote ") and len(done.stdout.splitlines()) == 1, done.stdout


# What validate has no use for on a golden or .test.json file: the agent's framework, the model
# client, the table reader, the statistics, the templates, the Vertex AI SDK (together they are
# most of a second of imports; validate as it is takes a fifth of one for 100 questions).
HEAVY = ("google.adk", "google.genai", "pandas", "numpy", "jinja2", "vertexai", "opentelemetry.sdk", "rouge_score")


def test_validate_imports_nothing_heavy_that_the_file_does_not_need(tmp_path: Path) -> None:
    questions = [
        {
            "id": f"q{i:03d}",
            "user_inputs": [f"{i}: what is in my cart?"],
            "agents_evaluated": ["cs"],
            "reference_data": {"reference_tool_interactions": [{"tool_name": "access_cart_information", "input_arguments": {"id": "1"}}]},
        }
        for i in range(100)
    ]
    (tmp_path / "cs_golden.json").write_text(json.dumps({"golden_questions": questions}, indent=2))
    (tmp_path / "cs.test.json").write_text(json.dumps([{"query": "hi", "expected_tool_use": [], "reference": "Hello"}]))
    for name in ("cs_golden.json", "cs.test.json"):
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "agent_eval_action", "validate", name],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
        assert "agent_eval_action.datasets.golden" in imported or name != "cs_golden.json", sorted(imported)  # the probe sees our imports
        heavy = sorted(m for m in imported if m in HEAVY or m.startswith(tuple(f"{h}." for h in HEAVY)))
        assert not heavy, f"validate {name} imported {heavy}"
