"""The one configuration object, from ``agent-eval.toml`` or ``[tool.agent-eval]`` in
``pyproject.toml``, with command-line flags laid over it through the same validation."""

from __future__ import annotations

import json
import math
import os
import posixpath
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from agent_eval_action.core.errors import ConfigError
from agent_eval_action.core.inside import require_inside, roots
from agent_eval_action.core.models import Direction, Unit
from agent_eval_action.core.processes import agent_workers, processes
from agent_eval_action.core.spelling import did_you_mean, field_names, model_at

CONFIG_FILE = "agent-eval.toml"
DEFAULT_DATASETS = ["evaluation/datasets/*.json", "evaluation/datasets/*.csv", "evaluation/datasets/*.jsonl"]


def negations_only(patterns: list[str]) -> str | None:
    """Why a list of path patterns that only exclude (``!x``, see ``globs``) is refused: an
    exclusion drops what the patterns before it matched, so such a list matches nothing."""
    if patterns and all(p.startswith("!") for p in patterns):
        return (
            "every pattern starts with `!`, which excludes what the patterns before it matched, so nothing is matched: "
            "list what to include first (e.g. `evaluation/datasets/**`, then `!evaluation/datasets/drafts/**`)"
        )
    return None


class Price(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached: float | None = Field(default=None, ge=0)


class QuotaConfig(BaseModel):
    """One model's quota with the run's API key: requests and tokens per minute (``run/pacing.py``)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    rpm: int | None = Field(default=None, ge=1)
    tpm: int | None = Field(default=None, ge=1)


QUOTA_FORMAT = 'MODEL=RATE[,RATE] with RATE like 120rpm or 1000000tpm (e.g. "gemini-2.5-flash=120rpm,1000000tpm"; * for every model)'


def parse_quota(text: str) -> dict[str, dict[str, int]]:
    """``"gemini-2.5-flash=120rpm,1000000tpm gemini-2.5-pro=5rpm"`` (spaces or newlines between
    models) as the ``quota`` table; ValueError naming the part it cannot read."""
    out: dict[str, dict[str, int]] = {}
    for part in text.split():
        model, _, rates = part.partition("=")
        if not model or not rates:
            raise ValueError(f"{part!r} is not {QUOTA_FORMAT}")
        entry = out.setdefault(model, {})
        for rate in rates.lower().split(","):
            unit = rate[-3:]
            if unit not in ("rpm", "tpm") or not rate[:-3].isdigit():
                raise ValueError(f"{rate!r} in {part!r} is not a rate like 120rpm or 1000000tpm")
            entry[unit] = int(rate[:-3])
    return out


def parse_regression(value: float | str) -> tuple[float, bool]:
    """``0.05`` (absolute points) or ``"5%"`` (relative to the baseline) -> (amount, relative)."""
    if isinstance(value, str):
        text = value.strip()
        if not text.endswith("%"):
            raise ValueError(f"{value!r}: give a number of points (0.05) or a percentage ('5%')")
        amount, relative = float(text[:-1]) / 100, True
    else:
        amount, relative = float(value), False
    if not math.isfinite(amount):
        raise ValueError(f"{value!r}: give a finite number")
    return amount, relative


class MetricRule(BaseModel):
    """Gate thresholds for one metric."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    min: float | None = None
    max: float | None = None
    max_regression: float | str | None = None
    # A run passes when its value reaches this (higher-is-better) or stays under it (lower);
    # gives pass rates and, with runs > 1, pass^k.
    pass_threshold: float | None = None

    @field_validator("max_regression")
    @classmethod
    def _regression(cls, value: float | str | None) -> float | str | None:
        if value is not None:
            amount, _ = parse_regression(value)
            if amount < 0:
                raise ValueError("must not be negative")
        return value


class GateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    # A drop beyond max_regression fails only when the delta's 95% CI lies entirely on the worse side.
    require_significance: bool = True
    # Applied to every reference metric (higher is better) without a rule of its own.
    max_regression: float | str = 0.05
    max_question_drop: float = Field(default=0.5, gt=0)
    fail_on_question_drop: bool = True
    fail_on_new_errors: bool = True
    max_errors: int | None = Field(default=None, ge=0)
    # With compare-with = "base": the fresh base run moved from the stored baseline (the model
    # drifted under the same code) fails the check too; by default drift is only reported.
    fail_on_drift: bool = False
    # A question a budget, a deadline or an interrupt kept from running is not checked: by default
    # such a check decides nothing ("could not be checked"); true gates what was checked.
    allow_partial: bool = False
    # The per-question test (verdict/noise.py): the error rate of a whole check, the p-value
    # under which a question is in doubt and run again, and the most runs a question gets here.
    alpha: float = Field(default=0.01, gt=0, lt=1)
    doubt: float = Field(default=0.2, gt=0, lt=1)
    max_reruns: int = Field(default=10, ge=1, le=100)
    # What a check whose only open point is an unconfirmed fall does: "pass" (exit 0, said as
    # inconclusive everywhere) or "fail" (exit 1, as a failure would).
    on_inconclusive: Literal["pass", "fail"] = "pass"
    # Share of a dataset's question runs that may end in a model/API error (auth, connection,
    # quota, 5xx) before the check could not be checked (exit 3); below it they are "not run".
    max_not_run: float = Field(default=0.5, ge=0, le=1)
    metrics: dict[str, MetricRule] = Field(default_factory=dict)

    @field_validator("max_regression")
    @classmethod
    def _regression(cls, value: float | str) -> float | str:
        parse_regression(value)
        return value


class AgentEnv(BaseModel):
    """Which environment variables the agent's worker gets besides the defaults (agent_env.py)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    # Withheld by default (ours), passed to the agent anyway.
    allow: list[str] = Field(default_factory=list)
    # Also withheld from the agent.
    withhold: list[str] = Field(default_factory=list)


class CustomMetricConfig(BaseModel):
    """A metric of the user's: ``function(question, trace) -> float | None | Score``."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    function: str = Field(pattern=r"^[\w.]+:\w+$")
    direction: Direction = "higher"
    # "reference": compares with reference data (gated with the default max-regression);
    # "trace": measured from what the agent did (gated only by rules of its own).
    kind: Literal["reference", "trace"] = "trace"
    # What its figures are: "ratio" (0..1, shown as a percentage), "count", "seconds", "usd", "number".
    unit: Unit = "ratio"
    description: str | None = None


class JudgeMetricConfig(BaseModel):
    """One LLM-judged metric: a Jinja prompt that can use the conversation, response, trace and reference."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    prompt: str | None = None
    prompt_file: str | None = None
    score_range: tuple[float, float] = (1.0, 5.0)
    model: str | None = None
    samples: int | None = Field(default=None, ge=1, le=15)
    agents: list[str] = Field(default_factory=list)

    @field_validator("score_range")
    @classmethod
    def _range(cls, value: tuple[float, float]) -> tuple[float, float]:
        if value[0] >= value[1]:
            raise ValueError("score_range must be [low, high] with low < high")
        return value


class JudgeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    model: str = "gemini-2.5-flash"
    concurrency: int = Field(default=8, ge=1, le=256)
    rate_limit: float = Field(default=0.0, ge=0)  # judge calls started per second; 0: no limit
    retries: int = Field(default=3, ge=0, le=20)
    samples: int = Field(default=1, ge=1, le=15)  # judgments per question; the median counts
    timeout: float = Field(default=120.0, gt=0)
    # Answers are cached here by metric, model and rendered prompt (keep it with actions/cache).
    cache_dir: str | None = ".agent-eval-cache/judges"
    # The judges' own budget: once reached, the judge scores not yet asked are unscored (skipped for budget).
    max_calls: int | None = Field(default=None, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0)


class UserSimulatorConfig(BaseModel):
    """``[user-simulator]``: ADK's user simulator, which plays the user of a conversation scenario.

    A setting left out here comes from the dataset's files (``test_config.json``'s
    ``user_simulator_config``), else from ADK's defaults (``gemini-2.5-flash``, 20 turns).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    # Any model name ADK's model registry resolves (Gemini by default; LiteLlm names work too).
    model: str | None = None
    # User turns at most, the starting prompt included (ADK's max_allowed_invocations).
    turn_limit: int | None = Field(default=None, ge=1, le=1000)

    def settings(self) -> dict[str, Any]:
        """The settings given here, in ADK's LlmBackedUserSimulatorConfig names."""
        out: dict[str, Any] = {}
        if self.model is not None:
            out["model"] = self.model
        if self.turn_limit is not None:
            out["max_allowed_invocations"] = self.turn_limit
        return out


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
    # The agent's workers forked by one process that loaded the agent once (run/worker_zygote.py);
    # false: each worker imports ADK and the agent itself (for an agent that misbehaves when forked).
    warm_start: bool = True
    agent_env: AgentEnv = Field(default_factory=AgentEnv)
    # A directory where the agent's model calls are recorded and replayed (agent_worker/model_cache.py).
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
    baseline_runs: int = Field(default=5, ge=1, le=100)
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
    source: str | None = Field(default=None, exclude=True)
    # The file the settings came from (None: defaults and flags only), and the TOML table in it.
    file: str | None = Field(default=None, exclude=True)
    table: str | None = Field(default=None, exclude=True)
    # Whether the user named that file (--config): the base's config is then looked for under
    # the same name first; else the base's own search finds it.
    named: bool = Field(default=False, exclude=True)
    # The project's folder (absolute): the config file's, else the repository's top. The config's
    # paths were written relative to it (and are held relative to the working directory); the
    # agent and custom metrics are imported from it. None: a Config made in code (the working directory).
    folder: str | None = Field(default=None, exclude=True)
    # Where custom metrics are imported from, when not ``folder``: in a PR check, a copy of the
    # base's metric modules made outside the PR's tree (service/steps.base_metrics).
    metrics_folder: str | None = Field(default=None, exclude=True)
    # That folder as its paths were rewritten from it: relative to the working directory ("." when it is).
    moved_from: str = Field(default=".", exclude=True)
    # Gate settings given explicitly for this run (the action's max-regression input): laid over
    # the gate's rules wherever those come from.
    gate_override: dict[str, Any] = Field(default_factory=dict, exclude=True)
    # The settings given explicitly for this run (flags, action inputs, the Python API's
    # arguments), laid over the config file: those the gate takes from the base still apply,
    # and are listed as changes.
    given: frozenset[str] = Field(default_factory=frozenset, exclude=True)

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
        if isinstance(value, str) and value.strip().isdigit():
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
        many, beside this one, which reads them): ``core.processes``."""
        return processes(self.workers)

    def agent_worker_count(self, question_runs: int | None = None) -> int:
        """Agent worker processes for ``question_runs`` runs of questions: ``core.processes``."""
        return agent_workers(self.workers, question_runs)

    def configured_thresholds(self) -> frozenset[str]:
        """The metrics whose pass threshold this config sets (a dataset's ADK criteria don't replace those)."""
        return frozenset(m for m, r in self.gate.metrics.items() if r.pass_threshold is not None)

    def with_overrides(self, **flags: Any) -> Config:
        """A copy with every flag that was given (not ``None``) applied and validated."""
        data = self.model_dump()
        data.update({key: value for key, value in flags.items() if value is not None})
        config = _validate(data, self.source or "command line")
        config.file, config.table, config.gate_override = self.file, self.table, dict(self.gate_override)
        config.named, config.given = self.named, self.given | {key for key, value in flags.items() if value is not None}
        config.folder, config.moved_from = self.folder, self.moved_from
        return config

    def default_datasets(self) -> list[str]:
        """The built-in dataset globs, in the project's folder (relative to the working directory)."""
        return [_moved(p, self.moved_from) for p in DEFAULT_DATASETS]

    def import_root(self) -> Path:
        """Where the agent's and custom metrics' modules are imported from: the project's folder."""
        return Path(self.folder) if self.folder else Path.cwd()

    def with_gate(self, gate: GateConfig) -> Config:
        """A copy whose gate is ``gate`` with this run's explicit gate settings laid over it."""
        if self.gate_override:
            gate = _validate_gate({**gate.model_dump(), **self.gate_override}, "input")
        copy = self.model_copy(update={"gate": gate})
        return copy


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


def _validate(data: dict[str, Any], source: str) -> Config:
    try:
        config = Config.model_validate(_normalize(data))
    except ValidationError as error:
        first = error.errors()[0]
        setting = ".".join(str(part) for part in first["loc"]) or "(top level)"
        reason = first["msg"] if first["type"] != "extra_forbidden" else _unknown(Config, tuple(first["loc"]))
        raise ConfigError(f"{source}: {setting}", reason) from None
    config.source = source
    return config


PYPROJECT_TABLE = "tool.agent-eval"


CANDIDATES: list[tuple[str, str | None]] = [(CONFIG_FILE, None), ("pyproject.toml", PYPROJECT_TABLE)]


def config_candidates(path: str | None, folders: list[str] | None = None) -> list[tuple[str, str | None]]:
    """The files a config is looked for in, in order, with the TOML table that holds it: ``path``
    when given, else ``agent-eval.toml`` then ``pyproject.toml`` in each of ``folders`` (nearest
    first; default: the working directory alone)."""
    if path is not None:
        return [(path, PYPROJECT_TABLE if Path(path).name == "pyproject.toml" else None)]
    return [(posixpath.join(folder, name) if folder else name, table) for folder in (folders or [""]) for name, table in CANDIDATES]


def upward(start: Path, top: Path) -> list[Path]:
    """``start`` and its parents up to ``top`` (inclusive), nearest first: where a config is looked
    for, as ruff and pytest look for theirs. Only ``start`` when it is not inside ``top``."""
    start, top = start.resolve(), top.resolve()
    if not start.is_relative_to(top):
        return [start]
    return [start, *(p for p in start.parents if p.is_relative_to(top))]


def upward_folders(prefix: str) -> list[str]:
    """The folders from ``prefix`` (a POSIX path from the repository's top, "" or "." the top)
    up to the top, nearest first, as POSIX paths from the top ("" the top)."""
    here = posixpath.normpath(prefix.strip("/") or ".")
    parts = [] if here == "." else here.split("/")
    return ["/".join(parts[:i]) for i in range(len(parts), -1, -1)]


@dataclass(frozen=True)
class Found:
    """The config a search found: the settings, and the file's path as the reader names it."""

    config: Config
    path: str


def find_config(read: Callable[[str], str | None], folders: list[str], named: str | None = None) -> Found | None:
    """The one config search, wherever the files are (the working tree, the merge-base's commit,
    the base's checkout): ``read`` gives a file's text from its POSIX path (None: no such file).
    ``named``: the file the user named, read alone; else in each of ``folders`` (nearest first),
    ``agent-eval.toml`` then ``pyproject.toml`` holding ``[tool.agent-eval]``: the first that holds
    a config. None when none does; an unreadable file raises ConfigError naming it."""
    for name, table in config_candidates(named, None if named else folders):
        name = posixpath.normpath(name)
        text = read(name)
        if text is None:
            continue
        config = config_from_text(text, name, table)
        if config is not None:
            return Found(config, name)
    return None


def file_reader(top: Path, *, check: Callable[[Path], object] | None = None) -> Callable[[str], str | None]:
    """A :func:`find_config` reader of the files under ``top``; ``check`` sees each file found
    before it is read (it raises to refuse one)."""

    def read(name: str) -> str | None:
        file = top / name
        if not file.is_file():
            return None
        if check is not None:
            check(file)
        try:
            return file.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise ConfigError(name, f"not valid TOML: {error}") from None

    return read


def load_config(path: str | None = None, cwd: str | Path = ".", *, anywhere: bool = False) -> Config:
    """Reads ``path``, else the nearest ``agent-eval.toml`` or ``pyproject.toml`` with
    ``[tool.agent-eval]`` from ``cwd`` up to the repository's top (:func:`find_config`), else defaults.

    The paths in it are relative to its folder (without a file: the repository's top) and are
    returned relative to ``cwd``. A file found by the search must lie inside the repository
    holding ``cwd`` (symlinks resolved), and so must ``path`` unless ``anywhere`` (a file the user
    named on the command line, which is read wherever it is)."""
    base = Path(cwd)
    if path is not None:
        if not anywhere:
            require_inside(path, "config", base)
        if not (base / path).is_file():
            raise ConfigError(str(path), "config file not found")
        folders: list[str] = []
    else:
        relative = [os.path.relpath(folder, base.resolve()) for folder in upward(base, roots(base)[0])]
        folders = [Path(f).as_posix() if f != "." else "" for f in relative]
    checked = None if path is not None else (lambda file: require_inside(file, "config", base))
    found = find_config(file_reader(base, check=checked), folders, path)
    if found is None:
        return placed(Config(), os.path.relpath(roots(base)[0], base.resolve()), base)
    config = found.config
    config.named = path is not None
    placed(config, os.path.relpath((base / found.path).resolve().parent, base.resolve()), base)
    if config.custom_metrics:
        from agent_eval_action.metrics.custom import custom_metrics

        custom_metrics(config)  # spelling only: the user's code is imported in its own process when scoring starts
    return config


def placed(config: Config, folder: str, cwd: str | Path = ".") -> Config:
    """``config`` (whose paths are written relative to ``folder``, itself relative to ``cwd``) with
    its paths made relative to ``cwd``, and ``folder`` recorded. Changes it in place."""
    config.folder = str((Path(cwd) / folder).resolve())
    folder = config.moved_from = Path(folder).as_posix()
    if folder in ("", "."):
        return config

    def moved(path: str) -> str:
        return _moved(path, folder)

    config.datasets = [moved(p) for p in config.datasets]
    config.output_dir, config.baselines_dir = moved(config.output_dir), moved(config.baselines_dir)
    config.metric_definitions = [moved(p) for p in config.metric_definitions]
    if config.agent_paths is not None:
        config.agent_paths = [moved(p) for p in config.agent_paths]
    for setting in ("model_cache", "templates_dir"):
        value = getattr(config, setting)
        if value:
            setattr(config, setting, moved(value))
    if config.judge.cache_dir:
        config.judge.cache_dir = moved(config.judge.cache_dir)
    for judge in config.judges.values():
        if judge.prompt_file:
            judge.prompt_file = moved(judge.prompt_file)
    if config.agent_python and "/" in config.agent_python:
        config.agent_python = moved(config.agent_python)
    if config.agent and ":" not in config.agent and (Path(config.folder) / config.agent).is_dir():
        config.agent = moved(config.agent)  # an agent directory (a module name stays as it is)
    return config


def _moved(path: str, folder: str) -> str:
    """``path``, written relative to ``folder``, relative to the working directory instead (an
    exclusion stays one: ``!drafts/**`` -> ``!agents/drafts/**``)."""
    if path.startswith("!"):
        return "!" + _moved(path[1:], folder)
    if os.path.isabs(path) or path.startswith("~") or folder in ("", "."):
        return path
    return posixpath.normpath(posixpath.join(folder, path))


def config_from_text(text: str, name: str, table: str | None) -> Config | None:
    """The config a file's text holds; None when ``table`` is absent from it (a pyproject.toml
    without ``[tool.agent-eval]``)."""
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(name, f"not valid TOML: {error}") from None
    for part in table.split(".") if table else []:
        inner = data.get(part)
        if not isinstance(inner, dict):
            return None
        data = inner
    source = name if not table else f"{name} [{table}]"
    config = _validate(data, source)
    config.file, config.table = name, table
    return config


def _validate_gate(data: dict[str, Any], source: str) -> GateConfig:
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
