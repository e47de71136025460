"""The steps the service (``api``) composes, and nothing else imports: evaluate dataset files,
select what a pull request changed, look up each dataset's baseline, compare and gate.

Each exists once: every command that scores datasets goes through :func:`evaluate_files`, every
verdict through :func:`compare_and_gate`. Collaborators (git, the config) come in as
arguments; nothing here prints.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from agent_eval_action import interrupt
from agent_eval_action.agent_code import agent_paths
from agent_eval_action.baseline import find_baseline, working_tree_reader
from agent_eval_action.comparison import compare_dataset
from agent_eval_action.config import Config
from agent_eval_action.errors import DatasetError
from agent_eval_action.evaluation import RECORDED_FORMATS, Evaluation
from agent_eval_action.gate import evaluate_gate, metric_kinds, unchecked_datasets
from agent_eval_action.git_ops import Git, Snapshot, Workspace
from agent_eval_action.history import BaseState, read_base
from agent_eval_action.models import DatasetComparison, DatasetResult, Problem, Results, RunStats, Selection
from agent_eval_action.rules import Rules, rules_at_base
from agent_eval_action.selection import Change, PathRoles, select, select_all


@dataclass
class Outcome:
    """Compared and gated results, with the config the verdict was made with (the gate's rules
    from the merge-base): the views read their thresholds from it."""

    results: Results
    config: Config
    # The results files it was joined from (``merge``).
    sources: list[str] = field(default_factory=list)
    # What was read of the merge-base before the agent ran: the views' base runs and trends.
    base: BaseState | None = None


@dataclass(frozen=True)
class DatasetFile:
    """A dataset file to evaluate: ``file`` as this process opens it, ``path`` as the results
    name it (its path from the repository root) when that is not ``file``."""

    file: str
    path: str | None = None
    # Where it may resolve besides the repository: a file the user named (``inside.places``).
    also: tuple[str, ...] = ()


@dataclass(frozen=True)
class Baseline:
    """A dataset's baseline run, where it was read, and the dataset's path there when the PR renamed it."""

    dataset: DatasetResult
    path: str | None
    renamed_from: str | None = None


@dataclass
class Evaluated:
    """What the evaluate loop made: the datasets' results, the files that could not be
    evaluated, and how the agent was run over all of them (None when nothing ran it)."""

    datasets: list[DatasetResult]
    problems: list[Problem]
    run: RunStats | None = None


# A dataset's baseline, None when it has none; raises DatasetError when its file is unreadable.
BaselineLookup = Callable[[DatasetResult], "Baseline | None"]


def base_ref(flag: str | None, config: Config, env: Mapping[str, str]) -> str | None:
    """--base (or the ``base-ref`` input), else the config's base, else the PR's base branch in GitHub Actions."""
    return flag or config.base or env.get("GITHUB_BASE_REF") or None


def evaluate_files(
    config: Config,
    files: Sequence[DatasetFile],
    *,
    progress: TextIO | None,
    fingerprint: str | None = None,
    reuse: Callable[[DatasetFile], DatasetResult | None] | None = None,
) -> Evaluated:
    """The evaluate loop: each file loaded, run through the agent where it holds no recorded runs,
    and scored; those that could not be are problems. ``progress``: where the progress line of
    long runs goes (None: nowhere). ``fingerprint``: the agent code's hash, recorded with the
    runs made now; ``reuse``: a dataset's baseline whose unchanged questions need not run again."""
    evaluation = Evaluation(config, err=progress or io.StringIO())
    datasets: list[DatasetResult] = []
    try:
        for item in files:
            result = evaluation.evaluate_file(item.file, reuse=reuse(item) if reuse is not None else None, also=item.also)
            if result is None:
                continue
            if item.path is not None:
                result.path = item.path
            if result.format not in RECORDED_FORMATS:
                result.agent_fingerprint = fingerprint
            datasets.append(result)
    finally:
        evaluation.close()
    return Evaluated(datasets=datasets, problems=evaluation.problems, run=evaluation.stats())


def gate_rules(config: Config, git: Git, base: Snapshot | None) -> Rules:
    """The config the verdict is made with: the gate's rules (and the datasets and metrics checked
    at least) from the merge-base when there is one."""
    if base is None:
        return Rules(config=config, source=config.source or "the defaults")
    return rules_at_base(config, base.read, git.workspace().prefix, base.rev[:7])


def base_state(git: Git, base: Snapshot, selection: Selection, config: Config) -> BaseState:
    """Reads everything the verdict and its views need of the merge-base (each selected dataset's
    baseline files, their history), before any agent code runs; nothing is read there after."""
    baselines_dir = git.workspace().rel(config.baselines_dir)
    return read_base(base, baselines_dir, [(s.path, s.renamed_from) for s in selection.selected])


def path_roles(config: Config, workspace: Workspace) -> PathRoles:
    """What each repository path is to the check: the one definition that selection (what a PR
    re-runs) and the agent's fingerprint (when a baseline is stale) both use. Agent code is
    ``agent_paths`` when set, else the agent's package, the modules it imports, its dependency
    files and the config (``agent_code``); without an agent in the repository, every path that
    is neither a dataset nor a baseline."""
    if config.agent_paths is not None:
        agent: list[str] | None = [workspace.glob(g) for g in config.agent_paths]
    elif config.agent and not config.agent_url:
        roots = [config.import_root(), workspace.cwd]
        config_file = workspace.cwd / config.file if config.file else None
        agent = agent_paths(config.agent, top=workspace.root, import_roots=roots, config_file=config_file)
    else:
        agent = None
    return PathRoles(
        dataset_globs=[workspace.glob(g) for g in config.datasets],
        baselines_dir=workspace.rel(config.baselines_dir),
        agent_paths=agent,
    )


def select_datasets(
    config: Config,
    paths: list[str],
    changes: list[Change],
    *,
    base: str | None,
    merge_base: str | None,
    evaluate_all: bool,
    roles: PathRoles,
) -> Selection:
    """Which of the datasets (repository paths) a check evaluates: those the PR changed, all of
    them when an agent path changed, or all of them when asked or when there is no base to diff with."""
    if evaluate_all or config.select == "all" or merge_base is None:
        reason = "--all" if evaluate_all else "select = all" if config.select == "all" else "no base branch: everything"
        chosen = select_all(sorted(paths), reason, changes)
    else:
        chosen = select(sorted(paths), changes, roles)
    chosen.base_ref, chosen.merge_base = base, merge_base
    return chosen


def agent_fingerprint(config: Config, git: Git, roles: PathRoles) -> str | None:
    """The hash of the agent's code (``roles``: :func:`path_roles`) at HEAD (None with uncommitted
    changes to it, without a repository, or for an agent that is not in the repository: --agent-url)."""
    if not config.agent:
        return None
    return git.fingerprint("HEAD", roles.is_agent, working_tree=True)


def reusable_baselines(
    git: Git, selection: Selection, config: Config, fingerprint: str, base: Snapshot
) -> Callable[[DatasetFile], DatasetResult | None]:
    """A dataset's baseline at the merge-base (as ``base`` read it) when it was made with the same
    agent code (``fingerprint``): its unchanged questions need not run again (``reuse.py`` says which)."""
    baselines_dir = git.workspace().rel(config.baselines_dir)
    renamed = {s.path: s.renamed_from for s in selection.selected if s.renamed_from}

    def baseline(item: DatasetFile) -> DatasetResult | None:
        path = item.path or item.file
        old = renamed.get(path)
        try:
            found = find_baseline(base.read, "", baselines_dir, [path, *([old] if old else [])], Path(path).stem)
        except DatasetError:
            return None  # reported when the comparison reads it
        return found.dataset if found is not None and found.dataset.agent_fingerprint == fingerprint else None

    return baseline


def baselines_in_repository(git: Git, selection: Selection, config: Config, base: Snapshot | None = None) -> BaselineLookup:
    """Each dataset's baseline file at the selection's merge-base (as ``base`` read it before the
    agent ran, else read now; without a merge-base: in the working tree), under its path now
    or, when the PR renamed it, its path before."""
    merge_base = selection.merge_base
    workspace = git.workspace()
    read = (
        base.read if base is not None else (lambda path: git.show(merge_base, path)) if merge_base else working_tree_reader(workspace.root)
    )
    where = f"at {merge_base[:12]}" if merge_base else "in the working tree"
    baselines_dir = workspace.rel(config.baselines_dir)
    renamed = {s.path: s.renamed_from for s in selection.selected if s.renamed_from}

    def lookup(dataset: DatasetResult) -> Baseline | None:
        old = renamed.get(dataset.path)
        found = find_baseline(read, where, baselines_dir, [dataset.path, *([old] if old else [])], dataset.name)
        if found is None:
            return None
        return Baseline(found.dataset, found.path, renamed_from=old if old and found.dataset.path != dataset.path else None)

    return lookup


def baselines_in(before: Results, where: str | None, *, pair: bool = False) -> BaselineLookup:
    """Each dataset's run in the results ``before`` (read from the file ``where``), matched by
    path, else by name; with ``pair`` (one dataset compared) and one dataset in ``before``, that one."""
    by_path = {d.path: d for d in before.datasets}
    by_name = {d.name: d for d in before.datasets}
    only = before.datasets[0] if pair and len(before.datasets) == 1 else None

    def lookup(dataset: DatasetResult) -> Baseline | None:
        found = by_path.get(dataset.path) or by_name.get(dataset.name) or only
        return Baseline(found, where) if found is not None else None

    return lookup


def compare(results: Results, config: Config, lookup: BaselineLookup) -> list[DatasetComparison]:
    """Each dataset against its baseline (an unreadable one is a problem in ``results``), and the
    datasets the PR deleted as removed. No verdict: :func:`compare_and_gate` makes it."""
    comparisons = []
    for dataset in results.datasets:
        try:
            baseline = lookup(dataset)
        except DatasetError as error:
            results.problems.append(Problem(path=error.path, message=error.message()))
            baseline = None
        comparison = compare_dataset(
            dataset,
            baseline.dataset if baseline else None,
            baseline_path=baseline.path if baseline else None,
            seed=config.seed,
            max_question_drop=config.gate.max_question_drop,
        )
        if baseline is not None and baseline.renamed_from:
            comparison.renamed_from = baseline.renamed_from
        comparisons.append(comparison)
    for deleted in results.selection.deleted if results.selection else []:
        comparisons.append(DatasetComparison(dataset=Path(deleted).stem, path=deleted, status="removed"))
    return comparisons


def interrupted_runs(results: Results) -> int:
    """How many question runs Ctrl-C or SIGTERM kept from finishing."""
    return sum(1 for d in results.datasets for q in d.questions if q.status == "skipped" and q.skip_reason == interrupt.REASON)


def compare_and_gate(results: Results, rules: Rules, lookup: BaselineLookup) -> Outcome:
    """The one compare-and-gate: ``results`` compared with the baselines ``lookup`` finds, then the
    verdict under ``rules``: passed, failed, or unchecked when an input problem (a bad dataset,
    an unreadable baseline, a dataset of which nothing could be scored) kept part of the check
    from happening. Every view of the run (headline, exit code, outputs, JUnit) reads it."""
    config = rules.config
    results.comparison = compare(results, config, lookup)
    kinds = metric_kinds(config, results)
    gate = evaluate_gate(results.datasets, results.comparison, config.gate, kinds)
    stopped = interrupted_runs(results)
    # An interrupted run decides nothing: no "failed" from the part that ran, and no advice to
    # add reference data to a dataset whose questions simply did not get to run.
    for dataset in [] if stopped else unchecked_datasets(results.datasets, config.gate, kinds):
        results.problems.append(
            Problem(
                path=dataset.path,
                message=f"{dataset.path}: no question has a score on any gated metric, so nothing was checked: "
                "add reference data (tool calls, trajectory, state, response) to its questions, or gate a metric it has "
                "with [gate.metrics.NAME] min / max / max-regression",
            )
        )
    gate.rules_from, gate.config_changes = rules.source, rules.changes
    if results.problems or stopped:
        total = sum(len(d.questions) for d in results.datasets)
        why = [f"interrupted: {stopped} of {total} question runs did not finish (Ctrl-C or SIGTERM); run the check again"]
        gate.outcome, gate.unchecked = "unchecked", (why if stopped else []) + [p.message for p in results.problems[:10]]
    gate.passed = gate.outcome == "passed"
    results.gate = gate
    return Outcome(results=results, config=config)
