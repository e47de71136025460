"""action.yml, the entrypoint and the docs agree."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from agent_eval_action.cli.settings import action_inputs

ROOT = Path(__file__).resolve().parents[2]


def test_every_input_is_read_and_every_read_input_declared() -> None:
    declared = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    assert set(declared) == set(action_inputs())
    assert all(spec.get("description") for spec in declared.values())
    assert yaml.safe_load((ROOT / "action.yml").read_text())["runs"] == {"using": "docker", "image": "Dockerfile"}


def test_dockerfile_entrypoint_is_exec_form_without_workdir_or_user() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["python", "-m", "agent_eval_action", "action"]' in text
    assert not re.search(r"^(WORKDIR|USER)\b", text, re.M)
    assert "requirements.runtime.lock" in text


def test_the_action_page_names_every_linted_workflow() -> None:
    page = (ROOT / "docs" / "action.md").read_text()
    for workflow in (ROOT / "examples" / "workflows").glob("*.yml"):
        assert f"examples/workflows/{workflow.name}" in page, workflow.name


def test_the_workflows_init_writes_are_the_linted_examples() -> None:
    """init writes these from package data (an installed package has no examples/): the two
    copies are the same bytes, so actionlint's check of the examples covers what init writes."""
    templates = ROOT / "src" / "agent_eval_action" / "service" / "workflows"
    assert sorted(p.name for p in templates.glob("*.yml")) == ["agent-eval-baseline.yml", "agent-eval-pr.yml"]
    for template in templates.glob("*.yml"):
        assert template.read_bytes() == (ROOT / "examples" / "workflows" / template.name).read_bytes(), template.name


def test_every_checkout_in_the_workflows_and_the_docs_keeps_the_token_out_of_git_config() -> None:
    """actions/checkout persists its token in .git/config unless told not to, where the agent (the
    PR's code) could read it: every workflow init writes, every example and every snippet says not to."""
    steps = []
    for workflow in (ROOT / "examples" / "workflows").glob("*.yml"):
        for job in yaml.safe_load(workflow.read_text())["jobs"].values():
            steps += [(workflow.name, step) for step in job.get("steps", []) if str(step.get("uses", "")).startswith("actions/checkout")]
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for block in re.findall(r"```ya?ml\n(.*?)```", page.read_text(), re.S):
            for job in (yaml.safe_load(block) or {}).get("jobs", {}).values():
                steps += [(page.name, step) for step in job.get("steps", []) if str(step.get("uses", "")).startswith("actions/checkout")]
    assert len(steps) >= 7, steps  # the six examples and action.md's snippet
    for where, step in steps:
        assert (step.get("with") or {}).get("persist-credentials") is False, (where, step)
