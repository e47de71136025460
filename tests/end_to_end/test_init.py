"""`init`, the way in, and the PR check's one name (`check`, with `run` as its alias), through the
command line as a subprocess in fresh git repositories."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.helpers.commands import run_cli
from tests.helpers.repos import app_repo, commit, git

ROOT = Path(__file__).resolve().parents[2]
WRITTEN = [
    "agent-eval.toml",
    "evaluation/datasets/shop_golden.json",
    ".github/workflows/agent-eval.yml",
    ".github/workflows/agent-eval-baseline.yml",
]


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GOOGLE_", "INPUT_"))}
    env["PYTHONPATH"] = str(ROOT / "src")
    return run_cli(args, cwd=cwd, env=env)


def files(repo: Path) -> dict[str, bytes]:
    return {str(p.relative_to(repo)): p.read_bytes() for p in sorted(repo.rglob("*")) if p.is_file() and ".git" not in p.parts}


def test_init_drafts_a_valid_dataset_from_the_agents_tools_and_sub_agents(tmp_path: Path) -> None:
    repo = app_repo(tmp_path / "repo")
    done = cli(repo, "init", "--agent", "app.agent:root_agent")
    assert done.returncode == 0, done.stderr
    assert [line.split()[1] for line in done.stdout.splitlines() if line.startswith("wrote ")] == WRITTEN
    assert "Next:" in done.stdout and "baseline update" in done.stdout and "check --base main" in done.stdout
    # The model's key: the workflows pass a repository secret to the agent, and the next steps say to add it.
    assert "add\n     your model's key as a repository secret named GOOGLE_API_KEY" in done.stdout
    for workflow in WRITTEN[-2:]:
        text = (repo / workflow).read_text()
        assert "        env:\n          GOOGLE_API_KEY: ${{ secrets.GOOGLE_API_KEY }}\n        with:\n" in text, workflow
    # The workflows it wrote install requirements.txt: a repository without one (and no project to
    # install) is told so.
    assert not (repo / "requirements.txt").exists() and not (repo / "pyproject.toml").exists()
    assert "there is no requirements.txt, pyproject.toml or setup.py here" in done.stderr, done.stderr

    dataset = json.loads((repo / "evaluation" / "datasets" / "shop_golden.json").read_text())
    questions = {q["id"]: q for q in dataset["golden_questions"]}
    # A greeting, each tool of each agent once, the sub-agent's hand-over.
    assert list(questions) == [
        "q_greeting_01",
        "q_shop_lookup_order_01",
        "q_shop_explode_01",
        "q_refunds_01",
        "q_refunds_lookup_order_01",
        "q_refunds_refund_01",
    ]
    refund = questions["q_refunds_refund_01"]
    assert refund["user_inputs"] == ["TODO: what a user says that needs refunds to call refund"]
    assert refund["agents_evaluated"] == ["shop"]
    # The parameters come from the tool's schema as ADK declares it (tool_context left out).
    assert refund["reference_data"]["reference_tool_interactions"] == [
        {"tool_name": "refund", "input_arguments": {"order_id": "TODO (string)", "amount": "TODO (number)"}}
    ]
    assert refund["reference_data"]["reference_trajectory"] == ["shop", "refunds", "refund"]
    assert refund["metadata"]["tool_description"] == "Refunds an order."
    assert questions["q_refunds_01"]["reference_data"]["reference_trajectory"] == ["shop", "refunds"]

    config = (repo / "agent-eval.toml").read_text()
    assert 'agent = "app.agent:root_agent"' in config and 'datasets = ["evaluation/datasets/*.json"]' in config
    workflow = (repo / ".github" / "workflows" / "agent-eval.yml").read_text()
    assert workflow == (ROOT / "examples" / "workflows" / "agent-eval-pr.yml").read_text()  # it names app.agent:root_agent too

    valid = cli(repo, "validate", "evaluation/datasets")
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert "evaluation/datasets/shop_golden.json (golden, 6 valid questions)" in valid.stdout
    # Valid, so the draft loads; but its placeholders are named, so no baseline records them unseen.
    assert "6 questions still hold TODO placeholders" in valid.stderr, valid.stderr
    assert valid.stderr.count("warning") == 1, valid.stderr


def test_init_again_overwrites_nothing_and_names_what_it_skipped(tmp_path: Path) -> None:
    repo = app_repo(tmp_path / "repo")
    assert cli(repo, "init", "--agent", "app.agent:root_agent").returncode == 0
    (repo / "agent-eval.toml").write_text('datasets = ["mine/*.json"]\n')  # the user's edit
    before = files(repo)
    again = cli(repo, "init", "--agent", "app.agent:root_agent")
    assert again.returncode == 0, again.stderr
    assert files(repo) == before
    assert [line.split()[1].rstrip(":") for line in again.stdout.splitlines() if line.startswith("skipped ")] == WRITTEN
    assert "wrote" not in again.stdout
    # The dataset there is the user's now: the next steps check it, never ask to fill in a draft.
    assert "1. Check the datasets:" in again.stdout and "marked TODO" not in again.stdout


def test_init_finds_an_obvious_agent_and_without_one_writes_a_generic_template(tmp_path: Path) -> None:
    found = app_repo(tmp_path / "found", package="store")
    done = cli(found, "init")
    assert done.returncode == 0, done.stderr
    assert "found the agent store.agent:root_agent" in done.stdout
    assert 'agent = "store.agent:root_agent"' in (found / "agent-eval.toml").read_text()

    bare = tmp_path / "bare"
    bare.mkdir()
    git(bare, "init", "-q", "-b", "main")
    done = cli(bare, "init")
    assert done.returncode == 0, done.stderr
    assert "no --agent given and no agent found" in done.stderr
    # Nothing to draft from, so nothing claims it was drafted; the first step is naming the agent.
    assert "(1 question to fill in, a generic template: no agent to draft it from)" in done.stdout
    assert "drafted from the agent's tools" not in done.stdout
    assert "1. Set `agent` in agent-eval.toml (package.module:root_agent), then fill in" in done.stdout
    assert '# agent = "app.agent:root_agent"' in (bare / "agent-eval.toml").read_text()
    (question,) = json.loads((bare / "evaluation" / "datasets" / "my_agent_golden.json").read_text())["golden_questions"]
    assert question["user_inputs"] == ["Hi"] and question["reference_data"]["reference_response"].startswith("TODO")
    assert cli(bare, "validate", "evaluation/datasets").returncode == 0


def test_init_with_an_agent_that_cannot_load_writes_nothing_and_exits_2(tmp_path: Path) -> None:
    repo = app_repo(tmp_path / "repo")
    shutil.copytree(ROOT / "tests" / "apps" / "exits_at_import", repo / "broken", ignore=shutil.ignore_patterns("__pycache__"))
    before = files(repo)
    done = cli(repo, "init", "--agent", "broken.agent:root_agent")
    assert done.returncode == 2, done.stdout + done.stderr
    which, error = done.stderr.split("\n", 1)
    assert which.startswith("the agent's Python: ") and error.startswith("error: --agent: broken.agent:root_agent: "), done.stderr
    assert files(repo) == before


def test_the_pr_check_is_check_and_run_is_its_alias_with_a_note(tmp_path: Path) -> None:
    help_text = cli(tmp_path, "--help").stdout
    assert "check (run)" in help_text and "init" in help_text
    repo = app_repo(tmp_path / "repo")
    assert cli(repo, "init", "--agent", "app.agent:root_agent").returncode == 0
    update = cli(repo, "baseline", "update")
    assert update.returncode == 0, update.stdout + update.stderr
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "app" / "agent.py").write_text((repo / "app" / "agent.py").read_text() + "\n# a comment\n")
    git(repo, "commit", "-qam", "agent change: every question runs")
    check = cli(repo, "check", "--base", "main", "--no-comment", "--output-dir", "check-out")
    run = cli(repo, "run", "--base", "main", "--no-comment", "--output-dir", "run-out")
    assert check.returncode == run.returncode == 0, check.stdout + check.stderr + run.stdout + run.stderr
    assert "renamed" not in check.stderr
    assert run.stderr.splitlines()[0] == "note: `run` is renamed `check` (as in Python's check()); `run` goes away in the next release"
    # The same check: the same selection and verdict.
    results = [json.loads((repo / out / "results.json").read_text()) for out in ("check-out", "run-out")]
    assert [r["gate"]["outcome"] for r in results] == ["passed", "passed"]
    assert results[0]["selection"] == results[1]["selection"]
    assert [q["id"] for q in results[0]["datasets"][0]["questions"]] == [q["id"] for q in results[1]["datasets"][0]["questions"]]


def test_validate_without_a_path_checks_the_configs_datasets(tmp_path: Path) -> None:
    repo = app_repo(tmp_path / "repo")
    assert cli(repo, "init", "--agent", "app.agent:root_agent").returncode == 0
    (repo / "app" / "sub").mkdir()
    valid = cli(repo / "app" / "sub", "validate")  # the config is found upward, its globs read from its folder
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert "shop_golden.json (golden, 6 valid questions)" in valid.stdout, valid.stdout


def test_init_ignores_the_output_folder_in_gitignore_once_and_keeps_every_other_line(tmp_path: Path) -> None:
    fresh = app_repo(tmp_path / "fresh")
    (fresh / ".gitignore").unlink()
    done = cli(fresh, "init", "--agent", "app.agent:root_agent")
    assert done.returncode == 0, done.stderr
    assert (fresh / ".gitignore").read_text() == "agent-eval-results/\n"
    assert "added agent-eval-results/ to .gitignore" in done.stdout
    assert git(fresh, "status", "--porcelain", "--ignored", "agent-eval-results") == ""  # nothing there yet, and once there:
    (fresh / "agent-eval-results").mkdir()
    (fresh / "agent-eval-results" / "results.json").write_text("{}")
    assert git(fresh, "status", "--porcelain", "--ignored", "agent-eval-results").startswith("!! agent-eval-results/")

    again = cli(fresh, "init", "--agent", "app.agent:root_agent")
    assert again.returncode == 0 and "added agent-eval-results/" not in again.stdout
    assert (fresh / ".gitignore").read_text() == "agent-eval-results/\n"  # never twice

    theirs = app_repo(tmp_path / "theirs")
    (theirs / ".gitignore").write_text("# ours\n__pycache__/\n.venv")  # no newline at the end
    assert cli(theirs, "init", "--agent", "app.agent:root_agent").returncode == 0
    assert (theirs / ".gitignore").read_text() == "# ours\n__pycache__/\n.venv\nagent-eval-results/\n"

    spelt = app_repo(tmp_path / "spelt")
    (spelt / ".gitignore").write_text("/agent-eval-results\n")  # already ignored, written another way
    assert cli(spelt, "init", "--agent", "app.agent:root_agent").returncode == 0
    assert (spelt / ".gitignore").read_text() == "/agent-eval-results\n"


def test_init_installs_a_packaged_agent_as_a_project(tmp_path: Path) -> None:
    """An agent packaged as google/adk-samples' agents are (a pyproject.toml, no requirements.txt):
    the workflows install the project, and nothing asks for a requirements.txt."""
    repo = app_repo(tmp_path / "repo")
    (repo / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "0.1.0"\ndependencies = ["google-adk"]\n')
    done = cli(repo, "init", "--agent", "app.agent:root_agent")
    assert done.returncode == 0, done.stderr
    assert "requirements.txt" not in done.stderr, done.stderr
    assert "the workflows install the agent's project with `pip install -e .`" in done.stdout
    for workflow in WRITTEN[-2:]:
        text = (repo / workflow).read_text()
        assert "install: pip install -e .\n" in text and "requirements.txt" not in text, workflow


def test_init_with_several_agents_names_them_and_writes_nothing(tmp_path: Path) -> None:
    """Two folders that each hold an agent: init wrote a generic template and said "no obvious one",
    naming neither; the template then stayed when init ran again with --agent (it never overwrites)."""
    repo = app_repo(tmp_path / "repo", package="shop")
    shutil.copytree(repo / "shop", repo / "support", ignore=shutil.ignore_patterns("__pycache__"))
    before = files(repo)
    done = cli(repo, "init")
    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        "error: agent: 2 folders here each hold an agent (shop.agent:root_agent, support.agent:root_agent): "
        "name the one to evaluate, e.g. agent-eval init --agent shop.agent:root_agent (nothing was written)"
    ) in done.stderr
    assert files(repo) == before
    # The agent a config already there names is the one: init run again after it was set.
    (repo / "agent-eval.toml").write_text('agent = "support.agent:root_agent"\n')
    named = cli(repo, "init")
    assert named.returncode == 0, named.stderr
    assert "drafted from the agent's tools and sub-agents" in named.stdout
    assert "no agent found" not in named.stderr and "Set `agent`" not in named.stdout, named.stdout + named.stderr
