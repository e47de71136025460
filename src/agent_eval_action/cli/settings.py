"""The settings a run is given on the command line or as the action's inputs, declared once.

Each row of :data:`SETTINGS` says what the command line's flag is (argparse's arguments, the
commands that take it, and whether it is laid over the config or read by the command itself)
and what the action's input is (its name, its description and default in ``action.yml``, and
how its text becomes the config's value). The parser's flags (:func:`add_flags`), the commands'
lists of flags laid over the config (:func:`laid_over`) and the action's inputs
(:func:`read_inputs`, :func:`flags_from_inputs`) are made from it; a test holds ``action.yml``
to it. Only the standard library is imported here: ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# What the agent flags are grouped under in a command's help.
AGENT_GROUP = "running the agent (datasets without recorded runs)"
# The commands reading a config take --config; `run` is check's old name.
ALIASES = {"run": "check"}


@dataclass(frozen=True)
class Setting:
    """One setting given for a run: as a command-line flag, an action input, or both."""

    # The config's setting (or, for what a command reads itself, argparse's dest).
    name: str
    # The command line's help; None: no flag.
    help: str | None = None
    # The commands whose flag is laid over the config, and those that read their flag themselves.
    commands: tuple[str, ...] = ()
    own: tuple[str, ...] = ()
    # The flag (default: ``--`` and the name with hyphens) and argparse's other arguments.
    flag: str | None = None
    cli: Mapping[str, Any] = field(default_factory=dict)
    # In the agent group of the commands that lay it over the config.
    group: bool = False
    # Said after the help in one command's.
    notes: Mapping[str, str] = field(default_factory=dict)
    # The action's input: its name, description and default as in action.yml.
    input: str | None = None
    description: str = ""
    default: str = ""
    # How the input's text (not empty) becomes the config's value; None: the action reads it itself.
    read: Callable[[str, str], Any] | None = None

    @property
    def option(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")


def _text(name: str, value: str) -> str:
    return value


def _words(name: str, value: str) -> list[str] | None:
    return value.split() or None


def _metric_names(name: str, value: str) -> list[str] | None:
    return [m.strip() for m in value.replace(",", " ").split()] or None


def read_bool(name: str, value: str, default: bool) -> bool:
    """An input's true or false (empty: ``default``); ConfigError naming it otherwise."""
    from agent_eval_action.system.errors import ConfigError

    if not value:
        return default
    if value.lower() in ("true", "yes", "1", "on"):
        return True
    if value.lower() in ("false", "no", "0", "off"):
        return False
    raise ConfigError(f"input {name}", f"{value!r} is not true or false")


def _bool(name: str, value: str) -> bool:
    return read_bool(name, value, True)


def _int(name: str, value: str) -> int:
    from agent_eval_action.system.errors import ConfigError

    try:
        return int(value)
    except ValueError:
        raise ConfigError(f"input {name}", f"{value!r} is not a whole number") from None


def read_float(name: str, value: str) -> float:
    """An input's number; ConfigError naming it otherwise."""
    from agent_eval_action.system.errors import ConfigError

    try:
        return float(value)
    except ValueError:
        raise ConfigError(f"input {name}", f"{value!r} is neither a number of points (0.05) nor a percentage ('5%')") from None


def _concurrency_input(name: str, value: str) -> int | str:
    return "auto" if value.strip().lower() == "auto" else _int(name, value)


def concurrency(text: str) -> int | str:
    """``--concurrency``: auto or a whole number."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither auto nor a whole number") from None


def names(text: str) -> list[str]:
    """``--metrics``: comma-separated names."""
    return [part.strip() for part in text.split(",") if part.strip()]


CONFIG_COMMANDS = ("evaluate", "check", "compare", "baseline", "merge", "report", "convert")
AGENT_COMMANDS = ("evaluate", "check", "baseline", "convert")
NO = {"action": "store_const", "const": False}

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "config",
        "config file (default: agent-eval.toml, else [tool.agent-eval] in pyproject.toml)",
        own=CONFIG_COMMANDS,
        input="config",
        description="Config file (default agent-eval.toml, else [tool.agent-eval] in pyproject.toml).",
    ),
    Setting(
        "datasets",
        "dataset globs (default: the config's datasets)",
        commands=("check",),
        own=("baseline",),
        cli={"nargs": "+", "metavar": "GLOB"},
        input="datasets",
        description="Dataset globs, space or newline separated (default from agent-eval.toml, else evaluation/datasets/*.json, *.csv, *.jsonl).",
        read=_words,
    ),
    Setting(
        "base",
        "base branch or ref (default: $GITHUB_BASE_REF; none: evaluate everything)",
        own=("check",),
        input="base-ref",
        description="Base to compare with (default the pull request's base branch).",
    ),
    Setting(
        "evaluate_all", "evaluate every dataset, not only the changed ones", own=("check",), flag="--all", cli={"action": "store_true"}
    ),
    Setting(
        "output_dir",
        "the folder for the run's files: results.json; check and merge add comment.md, summary.md, "
        "report.html and junit.xml (default: agent-eval-results)",
        commands=("evaluate", "check", "compare", "merge"),
        input="output-dir",
        description="Where results.json, comment.md, summary.md, report.html and junit.xml go.",
        default="agent-eval-results",
        read=_text,
    ),
    Setting(
        "metrics",
        "comma-separated metric names (default: all deterministic metrics)",
        commands=("evaluate", "check"),
        cli={"type": names},
        input="metrics",
        description="Metric names to compute, comma separated (default all deterministic metrics).",
        read=_metric_names,
    ),
    Setting(
        "comment",
        "do not post a PR comment",
        commands=("check", "merge"),
        flag="--no-comment",
        cli=NO,
        input="comment",
        description="Post or update the sticky PR comment.",
        default="true",
        read=_bool,
    ),
    Setting(
        "comment_key",
        "the comment key the fork's run used (default: default)",
        own=("fork-comment",),
        cli={"default": "default"},
        input="comment-key",
        description="Key of the sticky comment, for several evaluations on one PR.",
        default="default",
        read=_text,
    ),
    Setting(
        "shard",
        "evaluate the i-th of n deterministic slices of the questions, as i/n",
        commands=("check",),
        input="shard",
        description="Evaluate the i-th of n deterministic slices of the questions, as i/n (merge the shards with `merge`).",
        read=_text,
    ),
    Setting(
        "reuse",
        "run every selected question, even those unchanged since the baseline",
        commands=("check",),
        flag="--no-reuse",
        cli=NO,
    ),
    Setting(
        "compare_with",
        "compare with the baselines stored on the base branch (default), or with the base's agent run now, beside this one",
        commands=("check",),
        cli={"choices": ("baseline", "base")},
        input="compare-with",
        description='What the PR is compared with. "baseline" (default) - the baselines stored on the base branch. "base" - '
        "the merge-base's agent, checked out and run now beside the PR's (its own venv from the install input), question by "
        "question, so both meet the same model version and machine; timings are then compared, and the base's drift from its "
        "stored baseline is reported apart. Costs a second run of the questions the PR affects; the model-call cache is off.",
        read=_text,
    ),
    Setting(
        "install",
        "shell command that installs the agent's dependencies into a venv of its own, outside the repository, "
        "which then runs the agent (--agent-python overrides)",
        own=("evaluate", "check", "baseline"),
        cli={"metavar": "COMMAND"},
        notes={"check": "; with --compare-with base, the base's agent gets its own, made the same way"},
        input="install",
        description="Shell command that installs the agent's dependencies, e.g. pip install -r requirements.txt. It runs in a "
        "new venv for the agent (under RUNNER_TEMP, first on PATH), and the agent then runs with that venv's Python; the "
        "action's own environment is never changed.",
    ),
    Setting(
        "agent",
        "ADK agent to run: module:attr (e.g. app.agent:root_agent) or an agent directory",
        commands=AGENT_COMMANDS,
        own=("init", "validate"),
        group=True,
        notes={
            "init": " (default: found)",
            "validate": " (default: the config's), loaded to check the tool and agent names the datasets give",
        },
        input="agent",
        description="ADK agent to run in the container, as module:attr (e.g. app.agent:root_agent) or an agent directory.",
        read=_text,
    ),
    Setting(
        "agent_python",
        "the Python of the agent's own environment, which runs it (default: a .venv or venv with google-adk up to the "
        "repository's top, else this one)",
        commands=AGENT_COMMANDS,
        own=("init", "validate"),
        group=True,
        input="agent-python",
        description="Python interpreter of the agent's own environment, which runs the agent (default the install input's "
        "venv, else the workspace's .venv or venv when it has google-adk, else the action's Python; the log says which).",
        read=_text,
    ),
    Setting(
        "load_agent",
        "do not load the agent to check the tool and agent names the datasets' references give",
        own=("validate",),
        flag="--no-agent",
        cli={"action": "store_false"},
    ),
    Setting(
        "in_process",
        "run the agent in this process instead of worker processes (debugging)",
        commands=AGENT_COMMANDS,
        group=True,
        cli={"action": "store_const", "const": True},
    ),
    Setting(
        "warm_start",
        "spawn each agent worker (it imports ADK and the agent itself) instead of forking them from one that loaded the agent once",
        commands=AGENT_COMMANDS,
        group=True,
        flag="--no-warm-start",
        cli=NO,
    ),
    Setting(
        "model_cache",
        "record the agent's model calls in DIR and replay them when asked again",
        commands=AGENT_COMMANDS,
        group=True,
        cli={"metavar": "DIR"},
        input="model-cache",
        description="Directory where the agent's model calls are recorded and replayed (keep it with actions/cache); unset, "
        "every call goes to the model.",
        read=_text,
    ),
    Setting(
        "workers",
        "agent worker processes the questions are spread over (default: CPUs, at most 4)",
        commands=AGENT_COMMANDS,
        group=True,
        cli={"type": int},
    ),
    Setting(
        "agent_url",
        "a deployed ADK API server (adk api_server, Cloud Run) to run the questions against",
        commands=AGENT_COMMANDS,
        group=True,
        input="agent-url",
        description="URL of a deployed ADK API server to run the questions against instead (its bearer token from the "
        "AGENT_EVAL_AUTH_TOKEN env var).",
        read=_text,
    ),
    Setting(
        "app_name",
        "app name on the API server (default: each question's first agents_evaluated entry)",
        commands=AGENT_COMMANDS,
        group=True,
        input="app-name",
        description="App name on the API server (default each question's first agents_evaluated entry).",
        read=_text,
    ),
    Setting(
        "concurrency",
        "questions in flight at once: auto (the default) adapts to the model API, halving on 429s; or a fixed number",
        commands=AGENT_COMMANDS,
        group=True,
        cli={"type": concurrency},
        input="concurrency",
        description='Questions in flight at once, "auto" (the default) to adapt to the model API (raised while it keeps up, '
        "halved on 429 / RESOURCE_EXHAUSTED / deadline), or a fixed number.",
        read=_concurrency_input,
    ),
    Setting(
        "max_concurrency",
        "the most questions in flight with --concurrency auto (default 64)",
        commands=AGENT_COMMANDS,
        group=True,
        cli={"type": int},
        input="max-concurrency",
        description="The most questions in flight with concurrency auto (default 64).",
        read=_int,
    ),
    Setting(
        "max_model_calls",
        "budget: no new question starts after this many model calls of the agent",
        commands=AGENT_COMMANDS,
        group=True,
        cli={"type": int},
        input="max-model-calls",
        description="Budget of the agent's model calls for the run; once reached no new question starts and the rest are "
        "reported as skipped for budget.",
        read=_int,
    ),
    Setting(
        "max_cost_usd",
        "budget: no new question starts once the agent's model calls cost this much",
        commands=AGENT_COMMANDS,
        group=True,
        cli={"type": float},
        input="max-cost-usd",
        description="Budget in US dollars of the agent's model calls (from the price table); once reached no new question starts.",
        read=read_float,
    ),
    Setting(
        "quota",
        "the model API's quota with this key, paced to by the agent and the judges together: "
        "MODEL=120rpm[,1000000tpm] (repeatable; default: learnt from the API's 429s)",
        commands=AGENT_COMMANDS,
        group=True,
        cli={"action": "append", "metavar": "MODEL=RATE"},
        input="quota",
        description="The model API's quota with the agent's key, where you know it, e.g. "
        "\"gemini-2.5-flash=120rpm,1000000tpm\" (one model per line or space). The agent's and the judges' calls are paced to "
        "it together; without it the rate is learnt from the API's 429 RESOURCE_EXHAUSTED answers and their RetryInfo delay.",
        read=_text,
    ),
    Setting(
        "runs",
        "run every question K times, in distinct sessions (default 1)",
        commands=AGENT_COMMANDS,
        group=True,
        cli={"type": int, "metavar": "K"},
        input="runs",
        description="Run every question K times (noise estimates, pass^k).",
        read=_int,
    ),
    Setting("timeout", "seconds per attempt of one question (default 300)", commands=AGENT_COMMANDS, group=True, cli={"type": float}),
    Setting("retries", "retries on 429 / 503 / deadline errors (default 3)", commands=AGENT_COMMANDS, group=True, cli={"type": int}),
    Setting(
        "progress",
        "progress output: auto = live on a terminal only",
        commands=AGENT_COMMANDS,
        group=True,
        cli={"choices": ["auto", "always", "never"]},
    ),
    # The action's own inputs: what it does, not settings of the run.
    Setting(
        "github_token",
        input="github-token",
        description="Token for the PR comment (needs pull-requests write) and the baseline commit (contents write).",
        default="${{ github.token }}",
    ),
    Setting(
        "fail_on_regression",
        input="fail-on-regression",
        description="Fail the check when the gate fails (false reports without failing).",
        default="true",
    ),
    Setting(
        "max_regression",
        input="max-regression",
        description='Default allowed drop of reference metrics, in points (0.05) or percent ("5%"); per-metric rules live in the config.',
    ),
    Setting(
        "update_baseline",
        input="update-baseline",
        description="On pushes to the default branch, write the baselines and commit them.",
        default="false",
    ),
    Setting(
        "merge",
        input="merge",
        description="Glob of shard results.json files to merge; the merged run is then compared, commented and gated as usual.",
    ),
    Setting(
        "fork_comment",
        input="fork-comment",
        description="In a workflow_run job, the comment.md a fork PR's run uploaded; it is posted on the open PR whose head is "
        "the triggering run's head commit (asked of GitHub, never taken from the artifact), under a marker built here, editing "
        "only the token's own comment, capped in size. Nothing is evaluated.",
    ),
    Setting("working_directory", input="working-directory", description="Directory inside the workspace to run in."),
)


def add_flags(parser: argparse.ArgumentParser, command: str) -> None:
    """The flags of ``command``'s settings, in the table's order; those of the agent it lays
    over the config in their own group."""
    group: argparse._ArgumentGroup | None = None
    for setting in SETTINGS:
        if setting.help is None or command not in (*setting.commands, *setting.own):
            continue
        target: argparse._ActionsContainer = parser
        if setting.group and command in setting.commands:
            group = group or parser.add_argument_group(AGENT_GROUP)
            target = group
        target.add_argument(setting.option, dest=setting.name, help=setting.help + setting.notes.get(command, ""), **setting.cli)


def laid_over(command: str) -> tuple[str, ...] | None:
    """The settings whose flags ``command`` lays over the config; None: it reads no config."""
    command = ALIASES.get(command, command)
    if command not in CONFIG_COMMANDS:
        return None
    return tuple(s.name for s in SETTINGS if command in s.commands)


def action_inputs() -> dict[str, Setting]:
    """The action's inputs by name, as ``action.yml`` declares them."""
    return {s.input: s for s in SETTINGS if s.input is not None}


def read_inputs(env: Mapping[str, str]) -> dict[str, str]:
    """Every input's text (hyphens kept in the variable's name, as the runner sets them)."""
    return {name: env.get(f"INPUT_{name.upper()}", "").strip() for name in action_inputs()}


def flags_from_inputs(inputs: Mapping[str, str]) -> dict[str, Any]:
    """Input values as config overrides (unset inputs leave the config file's values)."""
    return {s.name: s.read(name, inputs[name]) if inputs[name] else None for name, s in action_inputs().items() if s.read is not None}
