"""The tool and agent names a dataset's references give, checked against the agent's tree.

A reference to a tool or sub-agent the agent does not have (``data_analyst`` where the agent
has ``data_analyst_agent``) can never be met: every run of the question would fail on it, and
nothing would say why. The tree (``agent_worker.tree``: each agent's name, its tools, its
sub-agents) is what ``init`` drafts from; here each name a question's references give is looked
up in it, and one that is not there is told with the closest the agent has.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_eval_action.models.questions import Question
from agent_eval_action.system.errors import AgentLoadError

# Added by ADK to every agent with sub-agents (or a parent): a tool no tree lists.
TRANSFER = "transfer_to_agent"


@dataclass(frozen=True)
class AgentNames:
    """What the agent has: its agents' names (and the app's, which stands for its root agent),
    its tools' names, and whether a toolset (an MCP server's, whose tools are listed only when it
    is opened) may hold tools not named here."""

    agents: frozenset[str]
    tools: frozenset[str]
    toolsets: tuple[str, ...] = ()

    @classmethod
    def of(cls, tree: dict[str, Any]) -> AgentNames:
        agents: set[str] = set()
        tools: set[str] = set()
        toolsets: list[str] = []

        def walk(node: dict[str, Any]) -> None:
            agents.add(str(node.get("name") or ""))
            tools.update(str(tool.get("name") or "") for tool in node.get("tools") or [])
            toolsets.extend(str(kind) for kind in node.get("toolsets") or [])
            for sub in node.get("sub_agents") or []:
                walk(sub)

        walk(tree)
        if len(agents) > 1:
            tools.add(TRANSFER)
        agents.add(str(tree.get("app_name") or ""))  # the app's name stands for its root agent
        return cls(frozenset(agents - {""}), frozenset(tools - {""}), tuple(toolsets))


@dataclass(frozen=True)
class UnknownName:
    """A name a question's reference gives that the agent does not have."""

    dataset: str
    question: str
    where: str  # the reference's field, as a JSON path from the question
    name: str
    kind: str  # "tool", or "agent or tool" (a trajectory's step)
    closest: str | None

    def message(self) -> str:
        hint = f": did you mean {self.closest}?" if self.closest else ""
        return (
            f"{self.dataset}: question {self.question!r}, {self.where} names {self.kind} {self.name!r}, which the agent does not have{hint}"
        )


def _closest(name: str, known: Iterable[str]) -> str | None:
    pool = sorted(known)
    found = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    if found:
        return found[0]
    # A name that is a part of one of the agent's (data_analyst in data_analyst_agent).
    within = [k for k in pool if name.lower() in k.lower() or k.lower() in name.lower()]
    return within[0] if len(within) == 1 else None


def unknown_names(names: AgentNames, dataset: str, questions: Sequence[Question]) -> list[UnknownName]:
    """Each reference to a tool (``reference_tool_interactions``, ``turn_tool_calls``) or a
    trajectory step (``reference_trajectory``: an agent, a tool, or the app's name given in
    ``agents_evaluated``) that ``names`` does not hold, once per question and name. Tool names
    are not checked when a toolset may hold tools unnamed."""
    out: list[UnknownName] = []
    for question in questions:
        seen: set[str] = set()
        ref = question.reference_data
        calls: list[tuple[str, str]] = [
            (f"reference_data.reference_tool_interactions[{i}].tool_name", call.tool_name)
            for i, call in enumerate(ref.reference_tool_interactions or [])
        ]
        calls += [
            (f"reference_data.turn_tool_calls[{t}][{i}].tool_name", call.tool_name)
            for t, turn in enumerate(ref.turn_tool_calls or [])
            for i, call in enumerate(turn)
        ]
        if not names.toolsets:
            for where, name in calls:
                if name not in names.tools and name not in seen:
                    seen.add(name)
                    out.append(UnknownName(dataset, question.id, where, name, "tool", _closest(name, names.tools)))
        steps = names.agents | names.tools | set(question.agents_evaluated)
        for i, step in enumerate(ref.reference_trajectory or []):
            if step in steps or step in seen or (names.toolsets and step not in names.agents):
                continue
            seen.add(step)
            where = f"reference_data.reference_trajectory[{i}]"
            out.append(UnknownName(dataset, question.id, where, step, "agent or tool", _closest(step, names.agents | names.tools)))
    return out


def agent_names(agent: str, *, python: str | None, cwd: Path) -> AgentNames:
    """The agent's names, read in one worker process under its Python (as ``init`` reads its
    tree). Raises AgentLoadError when it cannot be loaded or described."""
    from agent_eval_action.run.workers.process import RemoteError
    from agent_eval_action.service.scaffold import describe_agent

    try:
        return AgentNames.of(describe_agent(agent, python=python, cwd=cwd))
    except RemoteError as error:
        raise AgentLoadError("--agent", f"{agent}: describing its tools and sub-agents failed: {error}") from None
