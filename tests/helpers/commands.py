"""The command line and the action's entrypoint, run as a user and the runner start them.

By default in this process: ``agent_eval_action.cli.main.main(argv)`` with the working directory,
``os.environ``, ``sys.path`` (the environment's ``PYTHONPATH``), the standard streams, the signal
handlers and logging set for the call and put back after. The agent's workers are still real
processes (they inherit the environment given). A start takes milliseconds instead of the 1.7-2 s
of a new interpreter (1 s of it imports).

``subprocess=True`` runs ``python -m agent_eval_action`` instead, for the few tests where the
process itself is what is tested (``E2E_REASONS`` says which kinds): signals, the interpreter's
start and import time, the action's entrypoint as the runner starts it, exit codes as the OS
sees them.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import logging
import os
import signal
import subprocess as _subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from tests.fakes.github_server import FakeGitHub
from tests.helpers.repos import ROOT

# Why a test runs the command line as a process of its own (the argument to ``subprocess=``
# documents the choice at the call; this is the list of kinds a reviewer can hold it to).
E2E_REASONS = (
    "signals: Ctrl-C / SIGTERM reach the process, the second one ends it at once",
    "startup: `python -m agent_eval_action` and --help start fast and import little",
    "entrypoint: the action as the runner starts it (INPUT_* / GITHUB_* only, the exit code the job sees)",
    "process: the interpreter's exit (os._exit after atexit), what a child left behind",
)

# The variables the user's shell has that a test's command must not see from the runner of the tests.
_RUNNER_ONLY = ("GITHUB_BASE_REF",)


def cli(
    repo: Path, *args: str, env: dict[str, str] | None = None, subprocess: bool = False, timeout: float = 180
) -> _subprocess.CompletedProcess[str]:
    """The command line in ``repo`` with this process's environment plus ``env``."""
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    for name in _RUNNER_ONLY:
        if name not in (env or {}):
            full.pop(name, None)
    return run_cli(args, cwd=repo, env=full, subprocess=subprocess, timeout=timeout)


def run_cli(
    args: Sequence[str], *, cwd: Path, env: Mapping[str, str], subprocess: bool = False, timeout: float = 300
) -> _subprocess.CompletedProcess[str]:
    """The command line with exactly the environment ``env`` (as a new process would get it)."""
    argv = [sys.executable, "-m", "agent_eval_action", *args]
    if subprocess:
        return _subprocess.run(argv, cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=timeout)
    from agent_eval_action.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with _isolated(cwd, env, out, err):
        try:
            code = main(list(args))
        except SystemExit as exit:  # argparse: --help, --version, a bad flag
            code = _exit_code(exit.code, err)
        finally:
            _end_of_process()
    return _subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def _exit_code(code: object, err: io.StringIO) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=err)
    return 1


def _end_of_process() -> None:
    """What the process's exit does for the next command (``__main__`` runs the atexit handlers):
    prestarted agent workers nobody adopted are killed, and the next command may start its own;
    what the command line froze out of the collector's scans (``system.collector.OWN_PROCESS``) is
    scanned again, so the test process's memory is freed as it would be at the process's end."""
    gc.unfreeze()
    worker_start = sys.modules.get("agent_eval_action.run.workers.start")
    if worker_start is not None:
        worker_start.discard()


@contextlib.contextmanager
def _isolated(cwd: Path, env: Mapping[str, str], out: io.StringIO, err: io.StringIO) -> Iterator[None]:
    environ, directory, path, streams = dict(os.environ), os.getcwd(), list(sys.path), (sys.stdout, sys.stderr)
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    loggers = {name: _logger_state(name) for name in ("", "agent_eval_action")}
    extra = [folder for folder in env.get("PYTHONPATH", "").split(os.pathsep) if folder and folder not in sys.path]
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.path[:0] = extra
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        sys.stdout, sys.stderr = streams
        sys.path[:] = path
        os.chdir(directory)
        os.environ.clear()
        os.environ.update(environ)
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        for name, state in loggers.items():
            _restore_logger(name, state)


def _logger_state(name: str) -> tuple[int, bool, list[logging.Handler]]:
    logger = logging.getLogger(name)
    return logger.level, logger.propagate, list(logger.handlers)


def _restore_logger(name: str, state: tuple[int, bool, list[logging.Handler]]) -> None:
    logger = logging.getLogger(name)
    logger.setLevel(state[0])
    logger.propagate = state[1]
    logger.handlers[:] = state[2]


TOKEN = "ghs_action_secret_42"


def action(workspace: Path, env: dict[str, str], cwd: Path | None = None, subprocess: bool = False) -> _subprocess.CompletedProcess[str]:
    """The action's entrypoint with only the runner's variables (``INPUT_*`` / ``GITHUB_*`` from ``env``)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    full.update({"PYTHONPATH": str(ROOT / "src"), "HOME": str(workspace.parent / "home"), **env})
    (workspace.parent / "home").mkdir(exist_ok=True)
    return run_cli(["action"], cwd=cwd or workspace.parent, env=full, subprocess=subprocess, timeout=300)


def base_env(tmp_path: Path, workspace: Path, event: dict, name: str, server: FakeGitHub | None = None) -> dict[str, str]:
    (tmp_path / "event.json").write_text(json.dumps(event))
    # The runner's temp dir, per test: the install input makes its venv there, and runs that
    # overlap (xdist workers, other checkouts) must not clear each other's in the shared /tmp.
    (tmp_path / "runner-temp").mkdir(exist_ok=True)
    return {
        "RUNNER_TEMP": str(tmp_path / "runner-temp"),
        "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace), "GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_REPOSITORY": "o/r", "GITHUB_API_URL": server.url if server else "http://127.0.0.1:9", "GITHUB_RUN_ID": "77",
        "GITHUB_OUTPUT": str(tmp_path / "output"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"), "INPUT_GITHUB-TOKEN": TOKEN,
        "INPUT_COMMENT": "true", "INPUT_FAIL-ON-REGRESSION": "true", "INPUT_UPDATE-BASELINE": "true", "INPUT_OUTPUT-DIR": "agent-eval-results",
    }  # fmt: skip


def calls(repo: Path, *args: str, cwd: Path | None = None) -> int:
    """Runs the CLI (exit 0) and returns how many model calls it made."""
    counter = repo / "calls.txt"
    counter.write_text("")
    done = cli(cwd or repo, *args, env={"CALLS_FILE": str(counter)})
    assert done.returncode == 0, done.stdout + done.stderr
    return len(counter.read_text().splitlines())
