"""What ``results.json`` and baseline files hold: a run's results per question and dataset, how the run went, and the whole file."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agent_eval_action.models.plan import CheckPlan
from agent_eval_action.models.questions import DatasetFormat
from agent_eval_action.models.scores import JudgeUsage, MetricSummary, Score
from agent_eval_action.models.stored import Stored
from agent_eval_action.models.traces import Transcript
from agent_eval_action.models.verdicts import DatasetComparison, GateResult

# 2: gate failures are objects and the gate has an outcome. Version-1 files are still read.
SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)


class QuestionResult(Stored):
    id: str
    # "skipped": the question could not be run here (``skip_reason`` says why); never a zero.
    status: Literal["ok", "error", "skipped"] = "ok"
    error: str | None = None
    # Where the error was raised: "model" (the model call: the API, its client, its transport),
    # "outside" (the agent's process killed by a signal nothing of ours or the agent's sent), or
    # "agent" (a tool, a callback, the agent's code). What the verdict reads (verdict/outages.py);
    # absent in older files and recorded runs, whose error text is read instead.
    error_origin: Literal["model", "agent", "outside"] | None = Field(default=None, exclude_if=lambda origin: origin is None)
    skip_reason: str | None = None
    run: int = 0
    scores: dict[str, Score] = Field(default_factory=dict)
    # Of questions the agent ran: a hash of what was asked and expected (question_hash), so a
    # later run can tell the question is unchanged; and whether these scores were taken from the
    # baseline instead of a new run (question-level reuse).
    content_hash: str | None = None
    # The same hash without the question's id (question_key): a question the PR gave a new id is
    # paired with the baseline's by it.
    content_key: str | None = None
    reused: bool = False
    # What the agent read for this run (repo/observed.py): repository path -> its blob hash,
    # "missing", or a folder's names' hash; None: not observed (an older file, a recorded run).
    # With the dataset's ``environment``, what a later run must find unchanged to reuse it.
    inputs: dict[str, str] | None = None
    # What the run did (for the report, and as the base run a later PR is shown beside); absent
    # in files written before it was recorded.
    transcript: Transcript | None = None
    # The metrics whose pass threshold this run missed, judged once when its dataset is summarized
    # (scoring/scorer.py), with the threshold the summary records; every view reads it. Written
    # only when one was missed: absent, it is unset (a run that missed none, or an older file).
    failed_thresholds: list[str] = Field(default_factory=list, exclude_if=lambda failed: not failed)


class ModelCalls(Stored):
    live: int = 0
    replayed: int = 0


class BudgetUse(Stored):
    """A spending limit of the run and what was spent against it."""

    max_calls: int | None = None
    max_cost_usd: float | None = None
    calls: int = 0
    cost_usd: float = 0.0
    # Question runs (or judge scores) not started because the budget was reached.
    skipped: int = 0
    # Why the budget stopped the run ("max-model-calls 10 reached (10 ...)"); None: it did not.
    reached: str | None = None


class RunStats(Stored):
    """How the agent's questions were run: the concurrency asked for ("auto" or a number), the
    highest limit reached, the limit at the end, how many were in flight at most, the 429 /
    RESOURCE_EXHAUSTED / deadline signals heard and the times the limit was halved for them."""

    concurrency: str = "auto"
    ceiling: int = 0
    reached: int = 0
    final: int = 0
    max_in_flight: int = 0
    congestion: int = 0
    decreases: int = 0
    # Model calls the API answered 429 and that were asked again inside their question (the
    # judges' too), and the rates the calls were paced to ("" when none was known or learnt).
    throttled: int = 0
    paced: str | None = None
    budget: BudgetUse | None = None
    judge_budget: BudgetUse | None = None


class DatasetResult(Stored):
    path: str
    name: str
    format: DatasetFormat
    summary: dict[str, MetricSummary] = Field(default_factory=dict)
    questions: list[QuestionResult] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    judge_usage: JudgeUsage | None = None
    # A hash of the agent's code (agent paths at the commit) the runs were made with; None when
    # unknown (a dirty working tree, no repository) or when no agent ran.
    agent_fingerprint: str | None = None
    # The agent's environment fingerprint (run/agent/fingerprint.py: interpreter, installed
    # distributions, agent reference, agent-python, agent-env, dependency files) the runs were
    # made in; None when not taken (an older file, no agent run here): then no question's inputs
    # were observed. And its parts by name ("distribution helper": "1.0 #<files>"): what a later
    # run names as changed; None in files written before they were recorded.
    environment: str | None = None
    environment_parts: dict[str, str] | None = None
    # The module names the agent imported (or tried to): which names in a folder an import
    # searched could shadow a module (repo/observed.py). None: not observed.
    imports: list[str] | None = None
    # Question runs whose scores were taken from the baseline (unchanged question, unchanged agent).
    reused: int = 0
    # With the model-call cache: the agent's model calls that went to the model, and those replayed.
    model_calls: ModelCalls | None = None
    # Thresholds that came with the dataset (ADK test_config.json criteria, or the criteria an
    # ADK eval history recorded): pass thresholds and gate minimums unless the config sets its own.
    criteria: dict[str, float] = Field(default_factory=dict)


class Problem(Stored):
    """An input problem reported without stopping the run."""

    path: str
    message: str


class SelectedDataset(Stored):
    # Repository-relative POSIX path, whatever directory the run started in.
    path: str
    reason: str
    # Its path at the merge-base when this PR renamed it: the baseline is looked up there too.
    renamed_from: str | None = None


class Selection(Stored):
    """Which datasets a run evaluated and why."""

    base_ref: str | None = None
    merge_base: str | None = None
    mode: Literal["all", "changed"] = "all"
    selected: list[SelectedDataset] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    agent_changes: list[str] = Field(default_factory=list)


class BaseRun(Stored):
    """What re-running the merge-base's agent beside the PR cost (compare-with = "base")."""

    # The merge-base commit the base's agent was checked out at.
    commit: str | None = None
    datasets: list[str] = Field(default_factory=list)
    # Distinct questions run on the base side, each ``runs`` times, the runs the sequential re-runs
    # added (a question in doubt runs once more on both sides), and its model calls.
    questions: int = 0
    runs: int = 1
    reruns: int = 0
    model_calls: int = 0


class Results(Stored):
    schema_version: int = SCHEMA_VERSION
    tool_version: str = ""
    selection: Selection | None = None
    # "i/n" when this run evaluated one shard of the questions.
    shard: str | None = None
    datasets: list[DatasetResult] = Field(default_factory=list)
    problems: list[Problem] = Field(default_factory=list)
    comparison: list[DatasetComparison] | None = None
    gate: GateResult | None = None
    # How the agent ran (concurrency reached, budgets); None when nothing ran the agent.
    run: RunStats | None = None
    # What the PR was compared with: "baseline" (stored on the base branch) or "base" (the
    # merge-base's agent run in the same job); None in files written before it was recorded.
    compare_with: Literal["baseline", "base"] | None = None
    # The check's plan (models/plan.py), made once before the agent ran; None for a run that was no
    # check (evaluate). Files written before it was saved get one from ``compare_with`` when read.
    plan: CheckPlan | None = None
    # compare-with = "base": what the base's re-run cost, and the fresh base run compared with
    # the stored baseline (same code, another time: the model's drift).
    base_run: BaseRun | None = None
    drift: list[DatasetComparison] | None = None
    # What the check says of model drift, a line each: with compare-with = "base", each dataset whose
    # base run moved from its stored baseline; else the hint that drift is the likely cause.
    drift_notes: list[str] = Field(default_factory=list)
