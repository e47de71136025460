"""A team's first day: a fresh repository holding a copy of a public ADK sample
(``tests/apps/adk_customer_service``, shaped like google/adk-samples
``python/agents/customer-service`` and pinned to google-adk 1.x), and the model that answers it
offline: a script for the loopback Gemini stand-in (``tests/fakes/gemini_server.py``) that calls
the tools the request declares, as a model would, and answers from their results."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.helpers.repos import commit, new_repo

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "apps" / "adk_customer_service"
AGENT = "customer_service.agent:root_agent"
# What a user says -> the tool a model calls for it, when the agent declares that tool.
TOOL_FOR: dict[str, tuple[str, dict[str, Any]]] = {
    "cart": ("access_cart_information", {"customer_id": "123"}),
    "discount": ("approve_discount", {"discount_type": "percentage", "value": 10, "reason": "loyal customer"}),
}
GREETING = "Hi Alex! How can I help you with your garden today?"


def sample_repo(repo: Path) -> Path:
    """A git repository on main (one commit) with the sample as its team keeps it: the package,
    its pyproject.toml, a .gitignore leaving out its .venv."""
    new_repo(repo)
    shutil.copytree(SAMPLE / "customer_service", repo / "customer_service", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(SAMPLE / "pyproject.toml", repo / "pyproject.toml")
    (repo / ".gitignore").write_text(".venv\n__pycache__/\n")
    commit(repo, "the customer service agent")
    return repo


def customer_service_model(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer's parts to a generateContent request: a tool's result is summed up; a user turn
    that asks for a declared tool calls it; anything else is greeted."""
    declared = {d["name"] for tool in body.get("tools") or [] for d in tool.get("functionDeclarations") or []}
    parts = (body.get("contents") or [{}])[-1].get("parts") or []
    results = [p["functionResponse"] for p in parts if "functionResponse" in p]
    if results:
        return [{"text": f"Done: {json.dumps(results[0].get('response'), sort_keys=True)}"}]
    said = " ".join(str(p.get("text", "")) for p in parts).lower()
    for word, (tool, args) in TOOL_FOR.items():
        if word in said and tool in declared:
            return [{"functionCall": {"name": tool, "args": args}}]
    return [{"text": GREETING}]


def questions(agent_name: str) -> dict[str, Any]:
    """The golden questions the team writes in place of init's draft."""

    def question(qid: str, said: str, calls: list[tuple[str, dict[str, Any]]], **more: Any) -> dict[str, Any]:
        reference = {"reference_tool_interactions": [{"tool_name": t, "input_arguments": a} for t, a in calls], **more}
        return {"id": qid, "user_inputs": [said], "agents_evaluated": [agent_name], "reference_data": reference}

    return {
        "golden_questions": [
            question("q_greeting_01", "hi there", [], reference_response=GREETING),
            question("q_cart_01", "what is in my cart?", [TOOL_FOR["cart"]]),
            question("q_discount_01", "can I get a discount?", [TOOL_FOR["discount"]], reference_state_variables={"discount_applied": 10}),
        ]
    }
