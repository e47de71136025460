"""The CLI's commands as functions: they print, write files and return an exit code."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from agent_eval_action import __version__
from agent_eval_action.discovery import expand_paths
from agent_eval_action.errors import DatasetError, ExitCode, UsageError
from agent_eval_action.models import Problem, Results


def _report_problems(problems: list[Problem], err: TextIO) -> None:
    for problem in problems:
        print(f"error: {problem.message}", file=err)


def validate(paths: list[str], out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Reads every dataset fully and reports each problem on one line; runs nothing."""
    from agent_eval_action.loaders import load_dataset

    files, empty = expand_paths(paths)
    problems = [Problem(path=p, message=f"{p}: matched no dataset files") for p in empty]
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


def _progress(name: str, err: TextIO, quiet: bool) -> Callable[[int], None] | None:
    if quiet or not err.isatty():
        return None
    last = [0.0]

    def show(done: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.2:
            last[0] = now
            print(f"\rscoring {name}: {done} runs", end="", file=err, flush=True)

    return show


def evaluate(
    paths: list[str],
    *,
    config_path: str | None = None,
    output_dir: str | None = None,
    metrics: list[str] | None = None,
    quiet: bool = False,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    """Scores recorded datasets and writes ``results.json``; invalid inputs are reported, valid ones still scored."""
    from agent_eval_action.config import load_config
    from agent_eval_action.loaders import load_dataset
    from agent_eval_action.metrics import MetricContext
    from agent_eval_action.results_io import write_results
    from agent_eval_action.scoring import Scorer
    from agent_eval_action.terminal import render

    config = load_config(config_path).with_overrides(output_dir=output_dir, metrics=metrics)
    files, empty = expand_paths(paths or config.datasets)
    results = Results(tool_version=__version__)
    results.problems.extend(Problem(path=p, message=f"{p}: matched no dataset files") for p in empty)
    context = MetricContext(prices=config.price_table())
    for path in files:
        scorer = Scorer.for_names(config.metrics, context, seed=config.seed, workers=config.worker_count())
        try:
            dataset = load_dataset(path)
            scorer.progress = _progress(dataset.name, err, quiet)
            result = scorer.score_dataset(dataset)
        except (DatasetError, UsageError) as error:
            message = error.message() if isinstance(error, DatasetError) else str(error)
            results.problems.append(Problem(path=path, message=message))
            continue
        finally:
            if scorer.progress is not None:
                print("\r\033[K", end="", file=err, flush=True)
        results.datasets.append(result)
        results.problems.extend(scorer.problems)
        for warning in result.warnings:
            print(f"warning: {warning}", file=err)
    target = write_results(results, Path(config.output_dir) / "results.json")
    print(render(results), file=out)
    _report_problems(results.problems, err)
    print(f"wrote {target}", file=out)
    if not files:
        print("error: no datasets to evaluate: give dataset paths or set `datasets` in agent-eval.toml", file=err)
        return int(ExitCode.BAD_INPUT)
    return int(ExitCode.BAD_INPUT if results.problems else ExitCode.PASSED)
