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
from typing import NoReturn, TextIO

from agent_eval_action import __version__

EPILOG = (
    "exit codes: 0 passed, 1 gate failed, 2 bad input or config, 3 infrastructure failure, "
    "130 / 143 interrupted by SIGINT / SIGTERM (what finished is written)"
)
# The commands that apply no gate never exit 1: their help does not say they may.
NO_GATE = ("init", "validate", "evaluate", "convert", "report")
NO_GATE_EPILOG = "exit codes: 0 done, 2 bad input or config, 3 infrastructure failure, 130 / 143 interrupted by SIGINT / SIGTERM"


# Each command: its name, its one-line help, its description (None: the help), and its aliases
# (`run` was check's name in 0.1; it stays an alias for one release, a note says so).
PARSERS: tuple[tuple[str, str, str | None, tuple[str, ...]], ...] = (
    (
        "init",
        "start here: write agent-eval.toml, a first dataset drafted from the agent, the PR and baseline workflows",
        "Writes agent-eval.toml, evaluation/datasets/<agent>_golden.json (a question per tool and sub-agent of the "
        "agent, to fill in), .github/workflows/agent-eval.yml and agent-eval-baseline.yml; never overwrites a file.",
        (),
    ),
    ("validate", "check datasets without running anything", None, ()),
    ("evaluate", "score datasets (no baseline, no gate)", None, ()),
    ("check", "the PR check: select, evaluate, compare with the base branch's baselines, gate (Python: check())", None, ("run",)),
    ("compare", "compare two results files and apply the gate", None, ()),
    ("baseline", "manage baseline files", None, ()),
    ("merge", "join the results.json of every shard, then compare, gate and publish", None, ()),
    (
        "report",
        "write report.html from a results.json (and the base's results to show beside it)",
        "A self-contained page: the verdict, every metric with its change and trend, every question run with its "
        "conversation, tool calls, trajectory, final state and scores, the base run beside the ones that got worse.",
        (),
    ),
    ("action", "the GitHub Action's entrypoint: reads INPUT_* and GITHUB_* variables", None, ()),
    (
        "fork-comment",
        "in a workflow_run job: post a fork PR's comment.md on the PR whose head is the run's head commit",
        "Trusts nothing from the artifact but its text: the PR comes from the triggering run's head commit "
        "(asked of GitHub), the marker is built here, only the token's own comment is edited, the body is capped.",
        (),
    ),
    (
        "convert",
        "rewrite datasets as golden JSON, or their runs as a simulation CSV / JSONL",
        "--to golden: ADK .test.json, eval sets, eval history and runs become one golden file. "
        "--to csv/jsonl: recorded runs are rewritten; datasets without runs are run through --agent / --agent-url first.",
        (),
    ),
)
DATASET_PATHS = "dataset files, directories or globs (default: the config's datasets)"


def build_parser() -> argparse.ArgumentParser:
    """The command line: each command's own arguments here, the settings' flags from ``cli.settings``."""
    from agent_eval_action.cli.settings import add_flags

    parser = argparse.ArgumentParser(
        prog="python -m agent_eval_action",
        description="Evaluate ADK agents on golden datasets, compare with the baseline, gate pull requests.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"agent-eval-action {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    made = {
        name: sub.add_parser(
            name,
            help=text,
            description=about,
            aliases=list(aliases),
            epilog=None if name == "baseline" else NO_GATE_EPILOG if name in NO_GATE else EPILOG,
        )
        for name, text, about, aliases in PARSERS
    }
    for name in ("validate", "evaluate"):
        made[name].add_argument("paths", nargs="*", metavar="PATH", help=DATASET_PATHS)
    made["compare"].add_argument("current", help="results.json of this run")
    made["compare"].add_argument("baseline", help="results.json (or baseline file) to compare with")
    baseline_sub = made.pop("baseline").add_subparsers(dest="baseline_command", metavar="ACTION", required=True)
    made["baseline"] = baseline_sub.add_parser("update", help="evaluate datasets and write their baselines", epilog=NO_GATE_EPILOG)
    made["merge"].add_argument("paths", nargs="+", metavar="RESULTS", help="the shards' results.json files (globs work)")
    report = made["report"]
    report.add_argument("results", metavar="RESULTS", help="results.json of a run")
    report.add_argument(
        "--baseline", metavar="B", help="results.json or baseline file of the base (default: the baselines in this repository)"
    )
    report.add_argument("--output", "-o", help="the page to write (default: report.html beside RESULTS)")
    made["fork-comment"].add_argument("comment_file", metavar="COMMENT_MD", help="comment.md from the fork run's artifact")
    convert = made["convert"]
    convert.add_argument("paths", nargs="+", metavar="PATH", help="dataset files, directories or globs")
    convert.add_argument("--to", choices=["golden", "csv", "jsonl"], required=True, help="what to write")
    convert.add_argument("--output", "-o", required=True, help="the file to write")
    convert.add_argument("--agent-name", help="with --to golden: the agents_evaluated entry for every question")
    for name, command in made.items():
        add_flags(command, name)
        command.add_argument("--debug", action="store_true", help="print the traceback of an unexpected error (else: debug.log)")
        loudness = command.add_mutually_exclusive_group()
        loudness.add_argument("--verbose", "-v", action="store_true", help="log what it is doing, not only warnings")
        loudness.add_argument("--quiet", "-q", action="store_true", help="log errors only (no warnings)")
        command.set_defaults(parser_of_command=command)
    return parser


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """``parser.parse_args``, but an argument the command does not take is refused by the
    command's own parser (its usage, not the top level's), with the option it most resembles."""
    from agent_eval_action.text.spelling import closest

    args, extra = parser.parse_known_args(argv)
    if extra:
        command: argparse.ArgumentParser = args.parser_of_command
        options = [option[2:] for action in command._actions for option in action.option_strings if option.startswith("--")]
        typed = [name for word in extra if word.startswith("--") and (name := word[2:].split("=", 1)[0]) not in options]
        # Not its negation: --no-agent is no misspelling of --agent.
        close = next(
            (found for word in typed if (found := closest(word, options)) and found.removeprefix("no-") != word.removeprefix("no-")), None
        )
        command.error(f"unrecognized arguments: {' '.join(extra)}" + (f" (did you mean --{close}?)" if close else ""))
    return args


def entry() -> NoReturn:
    """The process the command line starts (``python -m agent_eval_action``, ``agent-eval``): the
    collector set for it (``system.collector.for_command_line``), the command run, and an exit
    without the interpreter's teardown."""
    import atexit

    from agent_eval_action.system.collector import for_command_line

    for_command_line()
    code = main()
    from agent_eval_action.system import interrupt  # after the command: --help stays fast

    sys.stdout.flush()
    sys.stderr.flush()
    if interrupt.requested() is not None:
        # Interrupted: everything is written; threads still waiting on the agent (an --agent-url
        # request) must not hold the exit until their own timeouts.
        os._exit(code)
    # Everything is written and flushed: the atexit handlers run (the agent's workers end, logs
    # flush), the interpreter's teardown of every module and object does not: it cost 0.2-0.4 s of
    # a run the user waits for, and frees nothing the system would not.
    atexit._run_exitfuncs()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command with stdout and stderr redacted and defused (see ``workflow.LogStream``):
    nothing this process prints can carry a secret or issue a workflow command we did not mean."""
    from agent_eval_action.text.redaction import Redactor
    from agent_eval_action.text.workflow import LogStream

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
    args = parse(build_parser(), argv)
    from agent_eval_action.system import reaper

    # Before any worker starts: what the agent leaves behind stays ours to kill (system/reaper.py).
    with reaper.subreaping():
        return _command(args, out, err)


def _command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _prestart(args)
    from agent_eval_action.system import interrupt
    from agent_eval_action.system.logs import cli_logging

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
    from agent_eval_action.system.errors import AgentEvalError, ExitCode

    try:
        from agent_eval_action.cli.commands import COMMANDS, invoke
        from agent_eval_action.metrics.registry import one_run

        command = COMMANDS.get(args.command)
        if command is None:
            return int(ExitCode.BAD_INPUT)
        return int(one_run(invoke)(command, args, out, err))  # a command's units are its own
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

    from agent_eval_action.system.errors import ExitCode
    from agent_eval_action.text.redaction import Redactor

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
