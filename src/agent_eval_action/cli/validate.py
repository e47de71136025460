"""``validate``: every dataset read fully and each problem told on one line; nothing run. The
agent (``--agent``, else the config's) is loaded in a worker, as ``init`` loads it, to check the
tool and agent names the datasets' references give (``--no-agent`` skips it)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import TextIO

from agent_eval_action.config import load_config
from agent_eval_action.models.results import Problem
from agent_eval_action.service import api
from agent_eval_action.service.references import UnknownName, agent_names, unknown_names
from agent_eval_action.system.errors import AgentLoadError, ConfigError, ExitCode
from agent_eval_action.text.markdown import plural


def validate(
    paths: list[str],
    *,
    agent: str | None = None,
    agent_python: str | None = None,
    load: bool = True,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    """Reads every dataset fully and reports each problem on one line; runs nothing. Seed pipeline
    metric definitions files among the paths (without paths: the config's ``metric_definitions``)
    are read as judges, each judge listed. With ``load``, the names the datasets' references
    give are checked against the agent's (:func:`agent_references`)."""
    definitions, paths = api.metric_definitions_among(paths)
    checks = [api.check_metric_definitions(path) for path in definitions]
    if not paths and not definitions:
        checks += api.check_config_metric_definitions()
    problems: list[Problem] = []
    for checked in checks:
        if checked.problem is not None:
            problems.append(checked.problem)
            print(f"1 problem: {checked.path} (metric definitions: see the error below)", file=out)
            continue
        judges = sum(1 for _, is_judge, _ in checked.entries if is_judge)
        print(f"ok: {checked.path} (metric definitions, {judges} judge{'s' if judges != 1 else ''})", file=out)
        for name, is_judge, note in checked.entries:
            print(f"  {'judge' if is_judge else 'skipped'} {name}: {note}", file=out)
    datasets: list[api.Dataset] = []
    listed: list[Problem] = []
    if paths or not definitions:
        found, listed = api.validate(paths)
        problems.extend(listed)
        for dataset in found:
            if dataset.skipped:
                print(f"skipped: {dataset.path}: {dataset.skipped}, not a dataset", file=out)
        datasets = [dataset for dataset in found if not dataset.skipped]
    named, unloaded = agent_references(datasets, agent, agent_python, err) if load else ({}, None)
    for dataset in datasets:
        problems.extend(dataset.problems)
        if dataset.format == "unknown":  # refused whole: its problem says why, and the summary names it
            print(f"{plural(len(dataset.problems), 'problem')}: {dataset.path} (not read: see the error below)", file=out)
            continue
        for warning in dataset.warnings:
            print(f"warning: {warning}", file=err)
        wrong = named.get(dataset.path, [])
        problems.extend(Problem(path=dataset.path, message=unknown.message()) for unknown in wrong)
        # A question naming a tool or agent the agent does not have can never pass: not valid.
        lacking = len({unknown.question for unknown in wrong})
        invalid = len(dataset.problems) + lacking
        status = plural(invalid, "problem") if invalid else "ok"
        # Recorded runs are counted as runs; questions the agent is to run, as questions.
        valid = len(dataset.questions) - lacking
        what = plural(dataset.recorded, "valid question run") if dataset.recorded else plural(valid, "valid question")
        print(f"{status}: {dataset.path} ({dataset.format}, {what})", file=out)
    # A path that is no dataset at all (no such file) has a line too: the summary named only the
    # files it read, so a broken file among a folder's was in the errors alone.
    read = {dataset.path for dataset in datasets}
    for path, count in Counter(problem.path for problem in listed if problem.path not in read).items():
        what = "matched no files" if any(char in path for char in "*?[") else "not read: see the error below"
        print(f"{plural(count, 'problem')}: {path} ({what})", file=out)
    problems.extend([unloaded] if unloaded else [])
    for problem in problems:
        print(f"error: {problem.message}", file=err)
    return int(ExitCode.BAD_INPUT if problems or not (datasets or checks) else ExitCode.PASSED)


def agent_references(
    datasets: list[api.Dataset], agent: str | None, agent_python: str | None, err: TextIO
) -> tuple[dict[str, list[UnknownName]], Problem | None]:
    """Dataset path -> each reference to a tool or agent the agent does not have; and the
    agent's own problem when it did not load (the datasets are still checked, without it). The
    agent is ``agent``, else the config's (found upward); none: nothing is checked. Recorded runs
    are left alone: whatever made them is not this agent."""
    cwd = Path.cwd()
    agent_named = "--agent"  # how an error names the agent: the flag, or the config's key
    if agent is None or agent_python is None:
        try:
            config = load_config(None, anywhere=True)
        except ConfigError as error:
            if agent is None:
                print(f"note: the datasets' tool and agent names are not checked against the agent: {error}", file=err)
                return {}, None
        else:
            if agent is None and config.agent is not None:
                agent, cwd = config.agent, config.import_root()
                agent_named = config.named("--agent")
            agent_python = agent_python or config.agent_python
    to_check = [d for d in datasets if d.format != "unknown" and d.recorded < len(d.questions)]
    if agent is None or not to_check:
        return {}, None
    python, which = api.chosen_agent_python(agent_python, cwd, ours=sys.executable)
    print(which, file=err)
    try:
        names = agent_names(agent, python=python, cwd=cwd)
    except AgentLoadError as error:
        fix = "fix it (or --agent, --agent-python), or skip this check with --no-agent"
        said = AgentLoadError(agent_named if error.setting == "--agent" else error.setting, error.reason)
        return {}, Problem(path=agent, message=f"the agent could not be loaded to check the datasets' tool and agent names: {said}; {fix}")
    return {d.path: unknown_names(names, d.path, d.questions) for d in to_check}, None
