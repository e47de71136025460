"""The agent's environment fingerprint: what the agent reads outside the repository, where its
observed inputs (``repo/observed.py``) do not look. A hash of the interpreter (version,
implementation, platform), every distribution installed for it (name, version, its RECORD's
hash: ``agent_worker/environment.py`` reports them, run under the agent's Python), the agent
reference, ``agent-python`` (a path in the repository with its bytes; another one by what it
reports), the ``install`` command that made its venv, the ``[agent-env]`` settings, and the dependency files at the top and in the agent's
folder (``requirements*.txt``, ``pyproject.toml``, lock files: ``agent_code.DEPENDENCY_FILES``). A question's scores are reused only under the same
fingerprint; a PR that changes it (a bumped pin, a swapped wheel, another agent) re-runs them.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from importlib import resources
from pathlib import Path

from agent_eval_action.config import Config
from agent_eval_action.repo.agent_code import DEPENDENCY_FILES
from agent_eval_action.repo.git import Workspace
from agent_eval_action.repo.observed import blob_hash
from agent_eval_action.run import worker_start
from agent_eval_action.run.agent_env import agent_environment
from agent_eval_action.run.environments import COMMAND


def environment_fingerprint(config: Config, workspace: Workspace) -> str | None:
    """The fingerprint of the environment ``config``'s agent runs in; None for an agent that is
    not run here (agent-url, none) or an interpreter that cannot say (then nothing is reused)."""
    if not config.agent or config.agent_url:
        return None
    python = worker_start.interpreter(config.agent_python)
    env = agent_environment(
        os.environ, also_withhold=[config.agent_auth_env], pass_through=config.agent_env.allow, remove=config.agent_env.withhold
    )
    script = resources.files("agent_eval_action").joinpath("agent_worker", "environment.py")
    with resources.as_file(script) as path:
        try:
            done = subprocess.run(
                [python, str(path)], cwd=config.import_root(), env=env, capture_output=True, text=True, timeout=120, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    if done.returncode != 0:
        return None
    try:
        described = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    interpreter: dict[str, str] = {"as_given": config.agent_python or ""}
    if config.agent_python and os.sep in config.agent_python:
        inside = workspace.rel(config.agent_python)
        if not inside.startswith("/") and not inside.startswith("../"):
            try:
                interpreter["bytes"] = blob_hash(workspace.file(inside).read_bytes())
            except OSError:
                interpreter["bytes"] = "missing"
        else:
            interpreter = {}  # outside the repository (the venv an install made): known by what it reports
    # The dependency files themselves too: a pin changed without an install to apply it still
    # says the PR means another environment.
    folders = dict.fromkeys([workspace.root, config.import_root().resolve()])
    dependencies = {
        workspace.rel(file): blob_hash(file.read_bytes())
        for folder in folders
        for pattern in DEPENDENCY_FILES
        for file in sorted(folder.glob(pattern))
        if file.is_file()
    }
    if config.origin.file and (workspace.cwd / config.origin.file).is_file():
        # Our config (its metrics, the agent's settings): a change to it re-runs, as it always did.
        dependencies[workspace.rel(config.origin.file)] = blob_hash((workspace.cwd / config.origin.file).read_bytes())
    agent = config.agent
    if ":" not in agent and os.path.isdir(agent):
        agent = "directory " + workspace.rel(agent)  # the same agent, from whichever folder the run starts
    # The install command that made the agent's venv (run/environments.py), where one did.
    made_by = Path(python).parent.parent / COMMAND
    install = made_by.read_text(encoding="utf-8", errors="replace") if os.sep in python and made_by.is_file() else None
    payload = {
        "described": described,
        "install": install,
        "dependency_files": dependencies,
        "agent": agent,
        "agent_python": interpreter,
        "agent_env": {"allow": sorted(config.agent_env.allow), "withhold": sorted(config.agent_env.withhold)},
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:20]
