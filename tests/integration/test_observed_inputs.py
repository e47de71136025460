"""The gate sees what the agent reads, not what a guess of its code names: in real git
repositories (main with a committed baseline, a PR branch), an ADK agent whose scripted model
follows what the agent read, ``check --base main`` as a subprocess. Each PR breaks the agent
through an input the old agent-code list missed; the check must fail and name the regression.
And what the agent never read costs nothing."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from agent_eval_action.run.agent.venvs import install_environment
from tests.helpers.observed_repos import (
    BASELINE_RUNS,
    CONFIG,
    LINK_ADK,
    PACKAGE_INIT,
    QUESTIONS,
    SCRIPTED,
    assert_caught,
    pr,
    repo_with,
    run,
)
from tests.helpers.repos import DATASET, commit, git, golden, new_repo, results, stored


def test_a_prompt_file_read_outside_the_package(tmp_path: Path) -> None:
    agent = "from pathlib import Path\nfrom scripted import agent\nroot_agent = agent((Path(__file__).parents[1] / 'prompts' / 'system.md').read_text())\n"
    repo = repo_with(tmp_path, {**PACKAGE_INIT, "shop/agent.py": agent, "prompts/system.md": "Answer prices with the tool.\n"})
    pr(repo, "prompts/system.md", "BROKEN\n")
    assert_caught(repo)
    selected = results(repo)["selection"]["selected"]
    assert selected and "prompts/system.md" in selected[0]["reason"], selected


def test_a_provider_module_imported_by_a_name_in_a_json_file(tmp_path: Path) -> None:
    agent = (
        "import importlib, json\nfrom pathlib import Path\nfrom scripted import agent\n"
        "name = json.loads((Path(__file__).parent / 'provider.json').read_text())['provider']\n"
        "root_agent = agent(importlib.import_module(name).INSTRUCTION)\n"
    )
    files = {
        **PACKAGE_INIT,
        "shop/agent.py": agent,
        "shop/provider.json": '{"provider": "providers.plain"}',
        "providers/__init__.py": "",
        "providers/plain.py": "INSTRUCTION = 'Answer prices.'\n",
    }
    repo = repo_with(tmp_path, files)
    pr(repo, "providers/plain.py", "INSTRUCTION = 'BROKEN'\n")
    assert_caught(repo)


def test_vendor_imported_after_a_sys_path_insert(tmp_path: Path) -> None:
    agent = (
        "import sys\nfrom pathlib import Path\nsys.path.insert(0, str(Path(__file__).parents[1] / 'vendor'))\n"
        "import rules\nfrom scripted import agent\nroot_agent = agent(rules.INSTRUCTION)\n"
    )
    repo = repo_with(tmp_path, {**PACKAGE_INIT, "shop/agent.py": agent, "vendor/rules.py": "INSTRUCTION = 'Answer prices.'\n"})
    pr(repo, "vendor/rules.py", "INSTRUCTION = 'BROKEN'\n")
    assert_caught(repo)


def test_a_dot_env_file_in_the_agent_folder(tmp_path: Path) -> None:
    """ADK's layout: ``weather/agent.py`` beside ``weather/.env``, loaded with python-dotenv."""
    agent = (
        "import os\nfrom pathlib import Path\nfrom dotenv import load_dotenv\nfrom scripted import agent\n"
        "load_dotenv(Path(__file__).parent / '.env')\n"
        "root_agent = agent('BROKEN' if os.environ.get('SHOP_MODE') == 'broken' else 'Answer prices.')\n"
    )
    files = {"weather/__init__.py": "from . import agent\n", "weather/agent.py": agent, "weather/.env": "SHOP_MODE=ok\n"}
    repo = repo_with(tmp_path, files, agent="weather")
    pr(repo, "weather/.env", "SHOP_MODE=broken\n")
    assert_caught(repo)


def test_the_agent_input_switched_to_another_agent_in_the_same_module(tmp_path: Path) -> None:
    agent = "from scripted import agent\nroot_agent = agent('Answer prices.')\nexperimental = agent('BROKEN')\n"
    repo = repo_with(tmp_path, {**PACKAGE_INIT, "shop/agent.py": agent})
    pr(repo, "README.md", "# shop\n\nNow trying the experimental agent.\n")
    assert_caught(repo, "--agent", "shop.agent:experimental")
    reason = results(repo)["selection"]["selected"][0]["reason"]
    assert reason == "the agent's environment changed: agent shop.agent:root_agent → shop.agent:experimental", reason


def test_a_model_setting_changed_is_never_replayed_from_the_cache(tmp_path: Path) -> None:
    """The model object's configuration (an endpoint, a mode) is part of the cache key: the old
    model's answers are not replayed for the new one, although every request is byte-identical."""
    agent = "from scripted import ScriptedModel, agent\nroot_agent = agent('Answer prices.', model=ScriptedModel(mode='ok'))\n"
    repo = repo_with(tmp_path, {**PACKAGE_INIT, "shop/agent.py": agent}, extra_config='model-cache = ".cache/models"\n')
    pr(repo, "shop/agent.py", agent.replace("mode='ok'", "mode='broken'"))
    assert_caught(repo)


def test_a_readme_only_pr_and_an_unchanged_rerun_cost_no_model_call(tmp_path: Path) -> None:
    agent = "from pathlib import Path\nfrom scripted import agent\nroot_agent = agent((Path(__file__).parents[1] / 'prompts' / 'system.md').read_text())\n"
    repo = repo_with(tmp_path, {**PACKAGE_INIT, "shop/agent.py": agent, "prompts/system.md": "Answer prices with the tool.\n"})
    baseline = stored(next((repo / "evaluation" / "baselines").rglob("*.json")).read_text())["datasets"][0]
    assert baseline["environment"] and all("prompts/system.md" in q["inputs"] for q in baseline["questions"])
    assert run(repo, "check", "--base", "main")[1] == 0  # nothing changed
    assert run(repo, "check", "--base", "main", "--all")[1] == 0  # every question reused
    assert results(repo)["datasets"][0]["reused"] == QUESTIONS * BASELINE_RUNS  # every stored run carried
    pr(repo, "README.md", "# shop\n\nMore words.\n")
    pr(repo, "docs/usage.md", "# usage\n")  # a new folder at the top: no module of the agent's
    pr(repo, "tests/test_shop.py", "def test_nothing():\n    pass\n")
    out, calls = run(repo, "check", "--base", "main")
    assert calls == 0, out
    assert run(repo, "check", "--base", "main", "--all")[1] == 0


# -- what lies outside the repository: the environment's fingerprint, taken after the install ----

FROM_VENDOR = "install -q --no-index --find-links vendor -r requirements.txt"
# The venv's own pip, as the README's install input has it: the test that follows main's
# workflow runs it. The others install with uv (`uv pip install`, a real installer too: it
# resolves the -r includes and writes each distribution's RECORD as pip does, which is all the
# fingerprint reads) into the venv the command runs in (VIRTUAL_ENV), in milliseconds where pip
# takes 0.6-1 s of CPU a run; without its cache, so a wheel rebuilt under the same name is read
# anew. Without uv beside our Python, pip.
PIP_INSTALL = f"{LINK_ADK} && python -m pip {FROM_VENDOR}"
UV = shutil.which("uv", path=str(Path(sys.executable).parent))
INSTALL = f"{LINK_ADK} && {UV} pip {FROM_VENDOR} --no-cache" if UV else PIP_INSTALL
HELPER_AGENT = "import helper\nfrom scripted import agent\nroot_agent = agent(helper.INSTRUCTION)\n"


def wheel(path: Path, version: str, instruction: str) -> None:
    """A wheel of the distribution ``helper`` whose module says ``INSTRUCTION``."""
    files = {
        "helper/__init__.py": f"INSTRUCTION = {instruction!r}\n".encode(),
        f"helper-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: helper\nVersion: {version}\n".encode(),
        f"helper-{version}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = (
        "".join(
            f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
            for name, data in files.items()
        )
        + f"helper-{version}.dist-info/RECORD,,\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as out:
        for name, data in files.items():
            out.writestr(name, data)
        out.writestr(f"helper-{version}.dist-info/RECORD", record)


def helper_repo(tmp_path: Path, files: dict[str, str], wheels: dict[str, str]) -> tuple[Path, dict[str, str]]:
    """main: an agent that imports ``helper``, which only INSTALL puts in its venv (from the
    vendor/ wheels), and its dataset, committed; and the environment an install needs."""
    repo = new_repo(tmp_path / "repo", {**PACKAGE_INIT, "shop/agent.py": HELPER_AGENT, **files})
    for version, instruction in wheels.items():
        wheel(repo / "vendor" / f"helper-{version}-py3-none-any.whl", version, instruction)
    shutil.copy(SCRIPTED, repo / "scripted.py")
    (repo / "agent-eval.toml").write_text(CONFIG.format(agent="shop.agent:root_agent"))
    (repo / ".gitignore").write_text("agent-eval-results/\ncalls.txt\n__pycache__/\n")
    golden(repo / DATASET, QUESTIONS)
    commit(repo, "the agent, its dependencies and its dataset")
    (tmp_path / "runner-temp").mkdir()
    return repo, {"RUNNER_TEMP": str(tmp_path / "runner-temp")}


def installed_repo(tmp_path: Path, files: dict[str, str], wheels: dict[str, str]) -> tuple[Path, dict[str, str]]:
    """:func:`helper_repo` with its baseline made in the venv INSTALL made; a PR branch checked out."""
    repo, env = helper_repo(tmp_path, files, wheels)
    python = install_environment(INSTALL, repo, {**os.environ, **env}, io.StringIO())
    assert run(repo, "baseline", "update", "--agent-python", python)[1] == 2 * QUESTIONS * BASELINE_RUNS
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    return repo, env


def test_a_pin_bumped_in_a_requirements_file_included_by_r(tmp_path: Path) -> None:
    files = {"requirements.txt": "-r requirements/base.txt\n", "requirements/base.txt": "helper==1.0\n"}
    repo, env = installed_repo(tmp_path, files, {"1.0": "Answer prices.", "2.0": "BROKEN"})
    pr(repo, "requirements/base.txt", "helper==2.0\n")
    assert_caught(repo, "--install", INSTALL, env=env)
    reason = results(repo)["selection"]["selected"][0]["reason"]
    assert reason == "the agent's environment changed: distribution helper 1.0 → 2.0", reason


def test_a_vendored_wheel_swapped_under_the_same_name(tmp_path: Path) -> None:
    repo, env = installed_repo(tmp_path, {"requirements.txt": "helper==1.0\n"}, {"1.0": "Answer prices."})
    wheel(repo / "vendor" / "helper-1.0-py3-none-any.whl", "1.0", "BROKEN")
    commit(repo, "helper 1.0, rebuilt")
    assert_caught(repo, "--install", INSTALL, env=env)
    reason = results(repo)["selection"]["selected"][0]["reason"]
    assert reason == "the agent's environment changed: distribution helper 1.0 (other files)", reason


def test_a_file_looked_for_and_not_found_is_an_input_the_pr_may_add(tmp_path: Path) -> None:
    """An override the agent tries to open (a stat, as ``is_file()``, is not audited: an open is)."""
    agent = (
        "from pathlib import Path\nfrom scripted import agent\n"
        "try:\n    instruction = (Path(__file__).parents[1] / 'prompts' / 'override.md').read_text()\n"
        "except FileNotFoundError:\n    instruction = 'Answer prices.'\n"
        "root_agent = agent(instruction)\n"
    )
    repo = repo_with(tmp_path, {**PACKAGE_INIT, "shop/agent.py": agent})
    baseline = stored(next((repo / "evaluation" / "baselines").rglob("*.json")).read_text())["datasets"][0]
    assert all(q["inputs"]["prompts/override.md"] == "missing" for q in baseline["questions"])
    pr(repo, "prompts/override.md", "BROKEN\n")
    assert_caught(repo)


def test_a_pr_re_runs_exactly_the_questions_whose_inputs_it_touched(tmp_path: Path) -> None:
    """The tool reads one data file per item, in the question's own task: a PR that changes the
    plum's re-runs the plum question alone and reuses the other five."""
    agent = (
        "import json\nfrom pathlib import Path\nfrom google.adk.agents import LlmAgent\nfrom scripted import ScriptedModel\n"
        "DATA = Path(__file__).parents[1] / 'data'\n"
        "def lookup(item: str) -> dict:\n"
        '    """Looks up the price of an item."""\n'
        "    return json.loads((DATA / f'{item}.json').read_text())\n"
        "root_agent = LlmAgent(name='counting', model=ScriptedModel(), instruction='Answer prices.', tools=[lookup])\n"
    )
    data = {
        f"data/{item}.json": json.dumps({"item": item, "price": price})
        for item, price in (("apple", 1), ("pear", 2), ("plum", 3), ("fig", 4))
    }
    repo = repo_with(tmp_path, {**PACKAGE_INIT, "shop/agent.py": agent, **data})
    pr(repo, "data/plum.json", json.dumps({"item": "plum", "price": 30}))
    out, calls = run(repo, "check", "--base", "main")
    assert calls == 2, out  # q02, the one plum question of six
    (dataset,) = results(repo)["datasets"]
    assert dataset["reused"] == (QUESTIONS - 1) * BASELINE_RUNS
    assert [q["id"] for q in dataset["questions"] if not q["reused"]] == ["q02"]


def test_baseline_update_and_evaluate_run_the_agent_in_the_venv_their_install_command_makes(tmp_path: Path) -> None:
    """What main's workflow runs (``baseline update`` with the install input) from a terminal:
    the agent imports ``helper``, which only the install command's venv has."""
    repo, env = helper_repo(tmp_path, {"requirements.txt": "helper==1.0\n"}, {"1.0": "Answer prices."})
    out, calls = run(repo, "baseline", "update", "--install", PIP_INSTALL, env=env)
    (venv,) = (tmp_path / "runner-temp").glob("agent-eval-venv-*")
    assert f"the agent's Python: {venv}/bin/python (the venv the install command made: {PIP_INSTALL}" in out, out
    assert calls == 2 * QUESTIONS * BASELINE_RUNS, out
    (written,) = (repo / "evaluation" / "baselines").rglob("*.json")
    questions = stored(written.read_text())["datasets"][0]["questions"]
    assert len(questions) == QUESTIONS * BASELINE_RUNS, questions  # one row a run
    assert all(q["status"] == "ok" and q["scores"]["tool_usage_accuracy"]["value"] == 1.0 for q in questions), questions
    out, calls = run(repo, "evaluate", "--install", PIP_INSTALL, env=env)
    # Another venv: the baselines just written are files the install command could read.
    assert f"the agent's Python: {venv.parent}/agent-eval-venv-" in out and "(the venv the install command made: " in out, out
    (dataset,) = results(repo)["datasets"]
    assert calls == 2 * QUESTIONS and all(q["status"] == "ok" for q in dataset["questions"]), out
    # Without it the agent cannot import helper: the venv made it run, not ours.
    failed, _ = run(repo, "evaluate", code=2, env=env)
    assert "No module named 'helper'" in failed, failed


def test_another_install_command_that_installs_the_same_reuses_and_a_pin_in_requirements_re_runs(tmp_path: Path) -> None:
    """What the command installed counts, not its text: a baseline made by uv, a check by pip."""
    repo, env = installed_repo(tmp_path, {"requirements.txt": "helper==1.0\n"}, {"1.0": "Answer prices."})
    pr(repo, "README.md", "# shop\n\nInstalled from vendor/.\n")
    out, calls = run(repo, "check", "--base", "main", "--all", "--install", PIP_INSTALL, env=env)
    assert calls == 0, out
    assert results(repo)["datasets"][0]["reused"] == QUESTIONS * BASELINE_RUNS
    pr(repo, "requirements.txt", "helper>=1.0\n")  # the same version installed: the file alone says another environment
    out, calls = run(repo, "check", "--base", "main", "--install", INSTALL, env=env)
    assert calls == 2 * QUESTIONS, out
    assert results(repo)["selection"]["selected"][0]["reason"] == "the agent's environment changed: requirements.txt"


# -- the agent as an installable package (google/adk-samples' layout), installed editable as CI does

PACKAGE_PYPROJECT = """[build-system]
requires = ["flit_core"]
build-backend = "flit_core.buildapi"

[project]
name = "shop"
version = "0.1.0"
description = "A shop's agent."
readme = "README.md"
dependencies = ["helper==1.0"]
"""
PACKAGE_FROM_VENDOR = "install -q --no-index --find-links vendor -e ."
PIP_PACKAGE = f"{LINK_ADK} && python -m pip {PACKAGE_FROM_VENDOR}"
UV_PACKAGE = f"{LINK_ADK} && {UV} pip {PACKAGE_FROM_VENDOR} --no-cache" if UV else PIP_PACKAGE


@pytest.fixture(scope="module")
def flit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build backend's wheel, from the package index pip is configured with (a local one here)."""
    folder = tmp_path_factory.mktemp("backend")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:", "-d", str(folder), "flit_core"],
        capture_output=True,
        text=True,
        check=False,
    )
    found = next(folder.glob("flit_core-*.whl"), None)
    if found is None:
        pytest.skip(f"no flit_core wheel from the package index: {done.stderr[-300:]}")
    return found


def package_repo(tmp_path: Path, backend: Path) -> tuple[Path, dict[str, str]]:
    """main: the agent as the package ``shop`` (its README its long description) that needs
    ``helper``, its baseline made by ``baseline update --install`` with uv; a PR branch checked out."""
    repo, env = helper_repo(
        tmp_path, {"pyproject.toml": PACKAGE_PYPROJECT, "README.md": "# shop\n"}, {"1.0": "Answer prices.", "2.0": "BROKEN"}
    )
    shutil.copy(backend, repo / "vendor" / backend.name)
    commit(repo, "its build backend")
    assert run(repo, "baseline", "update", "--install", UV_PACKAGE, env=env)[1] == 2 * QUESTIONS * BASELINE_RUNS
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    return repo, env


def test_an_installed_agent_package_re_runs_nothing_for_its_readme_version_description_or_tool_tables(tmp_path: Path, flit: Path) -> None:
    """In CI the agent's own package is installed (pip, where its baseline was made with uv): what
    it imports is read from the repository (observed), its metadata is nothing the agent runs."""
    repo, env = package_repo(tmp_path, flit)
    # One PR commit changing each of them (one check: had any of them re-run a question, it would have).
    (repo / "README.md").write_text((repo / "README.md").read_text() + "\nHow to run it.\n")
    pyproject = PACKAGE_PYPROJECT.replace('version = "0.1.0"', 'version = "0.2.0"')
    pyproject = pyproject.replace("A shop's agent.", "The shop's pricing agent.") + "\n[tool.ruff]\nline-length = 100\n"
    pr(repo, "pyproject.toml", pyproject)
    out, calls = run(repo, "check", "--base", "main", "--all", "--install", PIP_PACKAGE, env=env)
    assert calls == 0, out
    assert results(repo)["datasets"][0]["reused"] == QUESTIONS * BASELINE_RUNS
    pr(repo, "pyproject.toml", pyproject.replace("helper==1.0", "helper==2.0"))
    assert_caught(repo, "--install", PIP_PACKAGE, env=env)
    reason = results(repo)["selection"]["selected"][0]["reason"]
    assert reason == "the agent's environment changed: distribution helper 1.0 → 2.0, pyproject.toml dependencies", reason
