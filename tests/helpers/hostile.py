"""The hostile agent's questions (tests/apps/hostile), and the CLI run (``commands.run_cli``) with no
GitHub or input variables, so a secret the test sets is the only one there is."""

from __future__ import annotations

import json
import os
from pathlib import Path
from subprocess import CompletedProcess

from tests.helpers.commands import run_cli
from tests.helpers.repos import ROOT

APPS = ROOT / "tests" / "apps"


def golden(path: Path, questions: dict[str, str]) -> Path:
    items = [
        {
            "id": qid,
            "user_inputs": [text],
            "agents_evaluated": ["hostile"],
            "reference_data": {"reference_tool_interactions": [{"tool_name": text.split()[1], "input_arguments": {}}]},
        }
        for qid, text in questions.items()
    ]
    path.write_text(json.dumps({"golden_questions": items}))
    return path


def cli(cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 240, subprocess: bool = False) -> CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    full.update({"PYTHONPATH": str(ROOT / "src"), **(env or {})})
    return run_cli(args, cwd=cwd, env=full, timeout=timeout, subprocess=subprocess)
