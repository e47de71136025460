"""The PR check, in three jobs: what it reads before any agent runs and its plan
(:func:`prepare`), its sides run (:func:`run_sides`: this run's agent, and the merge-base's beside
it when the plan says so), and its finish (:func:`finish`: compared, gated, the drift).

The plan (``models.plan.CheckPlan``) is made once, in :func:`prepare`, after the merge-base and the
selection are known; everything after reads it and decides nothing of it again.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from agent_eval_action import __version__
from agent_eval_action.config import Config
from agent_eval_action.models.plan import CheckPlan, plan_check
from agent_eval_action.models.results import Problem, Results, Selection
from agent_eval_action.repo.baseline import read_once, working_tree_reader
from agent_eval_action.repo.discovery import configured_datasets
from agent_eval_action.repo.git import Change, Git, Snapshot, Workspace
from agent_eval_action.repo.history import BaseState
from agent_eval_action.repo.metric_code import changed as changed_code
from agent_eval_action.repo.metric_code import changed_since_written, code_at, written
from agent_eval_action.run.base_run import base_checkout, base_config, base_paths, install_base
from agent_eval_action.service.compared import (
    BaselineLookup,
    Outcome,
    baselines_in,
    baselines_in_repository,
    budget_skipped,
    compare_and_gate,
    drift,
    partial_reason,
    reusable_baselines,
    stored_baselines,
)
from agent_eval_action.service.evaluation import History
from agent_eval_action.service.steps import (
    DatasetFile,
    Evaluated,
    Observed,
    agent_fingerprint,
    base_datasets,
    base_state,
    evaluate_files,
    gate_rules,
    observations_at_base,
    observed_now,
    path_roles,
    runner_of,
    select_datasets,
    tampered,
)
from agent_eval_action.system.collector import LIBRARY, Collector
from agent_eval_action.verdict.drift import drift_hint
from agent_eval_action.verdict.noise import gate_settings
from agent_eval_action.verdict.rules import Rules


@dataclass
class Prepared:
    """What the check read before any agent code ran, and its plan."""

    plan: CheckPlan
    config: Config
    git: Git
    rules: Rules
    selection: Selection
    by_path: dict[str, str]
    problems: list[Problem]
    snapshot: Snapshot | None
    observed: Observed | None
    fingerprint: str | None
    roles_is_agent: Callable[[str], bool]
    state: BaseState | None = None
    # The base's custom metrics' code (read now, run from a copy) and where it goes.
    metric_code: dict[str, str] | None = None
    metrics_root: str = ""
    # Dataset -> files its stored baseline read as the merge-base no longer has them: the base
    # changed after its last `baseline update`, so that record is not the base's.
    not_base: Mapping[str, list[str]] = field(default_factory=dict)


@dataclass
class Sides:
    """What running the sides made: this run's datasets (and the base's), and what disturbed the base's side."""

    done: Evaluated
    disturbed: list[str] = field(default_factory=list)


def _changes(git: Git, merge_base: str | None, config: Config) -> list[Change]:
    changes = git.changes(merge_base) if merge_base else []
    # Our own output (results of an earlier local run) is no change of the PR's.
    output = git.workspace().rel(config.output_dir).rstrip("/") + "/"
    return [c for c in changes if not c.path.startswith(output)]


def _datasets(
    config: Config, git: Git, snapshot: Snapshot | None, rules: Rules, workspace: Workspace
) -> tuple[dict[str, str], list[str], list[Problem]]:
    """Repository path -> file of every dataset the check may evaluate, the datasets the base's
    settings select, and the paths that named no dataset."""
    found = configured_datasets(config)
    by_path = {workspace.rel(f): f for f in found.files}
    # The datasets the base's settings select at the base are evaluated whatever the PR's settings
    # (config, --datasets, inputs) say: the union of the two as files, never as patterns.
    at_base = base_datasets(git, snapshot, rules, workspace)
    kept = [path for path in at_base if path not in by_path and workspace.file(path).is_file()]
    by_path.update({path: str(workspace.file(path)) for path in kept})
    rules.changes += [
        f"datasets: {path} is no longer selected by this run's settings (the base's dataset is still evaluated)" for path in kept
    ]
    return by_path, at_base, found.problems


def prepare(config: Config, git: Git, base: str | None, evaluate_all: bool) -> Prepared:
    """Everything the verdict reads of the base, read before any agent code runs; the selection; the plan."""
    merge_base = git.merge_base(base) if base else None
    changes = _changes(git, merge_base, config)
    snapshot = Snapshot(git, merge_base) if merge_base else None
    rules = gate_rules(config, git, snapshot)
    workspace = git.workspace()
    by_path, at_base, problems = _datasets(config, git, snapshot, rules, workspace)
    config = rules.config
    # The base's custom metrics score the PR, with the base's code (read now, run from a copy).
    metrics_root, metric_code = "", None
    if merge_base is not None and config.custom_metrics:
        metrics_root = workspace.rel(config.import_root()).removeprefix(".").strip("/")
        specs = {name: spec.function for name, spec in config.custom_metrics.items()}
        metric_code = code_at(git, merge_base, metrics_root, specs.values())
        for name, paths in changed_code(specs, metrics_root, [c.path for c in changes]).items():
            rules.changes.append(f"custom-metrics.{name}: {', '.join(paths)} changed (the base's code scores this PR)")
    # The agent's code where no baseline observed what the agent read.
    roles = path_roles(config, workspace, extra=frozenset(at_base))
    # The repository and the agent's environment now: what the base's baselines observed is
    # compared with them (what re-runs, what is reused), and this run's reads recorded against them.
    observed = observed_now(config, git)
    observations = observations_at_base(git, snapshot, config, list(by_path), changes, observed) if snapshot is not None else None
    selection = select_datasets(
        config, list(by_path), changes, base=base, merge_base=merge_base, evaluate_all=evaluate_all, roles=roles, observations=observations
    )
    plan = plan_check(
        asked=config.compare_with,
        merge_base=merge_base,
        runner=runner_of(config),
        selected=bool(selection.selected),
        reuse=config.reuse,
        model_cache=bool(config.model_cache),
        runs=config.runs,
        max_model_calls=config.max_model_calls,
        max_cost_usd=config.max_cost_usd,
    )
    return Prepared(
        plan=plan,
        config=config,
        git=git,
        rules=rules,
        selection=selection,
        by_path=by_path,
        problems=problems,
        snapshot=snapshot,
        observed=observed,
        fingerprint=agent_fingerprint(config, git, roles),
        roles_is_agent=roles.is_agent,
        state=base_state(git, snapshot, selection, config) if snapshot is not None else None,
        metric_code=metric_code,
        metrics_root=metrics_root,
        not_base=observations.not_base if observations is not None else {},
    )


def run_sides(check: Prepared, *, progress: TextIO | None, install: str | None, collector: Collector = LIBRARY) -> Sides:
    """This run's agent over the selected datasets, and the merge-base's beside it when the plan says so."""
    plan, git, selection, snapshot = check.plan, check.git, check.selection, check.snapshot
    config = check.config
    if config.model_cache and not plan.model_cache:
        config = config.model_copy(update={"model_cache": None})  # both sides ask the model now: a replay would hide drift
    workspace = git.workspace()
    # Unchanged questions keep their baseline scores: by their observed inputs, or (an older
    # baseline) only when no agent path changed.
    reuse = None
    if plan.reuse and snapshot is not None:
        reuse = reusable_baselines(git, selection, config, check.fingerprint, snapshot, check.observed)
    files_now = [DatasetFile(check.by_path[s.path], s.path) for s in selection.selected]
    metric_code = check.metric_code
    with (
        base_checkout(git, plan.merge_base) if plan.base_beside and plan.merge_base else contextlib.nullcontext(None) as tree,
        written(metric_code, check.metrics_root) if metric_code is not None else contextlib.nullcontext(None) as metrics_folder,
    ):
        if metrics_folder is not None:
            config = config.with_origin(metrics_folder=str(metrics_folder))
        twin = None
        if tree is not None:
            python = install_base(install, tree, workspace.prefix, os.environ, progress or io.StringIO())
            here = tree.top / workspace.prefix if workspace.prefix else tree.top
            paths, moved = base_paths(os.environ, workspace.root, tree.top)
            if moved:
                print(moved, file=progress or io.StringIO())
            twin = (base_config(config, tree.top, workspace.prefix, python=python), here, paths)
            tree.seal()  # what the base runs from now on: the PR's agent must not change it
        # The stored baseline each dataset's questions in doubt are re-run against; with the base
        # beside, its runs that still stand for the base's code pool with the base's runs now.
        stored_of = stored_baselines(git, selection, config, snapshot.read if snapshot is not None else working_tree_reader(workspace.root))
        base_code = git.fingerprint(plan.merge_base, check.roles_is_agent) if tree is not None and plan.merge_base else None

        def history(item: DatasetFile) -> History | None:
            return History(stored=stored_of(item), base_fingerprint=base_code)

        done = evaluate_files(
            config,
            files_now,
            progress=progress,
            fingerprint=check.fingerprint,
            reuse=reuse,
            beside=twin,
            collector=collector,
            observed=check.observed,
            history=history,
        )
        disturbed = tampered(tree.changed()) + done.base_disturbed if tree is not None else []
        if metrics_folder is not None:
            disturbed += tampered(changed_since_written(metrics_folder), "the base's metric code")
    return Sides(done=done, disturbed=disturbed)


def finish(check: Prepared, sides: Sides) -> Outcome:
    """The check's results compared (with the stored baselines, or the base's run now, as planned) and gated."""
    plan, done, config = check.plan, sides.done, check.config
    results = Results(
        tool_version=__version__,
        selection=check.selection,
        shard=config.shard,
        datasets=done.datasets,
        problems=check.problems + done.problems,
        run=done.run,
        compare_with="base" if plan.base_beside else "baseline",
        plan=plan,
    )
    stored = baselines_in_repository(check.git, check.selection, config, check.snapshot)
    if not plan.base_beside:  # compared with the stored baselines: timings are information
        outcome = compare_and_gate(
            results,
            check.rules,
            stored,
            plan=plan,
            unsound=[*not_the_bases(check), *sides.disturbed],
            notes=[plan.fallback] if plan.fallback else [],
        )
        hint = drift_hint(
            results,
            lambda d: found.dataset if (found := stored(d)) is not None else None,
            lambda d: gate_settings(config, len({q.id for q in d.questions})),
        )
        results.drift_notes = [hint] if hint else []
    else:
        outcome = _finish_beside(check, sides, results, stored)
    outcome.base = check.state
    return outcome


def not_the_bases(check: Prepared) -> list[str]:
    """Why a selected dataset's stored baseline cannot stand for the base (the base changed files
    its runs read after it was recorded): never blame the PR for the base's change (exit 3)."""
    selected = {s.path for s in check.selection.selected}
    return [
        f"the stored baseline of {path} is not the base's: the base changed {', '.join(files[:3])}"
        f"{f' and {len(files) - 3} more' if len(files) > 3 else ''} after its last `baseline update`; run "
        "`baseline update` on the base branch, or check with compare-with = \"base\" (the base's agent run beside the PR's)"
        for path, files in check.not_base.items()
        if path in selected
    ]


def _finish_beside(check: Prepared, sides: Sides, results: Results, stored: BaselineLookup) -> Outcome:
    """Compared with the base's run made now; that run compared with its stored baseline as drift."""
    plan, done, config, rules = check.plan, sides.done, check.config, check.rules
    assert done.base is not None and done.base_datasets is not None and plan.merge_base is not None
    disturbed = list(sides.disturbed)
    done.base.commit = plan.merge_base
    results.base_run = done.base
    ran_base = Results(datasets=done.base_datasets)
    # The base's questions a budget skipped were not checked either: the PR's are compared with nothing there.
    skipped_base = budget_skipped(ran_base)
    if skipped_base and not rules.config.gate.allow_partial and not budget_skipped(results):
        disturbed.append(partial_reason(ran_base, skipped_base, rules.config, base=True))
    results.drift, results.drift_notes = drift(done.base_datasets, config, stored)
    outcome = compare_and_gate(
        results,
        rules,
        baselines_in(ran_base, f"the base's agent run now at {plan.merge_base[:7]}"),
        plan=plan,
        unsound=disturbed,
    )
    outcome.base_runs = done.base_datasets
    return outcome


def run_check(
    config: Config,
    *,
    cwd: str | os.PathLike[str] | None = None,
    base: str | None = None,
    evaluate_all: bool = False,
    progress: TextIO | None = None,
    install: str | None = None,
    collector: Collector = LIBRARY,
    announce: Callable[[CheckPlan], None] | None = None,
) -> Outcome:
    """The PR check in the repository at ``cwd``, with the config its verdict was made with:
    select what changed since the merge-base with ``base`` (all datasets when an agent path
    changed, when asked, or without a base), evaluate it (reusing the baseline's scores of
    unchanged questions when the agent's code is unchanged), compare with the baselines at the
    merge-base and gate, with the gate's rules from there.

    With ``compare_with = "base"`` and a merge-base, the merge-base's agent is checked out and
    run beside this one (``install``: the command that makes its environment) on the same
    questions, and this run is compared with that one; the base's run is compared with its
    stored baseline as drift. ``announce`` hears the plan once it is made, before anything runs."""
    # Its merge-base's baselines are read by several steps: validated once (repo/baseline.py).
    with read_once():
        check = prepare(config, Git(Path(cwd) if cwd else Path.cwd()), base, evaluate_all)
        if announce is not None:
            announce(check.plan)
        return finish(check, run_sides(check, progress=progress, install=install, collector=collector))
