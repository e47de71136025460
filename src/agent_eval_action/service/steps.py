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

from agent_eval_action.config import Config
from agent_eval_action.core import interrupt
from agent_eval_action.core.collector import LIBRARY, Collector
from agent_eval_action.core.errors import DatasetError, InfrastructureError
from agent_eval_action.core.markdown import plural
from agent_eval_action.core.models import (
    BaseRun,
    DatasetComparison,
    DatasetResult,
    GateFailure,
    Problem,
    QuestionResult,
    Results,
    RunStats,
    Selection,
)
from agent_eval_action.repo.agent_code import agent_paths
from agent_eval_action.repo.baseline import find_baseline, match, working_tree_reader
from agent_eval_action.repo.discovery import dataset_paths
from agent_eval_action.repo.git import Change, Git, Snapshot, Workspace
from agent_eval_action.repo.history import BaseState, read_base, read_base_runs
from agent_eval_action.repo.observed import RepositoryInputs
from agent_eval_action.run.budget import SKIPPED as BUDGET
from agent_eval_action.run.fingerprint import environment_fingerprint
from agent_eval_action.scoring.reuse import pair_by_content, renamed
from agent_eval_action.service.evaluation import RECORDED_FORMATS, Evaluation, History
from agent_eval_action.verdict.comparison import compare_dataset
from agent_eval_action.verdict.gate import evaluate_gate, is_timing, metric_kinds, rules_of, unchecked_datasets
from agent_eval_action.verdict.noise import Settings, spread_level
from agent_eval_action.verdict.pass_test import pass_test
from agent_eval_action.verdict.rules import Rules, rules_at_base
from agent_eval_action.verdict.selection import ENVIRONMENT, Observations, PathRoles, renames, select, select_all
from agent_eval_action.views.background import Background
from agent_eval_action.views.page import fmt


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
    # compare-with = "base": the base's agent's runs made now, which the views show beside this
    # run's (in place of the stored baselines' runs).
    base_runs: list[DatasetResult] = field(default_factory=list)
    # Dataset path -> the run the comparison compared it with (a stored baseline's or the
    # base's): the views show these beside this run without reading the files again. None: the
    # outcome was not compared in this process.
    compared: dict[str, DatasetResult] | None = None


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
    # compare-with = "base": the base's agent's runs of the same questions, and what they cost.
    base: BaseRun | None = None
    base_datasets: list[DatasetResult] | None = None
    # What disturbed the base's side while it ran (its workers killed from outside): the check
    # then could not be made.
    base_disturbed: list[str] = field(default_factory=list)

    # The same with the stored baseline's runs that still stand pooled in: what the PR is compared with.
    base_pooled: list[DatasetResult] | None = None


@dataclass(frozen=True)
class Observed:
    """What the agent's observed inputs are recorded and compared against: the repository as it
    is now, and the agent's environment fingerprint (None: not taken, nothing is recorded)."""

    inputs: RepositoryInputs
    environment: str | None


def observed_now(config: Config, git: Git) -> Observed | None:
    """The repository and the agent's environment now, for an agent run here from a repository;
    None otherwise (a deployed agent, no agent, no repository)."""
    if not config.agent or config.agent_url or not git.is_repository():
        return None
    workspace = git.workspace()
    skip = [workspace.rel(config.output_dir)] + ([workspace.rel(config.model_cache)] if config.model_cache else [])
    return Observed(RepositoryInputs(git, skip), environment_fingerprint(config, workspace))


def stale_inputs(baseline: DatasetResult, observed: Observed | None) -> list[str] | None:
    """What changed among the inputs a baseline's runs observed (``[ENVIRONMENT]`` when the
    environment did; a question run with nothing observed: ``["(a question run whose reads were
    not observed)"]``); None when the baseline observed nothing (older, or recorded)."""
    if baseline.environment is None or baseline.format in RECORDED_FORMATS:
        return None
    if observed is None or observed.environment != baseline.environment:
        return [ENVIRONMENT]
    changed: dict[str, None] = {}
    for question in baseline.questions:
        if question.status != "ok":
            continue
        if question.inputs is None:
            changed["(a question run whose reads were not observed)"] = None
            continue
        changed.update(dict.fromkeys(observed.inputs.changed(question.inputs, baseline.imports or ())))
    return list(changed)


def observations_at_base(
    git: Git, base: Snapshot, config: Config, paths: list[str], changes: list[Change], observed: Observed | None
) -> Observations:
    """What each dataset's baseline at the merge-base (as ``base`` read it) observed of the
    agent's inputs, and which of those changed since (``observed``: the repository now)."""
    baselines_dir = git.workspace().rel(config.baselines_dir)
    moved = renames(changes)
    changed: dict[str, list[str]] = {}
    unobserved: set[str] = set()
    for path in paths:
        old = moved.get(path)
        try:
            found = find_baseline(base.read, "", baselines_dir, [path, *([old] if old else [])], Path(path).stem)
        except DatasetError:
            continue  # reported when the comparison reads it
        if found is None:
            continue
        stale = stale_inputs(found.dataset, observed)
        if stale is not None:
            changed[path] = stale
        elif found.dataset.format not in RECORDED_FORMATS and config.agent and not config.agent_url:
            unobserved.add(path)
    return Observations(changed=changed, unobserved=frozenset(unobserved), agent_paths_given=config.agent_paths is not None)


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
    beside: tuple[Config, Path] | None = None,
    collector: Collector = LIBRARY,
    observed: Observed | None = None,
    history: Callable[[DatasetFile], History | None] | None = None,
) -> Evaluated:
    """The evaluate loop: each file loaded, run through the agent where it holds no recorded runs,
    and scored; those that could not be are problems. ``progress``: where the progress line of
    long runs goes (None: nowhere). ``fingerprint``: the agent code's hash, recorded with the
    runs made now; ``reuse``: a dataset's baseline whose unchanged questions need not run again;
    ``beside``: the base's agent's config and checkout, run beside ours (compare-with = "base");
    ``collector``: the garbage collector's policy while scoring (the process owner's);
    ``history``: a dataset's stored baseline, pooled with (`baseline update`) or re-run against
    (the questions in doubt of a check); ``observed``: the repository and environment the agent's
    reads are recorded against."""
    evaluation = Evaluation(
        config,
        err=progress or io.StringIO(),
        collector=collector,
        inputs=observed.inputs if observed is not None else None,
        environment=observed.environment if observed is not None else None,
    )
    if beside is not None:
        evaluation.beside(*beside)
    datasets: list[DatasetResult] = []
    problems: list[Problem] = []
    base = BaseRun(datasets=[], questions=0, runs=config.runs, model_calls=0)
    base_datasets: list[DatasetResult] = []
    compared_with: list[DatasetResult] = []
    try:
        for item in files:
            done = evaluation.evaluate(
                item.file,
                reuse=reuse(item) if reuse is not None else None,
                also=item.also,
                history=history(item) if history is not None else None,
            )
            problems.extend(done.problems)
            result = done.result
            if result is None:
                continue
            if item.path is not None:
                result.path = item.path
            if done.base is not None:  # the base's run of this file
                done.base.path = result.path
                if done.base_pooled is not None:
                    done.base_pooled.path = result.path
                base_datasets.append(done.base)
                compared_with.append(done.base_pooled or done.base)
                base.datasets.append(result.path)
                base.questions += done.base_questions
                base.model_calls += done.base_calls
            if result.format not in RECORDED_FORMATS:
                result.agent_fingerprint = fingerprint
            datasets.append(result)
    finally:
        evaluation.close()
    evaluated = Evaluated(datasets=datasets, problems=problems, run=evaluation.stats())
    if beside is not None:
        evaluated.base_datasets, evaluated.base, evaluated.base_pooled = base_datasets, base, compared_with
        evaluated.base_disturbed = [
            f"the base's agent could not run undisturbed: its worker process {reason} (nothing of ours sent that signal), "
            "so its runs are not the base's; run the check again"
            for reason in evaluation.base_killed
        ]
    return evaluated


def gate_rules(config: Config, git: Git, base: Snapshot | None) -> Rules:
    """The config the verdict is made with: the gate's rules (and the datasets and metrics checked
    at least) from the merge-base when there is one."""
    if base is None:
        return Rules(config=config, source=config.origin.source or "the defaults")
    return rules_at_base(config, base.read, git.workspace().prefix, base.rev[:7])


def base_datasets(git: Git, base: Snapshot | None, rules: Rules, workspace: Workspace) -> list[str]:
    """The dataset files (repository paths) the base's own settings select at the merge-base: a
    file set, not patterns, so no exclusion of the PR's (``!path`` in its config, the
    --datasets flag) removes one."""
    if base is None or rules.base is None:
        return []
    return dataset_paths(git.files(base.rev), [workspace.glob(g) for g in rules.base.datasets])


def tampered(changed: list[str]) -> list[str]:
    """The problem a base side changed while it ran makes (``base_run.BaseTree.changed``)."""
    if not changed:
        return []
    shown = ", ".join(changed[:5]) + (f" (+{len(changed) - 5} more)" if len(changed) > 5 else "")
    return [
        f"the base's files changed while its agent ran ({shown}): something in this job (the PR's agent?) wrote to "
        "the base's checkout, so the base's runs are not the base's; the comparison could not be made"
    ]


def base_state(git: Git, base: Snapshot, selection: Selection, config: Config) -> BaseState:
    """Reads everything the verdict and its views need of the merge-base (each selected dataset's
    baseline files, their history), before any agent code runs; nothing is read there after."""
    baselines_dir = git.workspace().rel(config.baselines_dir)
    return read_base(base, baselines_dir, [(s.path, s.renamed_from) for s in selection.selected])


def path_roles(config: Config, workspace: Workspace, extra: frozenset[str] = frozenset()) -> PathRoles:
    """What each repository path is to the check: the one definition that selection (what a PR
    re-runs) and the agent's fingerprint (when a baseline is stale) both use. Agent code is
    ``agent_paths`` when set, else the agent's package, the modules it imports, its dependency
    files and the config (``agent_code``); without an agent in the repository, every path that
    is neither a dataset nor a baseline. ``extra``: dataset paths besides those the globs match
    (the base's)."""
    if config.agent_paths is not None:
        agent: list[str] | None = [workspace.glob(g) for g in config.agent_paths]
    elif config.agent and not config.agent_url:
        roots = [config.import_root(), workspace.cwd]
        config_file = workspace.cwd / config.origin.file if config.origin.file else None
        agent = agent_paths(config.agent, top=workspace.root, import_roots=roots, config_file=config_file)
    else:
        agent = None
    return PathRoles(
        dataset_globs=[workspace.glob(g) for g in config.datasets],
        baselines_dir=workspace.rel(config.baselines_dir),
        agent_paths=agent,
        datasets=extra,
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
    observations: Observations | None = None,
) -> Selection:
    """Which of the datasets (repository paths) a check evaluates: those the PR changed, all of
    them when an agent path changed, or all of them when asked or when there is no base to diff with."""
    if evaluate_all or config.select == "all" or merge_base is None:
        reason = "--all" if evaluate_all else "select = all" if config.select == "all" else "no base branch: everything"
        chosen = select_all(sorted(paths), reason, changes)
    else:
        chosen = select(sorted(paths), changes, roles, observations)
    chosen.base_ref, chosen.merge_base = base, merge_base
    return chosen


def agent_fingerprint(config: Config, git: Git, roles: PathRoles) -> str | None:
    """The hash of the agent's code (``roles``: :func:`path_roles`) at HEAD (None with uncommitted
    changes to it, without a repository, or for an agent that is not in the repository: --agent-url)."""
    if not config.agent:
        return None
    return git.fingerprint("HEAD", roles.is_agent, working_tree=True)


def reusable_baselines(
    git: Git, selection: Selection, config: Config, fingerprint: str | None, base: Snapshot, observed: Observed | None = None
) -> Callable[[DatasetFile], DatasetResult | None]:
    """A dataset's baseline at the merge-base (as ``base`` read it) whose unchanged questions need
    not run again (``reuse.py`` says which): one that observed what the agent read, made in the
    same environment (``observed``); an older one only when no agent path changed and it was
    made with the same agent code (``fingerprint``)."""
    stored = stored_baselines(git, selection, config, base.read)

    def baseline(item: DatasetFile) -> DatasetResult | None:
        found = stored(item)
        if found is None:
            return None
        if found.environment is not None:
            # The config's agent-paths are agent code whatever the agent read: a change to them re-runs all.
            declared = config.agent_paths is not None and bool(selection.agent_changes)
            same = observed is not None and found.environment == observed.environment
            return found if same and not declared else None
        same_code = fingerprint is not None and not selection.agent_changes and found.agent_fingerprint == fingerprint
        return found if same_code else None

    return baseline


def stored_baselines(
    git: Git, selection: Selection | None, config: Config, read: Callable[[str], str | None]
) -> Callable[[DatasetFile], DatasetResult | None]:
    """A dataset file's stored baseline as ``read`` finds it (at the merge-base, or in the working
    tree), under its path or the path the PR renamed it from; None when it has none or it is unreadable
    (reported when the comparison reads it)."""
    baselines_dir = git.workspace().rel(config.baselines_dir)
    renamed = {s.path: s.renamed_from for s in selection.selected if s.renamed_from} if selection is not None else {}

    def baseline(item: DatasetFile) -> DatasetResult | None:
        path = item.path or item.file
        old = renamed.get(path)
        try:
            found = find_baseline(read, "", baselines_dir, [path, *([old] if old else [])], Path(path).stem)
        except DatasetError:
            return None
        return found.dataset if found is not None else None

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

    def lookup(dataset: DatasetResult) -> Baseline | None:
        found = match(before.datasets, dataset.path, dataset.name, path_of=lambda d: d.path, name_of=lambda d: d.name, only=pair)
        return Baseline(found, where) if found is not None else None

    return lookup


def compare(
    results: Results,
    config: Config,
    lookup: BaselineLookup,
    found: dict[str, DatasetResult] | None = None,
    pooled: Mapping[str, DatasetResult] | None = None,
) -> list[DatasetComparison]:
    """Each dataset against its baseline (an unreadable one is a problem in ``results``), and the
    datasets the PR deleted as removed; ``found`` gets each dataset's baseline run. No verdict:
    :func:`compare_and_gate` makes it."""
    comparisons = []
    for dataset in results.datasets:
        try:
            baseline = lookup(dataset)
        except DatasetError as error:
            results.problems.append(Problem(path=error.path, message=error.message()))
            baseline = None
        before = baseline.dataset if baseline is not None else None
        # A question the PR gave a new id, its content unchanged, is compared with its own baseline runs.
        pairs = pair_by_content(dataset, before) if before is not None else {}
        if before is not None and pairs:
            before = renamed(before, pairs)
        comparison = compare_dataset(
            dataset,
            before,
            baseline_path=baseline.path if baseline else None,
            seed=config.seed,
            max_question_drop=config.gate.max_question_drop,
            settings=noise_settings(config),
            pass_baseline=(pooled or {}).get(dataset.path),
        )
        comparison.paired_by_content = pairs
        if baseline is not None and baseline.renamed_from:
            comparison.renamed_from = baseline.renamed_from
        if before is not None and found is not None:
            found[dataset.path] = before
        comparisons.append(comparison)
    for deleted in results.selection.deleted if results.selection else []:
        comparisons.append(DatasetComparison(dataset=Path(deleted).stem, path=deleted, status="removed"))
    return comparisons


def noise_settings(config: Config) -> Settings:
    """The per-question test's settings from the gate's config."""
    gate = config.gate
    return Settings(alpha=gate.alpha, doubt=gate.doubt, cap=gate.max_reruns)


def interrupted_runs(results: Results) -> int:
    """How many question runs Ctrl-C or SIGTERM kept from finishing."""
    return sum(1 for d in results.datasets for q in d.questions if q.status == "skipped" and q.skip_reason == interrupt.REASON)


def budget_skipped(results: Results) -> int:
    """How many question runs a spending limit kept from running (``max-model-calls``, ``max-cost-usd``)."""
    return sum(1 for d in results.datasets for q in d.questions if q.status == "skipped" and (q.skip_reason or "").startswith(BUDGET))


def partial_reason(results: Results, skipped: int, config: Config) -> str:
    """Why a check that skipped questions it needed decided nothing."""
    total = sum(len(d.questions) for d in results.datasets)
    limits = [
        f"{name} = {value:g}"
        for name, value in (("max-model-calls", config.max_model_calls), ("max-cost-usd", config.max_cost_usd))
        if value
    ]
    return (
        f"partial: {skipped} of {total} question runs were skipped by the budget ({', '.join(limits) or 'a spending limit'}), "
        "so the check did not see them; raise the budget, select fewer questions, or set `[gate] allow-partial = true` "
        "in the base branch's config to gate only what was checked"
    )


def compare_and_gate(
    results: Results,
    rules: Rules,
    lookup: BaselineLookup,
    *,
    timings: bool = True,
    unsound: Sequence[str] = (),
    pooled: Mapping[str, DatasetResult] | None = None,
) -> Outcome:
    """The one compare-and-gate: ``results`` compared with the baselines ``lookup`` finds, then the
    verdict under ``rules``: passed, failed, or unchecked when an input problem (a bad dataset,
    an unreadable baseline, a dataset of which nothing could be scored) kept part of the check
    from happening. ``timings``: False when the baseline did not run in this job (a PR check
    against stored baselines): timings are then information, their rules notes. ``unsound``: why
    what was compared cannot be trusted (the base's side disturbed while it ran): unchecked, for
    no input's fault. ``pooled``: dataset path -> the base's record the per-question test uses
    instead (compare-with = "base"). Every view of the run (headline, exit code, outputs, JUnit)
    reads it."""
    config = rules.config
    compared: dict[str, DatasetResult] = {}
    results.comparison = compare(results, config, lookup, compared, pooled)
    kinds = metric_kinds(config, results)
    gate = evaluate_gate(results.datasets, results.comparison, config.gate, kinds, timings=timings)
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
    why = list(unsound)
    if stopped:
        total = sum(len(d.questions) for d in results.datasets)
        why.append(f"interrupted: {stopped} of {plural(total, 'question run')} did not finish (Ctrl-C or SIGTERM); run the check again")
    elif (partial := budget_skipped(results)) and not config.gate.allow_partial:
        why.append(partial_reason(results, partial, config))
    if results.problems or why:
        gate.outcome, gate.unchecked = "unchecked", gate.unchecked + why + [p.message for p in results.problems[:10]]
        if why and not stopped and not results.problems and gate.infrastructure is None:
            gate.infrastructure = why[0].split(";")[0]  # no input's fault: exit 3
    results.gate = gate
    return Outcome(results=results, config=config, compared=compared)


def background(outcome: Outcome, cwd: Path) -> Background:
    """What the views show beside the outcome: the runs it was compared with (handed forward,
    not read again), the metrics' histories (read before the agent ran) and the gate's rules.
    Git failing here costs the views their history, never the run its results."""
    results, config = outcome.results, outcome.config
    rules = rules_of(results, config.gate, metric_kinds(config, results))
    try:
        shown = Background.of(read_base_runs(results, Git(cwd), compared=outcome.compared, base=outcome.base), rules)
    except InfrastructureError:
        shown = Background(rules=rules)
    # compare-with = "base": the runs beside this one are the base's, made now.
    shown.base_runs.update({run.path: run for run in outcome.base_runs})
    shown.ignore_state = frozenset(config.ignore_state)
    return shown


def background_of_files(results: Results, config: Config, baseline: Results | None, label: str | None, cwd: Path) -> Background:
    """For ``report RESULTS [--baseline B]``: the base runs from the file ``baseline`` (matched as
    a comparison matches them), else from the repository at ``cwd``."""
    rules = rules_of(results, config.gate, metric_kinds(config, results))
    if baseline is None:
        try:
            return Background.of(read_base_runs(results, Git(cwd)), rules)
        except InfrastructureError:
            return Background(rules=rules)
    lookup = baselines_in(baseline, label, pair=len(results.datasets) == 1)
    runs = {d.path: found.dataset for d in results.datasets if (found := lookup(d)) is not None}
    return Background(base_label=label, base_runs=runs, rules=rules)


REFRESH = "python -m agent_eval_action baseline update"


def drift(base_datasets: list[DatasetResult], config: Config, stored: BaselineLookup) -> tuple[list[DatasetComparison], list[str]]:
    """The base's fresh run compared with its stored baseline: the same code at another time, so
    what moved is the model (or the world), not the PR. Returns the comparisons and a line for
    each dataset that moved ("the model moved: 5 of 40 questions answer differently ..."). Only
    the base's runs that finished count: one an interrupt or a budget stopped, or that ended in an
    error (its worker crashed, the model API failed), says nothing of the model's answers."""
    base_datasets = [finished for d in base_datasets if (finished := _finished(d)) is not None]
    scratch = Results(datasets=base_datasets)
    comparisons = compare(scratch, config, stored)
    lines = [f"{p.message} (drift not measured)" for p in scratch.problems]
    for dataset, comparison in zip(base_datasets, comparisons, strict=False):
        if comparison.status != "compared":
            continue
        try:
            found = stored(dataset)
        except DatasetError:
            continue
        if found is None:
            continue
        differ, total = answered_differently(dataset, found.dataset)
        moved = [m for m in comparison.metrics if m.verdict in ("regressed", "improved") and not is_timing(m.metric)]
        if comparison.pass_test is not None:
            # Questions pass at their own rates: for the metrics of the pass test, drift is only a
            # move beyond them, either way (the fresh base against the stored runs, and back).
            tested = set(comparison.pass_test.metrics)
            rose = pass_test(found.dataset, dataset, noise_settings(config))
            beyond = any(
                t.spread_p <= spread_level(t.alpha) or any(q.decision == "failed" for q in t.tested)
                for t in (comparison.pass_test, rose)
                if t is not None
            )
            moved = [m for m in moved if m.metric not in tested] + ([m for m in comparison.metrics if m.metric in tested] if beyond else [])
        # Answers that differ (an id, a timestamp in them) or timings alone are no drift.
        if not moved:
            continue
        shown = max(moved or comparison.metrics, key=lambda m: abs(m.delta or 0.0), default=None)
        figures = ""
        if shown is not None and shown.baseline is not None and shown.current is not None:
            figures = f" ({shown.metric} {fmt(shown.baseline, shown.metric)} → {fmt(shown.current, shown.metric)})"
        lines.append(
            f"{dataset.name}: the model moved: {differ} of {plural(total, 'question')} answer differently than the stored baseline "
            f"with the same code{figures}; this does not fail the PR unless [gate] fail-on-drift = true. "
            f"Refresh the baseline on the base branch with `{REFRESH}`"
        )
    return comparisons, lines


def _finished(dataset: DatasetResult) -> DatasetResult | None:
    """``dataset`` with only the runs that ran to their end; None when none did."""
    done = [q for q in dataset.questions if q.status == "ok"]
    if not done:
        return None
    return dataset if len(done) == len(dataset.questions) else dataset.model_copy(update={"questions": done})


def answered_differently(now: DatasetResult, stored: DatasetResult) -> tuple[int, int]:
    """How many questions of ``now`` (ran, not reused) answer differently than in ``stored``
    (their final response, else a score of a non-timing metric), of how many both have."""
    before = _by_id(stored)
    differ = total = 0
    for qid, runs in _by_id(now).items():
        if qid not in before or all(q.reused for q in runs):
            continue
        total += 1
        if _differ(runs, before[qid]):
            differ += 1
    return differ, total


def _by_id(dataset: DatasetResult) -> dict[str, list[QuestionResult]]:
    out: dict[str, list[QuestionResult]] = {}
    for q in dataset.questions:
        out.setdefault(q.id, []).append(q)
    return out


def _differ(ours: list[QuestionResult], theirs: list[QuestionResult]) -> bool:
    """Whether a question answered differently: one of our runs gave an answer none of theirs
    gave (their counts of runs may differ). An answer is the final response when both sides
    recorded one, else the scores of the metrics that do not measure time."""
    responses = all(q.transcript is not None for q in [*ours, *theirs])
    before = [_answer(q, responses) for q in theirs]
    return any(_answer(q, responses) not in before for q in ours)


def _answer(question: QuestionResult, response: bool) -> object:
    if response and question.transcript is not None:
        return question.transcript.final_response
    return sorted((name, s.value or 0.0, s.value is None) for name, s in question.scores.items() if not is_timing(name))


def fail_on_drift(results: Results, rules: Rules) -> None:
    """``[gate] fail-on-drift = true``: a metric of the base's fresh run that regressed from the
    stored baseline fails the check too."""
    if not rules.config.gate.fail_on_drift or results.gate is None:
        return
    for comparison in results.drift or []:
        test = comparison.pass_test
        # A metric of the pass test drifted only beyond the questions' own pass rates.
        within = test is not None and test.spread_p > spread_level(test.alpha) and not any(q.decision == "failed" for q in test.tested)
        for metric in comparison.metrics:
            if within and test is not None and metric.metric in test.metrics:
                continue
            if metric.verdict == "regressed" and not is_timing(metric.metric):
                detail = (
                    f"the model drifted: the base's own agent scores {metric.metric} {fmt(metric.baseline, metric.metric)} → "
                    f"{fmt(metric.current, metric.metric)} against its stored baseline (fail-on-drift = true)"
                )
                results.gate.failures.append(
                    GateFailure(
                        dataset=comparison.path,
                        metric=metric.metric,
                        rule="drift",
                        baseline=metric.baseline,
                        current=metric.current,
                        message=f"{comparison.dataset}: {detail}",
                        subject=comparison.dataset,
                        detail=detail,
                    )
                )
    if results.gate.failures and results.gate.outcome in ("passed", "inconclusive"):
        results.gate.outcome = "failed"


def drift_hint(results: Results, stored: BaselineLookup) -> str | None:
    """compare-with = "baseline" and the PR changed no agent code (nor did the base since the
    baseline: the agent's code hashes as the baseline's did), yet questions it did not change
    answer differently than the stored baseline: the likely cause is drift, and the hint says so."""
    selection = results.selection
    if selection is None or selection.agent_changes or not results.comparison:
        return None
    moved = [c for c in results.comparison if any(m.verdict in ("regressed", "improved") and not is_timing(m.metric) for m in c.metrics)]
    unchanged = 0
    for dataset in results.datasets:
        if not any(c.path == dataset.path for c in moved):
            continue
        try:
            found = stored(dataset)
        except DatasetError:
            continue
        if found is None or found.dataset.agent_fingerprint is None or found.dataset.agent_fingerprint != dataset.agent_fingerprint:
            continue  # other agent code than the baseline's (this PR's, or the base's since): not drift alone
        hashes = {q.id: q.content_hash for q in found.dataset.questions if q.content_hash}
        same = [q for q in dataset.questions if not q.reused and q.content_hash and hashes.get(q.id) == q.content_hash]
        scores = {(q.id, q.run): q for q in found.dataset.questions}
        unchanged += sum(1 for q in same if (q.id, q.run) in scores and _differ([q], [scores[(q.id, q.run)]]))
    if not unchanged:
        return None
    return (
        f"scores moved although this PR changed no agent code: {unchanged} question runs the PR did not change answer "
        "differently than the stored baseline, so model drift is the likely cause, not this PR. "
        'Set compare-with = "base" to run the base\'s agent beside this one in the same job, '
        f"or refresh the baseline with `{REFRESH}`"
    )
