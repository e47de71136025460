"""The config's tables below the top level (``[gate]``, ``[judge]``, ``[quota]``, ...) and the
parsers of the values written as text (quota rates, regressions, path patterns)."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_eval_action.models.scores import Direction, Unit


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
            if unit not in ("rpm", "tpm") or not rate[:-3].isdecimal():
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
    # A question the PR adds of which no run passes fails the gate, as a new failing test does.
    fail_on_new_failing: bool = True
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
    # None: enough to fail a question that fails every run against an all-pass base at the Holm
    # level of the whole dataset (verdict/noise.py: cap_to_decide; 13 for 40 questions), at least 10.
    max_reruns: int | None = Field(default=None, ge=1, le=100)
    # What a check whose only open point is an unconfirmed fall does: "pass" (exit 0, said as
    # inconclusive everywhere) or "fail" (exit 1, as a failure would).
    on_inconclusive: Literal["pass", "fail"] = "pass"
    # Share of a dataset's question runs that may end in a model/API error (auth, connection,
    # quota, 5xx) before the check could not be checked (exit 3); below it they are "not run".
    max_not_run: float = Field(default=0.5, ge=0, le=1)
    metrics: dict[str, MetricRule] = Field(default_factory=dict)
    # ADK criteria of the datasets' test_config.json (or an eval history) not computed or gated
    # here: one that could not be computed (a Vertex-backed one, a judge not set up) otherwise
    # leaves the check unchecked (exit 3).
    skip_criteria: list[str] = Field(default_factory=list)

    @field_validator("max_regression")
    @classmethod
    def _regression(cls, value: float | str) -> float | str:
        parse_regression(value)
        return value

    @field_validator("metrics")
    @classmethod
    def _not_informational(cls, rules: dict[str, MetricRule]) -> dict[str, MetricRule]:
        from agent_eval_action.metrics.adk_efficiency import INFORMATIONAL

        named = sorted(name for name in rules if name in INFORMATIONAL)
        if named:
            settings = ", ".join(f"[gate.metrics.{name}]" for name in named)
            raise ValueError(
                f"{settings}: ADK's efficiency reports never pass or fail, so they take no threshold (ADK refuses one too): "
                "remove the rule; they are reported on every run"
            )
        return rules


class AgentEnv(BaseModel):
    """Which environment variables the agent's worker gets besides the defaults (run/agent/env.py)."""

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
