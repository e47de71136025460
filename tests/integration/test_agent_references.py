"""A dataset naming a tool or sub-agent the agent does not have (`access_cart_info` for
`access_cart_information`, `promotion_agent` for `promotions_agent`): `validate` loads the agent
(in a worker, as `init` does) and names the closest it has, exit 2; `--no-agent` skips it; an
agent that does not load is said and the datasets are still checked; `evaluate` says it once
beside its runs. The bundled example's agent, in a git repository made in a temp dir."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_eval_action.models.questions import Question
from agent_eval_action.service.references import AgentNames, unknown_names
from tests.helpers.commands import cli
from tests.helpers.repos import ROOT, commit, new_repo

DATASET = "evaluation/datasets/customer_service_golden.json"
TOOL = "question 'q_cart_01', reference_data.reference_tool_interactions[0].tool_name names tool 'access_cart_info', which the agent does not have: did you mean access_cart_information?"
AGENT = "question 'q_discount_01', reference_data.reference_trajectory[1] names agent or tool 'promotion_agent', which the agent does not have: did you mean promotions_agent?"


@pytest.fixture(scope="module")
def misnamed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = new_repo(tmp_path_factory.mktemp("misnamed") / "repo")
    shutil.copytree(
        ROOT / "examples" / "customer_service", repo, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "baselines")
    )
    data = json.loads((repo / DATASET).read_text())
    for question in data["golden_questions"]:
        reference = question["reference_data"]
        for call in reference.get("reference_tool_interactions") or []:
            if call["tool_name"] == "access_cart_information":
                call["tool_name"] = "access_cart_info"
        reference["reference_trajectory"] = [
            "promotion_agent" if s == "promotions_agent" else s for s in reference.get("reference_trajectory") or []
        ]
    (repo / DATASET).write_text(json.dumps(data, indent=1))
    commit(repo, "the example with two misnamed references")
    return repo


def test_validate_names_the_closest_tool_and_agent_and_fails(misnamed: Path) -> None:
    done = cli(misnamed, "validate")
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert f"error: {DATASET}: {TOOL}" in errors and f"error: {DATASET}: {AGENT}" in errors
    assert len(errors) == 5  # q_cart_01's tool; q_discount_01's and q_discount_02's tool and agent
    assert f"3 problems: {DATASET} (golden, 5 valid questions)" in done.stdout
    skipped = cli(misnamed, "validate", "--no-agent")
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert f"ok: {DATASET} (golden, 8 valid questions)" in skipped.stdout and "did you mean" not in skipped.stderr


def test_an_agent_that_does_not_load_is_said_and_the_datasets_are_still_checked(misnamed: Path) -> None:
    done = cli(misnamed, "validate", "--agent", "customer_service.nothing:root_agent")
    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        "error: the agent could not be loaded to check the datasets' tool and agent names: --agent: customer_service.nothing:root_agent"
        in done.stderr
    )
    assert "or skip this check with --no-agent" in done.stderr
    assert f"ok: {DATASET} (golden, 8 valid questions)" in done.stdout  # read fully all the same


def test_evaluate_says_it_once_beside_the_runs_and_does_not_fail_on_it(misnamed: Path, tmp_path: Path) -> None:
    done = cli(misnamed, "evaluate", "--output-dir", str(tmp_path / "out"), "--runs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.count(TOOL) == 1 and done.stderr.count(AGENT) == 1, done.stderr
    assert f"warning: {DATASET}: {TOOL}" in done.stderr
    stored = json.loads((tmp_path / "out" / "results.json").read_text())
    assert f"{DATASET}: {AGENT}" in stored["datasets"][0]["warnings"]


def test_an_agent_tool_sub_agent_is_suggested_and_a_toolset_leaves_tool_names_unchecked() -> None:
    """financial-advisor's shape: a root agent whose sub-agents are AgentTools."""
    tree = {
        "name": "financial_coordinator",
        "tools": [{"name": "data_analyst_agent", "agent": True}, {"name": "trading_analyst_agent", "agent": True}],
        "toolsets": [],
        "sub_agents": [],
        "app_name": "financial_advisor",  # stands for its root agent in a trajectory
    }
    question = Question.model_validate(
        {
            "id": "q_data_01",
            "user_inputs": ["analyse AAPL"],
            "reference_data": {
                "reference_tool_interactions": [{"tool_name": "data_analyst", "input_arguments": {}}],
                "reference_trajectory": ["financial_advisor", "financial_coordinator", "data_analyst_agent"],
            },
        }
    )
    (unknown,) = unknown_names(AgentNames.of(tree), "fa_golden.json", [question])
    assert (unknown.name, unknown.closest, unknown.kind) == ("data_analyst", "data_analyst_agent", "tool")
    assert unknown.message().endswith("which the agent does not have: did you mean data_analyst_agent?")
    with_toolset = AgentNames.of({**tree, "toolsets": ["McpToolset"]})
    assert unknown_names(with_toolset, "fa_golden.json", [question]) == []  # an MCP server's tools are not listed


def test_a_check_whose_questions_in_doubt_run_again_still_says_it_once(misnamed: Path, tmp_path: Path) -> None:
    """The example's check against its shipped baseline re-runs the questions its regression put in
    doubt: the result the check ends with is a later round's, and still holds the warnings."""
    repo = tmp_path / "repo"
    shutil.copytree(misnamed, repo)
    shutil.copytree(ROOT / "examples" / "customer_service" / "evaluation" / "baselines", repo / "evaluation" / "baselines")
    done = cli(repo, "check", "--no-comment", "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 1, done.stdout + done.stderr  # the regression the example ships
    stored = json.loads((tmp_path / "out" / "results.json").read_text())
    (dataset,) = stored["datasets"]
    assert max(q.get("run", 0) for q in dataset["questions"]) >= 1  # some question ran again
    assert done.stderr.count(TOOL) == 1 and done.stderr.count(AGENT) == 1, done.stderr
    assert f"{DATASET}: {TOOL}" in dataset["warnings"] and f"{DATASET}: {AGENT}" in dataset["warnings"]


def test_an_agent_the_config_names_is_named_by_the_configs_key_not_a_flag(misnamed: Path, tmp_path: Path) -> None:
    """The agent that does not load came from agent-eval.toml: its errors name the file's key,
    never `--agent`, which nobody passed; given as the flag, they name the flag."""
    repo = tmp_path / "repo"
    shutil.copytree(misnamed, repo, symlinks=True)
    config = (repo / "agent-eval.toml").read_text()
    assert 'agent = "customer_service"\n' in config
    (repo / "agent-eval.toml").write_text(config.replace('agent = "customer_service"', 'agent = "customer_service.agent:root_agnt"'))
    wrong = "customer_service.agent:root_agnt: module 'customer_service.agent' has no attribute 'root_agnt'"
    done = cli(repo, "validate")
    assert done.returncode == 2 and f"tool and agent names: agent-eval.toml: agent: {wrong}" in done.stderr, done.stderr
    done = cli(repo, "evaluate", "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 2 and f"error: {DATASET}: agent-eval.toml: agent: {wrong}" in done.stderr, done.stderr
    assert "--agent:" not in done.stderr
    done = cli(repo, "evaluate", "--agent", "customer_service.agent:root_agnt", "--output-dir", str(tmp_path / "out"))
    assert done.returncode == 2 and f"error: {DATASET}: --agent: {wrong}" in done.stderr, done.stderr
