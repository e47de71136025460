"""The zygote: one process imports ADK and loads the agent once, then forks the workers (and their
replacements) on request, as gunicorn's ``preload`` does. A forked worker skips the second or so
a spawned one spends importing; it is otherwise the worker of ``__main__``: a session of its
own, its own stdin/stdout/stderr (the parent's pipes, passed over the zygote's socket), and its
threads (the watchdog) and event loop started after the fork.

Forking copies memory, not threads: a thread the agent's import started would be missing in
every worker, and a lock it held would stay held there; a connection it opened would be shared
by every worker. So after loading, the zygote forks nothing (``cold``: the parent spawns
workers as before) when it finds (:func:`unsafe`): more than one Python thread
(``threading.active_count()``), more than one thread of the process (``/proc/self/task``: a
native thread, gRPC's say), or an open socket besides its own (``/proc/self/fd``: a connection
or a gRPC channel opened at import). It is Linux only; elsewhere it says ``cold`` at once.

What the agent's import read (the audit hook is installed before it loads, ``observe.py``) is
in the shared record every forked worker inherits: every question of every worker lists it.

ADK imports much of itself only on an agent's first run (its workflow engine, the LLM flows and
their auth preprocessor, which brings authlib, cryptography, fastapi and requests: about 480
modules and 0.3 s of CPU with ADK 2.x). The zygote imports those (:data:`FIRST_RUN`) after the
agent, so a forked worker starts its first question with them, instead of each worker importing
them while its questions and the parent wait for CPU. Names this ADK does not have are skipped;
a module that starts a thread or opens a socket on import makes the zygote ``cold`` as above.

A forked worker is a fresh process that imported the agent: what the interpreter re-seeds in a
forked child (``random``'s module generator, registered with ``os.register_at_fork``; nothing
else of the standard library's) is put back as the agent's import left it when the import set
it (``random.seed(7)``, ``random.setstate``: :func:`seeding_watched`), so every worker draws what
a spawned worker (``--no-warm-start``) draws; an agent that seeded nothing gets a generator
seeded anew in each worker, as each spawned one does.

Messages: ``protocol.py`` (the zygote's part). Standard library only, like the rest of the worker.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from typing import IO, Any

from . import protocol

# What ADK (2.x) imports on an agent's first run, not when the agent loads: the roots of ~480
# modules (measured: sys.modules after a forked worker's first question, less before it).
FIRST_RUN = (
    "google.adk.workflow._workflow",
    "google.adk.workflow._llm_agent_wrapper",
    "google.adk.flows.llm_flows.base_llm_flow",
    "google.adk.flows.llm_flows.single_flow",
    "google.adk.flows.llm_flows.auto_flow",
    "google.adk.auth.auth_preprocessor",
    "google.adk.models.google_llm",
    "google.adk.tools.google_search_tool",
    "google.adk.tools.vertex_ai_search_tool",
    "google.adk.tools.enterprise_search_tool",
    "google.adk.a2a.agent",
    "google.adk.telemetry.node_tracing",
    "opentelemetry.propagate",
)
# google-genai's types defer their pydantic schemas to their first use (``defer_build``): each
# forked worker builds those of a question's contents, parts, calls, tools and config at its first
# question, ~30 ms of CPU a worker (these: the classes a question of a scripted tool-calling agent
# builds, and the response a Gemini answer is read into). The suite's template
# (``run/workers/template.py``) builds them once for every zygote it forks. A zygote does not: its
# ~40 ms would come before its workers start, on the way to every run's first answer (a whole
# process of 64 questions: +14 ms median, 8 runs alternated), for CPU its two workers spend in parallel.
FIRST_RUN_MODELS = (
    (
        "google.genai.types",
        (
            "Content",
            "UserContent",
            "Part",
            "Blob",
            "FunctionCall",
            "FunctionResponse",
            "FunctionDeclaration",
            "Tool",
            "GenerateContentConfig",
            "LiveConnectConfig",
            "AudioTranscriptionConfig",
            "GenerateContentResponse",
            "GenerateContentResponseUsageMetadata",
        ),
    ),
)
# How long a thread of the process that is not ours may take to end before it makes forking unsafe.
SETTLE_S = 0.5
# At most this many bytes of a request packet (a small JSON object) and descriptors with it.
PACKET = 4096
FDS = 3


def first_run_imports(names: tuple[str, ...] = FIRST_RUN) -> list[str]:
    """Imports what the agent's first run would (:data:`FIRST_RUN`); the names imported. A name
    this ADK does not have, or whose import fails, is left for the run to meet as it would; then
    :func:`halt_failed_imports`."""
    import importlib

    done = []
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - not this ADK's, or broken here: the first run meets it as it would have
            continue
        done.append(name)
    halt_failed_imports()
    return done


def build_deferred_models(models: tuple[tuple[str, tuple[str, ...]], ...] = FIRST_RUN_MODELS) -> list[str]:
    """Builds the schemas of :data:`FIRST_RUN_MODELS` that their modules (already imported) left
    to their first use; the names built. A module not imported, a class it lacks or one that
    cannot be built yet is left for the run to meet as it would."""
    built = []
    for module_name, names in models:
        module = sys.modules.get(module_name)
        for name in names:
            model = getattr(module, name, None)
            if model is None or getattr(model, "__pydantic_complete__", True):
                continue
            try:
                model.model_rebuild()
            except Exception:  # noqa: BLE001 - a forward reference not yet defined: built at first use, as ever
                continue
            if getattr(model, "__pydantic_complete__", False):
                built.append(f"{module_name}.{name}")
    return built


# Imports ADK (2.x) tries again on every agent node it builds (at least once a question), catching
# the ImportError when an optional dependency is missing (the a2a SDK): each try searches every
# path entry again, 1-2 ms a question.
RETRIED = ("google.adk.agents.remote_a2a_agent",)


def halt_failed_imports(names: tuple[str, ...] = RETRIED) -> list[str]:
    """Tries each of ``names`` once; one that fails for a module it imports and this environment
    lacks is marked so in ``sys.modules`` (None: every later import of it raises the
    ModuleNotFoundError at once instead of searching again; its message then says the import was
    halted). The names so marked. One this ADK does not have, or that imports, is left as it is."""
    import importlib

    halted = []
    for name in names:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as error:
            missing = error.name or ""
            if missing and not name.startswith(missing):  # a dependency it lacks, not the module (or its package) itself
                sys.modules[name] = None  # type: ignore[assignment]
                halted.append(name)
        except Exception:  # noqa: BLE001 - broken here otherwise: the run meets it as it would have
            pass
    return halted


@contextlib.contextmanager
def seeding_watched() -> Iterator[list[bool]]:
    """While the block runs, whether the code it runs left ``random``'s module generator in a
    state of its choosing: its last ``random.seed(a)`` had a seed (``a`` not None), or it called
    ``random.setstate``. Yields a one-item list that says so after the block."""
    import random

    seeded = [False]
    seed, setstate = random.seed, random.setstate

    def watched_seed(a: Any = None, *args: Any, **kwargs: Any) -> None:
        seeded[0] = a is not None
        seed(a, *args, **kwargs)

    def watched_setstate(state: Any) -> None:
        seeded[0] = True
        setstate(state)

    random.seed, random.setstate = watched_seed, watched_setstate
    try:
        yield seeded
    finally:
        random.seed, random.setstate = seed, setstate


def unsafe(control: int) -> str | None:
    """Why forking this process now would be unsafe (None: it is safe); ``control``: our socket
    (and fd 0 is the same socket)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return f"forking workers is only done on Linux (this is {sys.platform})"
    if threading.active_count() > 1:
        names = ", ".join(sorted(t.name for t in threading.enumerate() if t is not threading.current_thread()))
        return f"loading the agent started {threading.active_count() - 1} thread(s) ({names})"
    try:
        others = other_tasks()
        sockets = [fd for fd in os.listdir("/proc/self/fd") if _is_socket(fd) and int(fd) not in (0, control)]
    except OSError as error:
        return f"cannot look at the process's threads and files ({error})"
    if others:
        names = ", ".join(sorted(_thread_name(task) for task in others))
        return f"loading the agent started {len(others)} native thread(s) ({names}; a C extension's, gRPC's say)"
    if sockets:
        return f"loading the agent opened {len(sockets)} socket(s) (a connection or a gRPC channel) that every worker would share"
    return None


def other_tasks() -> list[str]:
    """The process's threads but this one, once those that are ending have ended: a thread that
    has returned (one an import ran briefly) leaves the threading module's list at once and the
    kernel's a moment later (measured: gone within 50 ms), and a check in that moment made
    the zygote cold for nothing."""
    import time

    own = threading.get_native_id()
    deadline = time.monotonic() + SETTLE_S
    while True:
        others = [task for task in os.listdir("/proc/self/task") if int(task) != own]
        if not others or time.monotonic() >= deadline:
            return others
        time.sleep(0.01)


def _thread_name(task: str) -> str:
    """A thread's name as the kernel has it (``/proc/self/task/N/comm``), or "?" once it is gone."""
    try:
        with open(f"/proc/self/task/{task}/comm", encoding="utf-8", errors="replace") as handle:
            return handle.read().strip() or "?"
    except OSError:
        return "?"


def _is_socket(fd: str) -> bool:
    try:
        return os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    except OSError:
        return False  # the listing's own descriptor, closed by now


class Zygote:
    def __init__(self, worker: Any, control: socket.socket, out: IO[str], loaded: Any, observation: Any, random_state: Any = None):
        self.worker = worker  # the worker's module (``__main__``)
        self.control = control
        self.out = out
        self.loaded = loaded
        self.observation = observation
        # ``random``'s state as the agent's import set it (None: it set none): each worker's own.
        self.random_state = random_state
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)

    def send(self, message: dict[str, Any]) -> None:
        self.out.write(protocol.encode(message) + "\n")
        self.out.flush()

    def run(self) -> int:
        """Forks a worker per request and says when each ends, until the parent closes the socket."""
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_w)
        while True:
            self._reap()
            try:
                readable, _, _ = select.select([self.control.fileno(), self.wake_r], [], [])
            except InterruptedError:
                continue
            if self.wake_r in readable:
                os.read(self.wake_r, 512)
            if self.control.fileno() not in readable:
                continue
            try:
                data, fds, _, _ = socket.recv_fds(self.control, PACKET, FDS)
            except InterruptedError:
                continue
            if not data:
                return 0  # the parent is done with us; the workers it has end on their own
            request = json.loads(data)
            if len(fds) != FDS:
                for fd in fds:
                    os.close(fd)
                continue
            self._fork(int(request[protocol.FORK]), fds)

    def _fork(self, number: int, fds: list[int]) -> None:
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 3
            try:
                code = self._worker(fds)
            finally:
                os._exit(code)
        for fd in fds:
            os.close(fd)
        self.send(protocol.forked(number, pid))

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.send(protocol.exited(pid, os.waitstatus_to_exitcode(status)))

    def _worker(self, fds: list[int]) -> int:
        """In the forked child: become a worker of our own session on the parent's pipes."""
        worker = self.worker
        os.setsid()  # killed with whatever it starts, as a spawned worker is
        if self.random_state is not None:
            import random

            random.setstate(self.random_state)  # os.fork() re-seeded it: as the import left it, as in a spawned worker
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd, target in zip(fds, (0, 1, 2), strict=True):
            os.dup2(fd, target)
        for fd in (*fds, self.wake_r, self.wake_w, self.control.fileno(), self.out.fileno()):
            with contextlib.suppress(OSError):
                os.close(fd)
        out = worker._protocol_stream()
        code: int = worker.serve(out, *self.loaded, self.observation)
        worker._leave(code)
        return code


def main(worker: Any) -> int:
    """``worker``: the worker's module (``__main__``), whose parts load the agent and serve."""
    control = socket.socket(fileno=os.dup(0))  # the parent's requests; fd 0 becomes each worker's stdin
    out = worker._protocol_stream()
    observation = worker.observing()
    # What the import makes lives as long as every worker: frozen out of the collector's scans,
    # whose writes to each object's header would copy every page of it into each forked worker.
    with worker.loading():
        with seeding_watched() as seeded:
            loaded = worker.load(out)
        if isinstance(loaded, int):
            return loaded  # said ``fatal``: the parent spawns a worker, which says it again, with its output
        random_state = sys.modules["random"].getstate() if seeded[0] else None
        first_run_imports()
    why = unsafe(control.fileno())
    if why is not None:
        out.write(protocol.encode(protocol.cold(why)) + "\n")
        out.flush()
        return 0
    zygote = Zygote(worker, control, out, loaded, observation, random_state)
    zygote.send(protocol.warm())
    return zygote.run()
