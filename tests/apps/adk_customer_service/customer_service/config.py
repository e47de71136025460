"""The agent's settings (the sample reads them with pydantic-settings; plain values here)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class AgentModel:
    name: str = "customer_service_agent"
    model: str = "gemini-2.5-flash"


@dataclass(frozen=True)
class Config:
    agent_settings: AgentModel = field(default_factory=AgentModel)
    app_name: str = "customer_service_app"
