"""The whole check, one direction: select -> evaluate -> read baselines -> compare -> gate.

Used by ``run``, ``merge`` and the action entrypoint. Collaborators come in as arguments.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from agent_eval_action import __version__
from agent_eval_action.baseline import find_baseline, working_tree_reader
from agent_eval_action.comparison import compare_dataset
from agent_eval_action.config import DEFAULT_DATASETS, Config
from agent_eval_action.discovery import dataset_files
from agent_eval_action.errors import DatasetError, ExitCode
from agent_eval_action.evaluation import RECORDED_FORMATS, Evaluation
from agent_eval_action.gate import evaluate_gate, unchecked_datasets
from agent_eval_action.git_ops import Git, Workspace
from agent_eval_action.models import DatasetComparison, DatasetResult, Problem, Results, SelectedDataset, Selection
from agent_eval_action.rules import Rules, rules_at_base
from agent_eval_action.selection import PathRoles, select, select_all


@dataclass
class Outcome:
    results: Results
    exit_code: int
    messages: list[str] = field(default_factory=list)
    # The config the verdict was made with (the gate's rules from the base): views read its thresholds.
    config: Config | None = None


def base_ref(flag: str | None, config: Config) -> str | None:
    """--base, else the config's base, else the PR's base branch in GitHub Actions."""
    return flag or config.base or os.environ.get("GITHUB_BASE_REF") or None


def metric_kinds(config: Config | None = None, results: Results | None = None) -> dict[str, str]:
    """Metric name -> "reference" | "trace" | "judge": as the results recorded it, else as the
    registry and the config's custom metrics say (results written before kinds were stored)."""
    from agent_eval_action.metrics import REGISTRY

    kinds: dict[str, str] = {name: metric.kind for name, metric in REGISTRY.items()}
    if config is not None:
        kinds.update({name: spec.kind for name, spec in config.custom_metrics.items()})
    for dataset in results.datasets if results is not None else []:
        kinds.update({name: s.kind for name, s in dataset.summary.items() if s.kind is not None})
    return kinds


def gate_rules(config: Config, git: Git, merge_base: str | None) -> Rules:
    """The config the verdict is made with: the gate's rules from the merge-base when there is one."""
    if merge_base is None:
        return Rules(config=config, source=config.source or "the defaults")
    return rules_at_base(config, lambda path: git.show(merge_base, path), git.workspace().prefix, merge_base[:7])


def path_roles(config: Config, workspace: Workspace) -> PathRoles:
    return PathRoles(
        dataset_globs=[workspace.glob(g) for g in config.datasets],
        baselines_dir=workspace.rel(config.baselines_dir),
        agent_paths=[workspace.glob(g) for g in config.agent_paths] if config.agent_paths is not None else None,
    )


def agent_fingerprint(config: Config, git: Git, workspace: Workspace) -> str | None:
    """The hash of the agent's code at HEAD (None with uncommitted changes to it, without a
    repository, or for an agent that is not in the repository: --agent-url)."""
    if not config.agent:
        return None
    return git.fingerprint("HEAD", path_roles(config, workspace).is_agent, working_tree=True)


def _reusable_baseline(
    git: Git, merge_base: str, config: Config, workspace: Workspace, chosen: SelectedDataset, fingerprint: str | None
) -> DatasetResult | None:
    """The dataset's baseline at the merge-base when it was made with the same agent code."""
    paths = [chosen.path, *([chosen.renamed_from] if chosen.renamed_from else [])]
    try:
        found = find_baseline(lambda p: git.show(merge_base, p), "", workspace.rel(config.baselines_dir), paths, Path(chosen.path).stem)
    except DatasetError:
        return None  # reported when the comparison reads it
    if found is None or found.dataset.agent_fingerprint != fingerprint:
        return None
    return found.dataset


def run_check(config: Config, *, git: Git, base: str | None, evaluate_all: bool, err: TextIO) -> Outcome:
    files, problems = dataset_files(config.datasets, defaults=config.datasets == DEFAULT_DATASETS)
    workspace = git.workspace()
    rel = {workspace.rel(f): f for f in files}
    merge_base = git.merge_base(base) if base else None
    changes = git.changes(merge_base) if merge_base else []
    rules = gate_rules(config, git, merge_base)
    config = rules.config
    if evaluate_all or config.select == "all" or merge_base is None:
        reason = "--all" if evaluate_all else "select = all" if config.select == "all" else "no base branch: everything"
        selection = select_all(sorted(rel), reason, changes)
    else:
        selection = select(sorted(rel), changes, path_roles(config, workspace))
    selection.base_ref, selection.merge_base = base, merge_base
    results = Results(tool_version=__version__, selection=selection, shard=config.shard)
    fingerprint = agent_fingerprint(config, git, workspace)
    # Unchanged questions keep their baseline scores only when no agent path changed.
    reuse = config.reuse and merge_base is not None and not selection.agent_changes and fingerprint is not None
    evaluation = Evaluation(config, err=err)
    try:
        for chosen in selection.selected:
            before = _reusable_baseline(git, merge_base, config, workspace, chosen, fingerprint) if reuse and merge_base else None
            result = evaluation.evaluate_file(rel[chosen.path], reuse=before)
            if result is not None:
                result.path = chosen.path
                if result.format not in RECORDED_FORMATS:
                    result.agent_fingerprint = fingerprint
                results.datasets.append(result)
    finally:
        evaluation.close()
    results.run = evaluation.stats()
    results.problems = problems + evaluation.problems
    outcome = conclude(results, config, git, rules=rules)
    if not selection.selected and not results.problems:
        outcome.messages.append("nothing to evaluate: no dataset changed and no agent code changed")
    return outcome


def conclude(results: Results, config: Config, git: Git, *, rules: Rules | None = None) -> Outcome:
    """Compares with the baselines (at the merge-base the selection names), gates, picks the
    outcome and its exit code. ``rules``: the gate's rules when the caller read them already."""
    selection = results.selection or Selection()
    rules = rules or gate_rules(config, git, selection.merge_base)
    results.comparison = _compare(results, selection, rules.config, git)
    return decide(results, rules)


def decide(results: Results, rules: Rules) -> Outcome:
    """The verdict on compared results: passed, failed, or unchecked when an input problem (a bad
    dataset, an unreadable baseline, a dataset of which nothing could be scored) kept part of
    the check from happening. Every view of the run (headline, exit code, outputs, JUnit) reads it."""
    config = rules.config
    kinds = metric_kinds(config, results)
    gate = evaluate_gate(results.datasets, results.comparison or [], config.gate, kinds)
    for dataset in unchecked_datasets(results.datasets, config.gate, kinds):
        results.problems.append(
            Problem(
                path=dataset.path,
                message=f"{dataset.path}: no question has a score on any gated metric, so nothing was checked: "
                "add reference data (tool calls, trajectory, state, response) to its questions, or gate a metric it has "
                "with [gate.metrics.NAME] min / max / max-regression",
            )
        )
    gate.rules_from, gate.config_changes = rules.source, rules.changes
    if results.problems:
        gate.outcome, gate.unchecked = "unchecked", [p.message for p in results.problems[:10]]
    gate.passed = gate.outcome == "passed"
    results.gate = gate
    return Outcome(results=results, exit_code=exit_code(results), config=config)


def exit_code(results: Results) -> int:
    """The exit code the verdict means: 0 passed, 1 failed, 2 could not be checked (bad input)."""
    outcome = results.gate.outcome if results.gate is not None else "passed"
    return int({"passed": ExitCode.PASSED, "failed": ExitCode.GATE_FAILED, "unchecked": ExitCode.BAD_INPUT}[outcome])


def _compare(results: Results, selection: Selection, config: Config, git: Git) -> list[DatasetComparison]:
    merge_base = selection.merge_base
    workspace = git.workspace()
    read = (lambda path: git.show(merge_base, path)) if merge_base else working_tree_reader(workspace.root)
    where = f"at {merge_base[:12]}" if merge_base else "in the working tree"
    baselines_dir = workspace.rel(config.baselines_dir)
    renamed = {s.path: s.renamed_from for s in selection.selected if s.renamed_from}
    comparisons = []
    for dataset in results.datasets:
        old = renamed.get(dataset.path)
        try:
            found = find_baseline(read, where, baselines_dir, [dataset.path, *([old] if old else [])], dataset.name)
        except DatasetError as error:
            results.problems.append(Problem(path=error.path, message=error.message()))
            found = None
        comparison = compare_dataset(
            dataset,
            found.dataset if found else None,
            baseline_path=found.path if found else None,
            seed=config.seed,
            max_question_drop=config.gate.max_question_drop,
        )
        if old and found is not None and found.dataset.path != dataset.path:
            comparison.renamed_from = old
        comparisons.append(comparison)
    for deleted in selection.deleted:
        comparisons.append(DatasetComparison(dataset=Path(deleted).stem, path=deleted, status="removed"))
    return comparisons
