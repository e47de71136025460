"""The CLI's commands as functions: they print, write files and return an exit code."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from agent_eval_action import __version__
from agent_eval_action.discovery import dataset_files, expand_paths
from agent_eval_action.errors import DatasetError, ExitCode, UsageError
from agent_eval_action.models import Problem

if TYPE_CHECKING:
    from agent_eval_action.config import Config
    from agent_eval_action.flow import Outcome
    from agent_eval_action.publish import GitHubContext


def _report_problems(problems: list[Problem], err: TextIO) -> None:
    for problem in problems:
        print(f"error: {problem.message}", file=err)


def validate(paths: list[str], out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Reads every dataset fully and reports each problem on one line; runs nothing."""
    from agent_eval_action.loaders import load_dataset

    files, problems = dataset_files(paths)
    for path in files:
        try:
            dataset = load_dataset(path)
            count = 0
            bad = 0
            for item in dataset.records:
                if isinstance(item, DatasetError):
                    problems.append(Problem(path=path, message=item.message()))
                    bad += 1
                else:
                    count += 1
        except DatasetError as error:
            problems.append(Problem(path=path, message=error.message()))
            continue
        for warning in dataset.warnings:
            print(f"warning: {warning}", file=err)
        status = "ok" if not bad else f"{bad} invalid"
        print(f"{status}: {path} ({dataset.format}, {count} valid question runs)", file=out)
    _report_problems(problems, err)
    return int(ExitCode.BAD_INPUT if problems or not files else ExitCode.PASSED)


def evaluate(
    paths: list[str],
    *,
    config_path: str | None = None,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    **flags: object,
) -> int:
    """Scores datasets (running the agent where they hold no recorded runs) and writes ``results.json``.

    Invalid inputs are reported and the valid ones still scored and written.
    """
    from agent_eval_action.api import evaluate as evaluate_paths
    from agent_eval_action.config import load_config
    from agent_eval_action.results_io import write_results
    from agent_eval_action.terminal import render
    from agent_eval_action.workflow import redactor_for

    config = load_config(config_path).with_overrides(**flags)
    redactor = redactor_for([config.agent_auth_env], out, err)
    results = evaluate_paths(paths or None, config=config, progress=err)
    target = write_results(results, Path(config.output_dir) / "results.json", redactor)
    print(render(results, config.pass_thresholds()), file=out)
    _report_problems(results.problems, err)
    print(f"wrote {target}", file=out)
    if not results.datasets and not paths:
        print("error: no datasets to evaluate: give dataset paths or set `datasets` in agent-eval.toml", file=err)
    return int(ExitCode.BAD_INPUT if results.problems or not results.datasets else ExitCode.PASSED)


def convert(
    paths: list[str],
    *,
    to: str,
    output: str,
    agent_name: str | None = None,
    config_path: str | None = None,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    **flags: object,
) -> int:
    """Writes the datasets as one golden JSON file, or their runs (recorded, or made now by the
    agent) as a simulation CSV / JSONL."""
    from agent_eval_action.config import load_config
    from agent_eval_action.convert import write_golden, write_runs
    from agent_eval_action.evaluation import Evaluation
    from agent_eval_action.loaders import Record, load_dataset
    from agent_eval_action.workflow import redactor_for

    config = load_config(config_path).with_overrides(**flags)
    redactor_for([config.agent_auth_env], out, err)
    files, problems = dataset_files(paths)
    records: list[Record] = []
    evaluation = Evaluation(config, err=err)
    try:
        for path in files:
            try:
                dataset = load_dataset(path)
                items = list(dataset.records) if to == "golden" else evaluation.traced(dataset)
            except DatasetError as error:
                problems.append(Problem(path=path, message=error.message()))
                continue
            except UsageError as error:
                problems.append(Problem(path=path, message=f"{path}: {error}"))
                continue
            for item in items:
                if isinstance(item, DatasetError):
                    problems.append(Problem(path=path, message=item.message()))
                else:
                    records.append(item)
    finally:
        evaluation.close()
    target = Path(output)
    if to == "golden":
        seen: dict[str, Record] = {}
        for record in records:
            if record.question.id in seen and record.question != seen[record.question.id].question:
                problems.append(
                    Problem(path=output, message=f"question id {record.question.id!r} appears in several inputs with different content")
                )
            seen.setdefault(record.question.id, record)
        count = write_golden((r.question for r in seen.values()), target, agent_name)
        print(f"wrote {count} questions to {target}", file=out)
    else:
        count = write_runs(records, target, to)
        print(f"wrote {count} runs to {target}", file=out)
    _report_problems(problems, err)
    return int(ExitCode.BAD_INPUT if problems or not files else ExitCode.PASSED)


def run(
    *,
    config_path: str | None = None,
    base: str | None = None,
    evaluate_all: bool = False,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    **flags: object,
) -> int:
    """The PR check from a terminal: select, evaluate, compare with the base's baselines, gate."""
    from agent_eval_action.config import load_config
    from agent_eval_action.flow import base_ref
    from agent_eval_action.publish import GitHubContext

    config = load_config(config_path).with_overrides(**flags)
    context = GitHubContext.from_env(os.environ)
    return check_and_publish(config, base=base_ref(base, config), evaluate_all=evaluate_all, context=context, out=out, err=err)


def check_and_publish(config: Config, *, base: str | None, evaluate_all: bool, context: GitHubContext, out: TextIO, err: TextIO) -> int:
    """Runs the check, writes results.json, prints the summary and publishes; returns the exit code."""
    from agent_eval_action.flow import run_check
    from agent_eval_action.git_ops import Git
    from agent_eval_action.workflow import mask, redactor_for

    if context.in_actions and context.token:
        mask(context.token, out)
    redactor_for([config.agent_auth_env], out, err)
    outcome = run_check(config, git=Git(Path.cwd()), base=base, evaluate_all=evaluate_all, err=err)
    return finish(outcome, config, context, out=out, err=err)


def finish(outcome: Outcome, config: Config, context: GitHubContext, *, out: TextIO, err: TextIO) -> int:
    """Writes results.json, prints the summary, publishes, and returns the exit code."""
    from agent_eval_action.flow import metric_kinds
    from agent_eval_action.git_ops import Git
    from agent_eval_action.history import repository_background
    from agent_eval_action.publish import PublishSettings, publish
    from agent_eval_action.results_io import write_results
    from agent_eval_action.terminal import render
    from agent_eval_action.workflow import redactor_for

    redactor = redactor_for([config.agent_auth_env], out, err)
    target = write_results(outcome.results, Path(config.output_dir) / "results.json", redactor)
    rules = outcome.config or config
    thresholds = rules.pass_thresholds()
    # The base runs, baseline history and gate rules: the views' side-by-side rows and trends.
    background = repository_background(outcome.results, Path.cwd(), rules.gate, metric_kinds(rules, outcome.results))
    print(render(outcome.results, thresholds, background), file=out)
    for message in outcome.messages:
        print(message, file=out)
    _report_problems(outcome.results.problems, err)
    settings = PublishSettings(
        comment=config.comment,
        comment_key=config.comment_key,
        templates_dir=config.templates_dir,
        thresholds=thresholds,
        root=Git(Path.cwd()).workspace().root,
    )
    published = publish(outcome.results, Path(config.output_dir), settings, context, out=out, redactor=redactor, background=background)
    print(f"wrote {target}" + (f"; comment: {published.comment_url}" if published.comment_url else ""), file=out)
    return outcome.exit_code


def compare_files(
    current: str,
    baseline: str,
    *,
    config_path: str | None = None,
    output_dir: str | None = None,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    """Compares two results files (datasets matched by path, else by name) and applies the gate."""
    from agent_eval_action.api import compare
    from agent_eval_action.config import load_config
    from agent_eval_action.flow import exit_code
    from agent_eval_action.results_io import write_results
    from agent_eval_action.terminal import render
    from agent_eval_action.workflow import redactor_for

    config = load_config(config_path).with_overrides(output_dir=output_dir)
    now = compare(Path(current), Path(baseline), config=config)
    target = write_results(now, Path(config.output_dir) / "results.json", redactor_for([config.agent_auth_env], out, err))
    print(render(now, config.pass_thresholds()), file=out)
    _report_problems(now.problems, err)
    print(f"wrote {target}", file=out)
    return exit_code(now)


def baseline_update(
    datasets: list[str] | None = None,
    *,
    config_path: str | None = None,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    **flags: object,
) -> int:
    """Evaluates the datasets and writes their baselines (sorted, rounded: unchanged scores rewrite nothing)."""
    from agent_eval_action.config import load_config

    return write_baselines(load_config(config_path).with_overrides(**flags), datasets, out=out, err=err)


def write_baselines(config: Config, datasets: list[str] | None, *, out: TextIO, err: TextIO) -> int:
    """Evaluates the datasets and writes each one's baseline under its repository path; a file of
    the older stem-keyed layout that held it is removed (moved) in the same change."""
    from agent_eval_action.api import evaluate
    from agent_eval_action.baseline import write_baseline
    from agent_eval_action.evaluation import RECORDED_FORMATS
    from agent_eval_action.flow import agent_fingerprint
    from agent_eval_action.git_ops import Git
    from agent_eval_action.workflow import redactor_for

    redactor = redactor_for([config.agent_auth_env], out, err)
    git = Git(Path.cwd())
    workspace = git.workspace()
    baselines_dir = workspace.rel(config.baselines_dir)
    # Recorded with the baselines: a PR whose agent code hashes the same may reuse their scores.
    fingerprint = agent_fingerprint(config, git, workspace)
    results = evaluate(datasets or None, config=config, progress=err)
    for result in results.datasets:
        result.path = workspace.rel(result.path)
        if result.format not in RECORDED_FORMATS:
            result.agent_fingerprint = fingerprint
        written = write_baseline(workspace.root, baselines_dir, result, __version__, redactor)
        shown = Path(os.path.relpath(workspace.file(written.path)))
        print(f"{'wrote' if written.changed else 'unchanged'}: {shown.as_posix()}", file=out)
        if written.moved_from:
            print(f"  moved from {os.path.relpath(workspace.file(written.moved_from))} (the older layout)", file=out)
    _report_problems(results.problems, err)
    return int(ExitCode.BAD_INPUT if results.problems or not results.datasets else ExitCode.PASSED)


def merge(paths: list[str], *, config_path: str | None = None, out: TextIO = sys.stdout, err: TextIO = sys.stderr, **flags: object) -> int:
    """Joins the results of every shard of a run, then compares, gates and publishes as ``run`` does."""
    from agent_eval_action.config import load_config
    from agent_eval_action.publish import GitHubContext

    config = load_config(config_path).with_overrides(**flags)
    return merge_and_finish(paths, config, GitHubContext.from_env(os.environ), out=out, err=err)


def merge_and_finish(paths: list[str], config: Config, context: GitHubContext, *, out: TextIO, err: TextIO) -> int:
    """The shards' results files (paths or globs) joined, compared, gated and published."""
    from agent_eval_action.flow import conclude
    from agent_eval_action.git_ops import Git
    from agent_eval_action.results_io import read_results
    from agent_eval_action.shards import merge_results, merge_scorer

    files, empty = expand_paths(paths)
    if empty or not files:
        raise DatasetError(", ".join(empty or paths), "matched no results files")
    scorer = merge_scorer(config)
    merged = merge_results([(f, read_results(f)) for f in files], scorer)
    print(f"merged {len(files)} shard(s): {sum(len(d.questions) for d in merged.datasets)} question runs", file=out)
    return finish(conclude(merged, config, Git(Path.cwd())), config, context, out=out, err=err)
