"""`evaluate` when the model cannot be reached: exit 3 with the cause said once, as `check` does
(it exited 0 with 7 of 10 questions ending in "No API key was provided")."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.helpers.commands import run_cli

ROOT = Path(__file__).resolve().parents[2]
ITEMS = ["apple", "pear", "plum"]


def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "tests" / "apps" / "stochastic", tmp_path / "stochastic")
    (tmp_path / "agent-eval.toml").write_text('datasets = ["prices.json"]\nagent = "stochastic.agent:root_agent"\n')
    questions = [
        {
            "id": item,
            "user_inputs": [f"price of {item}"],
            "agents_evaluated": ["stochastic"],
            "reference_data": {"reference_tool_interactions": [{"tool_name": "lookup", "input_arguments": {"item": item}}]},
        }
        for item in ITEMS
    ]
    (tmp_path / "prices.json").write_text(json.dumps({"golden_questions": questions}))
    return tmp_path


def env(**extra: str) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "STOCHASTIC_"))}
    return {**kept, "PYTHONPATH": str(ROOT / "src"), **extra}


def test_evaluate_exits_3_when_the_model_could_not_be_reached(tmp_path: Path) -> None:
    folder = project(tmp_path)
    done = run_cli(["evaluate"], cwd=folder, env=env(STOCHASTIC_NO_KEY="1"))
    assert done.returncode == 3, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("error: could not evaluate")]
    assert said == [
        "error: could not evaluate: no API key or credentials for the model: set GOOGLE_API_KEY (or the Vertex AI credentials) "
        "in the step's env, or in the agent folder's .env (read as `adk run` reads it) "
        "(3 of 3 question runs could not reach the model: their scores are left out)"
    ]
    fine = run_cli(["evaluate"], cwd=folder, env=env())
    assert fine.returncode == 0, fine.stdout + fine.stderr


def test_the_agent_folders_env_file_is_read_as_adk_reads_it(tmp_path: Path) -> None:
    """ADK's samples keep the model's key in the agent folder's `.env`, which `adk run` reads:
    the agent's process reads it too (here a variable the scripted model reads), never above the
    project's folder, and a variable the step sets wins over the file."""
    folder = project(tmp_path / "project")
    (folder / "stochastic" / ".env").write_text('# the model\nexport STOCHASTIC_NO_KEY="1"\nAGENT_EVAL_WORKER_AGENT=elsewhere:agent\n')
    done = run_cli(["evaluate"], cwd=folder, env=env())
    assert done.returncode == 3, done.stdout + done.stderr  # the file's variable reached the agent
    assert "error: could not evaluate: no API key" in done.stderr
    assert "STOCHASTIC_NO_KEY=" not in done.stdout + done.stderr  # nothing of the file printed
    # The step's own setting wins over the file ("" is set: the scripted model then has its key).
    fine = run_cli(["evaluate"], cwd=folder, env=env(STOCHASTIC_NO_KEY=""))
    assert fine.returncode == 0, fine.stdout + fine.stderr
    # A .env above the project's folder is not the agent's.
    (folder / "stochastic" / ".env").unlink()
    (tmp_path / ".env").write_text("STOCHASTIC_NO_KEY=1\n")
    assert run_cli(["evaluate"], cwd=folder, env=env()).returncode == 0
