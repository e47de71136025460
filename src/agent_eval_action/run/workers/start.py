"""Starting the agent's worker processes, light enough to run before the rest of us is imported.

A worker spends about a second importing ADK and loading the agent; our own imports (pydantic
models, metrics, the service) take a few hundred milliseconds more before the plan says how many
questions will run. :func:`prestart` starts the workers the command line expects right after its
arguments are parsed, from what they say alone, on the event loop the run will use; the pool the
run then builds adopts them (:func:`take`) only when each would have been started exactly so
(the same interpreter, folder and environment: nothing the config says is ever overridden by a
guess). Otherwise, or when no pool asks for them, they are killed: a wrong guess costs CPU only.

Only the standard library and the worker's protocol are imported here; asyncio only once a
process is to be started with it (the warm start's zygote is launched before: ``launch.py``).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_eval_action.agent_worker import protocol
from agent_eval_action.run.agent.env import agent_environment
from agent_eval_action.system.processes import agent_workers
from agent_eval_action.system.reaper import process_table

if TYPE_CHECKING:
    import asyncio
    from importlib.resources.abc import Traversable

PACKAGE = protocol.PACKAGE
# A JSON line carries every event and span of one question: allow large ones.
LINE_LIMIT = 2**28
# About what a golden question takes in its file (id, inputs, agents evaluated, a reference):
# the guess before the file is read. Too few workers guessed start the rest when the plan says
# so; too many are killed then (a core's half second of CPU lost while our own start needs it).
BYTES_PER_QUESTION = 200
# A JSON dataset up to this size is scanned for the key each question has once instead (a few
# milliseconds): indented by a person or by ``json.dumps(indent=2)``, a golden question takes
# 500-800 bytes, and the size alone guessed four times the questions.
SCAN_BYTES = 4 * 2**20
QUESTION_KEYS = (b'"user_inputs"', b'"eval_id"', b'"evalId"', b'"query"')


@dataclass(frozen=True, kw_only=True)
class WorkerSettings:
    agent: str
    python: str
    cwd: Path
    env: dict[str, str]
    capture_spans: bool = True
    workers: int = 1
    # The model-call cache's directory (absolute), or None.
    model_cache: str | None = None
    # [user-simulator] settings for conversation scenarios.
    user_simulator: dict[str, Any] = field(default_factory=dict)
    startup_timeout_s: float = 180.0
    # Workers forked by a zygote that loaded the agent once (``zygote.py``); False: each spawned.
    warm_start: bool = True


def interpreter(python: str | None) -> str:
    """The agent's Python as its workers are started with it (default: ours): a path made
    absolute (the workers run from the project's folder), a bare name looked up on PATH as it is.
    The run adopts early workers only when both spell it alike, so both take it from here."""
    python = python or sys.executable
    return os.path.abspath(python) if os.sep in python else python


def agent_spec(spec: str) -> str:
    """``spec`` as the agent's process, which runs from the project's folder, reads it: an agent
    directory named from the working directory made absolute; a module name as it is."""
    return os.path.abspath(spec) if ":" not in spec and os.path.isdir(spec) else spec


def worker_files() -> Path:
    """The worker's own files in a new temporary directory, as the package ``agent_eval_worker``:
    nothing else of ours lands on the agent's path."""
    root = Path(tempfile.mkdtemp(prefix="agent-eval-worker-"))
    target = root / PACKAGE
    target.mkdir()
    _copy(resources.files("agent_eval_action").joinpath("agent_worker"), target)
    return root


def _copy(source: Traversable, target: Path) -> None:
    """The worker's modules under ``source`` into ``target``, its subpackages too."""
    for item in source.iterdir():
        if item.is_dir() and item.name != "__pycache__" and item.joinpath("__init__.py").is_file():
            (target / item.name).mkdir()
            _copy(item, target / item.name)
        elif item.name.endswith(".py"):
            (target / item.name).write_text(item.read_text(encoding="utf-8"), encoding="utf-8")
        elif item.name.startswith("_audit_hook.") and item.name.endswith((".so", ".pyd")):
            # The C audit hook where it is built (agent_worker/native.py): the agent's interpreter
            # imports it only if built for its ABI, else observes with the Python hook.
            (target / item.name).write_bytes(item.read_bytes())


def worker_env(settings: WorkerSettings, files: Path) -> dict[str, str]:
    """The environment a worker of ``settings`` starts with (its files first on its path)."""
    env = dict(settings.env)
    env["PYTHONPATH"] = os.pathsep.join([str(files), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    env[protocol.ENV_AGENT] = agent_spec(settings.agent)  # the worker runs from settings.cwd
    env[protocol.ENV_SPANS] = "1" if settings.capture_spans else "0"
    env.pop(protocol.ENV_MODEL_CACHE, None)
    if settings.model_cache:
        env[protocol.ENV_MODEL_CACHE] = settings.model_cache
    env[protocol.ENV_PACING] = "1"  # the pool's pacer grants every model call (run/pacing.py)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


async def spawn(settings: WorkerSettings, files: Path) -> asyncio.subprocess.Process:
    """One worker process of ``settings``; raises OSError when its Python cannot be started."""
    import asyncio

    return await asyncio.create_subprocess_exec(
        settings.python,
        "-m",
        PACKAGE,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=settings.cwd,
        env=worker_env(settings, files),
        limit=LINE_LIMIT,
        start_new_session=True,  # a Ctrl-C in the terminal is ours to handle, not the agent's
    )


def kill_session(sid: int) -> None:
    """SIGKILL to every process of the session ``sid`` (a worker started it: the worker and
    whatever the agent left behind there, even in process groups of their own). Safe in a
    signal handler; a process that started a session of its own is out of reach."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(sid, signal.SIGKILL)
    for pid in _session_members(sid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _session_members(sid: int) -> list[int]:
    """The processes of session ``sid``, from /proc (elsewhere: none beyond its group)."""
    return [pid for pid, (_, _, session) in process_table().items() if session == sid]


@dataclass
class _Early:
    loop: asyncio.AbstractEventLoop
    settings: WorkerSettings
    files: Path
    processes: list[asyncio.subprocess.Process]
    # With a warm start: the zygote, which forks the workers once the pool asks (no processes then).
    zygote: Any = None
    claimed: bool = False


_early: _Early | None = None


def estimated_question_runs(paths: list[str], runs: int | None) -> int | None:
    """Question runs the dataset files could hold at most (None: a path is not a plain file, a
    directory or glob, so no guess): a small JSON file's questions counted by the key each has
    once (golden questions' ``user_inputs``, an EvalSet's ``eval_id``, a ``.test.json`` turn's
    ``query``), any other file's from its size."""
    try:
        if not paths or not all(os.path.isfile(path) for path in paths):
            return None
        questions = sum(_questions_in(path) for path in paths)
    except OSError:
        return None
    return max(1, questions) * max(1, runs or 1)


def _questions_in(path: str) -> int:
    size = os.path.getsize(path)
    if path.lower().endswith(".json") and size <= SCAN_BYTES:
        with open(path, "rb") as handle:
            text = handle.read()
        counted = sum(text.count(key) for key in QUESTION_KEYS)
        if counted:
            return counted
    return size // BYTES_PER_QUESTION


def prestart(
    agent: str,
    *,
    python: str | None,
    model_cache: str | None,
    workers: int | None,
    question_runs: int | None,
    warm_start: bool = True,
) -> asyncio.AbstractEventLoop | None:
    """Starts the worker processes a run of ``agent`` is expected to need, from the working
    directory with the environment a config without agent settings gives it, and returns the
    event loop they belong to (the run must use it to adopt them). None when nothing started."""
    global _early
    if _early is not None or question_runs is None:
        return None
    # The count only has to be a good guess: the plan's own count decides what runs.
    count = agent_workers(workers or 0, question_runs)
    settings = WorkerSettings(
        agent=agent,
        python=interpreter(python),
        cwd=Path.cwd(),
        env=agent_environment(os.environ),
        workers=count,
        model_cache=str(Path(model_cache).resolve()) if model_cache else None,
        warm_start=warm_start,
    )
    files = worker_files()
    if settings.warm_start:
        from agent_eval_action.run.workers.launch import launch_zygote

        try:
            # Launched before asyncio is imported (some 20 ms): the zygote starts that much sooner.
            launched = launch_zygote(settings, files)
        except OSError:  # the run's own start will say why
            shutil.rmtree(files, ignore_errors=True)
            return None
        try:
            import asyncio

            from agent_eval_action.run.workers.zygote import Zygote

            loop = asyncio.new_event_loop()
        except BaseException:
            launched.kill()
            shutil.rmtree(files, ignore_errors=True)
            raise
        try:
            zygote = loop.run_until_complete(Zygote.adopt(launched))  # killed if that fails
        except OSError:  # the run's own start will say why
            shutil.rmtree(files, ignore_errors=True)
            loop.close()
            return None
        _early = _Early(loop, settings, files, [], zygote)
        atexit.register(discard)
        return loop
    import asyncio

    loop = asyncio.new_event_loop()

    async def every() -> list[asyncio.subprocess.Process | BaseException]:
        return await asyncio.gather(*(spawn(settings, files) for _ in range(count)), return_exceptions=True)

    started = loop.run_until_complete(every())
    processes = [p for p in started if isinstance(p, asyncio.subprocess.Process)]
    if not processes:  # the run's own start will say why
        shutil.rmtree(files, ignore_errors=True)
        loop.close()
        return None
    _early = _Early(loop, settings, files, processes)
    atexit.register(discard)
    return loop


def claim_loop() -> asyncio.AbstractEventLoop | None:
    """The loop the prestarted workers belong to, for the one run that may adopt them (then
    None: another run on the same process starts its own)."""
    if _early is None or _early.claimed:
        return None
    _early.claimed = True
    return _early.loop


def take(settings: WorkerSettings) -> tuple[Path, list[asyncio.subprocess.Process], Any] | None:
    """The prestarted workers' files and processes (at most ``settings.workers`` of them) and
    zygote (or None), when each was started exactly as ``settings`` would start it, on the
    running loop; else None (and they are killed)."""
    global _early
    early, _early = _early, None
    if early is None:
        return None
    same = (
        early.loop is _running_loop()
        and settings.python == early.settings.python
        and Path(settings.cwd).resolve() == Path(early.settings.cwd).resolve()
        and settings.warm_start == early.settings.warm_start
        and worker_env(settings, early.files) == worker_env(early.settings, early.files)
    )
    if not same:
        _kill(early)
        return None
    for extra in early.processes[settings.workers :]:
        _close(extra)
    return early.files, early.processes[: settings.workers], early.zygote


def discard() -> None:
    """Kills the prestarted workers nobody adopted (the run needed none, or others)."""
    global _early
    early, _early = _early, None
    if early is not None:
        _kill(early)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _close(process: asyncio.subprocess.Process) -> None:
    if process.stdin is not None:
        process.stdin.close()
    kill_session(process.pid)


def _kill(early: _Early) -> None:
    for process in early.processes:
        _close(process)
    if early.zygote is not None:
        early.zygote.kill_now()
        early.zygote.control.close()
    shutil.rmtree(early.files, ignore_errors=True)
