"""``init``: the files a repository needs to start, drafted from the agent itself.

The agent is user code: its tree (agents, tools and their parameters, sub-agents) is read in a
worker process under the agent's own Python (``agent_worker.tree``), never imported here. From
it comes a first golden dataset: one question per tool and per sub-agent, plus a greeting, with
the user's words and the references left as TODO for a person to fill in; the file loads as it
is. No file that exists is ever written over.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from agent_eval_action.repo.agent_code import agent_candidates
from agent_eval_action.system.errors import ConfigError

CONFIG = "agent-eval.toml"
DATASETS = "evaluation/datasets"
WORKFLOWS = {
    "agent-eval-pr.yml": ".github/workflows/agent-eval.yml",
    "agent-eval-baseline.yml": ".github/workflows/agent-eval-baseline.yml",
}
# The agent the shipped workflows name, replaced by the one init was given.
TEMPLATE_AGENT = "app.agent:root_agent"
TODO = "TODO"
# What local runs write (the config's default output_dir): never to be committed.
OUTPUT_DIR = "agent-eval-results"


@dataclass
class Scaffold:
    """What ``init`` did: the agent it drafted from (and whether it found it itself), the files
    written and those left alone because they exist, and the dataset it drafted."""

    agent: str | None
    detected: bool
    dataset: str
    written: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    questions: int = 0
    # ".gitignore" when init created it, or added the output folder to it; None: it was there.
    ignored: str | None = None
    # The workflows' ``install:`` command, from the repository's files; None: no file to install
    # from was found (requirements.txt, pyproject.toml or setup.py), the default written.
    install: str | None = None


def configured_agent(config: Path) -> str | None:
    """The ``agent`` an existing config names (init run again after it was set), else None."""
    import tomllib

    try:
        agent = tomllib.loads(config.read_text(encoding="utf-8")).get("agent")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return agent if isinstance(agent, str) and agent.strip() else None


def describe_agent(spec: str, *, python: str | None, cwd: Path) -> dict[str, Any]:
    """The agent's tree, from one worker process, with its ``app_name`` (raises AgentLoadError
    when it cannot load)."""
    from agent_eval_action.run.agent.env import agent_environment
    from agent_eval_action.run.workers.pool import WorkerPool
    from agent_eval_action.run.workers.start import WorkerSettings

    settings = WorkerSettings(
        agent=spec,
        python=python or sys.executable,
        cwd=cwd,
        env=agent_environment(os.environ, also_withhold=["AGENT_EVAL_AUTH_TOKEN"]),
        capture_spans=False,
        workers=1,
    )

    async def ask() -> dict[str, Any]:
        pool = WorkerPool(settings)
        try:
            await pool.start()
            # The app's name beside the tree: a trajectory may name the app for its root agent.
            return {**await pool.describe(), "app_name": pool.info.get("app_name")}
        finally:
            await pool.close()

    return asyncio.run(ask())


def _placeholder(schema: Any) -> Any:
    kind = schema.get("type") if isinstance(schema, dict) else None
    kind = kind if isinstance(kind, str) else "value"
    return f"{TODO} ({kind})"


def _tool_question(root: str, path: list[str], tool: dict[str, Any]) -> dict[str, Any]:
    where = path[-1]
    properties = (tool.get("parameters") or {}).get("properties") or {}
    arguments = {name: _placeholder(schema) for name, schema in properties.items()}
    return {
        "id": f"q_{where}_{tool['name']}_01",
        "user_inputs": [f"{TODO}: what a user says that needs {where} to call {tool['name']}"],
        "agents_evaluated": [root],
        "metadata": {
            "draft": f"init drafted this from {where}'s tool {tool['name']}: write the user's words, then the references marked {TODO}",
            # What the tool says it does, to write the user's words from (none when it says nothing).
            **({"tool_description": tool["description"]} if tool.get("description") else {}),
        },
        "reference_data": {
            "reference_tool_interactions": [{"tool_name": tool["name"], "input_arguments": arguments}],
            "reference_trajectory": [*path, tool["name"]],
            "reference_response": f"{TODO}: the answer you expect",
        },
    }


def draft_dataset(tree: dict[str, Any] | None) -> dict[str, Any]:
    """A golden dataset to fill in: a greeting (no tool calls expected), one question per tool of
    each agent (its arguments as TODO placeholders of their type) and one per sub-agent. Without
    a tree, the greeting alone, for an agent named ``my_agent``."""
    root = str((tree or {}).get("name") or "my_agent")
    questions: list[dict[str, Any]] = [
        {
            "id": "q_greeting_01",
            "user_inputs": ["Hi"],
            "agents_evaluated": [root],
            "metadata": {"draft": f"init drafted this: write the answer you expect where it says {TODO}"},
            "reference_data": {
                "reference_tool_interactions": [],
                "reference_trajectory": [root],
                "reference_response": f"{TODO}: the answer you expect",
            },
        }
    ]
    seen: set[str] = set()

    def visit(node: dict[str, Any], path: list[str]) -> None:
        for tool in node.get("tools") or []:
            question = _tool_question(root, path, tool)
            if question["id"] not in seen:
                seen.add(question["id"])
                questions.append(question)
        for sub in node.get("sub_agents") or []:
            name = str(sub.get("name") or "")
            if name and f"q_{name}_01" not in seen:
                seen.add(f"q_{name}_01")
                questions.append(
                    {
                        "id": f"q_{name}_01",
                        "user_inputs": [f"{TODO}: what a user says that {node.get('name')} should hand to {name}"],
                        "agents_evaluated": [root],
                        "metadata": {
                            "draft": f"init drafted this from the sub-agent {name}: write the user's words, then the references marked {TODO}",
                            **({"agent_description": sub["description"]} if sub.get("description") else {}),
                        },
                        "reference_data": {"reference_trajectory": [*path, name], "reference_response": f"{TODO}: the answer you expect"},
                    }
                )
            visit(sub, [*path, name])

    if tree:
        visit(tree, [root])
    return {"golden_questions": questions}


def config_text(agent: str | None, dataset: str) -> str:
    agent_line = f'agent = "{agent}"' if agent else f'# agent = "{TEMPLATE_AGENT}"   # your ADK agent: module:attr, or an agent directory'
    return (
        "# agent-eval-action's config (written by `python -m agent_eval_action init`); every setting:\n"
        "# docs/configuration.md in https://github.com/your-org/agent-eval-action\n"
        f'datasets = ["{Path(dataset).parent.as_posix()}/*.json"]\n'
        f"{agent_line}\n"
    )


DEFAULT_INSTALL = "pip install -r requirements.txt"


def install_command(root: Path) -> str | None:
    """How the workflows install the agent's dependencies: its requirements.txt, else the project
    itself (a pyproject.toml or setup.py, as google/adk-samples' agents are packaged); None when
    the repository has none of them."""
    if (root / "requirements.txt").is_file():
        return DEFAULT_INSTALL
    if (root / "pyproject.toml").is_file() or (root / "setup.py").is_file():
        return "pip install -e ."
    return None


def workflow_text(name: str, agent: str | None, install: str | None = None) -> str:
    text = resources.files("agent_eval_action.service").joinpath("workflows", name).read_text(encoding="utf-8")
    text = text.replace(f"install: {DEFAULT_INSTALL}", f"install: {install}") if install else text
    return text.replace(f"agent: {TEMPLATE_AGENT}", f"agent: {agent}") if agent else text


def write_new(root: Path, files: dict[str, str]) -> tuple[list[str], list[str]]:
    """Writes each file that does not exist (``x`` mode: not even a file created meanwhile is
    replaced); returns (written, skipped), paths relative to ``root``."""
    written, skipped = [], []
    for relative, text in files.items():
        path = root / relative
        if path.exists() or path.is_symlink():
            skipped.append(relative)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with path.open("x", encoding="utf-8") as handle:
                handle.write(text)
        except FileExistsError:
            skipped.append(relative)
            continue
        written.append(relative)
    return written, skipped


def ignore_output(root: Path, folder: str = OUTPUT_DIR) -> bool:
    """Adds ``folder/`` to ``root``'s ``.gitignore`` (made when missing) unless a line there
    already ignores it; the other lines are left as they are. True when it was added."""
    path = root / ".gitignore"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    if any(line.strip().strip("/") == folder for line in text.splitlines()):
        return False
    with path.open("a", encoding="utf-8") as handle:
        handle.write(("\n" if text and not text.endswith("\n") else "") + f"{folder}/\n")
    return True


def scaffold(root: Path, *, agent: str | None, agent_python: str | None) -> Scaffold:
    """Drafts and writes what a repository needs to start (see the module's docstring)."""
    # Named on the command line or in the config already there; else found (and said so).
    spec = agent or configured_agent(root / CONFIG)
    detected = False
    if spec is None:
        found = agent_candidates(root)
        if len(found) > 1:
            # Guessing between two is not ours, and a template written now would stay: init
            # never overwrites, so the run naming the agent could not draft its dataset.
            raise ConfigError(
                "agent",
                f"{len(found)} folders here each hold an agent ({', '.join(found)}): name the one to evaluate, "
                f"e.g. agent-eval init --agent {found[0]} (nothing was written)",
            )
        spec = found[0] if found else None
        detected = spec is not None
    tree = describe_agent(spec, python=agent_python, cwd=root) if spec else None
    name = re.sub(r"\W+", "_", str((tree or {}).get("name") or "my_agent"))
    dataset = f"{DATASETS}/{name}_golden.json"
    drafted = draft_dataset(tree)
    install = install_command(root)
    files = {
        CONFIG: config_text(spec, dataset),
        dataset: json.dumps(drafted, indent=2, ensure_ascii=False) + "\n",
        **{target: workflow_text(source, spec, install) for source, target in WORKFLOWS.items()},
    }
    written, skipped = write_new(root, files)
    ignored = ".gitignore" if ignore_output(root) else None
    return Scaffold(
        ignored=ignored,
        agent=spec,
        detected=detected,
        dataset=dataset,
        written=written,
        skipped=skipped,
        questions=len(drafted["golden_questions"]),
        install=install,
    )
