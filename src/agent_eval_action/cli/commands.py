"""The command line's and the action's adapter over the service (``api``): each command here
asks ``api`` for the work, then prints, writes the output directory, publishes, and returns the
exit code. Nothing here evaluates, compares or gates.

``COMMANDS`` is the command line's table: each command's handler and what the one set-up step
(:func:`invoke`) prepares for it first: the config (read from here or a folder above, the flags
laid over it), the redaction of its ``agent_auth_env``, the output directory's lock.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

from agent_eval_action.cli.outputs import unwritten, written_results
from agent_eval_action.cli.settings import laid_over
from agent_eval_action.cli.validate import validate
from agent_eval_action.config import Config, load_config
from agent_eval_action.models.plan import CheckPlan, runner_for
from agent_eval_action.models.results import Problem, Results
from agent_eval_action.service import api
from agent_eval_action.system import interrupt
from agent_eval_action.system.collector import OWN_PROCESS, kept_to_exit
from agent_eval_action.system.errors import ExitCode
from agent_eval_action.system.files import LOCK_NAME, output_lock
from agent_eval_action.text.markdown import plural
from agent_eval_action.text.workflow import mask, redactor_for

if TYPE_CHECKING:
    from agent_eval_action.publish.publisher import GitHubContext


def exit_code(results: Results) -> int:
    """The exit code the verdict means: 0 passed, 1 failed, 2 could not be checked (bad input),
    3 could not be checked for no input's fault (the model/API failed, a budget
    skipped questions, the base's side was disturbed); inconclusive is 0, or 1 with on-inconclusive = "fail"."""
    gate = results.gate
    if gate is None:
        return int(ExitCode.PASSED)
    if gate.outcome == "unchecked":
        return int(ExitCode.INFRASTRUCTURE if gate.infrastructure else ExitCode.BAD_INPUT)
    if gate.outcome == "inconclusive":
        return int(ExitCode.GATE_FAILED if gate.on_inconclusive == "fail" else ExitCode.PASSED)
    return int(ExitCode.GATE_FAILED if gate.outcome == "failed" else ExitCode.PASSED)


def _shown(text: str, out: TextIO) -> None:
    """The rendered results, unless there is nothing to show (no dataset was read: an agent
    that did not load), which printed an empty line before "wrote ..."."""
    if text.strip():
        print(text, file=out)


def _report_problems(problems: list[Problem], err: TextIO) -> None:
    for problem in problems:
        print(f"error: {problem.message}", file=err)


def init(agent: str | None, agent_python: str | None, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Writes the starting files (none over an existing one) and prints the next three steps."""
    python, which = api.chosen_agent_python(agent_python, Path.cwd(), ours=sys.executable)
    print(which, file=err)
    done = api.init(agent=agent, agent_python=python)
    if done.agent is None:
        print(
            "note: no --agent given and no agent found (a folder with an agent.py that sets root_agent): "
            "the dataset is a generic template; set `agent` in agent-eval.toml",
            file=err,
        )
    elif done.detected:
        print(f"found the agent {done.agent}", file=out)
    source = "drafted from the agent's tools and sub-agents" if done.agent else "a generic template: no agent to draft it from"
    for path in done.written:
        drafted = f" ({plural(done.questions, 'question')} to fill in, {source})" if path == done.dataset else ""
        print(f"wrote {path}{drafted}", file=out)
    for path in done.skipped:
        print(f"skipped {path}: it exists (init never overwrites a file)", file=out)
    if done.ignored:
        print(f"added agent-eval-results/ to {done.ignored} (what local runs write, not to be committed)", file=out)
    folder = Path(done.dataset).parent.as_posix()
    if done.dataset in done.written:
        first = f"Fill in {done.dataset}: the user's words and the references marked TODO. Check it:"
    else:  # there already: what it holds is the user's, not a draft of ours
        first = "Check the datasets:"
    if done.agent is None:
        first = "Set `agent` in agent-eval.toml (package.module:root_agent), then " + first[0].lower() + first[1:]
    print(
        "\nNext:\n"
        f"  1. {first}\n"
        f"       agent-eval validate {folder}\n"
        "  2. On your default branch, commit, then record the baseline (it hashes the committed agent code) and commit it:\n"
        '       git add agent-eval.toml .gitignore evaluation .github/workflows && git commit -m "Evaluate the agent on every PR"\n'
        "       agent-eval baseline update\n"
        '       git add evaluation/baselines && git commit -m "Baselines of the golden datasets"\n'
        "  3. Name this action's repository in .github/workflows/agent-eval*.yml (your-org/agent-eval-action@v1), and add\n"
        "     your model's key as a repository secret named GOOGLE_API_KEY (Settings > Secrets and variables > Actions;\n"
        "     the workflows pass it to the agent in the step's env:). Push, and open a PR: the check comments on it.\n"
        "     The same check locally: agent-eval check --base main",
        file=out,
    )
    if done.install is None:
        print(
            "note: the workflows install the agent's dependencies with `pip install -r requirements.txt` (their `install:` input), "
            "and there is no requirements.txt, pyproject.toml or setup.py here: write one, or change `install:`",
            file=err,
        )
    elif done.install != "pip install -r requirements.txt":
        print(f"the workflows install the agent's project with `{done.install}` (their `install:` input)", file=out)
    return int(ExitCode.PASSED)


def evaluate(paths: list[str], config: Config, *, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Scores datasets (running the agent where they hold no recorded runs) and writes ``results.json``.

    Invalid inputs are reported and the valid ones still scored and written.
    """
    from agent_eval_action.views.terminal import render

    results = kept_to_exit(api.evaluate(paths or None, config=config, progress=err, collector=OWN_PROCESS))
    target = written_results(results, config, alone=True)
    _shown(render(results, config.pass_thresholds()), out)
    _report_problems(results.problems, err)
    print(f"wrote {target}", file=out)
    if not results.datasets and not paths and not results.problems:  # a problem says why already (an agent that did not load)
        print("error: no datasets to evaluate: give dataset paths or set `datasets` in agent-eval.toml", file=err)
    outage = api.outage(results, config.gate.max_not_run)
    if outage is not None:
        # As `check` says it: the model/API kept the runs from happening, not the agent. Exit 3.
        print(f"error: could not evaluate: {outage}", file=err)
        return int(ExitCode.INFRASTRUCTURE)
    return int(ExitCode.BAD_INPUT if results.problems or not results.datasets else ExitCode.PASSED)


def convert(
    paths: list[str],
    *,
    to: Literal["golden", "csv", "jsonl"],
    output: str,
    config: Config,
    agent_name: str | None = None,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    """Writes the datasets as one golden JSON file, or their runs (recorded, or made now by the
    agent) as a simulation CSV / JSONL."""
    done = api.convert(paths, config, to=to, output=output, agent_name=agent_name, progress=err)
    print(f"wrote {done.count} {'questions' if to == 'golden' else 'runs'} to {done.target}", file=out)
    _report_problems(done.problems, err)
    return int(ExitCode.BAD_INPUT if done.problems else ExitCode.PASSED)


def run(
    config: Config,
    *,
    base: str | None = None,
    evaluate_all: bool = False,
    install: str | None = None,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    """The PR check from a terminal: select, evaluate, compare with the base's baselines, gate.
    ``install``: the command that makes the base's agent's environment, when it runs (the PR's
    agent's was made before, by :func:`agent_python`)."""
    from agent_eval_action.publish.publisher import GitHubContext

    context = GitHubContext.from_env(os.environ)
    return check_and_publish(
        config,
        base=api.base_ref(base, config, os.environ),
        evaluate_all=evaluate_all,
        context=context,
        out=out,
        err=err,
        install=install,
    )


def check_and_publish(
    config: Config,
    *,
    base: str | None,
    evaluate_all: bool,
    context: GitHubContext,
    out: TextIO,
    err: TextIO,
    install: str | None = None,
) -> int:
    """Runs the check, writes results.json, prints the summary and publishes; returns the exit code.
    ``install``: the command that makes the base's agent's environment (compare-with = "base").
    The output directory is held here, not by the set-up: the action runs this too, and a check
    refused before it starts (its base, its environment) leaves no output directory behind."""
    if context.token:
        mask(context.token, out, actions=context.in_actions)

    def announce(plan: CheckPlan) -> None:  # what the check will do, said once its plan is made
        if plan.base_beside:
            cache = "; the model-call cache is off for both sides (a replay would hide drift)" if config.model_cache else ""
            print(
                "compare-with = base: the base's agent runs now beside this one, question by question, and this run is compared "
                f"with it; every model call goes to the model{cache}",
                file=err,
            )

    with output_lock(config.output_dir):
        outcome = kept_to_exit(
            api.run_check(
                config, base=base, evaluate_all=evaluate_all, progress=err, install=install, collector=OWN_PROCESS, announce=announce
            )
        )
        selection = outcome.results.selection
        if selection is not None and not selection.selected and not outcome.results.problems:
            print("nothing to evaluate: no dataset changed and no agent code changed", file=out)
        return finish(outcome, config, context, out=out, err=err)


def finish(outcome: api.Outcome, config: Config, context: GitHubContext, *, out: TextIO, err: TextIO) -> int:
    """Writes results.json, prints the summary, publishes, and returns the exit code. ``config``:
    where and how to publish; the verdict's thresholds are those of ``outcome.config``."""
    from agent_eval_action.publish.publisher import PublishSettings, publish
    from agent_eval_action.views.page import build
    from agent_eval_action.views.terminal import render

    results, rules = outcome.results, outcome.config
    redactor = redactor_for([config.agent_auth_env])
    failed: str | None = None
    target = Path(config.output_dir) / "results.json"
    try:
        target = written_results(results, config)
    except OSError as error:
        failed = f"results.json: {error}"
    thresholds = rules.pass_thresholds()
    # The base runs, baseline history and gate rules: the views' side-by-side rows and trends.
    background = api.background(outcome, Path.cwd())
    # One page for the terminal, the comment, the step summary and report.html, built from the
    # copy without secrets that publishing shows.
    shown = api.redacted(results, redactor)
    built = build(shown, thresholds=thresholds, background=background)
    kept_to_exit((background, shown, built))  # freed by the exit, not object by object
    _shown(render(built), out)
    _report_problems(results.problems, err)
    settings = PublishSettings(
        # An interrupted run writes what finished, but never puts half a verdict on the PR.
        comment=config.comment and not interrupt.requested(),
        comment_key=config.comment_key,
        templates_dir=config.templates_dir,
        thresholds=thresholds,
        root=api.workspace(Path.cwd()).root,
    )
    published = publish(shown, Path(config.output_dir), settings, context, out=out, redactor=redactor, background=background, built=built)
    failed = failed or published.unwritten
    if failed:
        return unwritten(Path(config.output_dir), failed, err)
    print(f"wrote {target}" + (f"; comment: {published.comment_url}" if published.comment_url else ""), file=out)
    return exit_code(results)


def compare_files(current: str, baseline: str, config: Config, *, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Compares two results files (datasets matched by path, else by name) and applies the gate."""
    from agent_eval_action.views.terminal import render

    results = kept_to_exit(api.compare(Path(current), Path(baseline), config=config))
    target = written_results(results, config, alone=True)
    _shown(render(results, config.pass_thresholds()), out)
    _report_problems(results.problems, err)
    print(f"wrote {target}", file=out)
    return exit_code(results)


def write_baselines(config: Config, datasets: list[str] | None, *, out: TextIO, err: TextIO) -> int:
    """Evaluates the datasets, writes each one's baseline (sorted, rounded: unchanged scores
    rewrite nothing), and says which files changed."""
    update = kept_to_exit(api.update_baselines(config, datasets, progress=err, collector=OWN_PROCESS))
    if interrupt.requested():
        # One story: main adds only the signal's name.
        if update.written:
            print("interrupted: the baselines below were written whole before it; no other was written", file=err)
        else:
            print("interrupted: no baseline was written (a baseline is never made of part of a run)", file=err)
    workspace = api.workspace(Path.cwd())
    recorded = {result.path: result for result in update.results.datasets}
    for written in update.written:
        shown = Path(os.path.relpath(workspace.file(written.path)))
        result = recorded.get(written.dataset)
        counted = (
            f" ({plural(len({q.id for q in result.questions}), 'question')}, {plural(len(result.questions), 'run')})" if result else ""
        )
        print(f"{'wrote' if written.changed else 'unchanged'} {shown.as_posix()}{counted}", file=out)
        if written.moved_from:
            print(f"  moved from {os.path.relpath(workspace.file(written.moved_from))} (the older layout)", file=out)
    for result in update.results.datasets:
        errors = sum(1 for q in result.questions if q.status == "error")
        if errors:
            print(
                f"warning: {result.path}: {errors} of {plural(len(result.questions), 'question run')} ended in an error, and its baseline records them",
                file=err,
            )
    if update.uncommitted and update.written:
        files = ", ".join(update.uncommitted[:5]) + (", ..." if len(update.uncommitted) > 5 else "")
        print(
            f"warning: the agent's code has changes not committed ({files}): these baselines record no agent fingerprint, "
            "so no PR can reuse their scores; commit, then run `baseline update` again",
            file=err,
        )
    for line in update.unrecorded:
        print(f"error: {line}; run `baseline update` again when the model API answers", file=err)
    _report_problems(update.results.problems, err)
    if update.results.problems or not update.results.datasets:
        return int(ExitCode.BAD_INPUT)
    return int(ExitCode.INFRASTRUCTURE if update.unrecorded else ExitCode.PASSED)


def merge(paths: list[str], config: Config, *, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Joins the results of every shard of a run, then compares, gates and publishes as ``check`` does."""
    from agent_eval_action.publish.publisher import GitHubContext

    return merge_and_finish(paths, config, GitHubContext.from_env(os.environ), out=out, err=err)


def merge_and_finish(paths: list[str], config: Config, context: GitHubContext, *, out: TextIO, err: TextIO) -> int:
    """The shards' results files (paths or globs) joined, compared, gated and published (the
    output directory held here, as in :func:`check_and_publish`)."""
    with output_lock(config.output_dir):
        outcome = api.merge(paths, config)
        runs = sum(len(d.questions) for d in outcome.results.datasets)
        print(f"merged {plural(len(outcome.sources), 'shard')}: {plural(runs, 'question run')}", file=out)
        return finish(outcome, config, context, out=out, err=err)


def report(
    results_path: str,
    baseline_path: str | None = None,
    *,
    config: Config,
    output: str | None = None,
    out: TextIO = sys.stdout,
) -> int:
    """``report RESULTS.json [--baseline B.json]``: report.html from files. The base runs come
    from ``--baseline`` (a results or baseline file, datasets matched by path, else by name);
    without it, from the repository the command runs in when the results were compared there,
    with the baselines' history. Writes next to RESULTS.json unless ``output`` says where."""
    from agent_eval_action.views.report import context, render_context, write_page

    results = api.read_results(results_path)
    before = api.read_results(baseline_path) if baseline_path is not None else None
    background = api.background_of_files(results, config, before, baseline_path, Path.cwd())
    if baseline_path is not None and results.comparison is None:  # results of `evaluate`: compared for the page, no verdict made
        results = api.compare(results, baseline_path, config=config, gate=False)
    target = Path(output) if output else Path(results_path).with_name("report.html")
    shown = context(results, thresholds=config.pass_thresholds(), background=background)
    # Into a run's output directory (it holds our lock file) only while no run writes there.
    held = output_lock(target.parent) if (target.parent / LOCK_NAME).is_file() else contextlib.nullcontext()
    with held:
        write_page(render_context(shown), target)
    counts = shown["counts"]
    base = f"; base runs from {background.base_label}" if background.base_runs else "; no base runs to show beside them"
    shown_counts = (
        f"{plural(counts['all'], 'question run')}, {counts['regressed']} got worse, {counts['failing']} below threshold or in error"
    )
    print(f"wrote {target} ({shown_counts}{base})", file=out)
    return int(ExitCode.PASSED)


# -- the command line's table --------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One command as the command line asked for it, after the set-up."""

    args: argparse.Namespace
    out: TextIO
    err: TextIO
    loaded: Config | None = None

    @property
    def config(self) -> Config:
        assert self.loaded is not None, "a command that reads the config names its flags in COMMANDS"
        return self.loaded


@dataclass(frozen=True)
class Command:
    """A command's handler and what :func:`invoke` prepares for it."""

    handler: Callable[[Call], int]
    # The flags laid over the config (read from the working directory or a folder above):
    # ``settings.laid_over``; None: the command reads no config.
    flags: tuple[str, ...] | None = None
    # The output directory held for the whole command (``check`` and ``merge`` hold it in the
    # functions they share with the action).
    lock: bool = False
    # Said on stderr before anything else.
    note: str | None = None


def invoke(command: Command, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The set-up every command shares, once, then the command: the config with the flags laid
    over it, its ``agent_auth_env`` redacted from everything printed from here on, the output
    directory held while the command runs."""
    if command.note:
        print(command.note, file=err)
    if command.flags is None:
        return command.handler(Call(args, out, err))
    config = load_config(args.config, anywhere=True)
    if command.flags:
        config = config.with_overrides(**{name: getattr(args, name) for name in command.flags})
    if command.flags and "agent_python" in command.flags:
        config = agent_python(config, getattr(args, "install", None), os.environ, err)
    redactor_for([config.agent_auth_env], out, err)
    with output_lock(config.output_dir) if command.lock else contextlib.nullcontext():
        return command.handler(Call(args, out, err, config))


def agent_python(config: Config, install: str | None, env: Mapping[str, str], log: TextIO) -> Config:
    """The agent's Python, chosen the same way by every command and the action, and said in one
    line on ``log``: the ``agent-python`` setting; else the venv the ``install`` command makes
    (``run.agent.venvs.install_environment``: it runs whenever given, the base's agent may need it);
    else the repository's ``.venv`` / ``venv`` with google-adk; else ours."""
    if install and not config.agent_python:
        python = api.install_environment(install, Path.cwd(), env, log)
        print(f"the agent's Python: {python} (the venv the install command made: {install}; agent-python overrides)", file=log)
        return config.with_overrides(agent_python=python)
    if runner_for(config.agent, config.agent_url, config.in_process) != "workers":
        return config
    found, which = api.chosen_agent_python(config.agent_python, Path.cwd(), ours=sys.executable)
    print(which, file=log)
    # Found, not given: the base side of a check keeps its own config's (base_run.base_config).
    return config if found == config.agent_python else config.model_copy(update={"agent_python": found})


def _check(call: Call) -> int:
    args = call.args
    return run(call.config, base=args.base, evaluate_all=args.evaluate_all, install=args.install, out=call.out, err=call.err)


def _action(call: Call) -> int:
    from agent_eval_action.cli.action import main

    return main(out=call.out, err=call.err)


def _command(name: str, handler: Callable[[Call], int], *, lock: bool = False, note: str | None = None) -> Command:
    return Command(handler, laid_over(name), lock=lock, note=note)


def _fork_comment(call: Call) -> int:
    from agent_eval_action.cli.action import fork_comment

    return fork_comment(call.args.comment_file, comment_key=call.args.comment_key, out=call.out)


COMMANDS: dict[str, Command] = {
    "init": _command("init", lambda c: init(c.args.agent, c.args.agent_python, out=c.out, err=c.err)),
    "validate": _command(
        "validate",
        lambda c: validate(
            c.args.paths, agent=c.args.agent, agent_python=c.args.agent_python, load=c.args.load_agent, out=c.out, err=c.err
        ),
    ),
    "evaluate": _command("evaluate", lambda c: evaluate(c.args.paths, c.config, out=c.out, err=c.err), lock=True),
    "check": _command("check", _check),
    "run": _command("run", _check, note="note: `run` is renamed `check` (as in Python's check()); `run` goes away in the next release"),
    "compare": _command("compare", lambda c: compare_files(c.args.current, c.args.baseline, c.config, out=c.out, err=c.err), lock=True),
    "baseline": _command("baseline", lambda c: write_baselines(c.config, c.args.datasets, out=c.out, err=c.err)),
    "merge": _command("merge", lambda c: merge(c.args.paths, c.config, out=c.out, err=c.err)),
    "report": _command("report", lambda c: report(c.args.results, c.args.baseline, config=c.config, output=c.args.output, out=c.out)),
    "convert": _command(
        "convert",
        lambda c: convert(
            c.args.paths, to=c.args.to, output=c.args.output, config=c.config, agent_name=c.args.agent_name, out=c.out, err=c.err
        ),
    ),
    "action": _command("action", _action),
    "fork-comment": _command("fork-comment", _fork_comment),
}
