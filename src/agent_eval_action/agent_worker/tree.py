"""The agent's tree as plain data, for ``init`` to draft a first dataset from: each agent's name,
description and model, its tools with their parameter schemas (as JSON schema), its sub-agents.

It runs in the worker, under the agent's own Python: the user's agent is imported there, never
in our process. Nothing here calls a tool or the model.
"""

from __future__ import annotations

from typing import Any


def agent_tree(agent: Any) -> dict[str, Any]:
    """``{name, description, kind, model, tools: [{name, description, parameters, agent}],
    toolsets: [type names], sub_agents: [tree, ...]}``."""
    model = getattr(agent, "model", None)
    model_name = model if isinstance(model, str) else getattr(model, "model", None)
    tools: list[dict[str, Any]] = []
    toolsets: list[str] = []
    for tool in getattr(agent, "tools", None) or []:
        described = _tool(tool)
        if described is None:
            # A toolset lists its tools only when asked with a context (an MCP server is then
            # started): named, not opened.
            toolsets.append(type(tool).__name__)
        else:
            tools.append(described)
    return {
        "name": str(getattr(agent, "name", "") or ""),
        "description": str(getattr(agent, "description", "") or ""),
        "kind": type(agent).__name__,
        "model": model_name if isinstance(model_name, str) else None,
        "tools": tools,
        "toolsets": toolsets,
        "sub_agents": [agent_tree(sub) for sub in getattr(agent, "sub_agents", None) or []],
    }


def _tool(tool: Any) -> dict[str, Any] | None:
    from google.adk.tools.base_tool import BaseTool

    if not isinstance(tool, BaseTool):
        if not callable(tool):
            return None
        from google.adk.tools.function_tool import FunctionTool

        tool = FunctionTool(tool)
    try:
        declaration = tool._get_declaration()
    except Exception:  # noqa: BLE001 - a tool whose schema ADK cannot build is still named
        declaration = None
    parameters: dict[str, Any] = {}
    if declaration is not None:
        if declaration.parameters_json_schema:
            parameters = dict(declaration.parameters_json_schema)
        elif declaration.parameters is not None:
            parameters = _json_schema(declaration.parameters.model_dump(mode="json", exclude_none=True))
    return {
        "name": str(tool.name),
        "description": str(tool.description or ""),
        "parameters": parameters,
        "agent": type(tool).__name__ == "AgentTool",
    }


def _json_schema(schema: Any) -> Any:
    """google-genai's ``Schema`` (types in capitals: ``OBJECT``) as JSON schema (``object``)."""
    if isinstance(schema, dict):
        return {key: (value.lower() if key == "type" and isinstance(value, str) else _json_schema(value)) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_json_schema(item) for item in schema]
    return schema
