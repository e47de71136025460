"""Command line: argument parsing and the one place where errors become messages and exit codes.

Only the standard library is imported at start so ``--help`` stays fast; each command
imports what it needs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from agent_eval_action import __version__

EPILOG = "exit codes: 0 passed, 1 gate failed, 2 bad input or config, 3 infrastructure failure"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agent_eval_action",
        description="Evaluate ADK agents on golden datasets, compare with the baseline, gate pull requests.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"agent-eval-action {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    validate = sub.add_parser("validate", help="check datasets without running anything", epilog=EPILOG)
    validate.add_argument("paths", nargs="+", metavar="PATH", help="dataset files, directories or globs")

    evaluate = sub.add_parser("evaluate", help="score datasets (no baseline, no gate)", epilog=EPILOG)
    evaluate.add_argument("paths", nargs="*", metavar="PATH", help="dataset files, directories or globs (default: the config's datasets)")
    evaluate.add_argument("--config", help="config file (default: agent-eval.toml, else [tool.agent-eval] in pyproject.toml)")
    evaluate.add_argument("--output-dir", help="where results.json goes (default: agent-eval-results)")
    evaluate.add_argument("--metrics", type=_names, help="comma-separated metric names (default: all deterministic metrics)")
    evaluate.add_argument("--quiet", action="store_true", help="no progress output")
    return parser


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from agent_eval_action.errors import AgentEvalError, ExitCode

    try:
        if args.command == "validate":
            from agent_eval_action.commands import validate

            return validate(args.paths)
        if args.command == "evaluate":
            from agent_eval_action.commands import evaluate

            return evaluate(args.paths, config_path=args.config, output_dir=args.output_dir, metrics=args.metrics, quiet=args.quiet)
    except AgentEvalError as error:
        print(f"error: {error}", file=sys.stderr)
        return int(error.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return int(ExitCode.BAD_INPUT)
