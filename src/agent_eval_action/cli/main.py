"""Command line: argument parsing and the one place where errors become messages and exit codes.

Only the standard library is imported at start so ``--help`` stays fast; each command
imports what it needs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from typing import TextIO

from agent_eval_action import __version__

EPILOG = (
    "exit codes: 0 passed, 1 gate failed, 2 bad input or config, 3 infrastructure failure, "
    "130 / 143 interrupted by SIGINT / SIGTERM (what finished is written)"
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agent_eval_action",
        description="Evaluate ADK agents on golden datasets, compare with the baseline, gate pull requests.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"agent-eval-action {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    init = sub.add_parser(
        "init",
        help="start here: write agent-eval.toml, a first dataset drafted from the agent, the PR and baseline workflows",
        description="Writes agent-eval.toml, evaluation/datasets/<agent>_golden.json (a question per tool and sub-agent of the "
        "agent, to fill in), .github/workflows/agent-eval.yml and agent-eval-baseline.yml; never overwrites a file.",
        epilog=EPILOG,
    )
    init.add_argument("--agent", help="the ADK agent, module:attr (e.g. app.agent:root_agent) or an agent directory (default: found)")
    init.add_argument("--agent-python", help="the Python of the agent's own environment, which loads it (default: this one)")

    validate = sub.add_parser("validate", help="check datasets without running anything", epilog=EPILOG)
    validate.add_argument("paths", nargs="*", metavar="PATH", help="dataset files, directories or globs (default: the config's datasets)")

    evaluate = sub.add_parser("evaluate", help="score datasets (no baseline, no gate)", epilog=EPILOG)
    evaluate.add_argument("paths", nargs="*", metavar="PATH", help="dataset files, directories or globs (default: the config's datasets)")
    evaluate.add_argument("--config", help="config file (default: agent-eval.toml, else [tool.agent-eval] in pyproject.toml)")
    evaluate.add_argument("--output-dir", help="where results.json goes (default: agent-eval-results)")
    evaluate.add_argument("--metrics", type=_names, help="comma-separated metric names (default: all deterministic metrics)")
    _install_flag(evaluate)
    _agent_flags(evaluate)

    # `run` was this command's name in 0.1; it stays an alias for one release (a note says so).
    run = sub.add_parser(
        "check",
        aliases=["run"],
        help="the PR check: select, evaluate, compare with the base branch's baselines, gate (Python: check())",
        epilog=EPILOG,
    )
    run.add_argument("--config", help="config file")
    run.add_argument("--datasets", nargs="+", metavar="GLOB", help="dataset globs (default: the config's datasets)")
    run.add_argument("--base", help="base branch or ref (default: $GITHUB_BASE_REF; none: evaluate everything)")
    run.add_argument("--all", dest="evaluate_all", action="store_true", help="evaluate every dataset, not only the changed ones")
    run.add_argument("--output-dir", help="where results.json goes (default: agent-eval-results)")
    run.add_argument("--metrics", type=_names, help="comma-separated metric names")
    run.add_argument("--no-comment", dest="comment", action="store_const", const=False, help="do not post a PR comment")
    run.add_argument("--shard", help="evaluate the i-th of n deterministic slices of the questions, as i/n")
    run.add_argument(
        "--no-reuse",
        dest="reuse",
        action="store_const",
        const=False,
        help="run every selected question, even those unchanged since the baseline",
    )
    run.add_argument(
        "--compare-with",
        choices=("baseline", "base"),
        help="compare with the baselines stored on the base branch (default), or with the base's agent run now, beside this one",
    )
    _install_flag(run, "; with --compare-with base, the base's agent gets its own, made the same way")
    _agent_flags(run)

    compare = sub.add_parser("compare", help="compare two results files and apply the gate", epilog=EPILOG)
    compare.add_argument("current", help="results.json of this run")
    compare.add_argument("baseline", help="results.json (or baseline file) to compare with")
    compare.add_argument("--config", help="config file (gate settings)")
    compare.add_argument("--output-dir", help="where the compared results.json goes")

    baseline = sub.add_parser("baseline", help="manage baseline files")
    baseline_sub = baseline.add_subparsers(dest="baseline_command", metavar="ACTION", required=True)
    update = baseline_sub.add_parser("update", help="evaluate datasets and write their baselines", epilog=EPILOG)
    update.add_argument("--datasets", nargs="+", metavar="GLOB", help="dataset globs (default: the config's datasets)")
    update.add_argument("--config", help="config file")
    _install_flag(update)
    _agent_flags(update)

    merge = sub.add_parser("merge", help="join the results.json of every shard, then compare, gate and publish", epilog=EPILOG)
    merge.add_argument("paths", nargs="+", metavar="RESULTS", help="the shards' results.json files (globs work)")
    merge.add_argument("--config", help="config file")
    merge.add_argument("--output-dir", help="where the merged results.json goes")
    merge.add_argument("--no-comment", dest="comment", action="store_const", const=False, help="do not post a PR comment")

    report = sub.add_parser(
        "report",
        help="write report.html from a results.json (and the base's results to show beside it)",
        description="A self-contained page: the verdict, every metric with its change and trend, every question run with its "
        "conversation, tool calls, trajectory, final state and scores, the base run beside the ones that got worse.",
        epilog=EPILOG,
    )
    report.add_argument("results", metavar="RESULTS", help="results.json of a run")
    report.add_argument(
        "--baseline", metavar="B", help="results.json or baseline file of the base (default: the baselines in this repository)"
    )
    report.add_argument("--output", "-o", help="the page to write (default: report.html beside RESULTS)")
    report.add_argument("--config", help="config file (gate rules and pass thresholds)")

    sub.add_parser("action", help="the GitHub Action's entrypoint: reads INPUT_* and GITHUB_* variables", epilog=EPILOG)

    fork = sub.add_parser(
        "fork-comment",
        help="in a workflow_run job: post a fork PR's comment.md on the PR whose head is the run's head commit",
        description="Trusts nothing from the artifact but its text: the PR comes from the triggering run's head commit "
        "(asked of GitHub), the marker is built here, only the token's own comment is edited, the body is capped.",
        epilog=EPILOG,
    )
    fork.add_argument("comment_file", metavar="COMMENT_MD", help="comment.md from the fork run's artifact")
    fork.add_argument("--comment-key", default="default", help="the comment key the fork's run used (default: default)")

    convert = sub.add_parser(
        "convert",
        help="rewrite datasets as golden JSON, or their runs as a simulation CSV / JSONL",
        description="--to golden: ADK .test.json, eval sets, eval history and runs become one golden file. "
        "--to csv/jsonl: recorded runs are rewritten; datasets without runs are run through --agent / --agent-url first.",
        epilog=EPILOG,
    )
    convert.add_argument("paths", nargs="+", metavar="PATH", help="dataset files, directories or globs")
    convert.add_argument("--to", choices=["golden", "csv", "jsonl"], required=True, help="what to write")
    convert.add_argument("--output", "-o", required=True, help="the file to write")
    convert.add_argument("--agent-name", help="with --to golden: the agents_evaluated entry for every question")
    convert.add_argument("--config", help="config file")
    _agent_flags(convert)
    # An alias (run) maps to its command's parser: each parser once.
    for command in [*dict.fromkeys(sub.choices.values()), update]:
        if command is not baseline:
            command.add_argument("--debug", action="store_true", help="print the traceback of an unexpected error (else: debug.log)")
            loudness = command.add_mutually_exclusive_group()
            loudness.add_argument("--verbose", "-v", action="store_true", help="log what it is doing, not only warnings")
            loudness.add_argument("--quiet", "-q", action="store_true", help="log errors only (no warnings)")
    return parser


def _install_flag(parser: argparse.ArgumentParser, more: str = "") -> None:
    """``--install``: the agent's venv made by the user's command (``commands.agent_python``)."""
    parser.add_argument(
        "--install",
        metavar="COMMAND",
        help="shell command that installs the agent's dependencies into a venv of its own, outside the repository, "
        f"which then runs the agent (--agent-python overrides){more}",
    )


def _agent_flags(parser: argparse.ArgumentParser) -> None:
    agent = parser.add_argument_group("running the agent (datasets without recorded runs)")
    agent.add_argument("--agent", help="ADK agent to run: module:attr (e.g. app.agent:root_agent) or an agent directory")
    agent.add_argument("--agent-python", help="the Python of the agent's own environment, which runs it (default: this one)")
    agent.add_argument(
        "--in-process", action="store_const", const=True, help="run the agent in this process instead of worker processes (debugging)"
    )
    agent.add_argument(
        "--no-warm-start",
        dest="warm_start",
        action="store_const",
        const=False,
        help="spawn each agent worker (it imports ADK and the agent itself) instead of forking them from one that loaded the agent once",
    )
    agent.add_argument("--model-cache", metavar="DIR", help="record the agent's model calls in DIR and replay them when asked again")
    agent.add_argument("--workers", type=int, help="agent worker processes the questions are spread over (default: CPUs, at most 4)")
    agent.add_argument("--agent-url", help="a deployed ADK API server (adk api_server, Cloud Run) to run the questions against")
    agent.add_argument("--app-name", help="app name on the API server (default: each question's first agents_evaluated entry)")
    agent.add_argument(
        "--concurrency",
        type=_concurrency,
        help="questions in flight at once: auto (the default) adapts to the model API, halving on 429s; or a fixed number",
    )
    agent.add_argument("--max-concurrency", type=int, help="the most questions in flight with --concurrency auto (default 64)")
    agent.add_argument("--max-model-calls", type=int, help="budget: no new question starts after this many model calls of the agent")
    agent.add_argument("--max-cost-usd", type=float, help="budget: no new question starts once the agent's model calls cost this much")
    agent.add_argument(
        "--quota",
        action="append",
        metavar="MODEL=RATE",
        help="the model API's quota with this key, paced to by the agent and the judges together: "
        "MODEL=120rpm[,1000000tpm] (repeatable; default: learnt from the API's 429s)",
    )
    agent.add_argument("--runs", type=int, help="run every question K times, in distinct sessions (default 1)")
    agent.add_argument("--timeout", type=float, help="seconds per attempt of one question (default 300)")
    agent.add_argument("--retries", type=int, help="retries on 429 / 503 / deadline errors (default 3)")
    agent.add_argument("--progress", choices=["auto", "always", "never"], help="progress output: auto = live on a terminal only")


def _concurrency(text: str) -> int | str:
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither auto nor a whole number") from None


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command with stdout and stderr redacted and defused (see ``workflow.LogStream``):
    nothing this process prints can carry a secret or issue a workflow command we did not mean."""
    from agent_eval_action.core.redaction import Redactor
    from agent_eval_action.core.workflow import LogStream

    out, err = LogStream(sys.stdout, Redactor.from_env(os.environ)), LogStream(sys.stderr, Redactor.from_env(os.environ))
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err  # what libraries print goes the same way
    try:
        return _run(argv, out, err)
    finally:
        for stream in (out, err):
            stream.drain()
        sys.stdout, sys.stderr = saved


def _run(argv: Sequence[str] | None, out: TextIO, err: TextIO) -> int:
    args = build_parser().parse_args(argv)
    from agent_eval_action.core import reaper

    # Before any worker starts: what the agent leaves behind stays ours to kill (core/reaper.py).
    with reaper.subreaping():
        return _command(args, out, err)


def _command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _prestart(args)
    from agent_eval_action.core import interrupt
    from agent_eval_action.core.logs import cli_logging

    with cli_logging(err, verbose=getattr(args, "verbose", False), quiet=getattr(args, "quiet", False)), interrupt.handling_signals():
        code = _dispatch(args, out, err)
        signum = interrupt.requested()
        if signum is None:
            return code
        # Whatever the verdict of the part that ran: the run did not finish, and says how it ended.
        name = signal.Signals(signum).name
        if args.command == "baseline":  # it said which baselines it wrote, if any: none is made of part of a run
            print(f"interrupted by {name}", file=err)
        else:
            print(
                f'interrupted by {name}: what finished is written; the questions that had not finished are skipped ("interrupted")',
                file=err,
            )
        return interrupt.exit_code(signum)


def _prestart(args: argparse.Namespace) -> None:
    """``evaluate --agent``: the agent's workers start now, importing ADK while we import the
    rest of us; the run adopts them if its config starts them the same way (``service.early_start``)."""
    if args.command != "evaluate" or not args.agent or args.in_process or args.agent_url or args.install:
        return
    from agent_eval_action.service.early_start import start_agent_early

    start_agent_early(
        args.agent,
        python=args.agent_python,
        model_cache=args.model_cache,
        workers=args.workers,
        paths=args.paths,
        runs=args.runs,
        warm_start=args.warm_start is not False,
    )


def _dispatch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The command's row of ``commands.COMMANDS``, run after the one set-up they share."""
    from agent_eval_action.core.errors import AgentEvalError, ExitCode

    try:
        from agent_eval_action.cli.commands import COMMANDS, invoke

        command = COMMANDS.get(args.command)
        if command is None:
            return int(ExitCode.BAD_INPUT)
        return invoke(command, args, out, err)
    except AgentEvalError as error:
        print(f"error: {error}", file=err)
        return int(error.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=err)
        return 130
    except Exception as error:  # noqa: BLE001 - the one place an unexpected error becomes exit 3, never 1
        return _unexpected(error, args, err)


def _unexpected(error: Exception, args: argparse.Namespace, err: TextIO) -> int:
    """Exit 3 with one line naming what failed; the traceback goes to debug.log (or, with --debug,
    to stderr). Exit 1 must only ever mean that the gate failed."""
    import os
    import tempfile
    import traceback

    from agent_eval_action.core.errors import ExitCode
    from agent_eval_action.core.redaction import Redactor

    text = Redactor.from_env(os.environ).text("".join(traceback.format_exception(error)))
    if getattr(args, "debug", False):
        print(text, file=err, end="")
        where = "above"
    else:
        output_dir = getattr(args, "output_dir", None) or os.environ.get("INPUT_OUTPUT-DIR") or "agent-eval-results"
        where = "nowhere (could not write it)"
        for folder in (output_dir, tempfile.gettempdir()):
            try:
                os.makedirs(folder, exist_ok=True)
                path = os.path.join(folder, "debug.log")
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(text)
                where = f"in {path} (rerun with --debug to print it)"
                break
            except OSError:
                continue
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if f"{os.sep}agent_eval_action{os.sep}" in f.filename]
    frame = (ours or frames)[-1] if frames else None
    place = f" at {os.path.basename(frame.filename)}:{frame.lineno}" if frame else ""
    print(
        f"error: unexpected {type(error).__name__}{place} while running `{args.command}`: {error}; "
        f"the check could not be made (exit 3); the traceback is {where}",
        file=err,
    )
    return int(ExitCode.INFRASTRUCTURE)
