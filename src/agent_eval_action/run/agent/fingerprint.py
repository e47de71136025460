"""The agent's environment fingerprint: what can change the agent's behaviour outside the files
it reads in the repository (its observed inputs, ``repo/observed.py``). Named parts, each a
short value, so a change is said by name ("distribution tabulate 0.9.0 → 0.10.0",
"pyproject.toml dependencies"):

- ``interpreter``: implementation, version and machine;
- ``distribution <name>``: each distribution installed for the agent's Python by version and a
  hash of the files it installed for import (``agent_worker/environment.py`` reports them, run
  under the agent's Python), not its metadata: the README a long description carries, the
  installer, the venv's scripts and bytecode are not what the agent runs, and a uv-made venv is
  a pip-made one at the same versions. The repository's own package (installed from a folder
  inside it) is there by name only when editable (what it imports is read from the repository:
  observed) and by its installed files, not its version, when copied;
- ``agent``, ``agent-python`` (a path in the repository with its bytes; another one by what it
  reports) and ``agent-env`` (the ``[agent-env]`` settings);
- the dependency files at the top and in the agent's folder (``agent_code.DEPENDENCY_FILES``) by
  their bytes, but a ``pyproject.toml`` by its dependency sections only (``<path> dependencies``):
  its tool tables, version and description change nothing the agent runs;
- our config file (its table only when it lives in a pyproject.toml).

Not the install command's text: what it installed is there. A question's scores are reused
only under the same fingerprint; a PR that changes a part (a bumped pin, a swapped wheel,
another agent) re-runs them, and the reason names the parts.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from agent_eval_action.config import Config
from agent_eval_action.repo.agent_code import DEPENDENCY_FILES
from agent_eval_action.repo.git import Workspace
from agent_eval_action.repo.observed import blob_hash
from agent_eval_action.run.agent.env import agent_environment
from agent_eval_action.run.workers import start as worker_start

DISTRIBUTION = "distribution "
REPOSITORY_CODE = "(the repository's code)"
# The tables of a pyproject.toml that say what is installed: PEP 621's, PEP 735's, the build's,
# and the installers' own (Poetry's dependency tables, uv's sources and overrides, PDM's groups).
DEPENDENCY_TABLES = (
    ("project", "dependencies"),
    ("project", "optional-dependencies"),
    ("project", "requires-python"),
    ("build-system",),
    ("dependency-groups",),
    ("tool", "poetry", "dependencies"),
    ("tool", "poetry", "dev-dependencies"),
    ("tool", "poetry", "group"),
    ("tool", "poetry", "source"),
    ("tool", "uv", "sources"),
    ("tool", "uv", "index"),
    ("tool", "uv", "constraint-dependencies"),
    ("tool", "uv", "override-dependencies"),
    ("tool", "uv", "dev-dependencies"),
    ("tool", "pdm", "dev-dependencies"),
)


@dataclass(frozen=True)
class Environment:
    """The agent's environment by its named parts (name -> a short value)."""

    parts: Mapping[str, str]

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(dict(self.parts), sort_keys=True).encode()).hexdigest()[:20]


def environment_fingerprint(config: Config, workspace: Workspace) -> Environment | None:
    """The environment ``config``'s agent runs in; None for an agent that is not run here
    (agent-url, none) or an interpreter that cannot say (then nothing is reused)."""
    if not config.agent or config.agent_url:
        return None
    described = _described(config, workspace)
    if described is None:
        return None
    parts: dict[str, str] = {
        "interpreter": f"{described.get('implementation')} {described.get('version')} {described.get('platform')}",
    }
    for dist in described.get("distributions", []):
        value = _distribution(dist)
        key = DISTRIBUTION + str(dist.get("name", ""))
        parts[key] = f"{parts[key]}, {value}" if key in parts else value  # two versions on the path
    agent = config.agent
    if ":" not in agent and os.path.isdir(agent):
        agent = "directory " + workspace.rel(agent)  # the same agent, from whichever folder the run starts
    parts["agent"] = agent
    parts["agent-python"] = _agent_python(config, workspace)
    parts["agent-env"] = json.dumps({"allow": sorted(config.agent_env.allow), "withhold": sorted(config.agent_env.withhold)})
    # The dependency files themselves too: a pin changed without an install to apply it still
    # says the PR means another environment.
    folders = dict.fromkeys([workspace.root, config.import_root().resolve()])
    for folder in folders:
        for pattern in DEPENDENCY_FILES:
            for file in sorted(folder.glob(pattern)):
                if file.is_file():
                    name = workspace.rel(file)
                    if file.name == "pyproject.toml":
                        parts[f"{name} dependencies"] = _tables(file.read_bytes(), DEPENDENCY_TABLES)
                    else:
                        parts[name] = blob_hash(file.read_bytes())
    origin = config.origin
    if origin.file and (workspace.cwd / origin.file).is_file():
        # Our config (its metrics, the agent's settings): a change to it re-runs, as it always did.
        data = (workspace.cwd / origin.file).read_bytes()
        table = tuple(origin.table.split(".")) if origin.table else None
        parts[workspace.rel(origin.file)] = _tables(data, (table,)) if table else blob_hash(data)
    return Environment(parts)


def environment_changes(before: Mapping[str, str] | None, now: Environment | None) -> list[str]:
    """What differs between a baseline's environment parts (``before``) and ``now``, each named
    ("distribution helper 1.0 → 2.0", "requirements.txt"); one line when ``before`` was not
    recorded by parts (an older baseline) or no environment is known now."""
    if now is None:
        return ["the agent's environment could not be described here"]
    if before is None:
        return ["the agent's environment, recorded by an older version"]
    changed = []
    for name in sorted(set(before) | set(now.parts)):
        old, new = before.get(name), now.parts.get(name)
        if old == new:
            continue
        if not name.startswith(DISTRIBUTION):
            changed.append(f"{name} {old} → {new}" if name in ("interpreter", "agent") and old and new else name)
        elif old is None or new is None:
            changed.append(f"{name} {_version(new or old or '')} {'added' if old is None else 'removed'}")
        elif _version(old) != _version(new):
            changed.append(f"{name} {_version(old)} → {_version(new)}")
        else:
            changed.append(f"{name} {_version(new)} (other files)")
    return changed


def _distribution(dist: Mapping[str, Any]) -> str:
    """``1.0 #<files>``; the repository's own package by its files only, or by nothing when editable."""
    files = str(dist.get("files") or "")
    if dist.get("repository"):
        return f"{REPOSITORY_CODE} #{files}" if files else REPOSITORY_CODE
    return f"{dist.get('version', '')} #{files}"


def _version(value: str) -> str:
    return ", ".join(v.split(" #", 1)[0] for v in value.split(", "))


def _tables(data: bytes, tables: tuple[tuple[str, ...], ...]) -> str:
    """A hash of ``tables`` of a TOML file (the whole file's when it is not TOML)."""
    try:
        parsed: Any = tomllib.loads(data.decode())
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return blob_hash(data)
    kept = {}
    for path in tables:
        value = parsed
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None:
            kept[".".join(path)] = value
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()[:20]


def _described(config: Config, workspace: Workspace) -> dict[str, Any] | None:
    """What ``agent_worker/environment.py`` reports under the agent's Python; None when it cannot."""
    python = worker_start.interpreter(config.agent_python)
    env = agent_environment(
        os.environ, also_withhold=[config.agent_auth_env], pass_through=config.agent_env.allow, remove=config.agent_env.withhold
    )
    script = resources.files("agent_eval_action").joinpath("agent_worker", "environment.py")
    with resources.as_file(script) as path:
        try:
            done = subprocess.run(
                [python, str(path), str(workspace.root)],
                cwd=config.import_root(),
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    if done.returncode != 0:
        return None
    try:
        described = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return described if isinstance(described, dict) else None


def _agent_python(config: Config, workspace: Workspace) -> str:
    """``agent-python`` as given; a path in the repository with its bytes too. One outside it (the
    venv an install made) is known by what it reports: nothing of its own."""
    if not config.agent_python:
        return ""
    if os.sep not in config.agent_python:
        return config.agent_python
    inside = workspace.rel(config.agent_python)
    if inside.startswith(("/", "../")):
        return ""
    try:
        return f"{inside} {blob_hash(workspace.file(inside).read_bytes())}"
    except OSError:
        return f"{inside} missing"
