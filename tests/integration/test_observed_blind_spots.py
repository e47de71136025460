"""Reads the observation used to miss, each a PR that breaks the agent and used to pass (exit 0):
a committed symbolic link retargeted, a file opened relative to a directory descriptor or after
a change of working directory, a SQLite database, prompts in a git submodule whose gitlink the
PR bumps, a template the install command renders into an ignored folder. Real git repositories,
``check --base main`` (``test_observed_inputs.py``'s harness)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from pathlib import Path

from tests.helpers.observed_repos import CONFIG, LINK_ADK, PACKAGE_INIT, SCRIPTED, assert_caught, repo_with, run
from tests.helpers.repos import DATASET, commit, git, golden, new_repo, stored

GOOD, BAD = "Answer prices with the tool.\n", "BROKEN\n"


def retarget(repo: Path, link: str, target: str) -> None:
    (repo / link).unlink()
    (repo / link).symlink_to(target)
    commit(repo, f"{link} -> {target}")


def baseline_inputs(repo: Path) -> dict[str, str]:
    baseline = stored(next((repo / "evaluation" / "baselines").rglob("*.json")).read_text())["datasets"][0]
    return dict(baseline["questions"][0]["inputs"])


def assert_the_real_file_recorded_and_its_change_caught(repo: Path) -> None:
    """The baseline holds ``prompts/system.md``, not a ``system.md`` at the top; a PR breaking it fails."""
    inputs = baseline_inputs(repo)
    assert "prompts/system.md" in inputs and "system.md" not in inputs, inputs
    (repo / "prompts" / "system.md").write_text(BAD)
    commit(repo, "a broken prompt")
    assert_caught(repo)


def test_a_file_link_retargeted(tmp_path: Path) -> None:
    agent = "from pathlib import Path\nfrom scripted import agent\nroot_agent = agent((Path(__file__).parents[1] / 'prompts' / 'current.md').read_text())\n"
    files = {**PACKAGE_INIT, "shop/agent.py": agent, "prompts/v1.md": GOOD, "prompts/v2.md": BAD}
    repo = repo_with(tmp_path, files, prepare=lambda r: (r / "prompts" / "current.md").symlink_to("v1.md"))
    inputs = baseline_inputs(repo)
    assert "prompts/current.md" in inputs and "prompts/v1.md" in inputs, inputs  # the link as a link, and its target
    retarget(repo, "prompts/current.md", "v2.md")
    assert_caught(repo)


def test_a_folder_link_retargeted(tmp_path: Path) -> None:
    agent = "from pathlib import Path\nfrom scripted import agent\nroot_agent = agent((Path(__file__).parents[1] / 'prompts' / 'system.md').read_text())\n"
    files = {**PACKAGE_INIT, "shop/agent.py": agent, "prompts_v1/system.md": GOOD, "prompts_v2/system.md": BAD}
    repo = repo_with(tmp_path, files, prepare=lambda r: (r / "prompts").symlink_to("prompts_v1"))
    assert "prompts" in baseline_inputs(repo)
    retarget(repo, "prompts", "prompts_v2")
    assert_caught(repo)


def test_a_prompt_opened_relative_to_a_directory_descriptor(tmp_path: Path) -> None:
    """The Python docs' own ``opener`` example."""
    agent = (
        "import os\nfrom pathlib import Path\nfrom scripted import agent\n"
        "fd = os.open(Path(__file__).parents[1] / 'prompts', os.O_RDONLY)\n"
        "with open('system.md', opener=lambda path, flags: os.open(path, flags, dir_fd=fd)) as f:\n"
        "    root_agent = agent(f.read())\n"
        "os.close(fd)\n"
    )
    repo = repo_with(tmp_path, {**PACKAGE_INIT, "shop/agent.py": agent, "prompts/system.md": GOOD})
    assert_the_real_file_recorded_and_its_change_caught(repo)


def test_a_prompt_opened_after_a_change_of_working_directory(tmp_path: Path) -> None:
    agent = (
        "import contextlib\nfrom pathlib import Path\nfrom scripted import agent\n"
        "with contextlib.chdir(Path(__file__).parents[1] / 'prompts'):\n"
        "    root_agent = agent(open('system.md').read())\n"
    )
    repo = repo_with(tmp_path, {**PACKAGE_INIT, "shop/agent.py": agent, "prompts/system.md": GOOD})
    assert_the_real_file_recorded_and_its_change_caught(repo)


def prompt_database(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("create table prompt (text)")
        db.execute("insert into prompt values (?)", (text,))
        db.commit()


def test_a_committed_sqlite_database_read_while_the_question_runs(tmp_path: Path) -> None:
    """The instruction comes from a database each time the model is asked (an instruction
    provider, in the question's own task): ``sqlite3.connect`` opens it without an ``open`` event."""
    agent = (
        "import sqlite3\nfrom pathlib import Path\nfrom scripted import agent\n"
        "DB = Path(__file__).parents[1] / 'data' / 'prompts.db'\n"
        "def instruction(context) -> str:\n"
        "    db = sqlite3.connect(DB)\n"
        "    try:\n"
        "        return db.execute('select text from prompt').fetchone()[0]\n"
        "    finally:\n"
        "        db.close()\n"
        "root_agent = agent(instruction)\n"
    )
    repo = repo_with(tmp_path, {**PACKAGE_INIT, "shop/agent.py": agent}, prepare=lambda r: prompt_database(r / "data" / "prompts.db", GOOD))
    assert "data/prompts.db" in baseline_inputs(repo)
    prompt_database(repo / "data" / "prompts.db", BAD)
    commit(repo, "a broken prompt in the database")
    assert_caught(repo)


def test_prompts_in_a_submodule_whose_gitlink_the_pr_bumps(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts-origin"
    prompts.mkdir()
    git(prompts, "init", "-q", "-b", "main")
    git(prompts, "config", "user.email", "ci@example.com")
    git(prompts, "config", "user.name", "CI")
    (prompts / "system.md").write_text(GOOD)
    commit(prompts, "the prompt")

    def add_submodule(repo: Path) -> None:
        git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(prompts), "prompts")

    agent = "from pathlib import Path\nfrom scripted import agent\nroot_agent = agent((Path(__file__).parents[1] / 'prompts' / 'system.md').read_text())\n"
    repo = repo_with(tmp_path, {**PACKAGE_INIT, "shop/agent.py": agent}, prepare=add_submodule)
    assert "prompts/system.md" in baseline_inputs(repo)
    sub = repo / "prompts"
    git(sub, "config", "user.email", "ci@example.com")
    git(sub, "config", "user.name", "CI")
    (sub / "system.md").write_text(BAD)
    commit(sub, "a broken prompt")
    commit(repo, "bump the prompts")  # the gitlink
    assert os.path.isfile(sub / "system.md")
    assert_caught(repo)


def test_a_template_the_install_command_renders_into_an_ignored_folder(tmp_path: Path) -> None:
    """``build/`` is ignored; the install command writes ``build/prompt.md`` from a committed
    template: the agent's read of it is an input by its content, as the template makes it."""
    agent = "from pathlib import Path\nfrom scripted import agent\nroot_agent = agent((Path(__file__).parents[1] / 'build' / 'prompt.md').read_text())\n"
    render = f"{LINK_ADK} && mkdir -p build && cp templates/prompt.md.in build/prompt.md"
    repo = new_repo(tmp_path / "repo", {**PACKAGE_INIT, "shop/agent.py": agent, "templates/prompt.md.in": GOOD})
    shutil.copy(SCRIPTED, repo / "scripted.py")
    (repo / "agent-eval.toml").write_text(CONFIG.format(agent="shop.agent:root_agent"))
    (repo / ".gitignore").write_text("agent-eval-results/\ncalls.txt\n__pycache__/\nbuild/\n")
    golden(repo / DATASET, 6)
    commit(repo, "the agent, its template and its dataset")
    (tmp_path / "runner-temp").mkdir()
    env = {"RUNNER_TEMP": str(tmp_path / "runner-temp")}
    run(repo, "baseline", "update", "--install", render, env=env)
    assert "build/prompt.md" in baseline_inputs(repo)
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "templates" / "prompt.md.in").write_text(BAD)
    commit(repo, "a broken template")
    assert_caught(repo, "--install", render, env=env)
