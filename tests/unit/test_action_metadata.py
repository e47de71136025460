"""action.yml, the entrypoint and the docs agree."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from agent_eval_action.action import INPUTS

ROOT = Path(__file__).resolve().parents[2]


def test_every_input_is_read_and_every_read_input_declared() -> None:
    declared = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    assert set(declared) == set(INPUTS)
    assert all(spec.get("description") for spec in declared.values())
    assert yaml.safe_load((ROOT / "action.yml").read_text())["runs"] == {"using": "docker", "image": "Dockerfile"}


def test_dockerfile_entrypoint_is_exec_form_without_workdir_or_user() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["python", "-m", "agent_eval_action", "action"]' in text
    assert not re.search(r"^(WORKDIR|USER)\b", text, re.M)
    assert "requirements.runtime.lock" in text


def test_readme_workflows_are_the_linted_ones() -> None:
    readme = (ROOT / "README.md").read_text()
    for workflow in (ROOT / "examples" / "workflows").glob("*.yml"):
        assert f"examples/workflows/{workflow.name}" in readme, workflow.name
