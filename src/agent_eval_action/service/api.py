"""The service: the work of every command, returning data and printing nothing.

The command line and the action are thin adapters over it (``commands``: what is printed, the
files of the output directory, the exit code); the Python API is the part the package exports
(``evaluate``, ``compare``, ``check``, ``load``, ``assert_passed``). It composes the steps in
``steps`` (one evaluate loop), ``compared`` (one compare-and-gate) and ``check`` (the PR check:
its plan, its sides, its finish).

Problems (a broken file, an agent that cannot be loaded) and warnings are in the returned data;
only a setting that makes the call impossible (an unknown metric, a bad config file) raises, as
``ConfigError``. The caller's process is left as found: the agent runs in worker processes of its
own, and nothing global (gc, OpenTelemetry, ``sys.path``, logging) outlives the call.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from agent_eval_action import __version__
from agent_eval_action.config import Config, load_config
from agent_eval_action.datasets import Record, load_dataset
from agent_eval_action.datasets.convert import write_golden, write_runs
from agent_eval_action.metrics.registry import one_run
from agent_eval_action.models.plan import merged_plan
from agent_eval_action.models.questions import DatasetFormat, Question
from agent_eval_action.models.results import Problem, Results, Selection
from agent_eval_action.repo.baseline import Written, working_tree_reader, write_baseline
from agent_eval_action.repo.discovery import configured_datasets, dataset_files, expand_paths
from agent_eval_action.repo.git import Git, Snapshot, Workspace
from agent_eval_action.repo.results_io import read_results as read_results
from agent_eval_action.repo.results_io import redacted as redacted
from agent_eval_action.repo.results_io import write_results as write_results
from agent_eval_action.run.agent.env import chosen_agent_python as chosen_agent_python
from agent_eval_action.run.agent.venvs import install_environment as install_environment
from agent_eval_action.scoring.shards import merge_results, merge_scorer
from agent_eval_action.service.check import run_check as run_check
from agent_eval_action.service.compared import Outcome as Outcome  # what the adapters (commands) get back
from agent_eval_action.service.compared import background as background  # what the views show beside an outcome
from agent_eval_action.service.compared import background_of_files as background_of_files
from agent_eval_action.service.compared import baselines_in, baselines_in_repository, compare_and_gate, stored_baselines
from agent_eval_action.service.compared import compare as compare_datasets
from agent_eval_action.service.evaluation import Evaluation, History
from agent_eval_action.service.scaffold import Scaffold, scaffold
from agent_eval_action.service.steps import DatasetFile, agent_fingerprint, evaluate_files, gate_rules, observed_now, path_roles
from agent_eval_action.service.steps import base_ref as base_ref  # --base, else the config's, else $GITHUB_BASE_REF
from agent_eval_action.system import interrupt
from agent_eval_action.system.collector import LIBRARY, Collector
from agent_eval_action.system.errors import DatasetError, InfrastructureError, UsageError
from agent_eval_action.text.redaction import Redactor
from agent_eval_action.verdict.rules import Rules


@dataclass
class Dataset:
    """A dataset file as loaded: its questions (recorded runs keep their traces in ``records``).
    ``format`` is "unknown" when the file was refused whole (``problems`` says why)."""

    path: str
    name: str
    format: DatasetFormat
    questions: list[Question]
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Not a dataset but one of ADK's own files a folder or glob held (a session, a test config):
    # what it is. Not read, and no problem.
    skipped: str | None = None
    # Of its questions, the runs it records (a trace each): 0 for questions the agent is to run.
    recorded: int = 0


@dataclass
class BaselineUpdate:
    """What ``baseline update`` did: the evaluated results and each baseline file written."""

    results: Results
    written: list[Written] = field(default_factory=list)
    # The agent's files with changes not committed when the agent ran: its baselines then record
    # no fingerprint, and no PR can reuse their scores.
    uncommitted: list[str] = field(default_factory=list)
    # Questions whose runs the model/API kept from running: not recorded (their previous record
    # is kept), one line a dataset with the cause; the update could not be done whole (exit 3).
    unrecorded: list[str] = field(default_factory=list)


@dataclass
class Conversion:
    """What ``convert`` wrote: how many questions or runs, where, and the inputs it could not use."""

    count: int
    target: Path
    problems: list[Problem] = field(default_factory=list)


def _config(config: Config | str | os.PathLike[str] | None, settings: dict[str, Any], progress: TextIO | None = None) -> Config:
    """The config to run with: ``config`` (a path, or ``Config``), the settings laid over it; no
    progress line unless a stream was given for it."""
    # A config file the caller names is read wherever it is, as on the command line.
    base = config if isinstance(config, Config) else load_config(None if config is None else str(config), anywhere=True)
    chosen = {key: value for key, value in settings.items() if value is not None}
    if progress is None:
        chosen["progress"] = "never"
    return base.with_overrides(**chosen)


def _problem(error: DatasetError) -> Problem:
    return Problem(path=error.path, message=error.message())


def init(cwd: str | os.PathLike[str] | None = None, *, agent: str | None = None, agent_python: str | None = None) -> Scaffold:
    """Writes what a repository needs to start (the config, a golden dataset drafted from the
    agent's tools and sub-agents, the PR and baseline workflows), never over an existing file.
    The agent (given, else an obvious ``pkg/agent.py`` with ``root_agent``) is read in a worker
    process; one that cannot load raises AgentLoadError and nothing is written."""
    return scaffold(Path(cwd) if cwd else Path.cwd(), agent=agent, agent_python=agent_python)


def load(path: str | os.PathLike[str], also: Sequence[str] = ()) -> Dataset:
    """Reads a dataset file (any supported format) without running anything. ``also``: where it
    may resolve besides the repository (``inside.places``)."""
    try:
        loaded = load_dataset(str(path), also)
    except DatasetError as error:
        return Dataset(path=str(path), name=Path(path).stem, format="unknown", questions=[], problems=[_problem(error)])
    questions, problems, recorded = [], [], 0
    for item in loaded.records:
        if isinstance(item, DatasetError):
            problems.append(_problem(item))
        else:
            questions.append(item.question)
            recorded += item.trace is not None
    return Dataset(
        path=loaded.path,
        name=loaded.name,
        format=loaded.format,
        questions=questions,
        problems=problems,
        warnings=loaded.warnings,
        recorded=recorded,
    )


@one_run
def validate(paths: Sequence[str] = (), *, config: Config | str | os.PathLike[str] | None = None) -> tuple[list[Dataset], list[Problem]]:
    """Every dataset file that ``paths`` (files, directories, globs) name, read fully with nothing
    run, and a problem for each path that names none. The paths are the caller's: a file is read
    wherever it is (``inside.places``). Without paths: the config's ``datasets`` (found upward)."""
    if paths:
        found = dataset_files(list(paths), named=True)
    else:
        chosen = _config(config, {})
        found = configured_datasets(chosen)
    skipped = [
        Dataset(path=path, name=Path(path).stem, format="unknown", questions=[], skipped=what)
        for path, what in sorted(found.skipped.items())
    ]
    return [load(file, found.places.get(file, ())) for file in found.files] + skipped, found.problems


@dataclass(frozen=True)
class DefinitionsCheck:
    """A seed pipeline metric definitions file as ``validate`` reads it: each entry's name and what
    it becomes (a judge and its scores, a managed metric, or why it is no judge)."""

    path: str
    entries: list[tuple[str, bool, str]] = field(default_factory=list)
    problem: Problem | None = None


def metric_definitions_among(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """The files among ``paths`` that are seed pipeline metric definitions, and the other paths."""
    from agent_eval_action.run.judges.setup import is_metric_definitions

    definitions = [p for p in paths if p.endswith(".json") and Path(p).is_file() and is_metric_definitions(p)]
    return definitions, [p for p in paths if p not in definitions]


@one_run
def check_metric_definitions(path: str, config: Config | None = None, *, typed: bool = True) -> DefinitionsCheck:
    """Reads a metric definitions file as the judges would (nothing is judged). ``typed``: a path
    the user typed (read wherever it is); else the config's, which must lie in the repository."""
    from agent_eval_action.run.judges.setup import metric_definitions
    from agent_eval_action.system.errors import ConfigError

    try:
        entries = metric_definitions(path, config or Config(), typed=typed)
    except ConfigError as error:
        return DefinitionsCheck(path=path, problem=Problem(path=path, message=str(error)))
    return DefinitionsCheck(path=path, entries=[(e.name, e.judge is not None, e.note) for e in entries])


@one_run
def check_config_metric_definitions(config: Config | str | os.PathLike[str] | None = None) -> list[DefinitionsCheck]:
    """The config's ``metric_definitions`` files (found upward, as ``validate`` without paths
    finds its datasets), each read as the judges would read it."""
    chosen = _config(config, {})
    return [check_metric_definitions(path, chosen, typed=False) for path in chosen.metric_definitions]


@one_run
def evaluate(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    *,
    config: Config | str | os.PathLike[str] | None = None,
    agent: str | None = None,
    metrics: Sequence[str] | None = None,
    progress: TextIO | None = None,
    collector: Collector = LIBRARY,
    **settings: Any,
) -> Results:
    """Scores datasets (running ``agent`` where they hold no recorded runs); no baseline, no gate.

    ``paths``: files, directories or globs (default: the config's ``datasets``). ``progress``: a
    stream for the progress line of long runs (default: none). ``collector``: the garbage
    collector's policy while scoring, the process owner's to say (default: left as it is found).
    ``settings``: any config setting by its Python name (``agent_url``, ``runs``, ``workers``,
    ``model_cache``...).
    """
    chosen = _config(config, {"agent": agent, "metrics": list(metrics) if metrics is not None else None, **settings}, progress)
    given = [str(p) for p in ([paths] if isinstance(paths, str | os.PathLike) else paths or [])]
    # Paths the caller gives are theirs (read wherever they are); the config's stay in the repository.
    found = configured_datasets(chosen, given, named=True)
    files = [DatasetFile(file, also=found.places.get(file, ())) for file in found.files]
    done = evaluate_files(chosen, files, progress=progress, collector=collector)
    return Results(tool_version=__version__, datasets=done.datasets, problems=found.problems + done.problems, run=done.run)


@one_run
def compare(
    current: Results | str | os.PathLike[str],
    baseline: Results | str | os.PathLike[str],
    *,
    config: Config | str | os.PathLike[str] | None = None,
    gate: bool = True,
) -> Results:
    """``current`` with its comparison to ``baseline`` (datasets matched by path, else by name;
    one dataset on each side, with each other) and the gate's verdict filled in. Results files
    may be given by path. ``gate=False``: the comparison only, no verdict."""
    chosen = _config(config, {})
    now = (current if isinstance(current, Results) else read_results(Path(current))).model_copy(deep=True)
    before = baseline if isinstance(baseline, Results) else read_results(Path(baseline))
    lookup = baselines_in(before, None if isinstance(baseline, Results) else str(baseline), pair=len(now.datasets) == 1)
    if not gate:
        now.comparison = compare_datasets(now, chosen, lookup)
        return now
    return compare_and_gate(now, Rules(config=chosen, source=chosen.origin.source or "the defaults"), lookup).results


@one_run
def check(
    *,
    config: Config | str | os.PathLike[str] | None = None,
    base: str | None = None,
    evaluate_all: bool = False,
    cwd: str | os.PathLike[str] | None = None,
    **settings: Any,
) -> Results:
    """The whole PR check in the repository at ``cwd``: select what changed since the merge-base
    with ``base`` (default: the config's ``base``, else ``$GITHUB_BASE_REF``), evaluate it, compare
    with the baselines there and gate, with the gate's rules from the base. Nothing is posted or
    written: publish the returned results as you like. ``cwd`` is the git work tree; the config
    (without one given: found upward from the process's working directory, as the command line
    finds it) names its paths relative to its own folder."""
    chosen = _config(config, settings)
    return run_check(chosen, cwd=cwd, base=base_ref(base, chosen, os.environ), evaluate_all=evaluate_all).results


@one_run
def merge(paths: Sequence[str], config: Config, *, cwd: str | os.PathLike[str] | None = None) -> Outcome:
    """The results of every shard of a run (files or globs) joined into one, then compared with
    the baselines at the merge-base the shards recorded, and gated, as one run would be."""
    files, empty = expand_paths(list(paths))
    if empty or not files:
        raise DatasetError(", ".join(empty or paths), "matched no results files")
    shards = [(f, read_results(f)) for f in files]
    merged = merge_results(shards, merge_scorer(config))
    plan = merged_plan([shard.plan for _, shard in shards])
    merged.compare_with, merged.plan = "baseline", plan
    git = Git(Path(cwd) if cwd else Path.cwd())
    selection = merged.selection or Selection()
    snapshot = Snapshot(git, selection.merge_base) if selection.merge_base else None
    rules = gate_rules(config, git, snapshot)
    # Shards compared with stored baselines: timings are information (a merge never re-runs the base).
    lookup = baselines_in_repository(git, selection, rules.config, snapshot)
    outcome = compare_and_gate(merged, rules, lookup, plan=plan, notes=[plan.fallback] if plan.fallback else [])
    outcome.sources = files
    return outcome


@one_run
def update_baselines(
    config: Config,
    datasets: Sequence[str] | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    progress: TextIO | None = None,
    collector: Collector = LIBRARY,
) -> BaselineUpdate:
    """Evaluates the datasets (default: the config's) and writes each one's baseline under its
    path from the repository root, with the agent code's hash (a PR whose agent hashes the same
    may reuse their scores); a file of the older stem-keyed layout that held it is moved. Sorted
    and rounded: unchanged scores rewrite nothing. Secrets are redacted: the files are committed."""
    git = Git(Path(cwd) if cwd else Path.cwd())
    workspace = git.workspace()
    given = list(datasets or [])
    found = configured_datasets(config, given)
    problems = found.problems
    roles = path_roles(config, workspace)
    fingerprint = agent_fingerprint(config, git, roles)
    # The baselines as they are now: their runs that still stand (same question, same agent code)
    # are kept, and each question runs only up to baseline_runs (an unchanged dataset: none).
    stored_of = stored_baselines(git, None, config, working_tree_reader(workspace.root))
    files = [DatasetFile(file, workspace.rel(file)) for file in found.files]
    done = evaluate_files(
        config,
        files,
        progress=progress,
        fingerprint=fingerprint,
        collector=collector,
        observed=observed_now(config, git),
        history=lambda item: History(stored=stored_of(item), fingerprint=fingerprint, pool=True),
    )
    uncommitted = git.uncommitted(roles.is_agent) if done.run is not None else []
    results = Results(tool_version=__version__, datasets=done.datasets, problems=problems + done.problems, run=done.run)
    redactor = Redactor.from_env(os.environ, [config.agent_auth_env])
    baselines_dir = workspace.rel(config.baselines_dir)
    written = []
    # An interrupted run (Ctrl-C, SIGTERM) leaves the baselines as they were: never made of part of a run.
    for result in [] if interrupt.requested() else results.datasets:
        # One baseline that cannot be written costs that dataset, never the datasets after it.
        try:
            written.append(write_baseline(workspace.root, baselines_dir, result, __version__, redactor))
        except OSError as error:
            results.problems.append(
                Problem(path=result.path, message=f"{result.path}: could not write its baseline: {error.strerror or error}")
            )
    return BaselineUpdate(results=results, written=written, uncommitted=uncommitted, unrecorded=done.unrecorded)


@one_run
def convert(
    paths: Sequence[str],
    config: Config,
    *,
    to: Literal["golden", "csv", "jsonl"],
    output: str | os.PathLike[str],
    agent_name: str | None = None,
    progress: TextIO | None = None,
) -> Conversion:
    """Writes the datasets as one golden JSON file (``to="golden"``), or their runs (recorded, or
    made now by the agent) as a simulation CSV / JSONL."""
    found = dataset_files(list(paths), named=True)
    problems = found.problems
    records: list[Record] = []
    evaluation = Evaluation(config, err=progress or io.StringIO())
    try:
        for path in found.files:
            try:
                dataset = load_dataset(path, found.places.get(path, ()))
                items = list(dataset.records) if to == "golden" else evaluation.traced(dataset)
            except DatasetError as error:
                problems.append(_problem(error))
                continue
            except UsageError as error:
                problems.append(Problem(path=path, message=f"{path}: {error}"))
                continue
            for item in items:
                if isinstance(item, DatasetError):
                    problems.append(_problem(item))
                else:
                    records.append(item)
    finally:
        evaluation.close()
    target = Path(output)
    if to != "golden":
        return Conversion(count=write_runs(records, target, to), target=target, problems=problems)
    seen: dict[str, Record] = {}
    for record in records:
        if record.question.id in seen and record.question != seen[record.question.id].question:
            message = f"question id {record.question.id!r} appears in several inputs with different content"
            problems.append(Problem(path=str(output), message=message))
        seen.setdefault(record.question.id, record)
    return Conversion(count=write_golden((r.question for r in seen.values()), target, agent_name), target=target, problems=problems)


class GateFailed(AssertionError):
    """Raised by :func:`assert_passed`; its message lists why, one reason a line."""


def assert_passed(results: Results) -> Results:
    """For tests: returns ``results`` when the gate passed (an inconclusive check too, unless
    on-inconclusive = "fail"; or, without a gate, nothing failed to run), else raises
    ``GateFailed`` whose message a reviewer reads as is."""
    __tracebackhide__ = True  # pytest shows the verdict, not this function's source
    lines: list[str] = []
    gate = results.gate
    if gate is not None and not gate.passed:
        said = {"failed": "failed", "inconclusive": "was inconclusive"}.get(gate.outcome, "could not be checked")
        lines.append(f"agent evaluation {said}:")
        lines.extend(f"  - {reason}" for reason in gate.unchecked)
        lines.extend(f"  - {reason}" for reason in gate.inconclusive)
        lines.extend(f"  - {failure.message}" for failure in gate.failures)
    elif gate is None:
        lines.extend(f"  - {p.message}" for p in results.problems)
        for dataset in results.datasets:
            lines.extend(
                f"  - {dataset.name}: question {q.id} ended in an error: {q.error}" for q in dataset.questions if q.status == "error"
            )
        if lines:
            lines.insert(0, "agent evaluation did not complete:")
    if lines:
        raise GateFailed("\n".join(lines))
    return results


# The repository, as the adapters need it: where paths are shown from, the checkouts git must
# trust in a container, and the baselines committed on the default branch.


def workspace(cwd: Path) -> Workspace:
    """The repository (or, outside one, the folder) ``cwd`` is in."""
    return Git(cwd).workspace()


def trust_checkouts(path: Path) -> None:
    """Lets git read a checkout owned by another user (the Action's mounted workspace)."""
    Git(path).trust_checkouts()


@contextlib.contextmanager
def credentials_held_out(path: Path, out: TextIO) -> Iterator[None]:
    """The checkout's credential (the token actions/checkout persists as ``http.*.extraheader``)
    out of the git config of the repository at ``path`` while the block runs (the agent's
    processes run, and are ended, inside it), put back after: the agent cannot read it from
    ``.git/config``. Said in one line. A push in the block authenticates with the token input."""
    git = Git(path)
    held = git.take_credentials() if git.is_repository() else []
    if held:
        names = ", ".join(dict.fromkeys(key for _, key, _ in held))
        print(
            f"the checkout's credential ({names}) is out of its git config while the agent runs, put back after it: "
            "set `persist-credentials: false` on actions/checkout",
            file=out,
        )
    try:
        yield
    finally:
        git.put_back_credentials(held)


def commit_baselines(config: Config, message: str, author: tuple[str, str], branch: str, token: str | None) -> bool:
    """Commits the changed baseline files and pushes them to ``branch``; False when nothing
    changed. A push git refuses raises ``InfrastructureError`` saying what the workflow needs."""
    git = Git(Path.cwd())
    if not git.commit_paths([config.baselines_dir], message, author=author):
        return False
    failure = git.push(branch, token)
    if failure is not None:
        raise InfrastructureError(
            f"could not push the updated baselines to {branch}: {failure[:300]} "
            "(the workflow needs `permissions: contents: write`, and branch protection must allow the push)"
        )
    return True


def outage(results: Results, max_not_run: float) -> str | None:
    """The cause, said once, when model/API errors kept most of a dataset's runs from happening
    (more than ``max_not_run`` of them, or every one that ran): the gate's rule for "could not be
    checked", for a command that has no gate."""
    from agent_eval_action.verdict.outages import main_cause

    found: list[tuple[str, int, int]] = []
    for dataset in results.datasets:
        outage = main_cause((q.error, q.error_origin) for q in dataset.questions if q.status == "error")
        if outage is None:
            continue
        total = len(dataset.questions)
        if outage[1] > max_not_run * total or outage[1] == sum(1 for q in dataset.questions if q.status != "skipped"):
            found.append((outage[0], outage[1], total))
    if not found:
        return None
    from agent_eval_action.views.headline import with_dotenv

    cause = with_dotenv(max(found, key=lambda o: o[1])[0])
    runs, total = sum(o[1] for o in found), sum(o[2] for o in found)
    return f"{cause} ({runs} of {total} question runs could not reach the model: their scores are left out)"
