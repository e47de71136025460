"""The Python API: the same work as the command line, returning data and printing nothing.

Problems (a broken file, an agent that cannot be loaded) and warnings are in the returned
``Results``; only a setting that makes the call impossible (an unknown metric, a bad config
file) raises, as ``ConfigError``. The caller's process is left as found: the agent runs in
worker processes of its own, and nothing global (gc, OpenTelemetry, ``sys.path``, logging)
outlives the call.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from agent_eval_action import __version__
from agent_eval_action.config import Config, load_config
from agent_eval_action.errors import DatasetError
from agent_eval_action.models import Problem, Question, Results


@dataclass
class Dataset:
    """A dataset file as loaded: its questions (recorded runs keep their traces in ``records``)."""

    path: str
    name: str
    format: str
    questions: list[Question]
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _config(config: Config | str | os.PathLike[str] | None, settings: dict[str, Any], progress: TextIO | None = None) -> Config:
    """The config to run with: ``config`` (a path, or ``Config``), the settings laid over it; no
    progress line unless a stream was given for it."""
    base = config if isinstance(config, Config) else load_config(None if config is None else str(config))
    chosen = {key: value for key, value in settings.items() if value is not None}
    if progress is None:
        chosen["progress"] = "never"
    return base.with_overrides(**chosen)


def load(path: str | os.PathLike[str]) -> Dataset:
    """Reads a dataset file (any supported format) without running anything."""
    from agent_eval_action.loaders import load_dataset

    try:
        loaded = load_dataset(str(path))
    except DatasetError as error:
        return Dataset(path=str(path), name=Path(path).stem, format="unknown", questions=[], problems=[_problem(error)])
    questions, problems = [], []
    for item in loaded.records:
        if isinstance(item, DatasetError):
            problems.append(_problem(item))
        else:
            questions.append(item.question)
    return Dataset(
        path=loaded.path, name=loaded.name, format=loaded.format, questions=questions, problems=problems, warnings=loaded.warnings
    )


def _problem(error: DatasetError) -> Problem:
    return Problem(path=error.path, message=error.message())


def evaluate(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    *,
    config: Config | str | os.PathLike[str] | None = None,
    agent: str | None = None,
    metrics: Sequence[str] | None = None,
    progress: TextIO | None = None,
    **settings: Any,
) -> Results:
    """Scores datasets (running ``agent`` where they hold no recorded runs); no baseline, no gate.

    ``paths``: files, directories or globs (default: the config's ``datasets``). ``progress``: a
    stream for the progress line of long runs (default: none). ``settings``: any config setting
    by its Python name (``agent_url``, ``runs``, ``workers``, ``model_cache``...).
    """
    from agent_eval_action.config import DEFAULT_DATASETS
    from agent_eval_action.discovery import dataset_files
    from agent_eval_action.evaluation import Evaluation

    chosen = _config(config, {"agent": agent, "metrics": list(metrics) if metrics is not None else None, **settings}, progress)
    given = [str(p) for p in ([paths] if isinstance(paths, str | os.PathLike) else paths or [])]
    files, problems = dataset_files(given or chosen.datasets, defaults=not given and chosen.datasets == DEFAULT_DATASETS)
    results = Results(tool_version=__version__, problems=problems)
    evaluation = Evaluation(chosen, err=progress or io.StringIO())
    try:
        for path in files:
            result = evaluation.evaluate_file(path)
            if result is not None:
                results.datasets.append(result)
    finally:
        evaluation.close()
    results.run = evaluation.stats()
    results.problems.extend(evaluation.problems)
    return results


def compare(
    current: Results | str | os.PathLike[str],
    baseline: Results | str | os.PathLike[str],
    *,
    config: Config | str | os.PathLike[str] | None = None,
) -> Results:
    """``current`` with its comparison to ``baseline`` (datasets matched by path, else name) and
    the gate's verdict filled in. Results files may be given by path."""
    from agent_eval_action.comparison import compare_dataset
    from agent_eval_action.flow import decide
    from agent_eval_action.results_io import read_results
    from agent_eval_action.rules import Rules

    chosen = _config(config, {})
    now = (current if isinstance(current, Results) else read_results(Path(current))).model_copy(deep=True)
    before = baseline if isinstance(baseline, Results) else read_results(Path(baseline))
    by_path = {d.path: d for d in before.datasets}
    by_name = {d.name: d for d in before.datasets}
    where = None if isinstance(baseline, Results) else str(baseline)
    now.comparison = [
        compare_dataset(
            d,
            by_path.get(d.path) or by_name.get(d.name),
            baseline_path=where,
            seed=chosen.seed,
            max_question_drop=chosen.gate.max_question_drop,
        )
        for d in now.datasets
    ]
    return decide(now, Rules(config=chosen, source=chosen.source or "the defaults")).results


def check(
    *,
    config: Config | str | os.PathLike[str] | None = None,
    base: str | None = None,
    evaluate_all: bool = False,
    cwd: str | os.PathLike[str] | None = None,
    **settings: Any,
) -> Results:
    """The whole PR check in the repository at ``cwd``: select what changed since the merge-base
    with ``base``, evaluate it, compare with the baselines there and gate, with the gate's rules
    from the base. Nothing is posted or written: publish the returned results as you like."""
    from agent_eval_action.flow import base_ref, run_check
    from agent_eval_action.git_ops import Git

    chosen = _config(config, settings)
    outcome = run_check(
        chosen, git=Git(Path(cwd) if cwd else Path.cwd()), base=base_ref(base, chosen), evaluate_all=evaluate_all, err=io.StringIO()
    )
    return outcome.results


class GateFailed(AssertionError):
    """Raised by :func:`assert_passed`; its message lists why, one reason a line."""


def assert_passed(results: Results) -> Results:
    """For tests: returns ``results`` when the gate passed (or, without a gate, nothing failed to
    run), else raises ``GateFailed`` whose message a reviewer reads as is."""
    lines: list[str] = []
    gate = results.gate
    if gate is not None and gate.outcome != "passed":
        lines.append(f"agent evaluation {'failed' if gate.outcome == 'failed' else 'could not be checked'}:")
        lines.extend(f"  - {reason}" for reason in gate.unchecked)
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
