"""A template for zygotes: one process imports ADK once, then forks each zygote asked of it, so a
zygote skips the second of CPU a fresh interpreter spends importing ADK (the zygote then loads
the agent, as ever, after the fork). The test suite starts one per test process
(``tests/conftest.py``), which starts hundreds of zygotes; a command finds it through
``AGENT_EVAL_ZYGOTE_TEMPLATE`` (its socket). A run without it starts each zygote fresh.

A forked zygote is what ``python -m agent_eval_worker`` would be: its own session; the folder,
the environment and the ``sys.path`` a fresh interpreter gets from them (``-m`` puts the folder
first, then ``PYTHONPATH``, then the interpreter's own); the default signal dispositions; the
worker's package run as ``__main__``. What a fresh interpreter reads only as it starts cannot be
given after a fork, so the template forks nothing (the command starts the zygote fresh) for a
zygote of another Python, or whose environment sets any such variable (``PYTHON*`` but
``PYTHONPATH``; the locale's) otherwise than the template's.

What it cannot give, and how that is kept from mattering: the zygote is the template's child, not
the command's. So the template serves only the process that started it (the test process, whose
commands run in-process): the command line's subreaper (``system/reaper.py``) is then still an
ancestor of everything the agent starts. A command in a process of its own starts its zygotes
fresh. And another process's view of the zygote through ``/proc`` (its ``environ`` and
``cmdline``, fixed at exec) shows the template's; the template starts with the environment every
agent gets (our secrets withheld), and a test whose agent reads other processes there starts its
zygotes fresh (``@pytest.mark.fresh_zygotes``). What the process inherits besides (the hash
seed of ``str`` and ``bytes``, the umask, the resource limits) is the template's, as it was when
the test process started it.

    python -m agent_eval_action.run.workers.template SOCKET PARENT_PID   # serves until killed

Messages: one request per connection (``SOCK_SEQPACKET``), JSON ``{"python", "cwd", "env", "ignored"}``
with the zygote's stdin and stdout (descriptors); the answer ``{"pid": N}`` or ``{"refused": why}``.
Standard library only, until it imports ADK.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import threading
from typing import Any

from agent_eval_action.agent_worker import protocol
from agent_eval_action.agent_worker.zygote import other_tasks

ENV_TEMPLATE = "AGENT_EVAL_ZYGOTE_TEMPLATE"
PACKET = 2**20  # a request: the environment, as JSON
# Read by the interpreter as it starts (besides every PYTHON* but PYTHONPATH): equal or no fork.
_LOCALE = ("LANG", "LC_ALL", "LC_CTYPE")
_GIVEN_AFTER = ("PYTHONPATH",)
# Read by what the template imported, as it imported (OpenTelemetry's propagators and context).
_READ_AT_IMPORT = ("PYTHON", "OTEL_")
# What the template imports: what the worker and an ADK agent import, and what the first run does.
# ADK 2's packages load their classes on first use (``google.adk.agents`` leaves ``LlmAgent`` to
# its first access): the agents' own modules are named, or every zygote imported them after its
# fork (30 ms of CPU each, 7 s over the suite's zygotes).
_IMPORTS = (
    "google.genai.types",
    "google.adk.agents",
    "google.adk.agents.llm_agent",
    "google.adk.runners",
    "google.adk.sessions",
    "google.adk.models",
    "google.adk.tools",
    "google.adk.tools.agent_tool",
)


def refusal(request: dict[str, Any], python: str, env: dict[str, str]) -> str | None:
    """Why a zygote of ``request`` cannot be forked from a template of ``python`` and ``env``."""
    if request.get("python") != python:
        return f"another Python ({request.get('python')}; the template's is {python})"
    theirs = request.get("env") or {}
    for name in sorted({*theirs, *env}):
        read_at_start = (name.startswith(_READ_AT_IMPORT) and name not in _GIVEN_AFTER) or name in _LOCALE
        if read_at_start and theirs.get(name) != env.get(name):
            return f"{name} differs from the template's"
    return None


def serve(path: str, parent: int) -> tuple[dict[str, Any], list[int]]:
    """Imports ADK, then forks a zygote per request of ``parent`` (the process that started it,
    with which it ends) until killed; returns (in the forked child only) the request and its
    descriptors."""
    import gc

    from agent_eval_action.agent_worker.zygote import build_deferred_models, first_run_imports

    _die_with_parent(parent)
    base = _own_path()
    gc.disable()
    for name in _IMPORTS:
        __import__(name)
    first_run_imports()
    build_deferred_models()  # each forked zygote's workers built them again at their first question
    gc.freeze()  # what forked zygotes share: out of the collector's scans, which would copy its pages
    gc.enable()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the zygotes
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path + ".new")
    listener.listen(64)
    os.rename(path + ".new", path)  # there once it answers
    env = dict(os.environ)
    while True:
        connection, _ = listener.accept()
        with connection:
            connection.settimeout(5)  # a request comes whole at once: one that does not is dropped
            try:
                data, fds, _, _ = socket.recv_fds(connection, PACKET, 2)
            except OSError:
                continue
            try:
                request = json.loads(data)
            except ValueError:
                request = None
            why = _refused(connection, request, fds, env)
            if why is not None:
                close_ends(*fds)
                _answer(connection, {"refused": why})
                continue
            pid = os.fork()
            if pid == 0:
                listener.close()
                connection.close()
                request["base"] = base
                return request, fds
            close_ends(*fds)
            _answer(connection, {"pid": pid})


def _refused(connection: socket.socket, request: Any, fds: list[int], env: dict[str, str]) -> str | None:
    """Why the template forks no zygote for ``request`` (None: it forks one)."""
    if not isinstance(request, dict) or len(fds) != 2:
        return "not a request (a JSON object and two descriptors)"
    if threading.active_count() > 1 or other_tasks():
        # A thread here would be missing in every zygote, any lock it held held for good there,
        # and the zygote's own look at its threads could not see it.
        return "the template has a thread besides its own: forking it is not safe"
    if _peer(connection) != os.getppid():
        return "asked by a process other than the one that started the template: its zygote would not be that process's descendant"
    return refusal(request, sys.executable, env)


def become_zygote(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: the process ``python -m agent_eval_worker`` would start as."""
    import importlib
    import runpy

    os.setsid()
    _dispositions(set(request.get("ignored") or ()))
    null = os.open(os.devnull, os.O_WRONLY)
    for fd, target in zip((*fds, null), (0, 1, 2), strict=True):
        os.dup2(fd, target)
    close_ends(*fds, null)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[:] = [os.getcwd(), *path_of(os.environ.get("PYTHONPATH", ""), request["base"])]
    sys.argv[:] = ["-m"]
    importlib.invalidate_caches()
    runpy.run_module(protocol.PACKAGE, run_name="__main__", alter_sys=True)


def _dispositions(ignored: set[int]) -> None:
    """The signal dispositions a fresh interpreter starts with when the process that starts it
    ignores ``ignored``: those stay ignored across the exec, every other one is the default, and
    then Python's own (SIGINT raises KeyboardInterrupt unless ignored; SIGPIPE and SIGXFSZ ignored)."""
    for number in signal.valid_signals():
        if number in (signal.SIGKILL, signal.SIGSTOP):
            continue
        with contextlib.suppress(OSError, ValueError):
            signal.signal(number, signal.SIG_IGN if number in ignored else signal.SIG_DFL)
    if signal.SIGINT not in ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    for number in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(number, signal.SIG_IGN)


def ignored_signals() -> list[int]:
    """The signals this process ignores that a child it starts keeps ignoring (``subprocess``
    puts back SIGPIPE and SIGXFSZ, which Python ignores, before the exec)."""
    restored = {signal.SIGPIPE, signal.SIGXFSZ}
    return sorted(int(n) for n in signal.valid_signals() if n not in restored and _ignores(n))


def _ignores(number: int) -> bool:
    try:
        return signal.getsignal(number) == signal.SIG_IGN
    except (OSError, ValueError):
        return False


def path_of(pythonpath: str, base: list[str]) -> list[str]:
    """``sys.path`` after the folder ``-m`` puts first, as an interpreter whose own path is
    ``base`` makes it from ``pythonpath``: each entry made absolute (an empty one is the folder),
    before ``base``, every entry once (``site.removeduppaths``)."""
    entries = [os.path.abspath(entry) for entry in pythonpath.split(os.pathsep)] if pythonpath else []
    seen: set[str] = set()
    path = []
    for entry in [*entries, *base]:
        key = os.path.normcase(os.path.abspath(entry))
        if key not in seen:
            seen.add(key)
            path.append(entry)
    return path


def _own_path() -> list[str]:
    """The interpreter's own ``sys.path`` (the standard library, site-packages and what their
    ``.pth`` files add), as a process of it without PYTHONPATH has it after its first entry: asked
    of one. Not ours less our PYTHONPATH's entries: an entry that is in both (an editable
    install's folder named in PYTHONPATH too) would be lost."""
    import subprocess

    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    said = subprocess.run(
        [sys.executable, "-c", "import json, sys; print(json.dumps(sys.path[1:]))"], env=env, capture_output=True, check=True
    )
    return [str(entry) for entry in json.loads(said.stdout)]


def _answer(connection: socket.socket, message: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        connection.sendall(json.dumps(message).encode())


def close_ends(*ends: socket.socket | int) -> None:
    """Closes sockets and descriptors (-1: none), each whatever became of the others."""
    for end in ends:
        if isinstance(end, socket.socket):
            end.close()
        elif end >= 0:
            with contextlib.suppress(OSError):
                os.close(end)


def _peer(connection: socket.socket) -> int:
    """The process at the other end of ``connection`` (Linux's SO_PEERCRED)."""
    import struct

    pid, _, _ = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return int(pid)


def _die_with_parent(parent: int) -> None:
    """SIGTERM when ``parent``, the process that started the template, ends (Linux's
    PR_SET_PDEATHSIG); at once if it ended before this was set."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
    if os.getppid() != parent:
        sys.exit(0)


if __name__ == "__main__":
    asked, descriptors = serve(sys.argv[1], int(sys.argv[2]))
    become_zygote(asked, descriptors)
