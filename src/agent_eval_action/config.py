"""The one configuration object, from ``agent-eval.toml`` or ``[tool.agent-eval]`` in
``pyproject.toml``, with command-line flags laid over it through the same validation."""

from __future__ import annotations

import json
import os
import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent_eval_action.errors import ConfigError

CONFIG_FILE = "agent-eval.toml"
DEFAULT_DATASETS = ["evaluation/datasets/*.json", "evaluation/datasets/*.csv", "evaluation/datasets/*.jsonl"]


class Price(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached: float | None = Field(default=None, ge=0)


class Config(BaseModel):
    """Settings of a run. Keys may be written with hyphens or underscores."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    datasets: list[str] = Field(default_factory=lambda: list(DEFAULT_DATASETS))
    # Metric names to compute; empty means every registered deterministic metric.
    metrics: list[str] = Field(default_factory=list)
    output_dir: str = "agent-eval-results"
    seed: int = 0
    # Processes that score a large recorded table; 0 picks one per CPU (at most 4) plus this
    # one, which mostly reads and hands out batches.
    workers: int = Field(default=0, ge=0)
    # The agent: `module:attr` or an agent directory run in this process, or a deployed ADK API server.
    agent: str | None = None
    agent_url: str | None = None
    # App name on the API server (default: each question's first agents_evaluated entry).
    app_name: str | None = None
    # Environment variable holding a bearer token for agent_url (e.g. an identity token).
    agent_auth_env: str = "AGENT_EVAL_AUTH_TOKEN"
    concurrency: int = Field(default=8, ge=1, le=1024)
    runs: int = Field(default=1, ge=1, le=100)
    timeout: float = Field(default=300.0, gt=0)  # seconds per attempt of one question
    retries: int = Field(default=3, ge=0, le=20)  # on 429 / 503 / deadline errors
    progress: Literal["auto", "always", "never"] = "auto"
    capture_spans: bool = True
    # USD per million tokens by model-name prefix, laid over the built-in table.
    prices: dict[str, Price] = Field(default_factory=dict)
    source: str | None = Field(default=None, exclude=True)

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, names: list[str]) -> list[str]:
        from agent_eval_action.metrics import REGISTRY

        unknown = [name for name in names if name not in REGISTRY]
        if unknown:
            raise ValueError(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(sorted(REGISTRY))}")
        return names

    def price_table(self) -> dict[str, dict[str, float]]:
        table = {name: dict(entry) for name, entry in default_prices().items()}
        for name, price in self.prices.items():
            table[name] = {k: v for k, v in price.model_dump().items() if v is not None}
        return table

    def worker_count(self) -> int:
        cpus = os.cpu_count() or 1
        return self.workers or (1 if cpus < 2 else min(cpus, 4) + 1)

    def with_overrides(self, **flags: Any) -> Config:
        """A copy with every flag that was given (not ``None``) applied and validated."""
        data = self.model_dump()
        data.update({key: value for key, value in flags.items() if value is not None})
        return _validate(data, self.source or "command line")


@cache
def default_prices() -> dict[str, dict[str, float]]:
    text = resources.files("agent_eval_action").joinpath("data/prices.json").read_text(encoding="utf-8")
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


def _normalize(data: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in data.items():
        key = key.replace("-", "_")
        out[key] = value
    return out


def _validate(data: dict[str, Any], source: str) -> Config:
    try:
        config = Config.model_validate(_normalize(data))
    except ValidationError as error:
        first = error.errors()[0]
        setting = ".".join(str(part) for part in first["loc"]) or "(top level)"
        reason = first["msg"] if first["type"] != "extra_forbidden" else "unknown setting (check the spelling)"
        raise ConfigError(f"{source}: {setting}", reason) from None
    config.source = source
    return config


def load_config(path: str | None = None, cwd: str | Path = ".") -> Config:
    """Reads ``path``, else ``agent-eval.toml``, else ``[tool.agent-eval]`` of ``pyproject.toml``, else defaults."""
    base = Path(cwd)
    if path is not None:
        file = Path(path)
        if not file.is_file():
            raise ConfigError(str(path), "config file not found")
        return _validate(_read_toml(file, table=None if file.name != "pyproject.toml" else "tool.agent-eval"), str(path))
    if (base / CONFIG_FILE).is_file():
        return _validate(_read_toml(base / CONFIG_FILE, table=None), CONFIG_FILE)
    pyproject = base / "pyproject.toml"
    if pyproject.is_file():
        data = _read_toml(pyproject, table="tool.agent-eval")
        if data:
            return _validate(data, "pyproject.toml [tool.agent-eval]")
    return Config()


def _read_toml(file: Path, table: str | None) -> dict[str, Any]:
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(str(file), f"not valid TOML: {error}") from None
    if table:
        for part in table.split("."):
            data = data.get(part, {})
    return data
