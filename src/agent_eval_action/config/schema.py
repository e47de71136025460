"""The settings of a run (:class:`Config`), their validation and the messages of a bad one, and
where a config came from (:class:`Origin`), which is never a setting."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, ValidationInfo, field_validator

from agent_eval_action.config.placement import moved
from agent_eval_action.config.tables import (
    AgentEnv,
    CustomMetricConfig,
    GateConfig,
    JudgeConfig,
    JudgeMetricConfig,
    Price,
    QuotaConfig,
    UserSimulatorConfig,
    negations_only,
    parse_quota,
)
from agent_eval_action.system.errors import ConfigError
from agent_eval_action.system.processes import agent_workers, processes
from agent_eval_action.text.spelling import did_you_mean, field_names, model_at

DEFAULT_DATASETS = ["evaluation/datasets/*.json", "evaluation/datasets/*.csv", "evaluation/datasets/*.jsonl"]


@dataclass(frozen=True)
class Origin:
    """Where a config came from and what this run laid over it: never a setting (not validated,
    not dumped, not compared), and replaced whole (:meth:`Config.with_origin`), never changed."""

    # The file (and table) as messages name it, "command line", or None: the defaults made in code.
    source: str | None = None
    # The file the settings came from (None: defaults and flags only), and the TOML table in it.
    file: str | None = None
    table: str | None = None
    # Whether the user named that file (--config): the base's config is then looked for under
    # the same name first; else the base's own search finds it.
    named: bool = False
    # The project's folder (absolute): the config file's, else the repository's top. The config's
    # paths were written relative to it (and are held relative to the working directory); the
    # agent and custom metrics are imported from it. None: a Config made in code (the working directory).
    folder: str | None = None
    # That folder as its paths were rewritten from it: relative to the working directory ("." when it is).
    moved_from: str = "."
    # Where custom metrics are imported from, when not ``folder``: in a PR check, a copy of the
    # base's metric modules made outside the PR's tree (service/steps.base_metrics).
    metrics_folder: str | None = None
    # Gate settings given explicitly for this run (the action's max-regression input): laid over
    # the gate's rules wherever those come from.
    gate_override: tuple[tuple[str, Any], ...] = ()
    # The settings given explicitly for this run (flags, action inputs, the Python API's
    # arguments), laid over the config file: those the gate takes from the base still apply,
    # and are listed as changes.
    given: frozenset[str] = frozenset()


class Config(BaseModel):
    """Settings of a run. Keys may be written with hyphens or underscores."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    datasets: list[str] = Field(default_factory=lambda: list(DEFAULT_DATASETS))
    # Metrics of the user's own, by name: `[custom-metrics.NAME] function = "module:function"`.
    custom_metrics: dict[str, CustomMetricConfig] = Field(default_factory=dict)
    # Metric names to compute; empty means every registered deterministic metric.
    metrics: list[str] = Field(default_factory=list)
    output_dir: str = "agent-eval-results"
    seed: int = 0
    # How many processes do the run's parallel work: the agent's worker processes (questions
    # spread over them), or the processes that score a large recorded table beside this one,
    # which reads it and hands out batches (with 1, this one reads and scores alone). 0: one per
    # CPU, at most 4, and for the agent no more than its questions need (``agent_worker_count``).
    workers: int = Field(default=0, ge=0)
    # The agent: `module:attr` or an agent directory, run in worker processes under agent_python
    # (default: this interpreter), or in this process with in_process; or a deployed ADK API server.
    agent: str | None = None
    agent_python: str | None = None
    in_process: bool = False
    # The agent's workers forked by one process that loaded the agent once (run/workers/zygote.py);
    # false: each worker imports ADK and the agent itself (for an agent that misbehaves when forked).
    warm_start: bool = True
    agent_env: AgentEnv = Field(default_factory=AgentEnv)
    # A directory where the agent's model calls are recorded and replayed (agent_worker/model/cache.py).
    model_cache: str | None = None
    agent_url: str | None = None
    # App name on the API server (default: each question's first agents_evaluated entry).
    app_name: str | None = None
    # Environment variable holding a bearer token for agent_url (e.g. an identity token).
    agent_auth_env: str = "AGENT_EVAL_AUTH_TOKEN"
    # Questions in flight: "auto" adapts to the model API (AIMD, up to max_concurrency), or a fixed number.
    concurrency: int | Literal["auto"] = "auto"
    max_concurrency: int = Field(default=64, ge=1, le=1024)
    # Spending limits of one run (the agent's model calls; judges have their own under [judge]):
    # once reached, no new question starts and the rest are reported as skipped for budget.
    max_model_calls: int | None = Field(default=None, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0)
    # The model API's quota per model name with the run's key, where the team knows it:
    # `[quota] "gemini-2.5-flash" = { rpm = 120, tpm = 1000000 }` (or "120rpm,1000000tpm";
    # "*" for any model). The agent's calls and the judges' are paced to it together; unknown,
    # the rate is learnt from the API's 429s (run/pacing.py).
    quota: dict[str, QuotaConfig] = Field(default_factory=dict)
    runs: int = Field(default=1, ge=1, le=100)
    # Runs per question a baseline holds: `baseline update` runs each question until its stored
    # record (pooled from earlier baselines while the question and agent code are unchanged) has this many.
    baseline_runs: int = Field(default=10, ge=1, le=100)
    # Final-state keys shown as volatile, not changed, besides those whose values differ
    # between the base's own runs of a question (timestamps, ids).
    ignore_state: list[str] = Field(default_factory=list)
    timeout: float = Field(default=300.0, gt=0)  # seconds per attempt of one question
    retries: int = Field(default=3, ge=0, le=20)  # on 429 / 503 / deadline errors
    progress: Literal["auto", "always", "never"] = "auto"
    capture_spans: bool = True
    # Where `baseline update` writes and PR runs read (at the merge-base) the baselines.
    baselines_dir: str = "evaluation/baselines"
    # Paths (globs) whose change re-evaluates every dataset and makes a baseline stale; default: the
    # agent's package, the repository modules it imports, its dependency files and this config (agent_code.py).
    agent_paths: list[str] | None = None
    # In a PR, "changed" evaluates the datasets it changed (all of them when agent code changed).
    select: Literal["changed", "all"] = "changed"
    # In a PR with no agent change, questions unchanged since the baseline keep its scores (reuse.py).
    reuse: bool = True
    # What a PR is compared with: "baseline", the results stored on the base branch; "base", the
    # merge-base's agent run now beside the PR's, question by question (base_run.py).
    compare_with: Literal["baseline", "base"] = "baseline"
    base: str | None = None
    # "i/n": evaluate the i-th of n deterministic slices of the questions (merge the results after).
    shard: str | None = Field(default=None, pattern=r"^\d+/\d+$")
    gate: GateConfig = Field(default_factory=GateConfig)
    # The sticky PR comment: posted unless false; one per key (several workflows, one PR).
    comment: bool = True
    comment_key: str = Field(default="default", pattern=r"^[A-Za-z0-9_.-]+$")
    # A directory whose comment.md.j2 / summary.md.j2 override the built-in templates.
    templates_dir: str | None = None
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    user_simulator: UserSimulatorConfig = Field(default_factory=UserSimulatorConfig)
    # LLM-judged metrics by name; `[judges.response_correctness]` (empty) uses the built-in prompt.
    judges: dict[str, JudgeMetricConfig] = Field(default_factory=dict)
    # Vertex AI managed metrics by name (general_quality, text_quality, instruction_following,
    # safety, multi_turn_general_quality, grounding, hallucination, ...), scored 0..1 by the service.
    managed_metrics: list[str] = Field(default_factory=list)
    # The seed pipeline's metric_definitions*.json files, read as judge metrics.
    metric_definitions: list[str] = Field(default_factory=list)
    # USD per million tokens by model-name prefix, laid over the built-in table.
    prices: dict[str, Price] = Field(default_factory=dict)
    # USD per million tokens by model-name prefix, laid over the built-in table.
    _origin: Origin = PrivateAttr(default_factory=Origin)

    @field_validator("datasets", "agent_paths")
    @classmethod
    def _includes_something(cls, patterns: list[str] | None) -> list[str] | None:
        refused = negations_only(patterns or [])
        if refused:
            raise ValueError(refused)
        return patterns

    @field_validator("concurrency", mode="before")
    @classmethod
    def _concurrency(cls, value: Any) -> int | str:
        if isinstance(value, str) and value.strip().lower() == "auto":
            return "auto"
        if isinstance(value, str) and value.strip().isdecimal():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 1024:
            return value
        raise ValueError(f'{value!r} is neither "auto" nor a whole number from 1 to 1024')

    @field_validator("quota", mode="before")
    @classmethod
    def _quota(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_quota(value)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return parse_quota(" ".join(value))
        if isinstance(value, dict):
            return {model: parse_quota(f"{model}={v}")[model] if isinstance(v, str) else v for model, v in value.items()}
        return value

    @field_validator("custom_metrics")
    @classmethod
    def _no_clash(cls, custom: dict[str, CustomMetricConfig]) -> dict[str, CustomMetricConfig]:
        from agent_eval_action.metrics import REGISTRY

        clash = [name for name in custom if name in REGISTRY]
        if clash:
            raise ValueError(f"custom metric(s) {', '.join(clash)} would replace built-in ones: choose other names")
        return custom

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, names: list[str], info: ValidationInfo) -> list[str]:
        from agent_eval_action.metrics import REGISTRY

        known = {*REGISTRY, *(info.data.get("custom_metrics") or {})}
        unknown = [name for name in names if name not in known]
        if unknown:
            named = ", ".join(name + did_you_mean(name, known) for name in unknown)
            raise ValueError(f"unknown metric(s) {named}; known: {', '.join(sorted(known))}")
        return names

    def price_table(self) -> dict[str, dict[str, float]]:
        table = {name: dict(entry) for name, entry in default_prices().items()}
        for name, price in self.prices.items():
            table[name] = {k: v for k, v in price.model_dump().items() if v is not None}
        return table

    def pass_thresholds(self) -> dict[str, float]:
        from agent_eval_action.metrics import default_pass_thresholds

        return default_pass_thresholds({m: r.pass_threshold for m, r in self.gate.metrics.items() if r.pass_threshold is not None})

    def most_in_flight(self) -> int:
        """The most questions that can be in flight: the fixed concurrency, or the ceiling of "auto"."""
        return self.max_concurrency if self.concurrency == "auto" else self.concurrency

    def processes(self) -> int:
        """How many processes do the run's parallel work (large recorded tables are scored by as
        many, beside this one, which reads them): ``system.processes``."""
        return processes(self.workers)

    def agent_worker_count(self, question_runs: int | None = None) -> int:
        """Agent worker processes for ``question_runs`` runs of questions: ``system.processes``."""
        return agent_workers(self.workers, question_runs)

    def configured_thresholds(self) -> frozenset[str]:
        """The metrics whose pass threshold this config sets (a dataset's ADK criteria don't replace those)."""
        return frozenset(m for m, r in self.gate.metrics.items() if r.pass_threshold is not None)

    @property
    def origin(self) -> Origin:
        """Where this config came from (:class:`Origin`)."""
        return self._origin

    def with_origin(self, **changes: Any) -> Config:
        """A copy whose :class:`Origin` has ``changes``."""
        copy = self.model_copy()
        copy._origin = replace(self._origin, **changes)
        return copy

    def named(self, flag: str) -> str:
        """How the setting ``flag`` (``--agent``) sets is named to the user: the flag where this run
        was given it as one (or there is no config file), else the config file's key
        (``agent-eval.toml: agent``): an error about a value the file set must not name a flag
        nobody passed. For a setting with no default and nothing that finds it (the agent): one
        that is found (the agent's Python) may be set by neither."""
        key = flag.removeprefix("--")
        if self.origin.file is None or not flag.startswith("--") or key.replace("-", "_") in self.origin.given:
            return flag
        return f"{self.origin.source}: {key}"

    def with_overrides(self, **flags: Any) -> Config:
        """A copy with every flag that was given (not ``None``) applied and validated."""
        data = self.model_dump()
        given = {key: value for key, value in flags.items() if value is not None}
        data.update(given)
        config = validate(data, self.origin.source or "command line")
        # Where the settings came from stays; the folder of the base's metrics is the check's alone.
        config._origin = replace(self.origin, source=config.origin.source, metrics_folder=None, given=self.origin.given | set(given))
        return config

    def default_datasets(self) -> list[str]:
        """The built-in dataset globs, in the project's folder (relative to the working directory)."""
        return [moved(p, self.origin.moved_from) for p in DEFAULT_DATASETS]

    def import_root(self) -> Path:
        """Where the agent's and custom metrics' modules are imported from: the project's folder."""
        return Path(self.origin.folder) if self.origin.folder else Path.cwd()

    def with_gate(self, gate: GateConfig) -> Config:
        """A copy whose gate is ``gate`` with this run's explicit gate settings laid over it."""
        if self.origin.gate_override:
            gate = validate_gate({**gate.model_dump(), **dict(self.origin.gate_override)}, "input")
        return self.model_copy(update={"gate": gate})


@cache
def default_prices() -> dict[str, dict[str, float]]:
    text = resources.files("agent_eval_action").joinpath("data/prices.json").read_text(encoding="utf-8")
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


def _keys(table: dict[str, Any]) -> dict[str, Any]:
    return {key.replace("-", "_"): value for key, value in table.items()}


def _normalize(data: dict[str, Any]) -> dict[str, Any]:
    """Setting names may use hyphens; model names under [prices] and metric names keep theirs."""
    out = _keys(data)
    gate = out.get("gate")
    if isinstance(gate, dict):
        gate = _keys(gate)
        if isinstance(gate.get("metrics"), dict):
            gate["metrics"] = {name: _keys(rule) if isinstance(rule, dict) else rule for name, rule in gate["metrics"].items()}
        out["gate"] = gate
    for table in ("judge", "agent_env", "user_simulator"):
        if isinstance(out.get(table), dict):
            out[table] = _keys(out[table])
    if isinstance(out.get("custom_metrics"), dict):
        out["custom_metrics"] = {name: _keys(spec) if isinstance(spec, dict) else spec for name, spec in out["custom_metrics"].items()}
    if isinstance(out.get("judges"), dict):
        out["judges"] = {name: _keys(spec) if isinstance(spec, dict) else spec for name, spec in out["judges"].items()}
    return out


def validate(data: dict[str, Any], source: str) -> Config:
    try:
        config = Config.model_validate(_normalize(data))
    except ValidationError as error:
        first = error.errors()[0]
        setting = ".".join(str(part) for part in first["loc"]) or "(top level)"
        reason = first["msg"] if first["type"] != "extra_forbidden" else _unknown(Config, tuple(first["loc"]))
        raise ConfigError(f"{source}: {setting}", reason) from None
    config._origin = Origin(source=source)
    return config


def validate_gate(data: dict[str, Any], source: str) -> GateConfig:
    try:
        return GateConfig.model_validate(_normalize({"gate": data})["gate"])
    except ValidationError as error:
        first = error.errors()[0]
        reason = first["msg"] if first["type"] != "extra_forbidden" else _unknown(GateConfig, tuple(first["loc"]))
        raise ConfigError(f"{source}: gate." + ".".join(str(part) for part in first["loc"]), reason) from None


def _unknown(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """An unknown setting, with the known one it most likely misspells (spelt with hyphens, as the docs do)."""
    holder = model_at(model, loc[:-1]) if loc else None
    known = [name.replace("_", "-") for name in field_names(holder)] if holder is not None else []
    hint = did_you_mean(str(loc[-1]).replace("_", "-"), known) if loc else ""
    return f"unknown setting{hint}" if hint else "unknown setting (check the spelling)"
