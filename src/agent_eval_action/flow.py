"""The whole check, one direction: select -> evaluate -> read baselines -> compare -> gate.

Used by ``run`` (and later the action entrypoint). Collaborators come in as arguments.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from agent_eval_action import __version__
from agent_eval_action.baseline import read_baseline
from agent_eval_action.compare import compare_dataset
from agent_eval_action.config import Config
from agent_eval_action.discovery import expand_paths
from agent_eval_action.errors import DatasetError, ExitCode, InfrastructureError
from agent_eval_action.evaluation import Evaluation
from agent_eval_action.gate import evaluate_gate
from agent_eval_action.git_ops import Git
from agent_eval_action.models import DatasetComparison, Problem, Results, Selection
from agent_eval_action.selection import select, select_all


@dataclass
class Outcome:
    results: Results
    exit_code: int
    messages: list[str] = field(default_factory=list)


def base_ref(flag: str | None, config: Config) -> str | None:
    """--base, else the config's base, else the PR's base branch in GitHub Actions."""
    return flag or config.base or os.environ.get("GITHUB_BASE_REF") or None


def metric_kinds(config: Config | None = None) -> dict[str, str]:
    """Metric name -> kind; judge metrics (configured ones, and any recorded with a judge) are "judge"."""
    from agent_eval_action.metrics import REGISTRY

    kinds: dict[str, str] = {name: metric.kind for name, metric in REGISTRY.items()}
    if config is not None:
        from agent_eval_action.judges.setup import judge_names

        kinds.update(dict.fromkeys(judge_names(config), "judge"))
    return kinds


def run_check(config: Config, *, git: Git, base: str | None, evaluate_all: bool, err: TextIO) -> Outcome:
    files, empty = expand_paths(config.datasets)
    problems = [Problem(path=p, message=f"{p}: matched no dataset files") for p in empty if not _is_glob(p)]
    rel = {_relative(git, f): f for f in files}
    merge_base = git.merge_base(base) if base else None
    if evaluate_all or config.select == "all" or merge_base is None:
        reason = "--all" if evaluate_all else "select = all" if config.select == "all" else "no base branch: everything"
        selection = select_all(sorted(rel), reason)
    else:
        selection = select(
            sorted(rel),
            git.changes(merge_base),
            dataset_globs=config.datasets,
            baselines_dir=config.baselines_dir,
            agent_paths=config.agent_paths,
        )
    selection.base_ref, selection.merge_base = base, merge_base
    results = Results(tool_version=__version__, selection=selection, shard=config.shard)
    evaluation = Evaluation(config, err=err)
    try:
        for chosen in selection.selected:
            result = evaluation.evaluate_file(rel[chosen.path])
            if result is not None:
                result.path = chosen.path
                results.datasets.append(result)
    finally:
        evaluation.close()
    results.problems = problems + evaluation.problems
    outcome = conclude(results, config, git)
    if not selection.selected:
        outcome.messages.append("nothing to evaluate: no dataset changed and no agent code changed")
    return outcome


def conclude(results: Results, config: Config, git: Git) -> Outcome:
    """Compares with the baselines (at the merge-base the selection names), gates, picks the exit code."""
    problems = list(results.problems)
    selection = results.selection or Selection()
    results.comparison = _compare(results, selection, config, git, selection.merge_base, problems)
    results.problems = problems
    results.gate = evaluate_gate(results.datasets, results.comparison, config.gate, metric_kinds(config))
    code = ExitCode.BAD_INPUT if problems else ExitCode.PASSED if results.gate.passed else ExitCode.GATE_FAILED
    return Outcome(results=results, exit_code=int(code))


def _compare(
    results: Results, selection: Selection, config: Config, git: Git, merge_base: str | None, problems: list[Problem]
) -> list[DatasetComparison]:
    comparisons = []
    for dataset in results.datasets:
        try:
            baseline, path = read_baseline(git if merge_base else None, merge_base, config.baselines_dir, dataset)
        except DatasetError as error:
            problems.append(Problem(path=error.path, message=error.message()))
            baseline, path = None, None
        comparisons.append(
            compare_dataset(dataset, baseline, baseline_path=path, seed=config.seed, max_question_drop=config.gate.max_question_drop)
        )
    for deleted in selection.deleted:
        comparisons.append(DatasetComparison(dataset=Path(deleted).stem, path=deleted, status="removed"))
    return comparisons


def _is_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?[")


def _relative(git: Git, path: str) -> str:
    try:
        return git.relative(Path(path))
    except (ValueError, InfrastructureError):  # outside a repository: keep it as given
        return Path(path).as_posix()
