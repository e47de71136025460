"""The agent worker's protocol is spelled once (``agent_worker/protocol.py``) and both sides
speak it: no other module spells a message key or an ``AGENT_EVAL_WORKER_*`` name, and each
message goes through a real worker process (copied as the parent copies it) and back."""

from __future__ import annotations

import ast
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action.agent_worker import protocol
from agent_eval_action.run.workers.start import agent_spec, worker_files

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "src" / "agent_eval_action"
# The modules that speak the protocol: every one of the worker's, and the parent's. (``init``'s
# scaffold asks only through ``WorkerPool.describe``; the keys it spells are the golden format's.)
SPEAKERS = [
    *sorted(p for p in (PACKAGE / "agent_worker").glob("*.py") if p.name != "protocol.py"),
    PACKAGE / "run" / "workers" / "pool.py",
    PACKAGE / "run" / "workers" / "process.py",
    PACKAGE / "run" / "agent" / "in_process.py",
]
TIMEOUT_S = 120.0  # a busy machine loads ADK slowly; nothing here depends on how fast


def _key_literals(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """String constants used as a mapping key: ``{"k": ...}``, ``x["k"]``, ``x.get("k")`` (and
    ``pop`` / ``setdefault``), ``"k" in x``."""

    def literal(node: ast.AST | None) -> str | None:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    for node in ast.walk(tree):
        found: list[str | None] = []
        if isinstance(node, ast.Dict):
            found = [literal(key) for key in node.keys]
        elif isinstance(node, ast.Subscript):
            found = [literal(node.slice)]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop", "setdefault")
            and node.args
        ):
            found = [literal(node.args[0])]
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            found = [literal(node.left)]
        for value in found:
            if value is not None:
                yield getattr(node, "lineno", 0), value


def test_no_module_but_the_protocol_spells_a_message_key() -> None:
    spelled = [
        f"{path.relative_to(ROOT)}:{line}: {value!r}"
        for path in SPEAKERS
        for line, value in _key_literals(ast.parse(path.read_text(encoding="utf-8")))
        if value in protocol.KEYS
    ]
    assert spelled == [], "spell these as agent_worker.protocol's constants"


def test_no_module_but_the_protocol_spells_the_worker_environment_or_package() -> None:
    spelled = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "protocol.py" and path.parent.name == "agent_worker":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            value = node.value if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and (value.startswith("AGENT_EVAL_WORKER_") or value == protocol.PACKAGE):
                spelled.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}: {value!r}")
    assert spelled == []


def test_the_protocol_module_imports_only_the_standard_library() -> None:
    tree = ast.parse((PACKAGE / "agent_worker" / "protocol.py").read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module and not node.level
    }
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


class _Worker:
    """``python -m agent_eval_worker`` from the files the parent copies, spoken to by hand."""

    def __init__(self, files: Path, cwd: Path, agent: str, *, pacing: bool = False):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "AGENT_EVAL_WORKER_"))}
        if pacing:
            env[protocol.ENV_PACING] = "1"
        env["PYTHONPATH"] = str(files)
        env[protocol.ENV_AGENT] = agent
        env[protocol.ENV_SPANS] = "1"
        self.cwd = cwd
        self.process = subprocess.Popen(
            [sys.executable, "-m", protocol.PACKAGE],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(protocol.encode(message) + "\n")
        self.process.stdin.flush()

    def receive_any(self) -> dict[str, Any]:
        line = self.lines.get(timeout=TIMEOUT_S)
        assert line, "the worker ended"
        message = protocol.decode(line)
        assert message is not None, line
        return message

    def receive(self) -> dict[str, Any]:
        """The next message that is not the watchdog's: on a loaded machine the loop can be a
        second late anywhere, so ``stalled``/``running`` may come between any two answers."""
        while protocol.kind(message := self.receive_any()) in (protocol.STALLED, protocol.RUNNING):
            pass
        return message

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(TIMEOUT_S)
        finally:
            self.process.kill()


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[_Worker]:
    shutil.copytree(ROOT / "tests" / "apps" / "hostile", tmp_path / "hostile")
    files = worker_files()
    assert (files / protocol.PACKAGE / "protocol.py").is_file(), "the worker's copy lacks its protocol"
    started = _Worker(files, tmp_path, agent_spec(str(tmp_path / "hostile")))
    try:
        yield started
    finally:
        started.process.kill()
        shutil.rmtree(files, ignore_errors=True)


def _answer(worker: _Worker, number: int) -> dict[str, Any]:
    """The one answer to request ``number``, after its ``started``."""
    first = worker.receive()
    assert protocol.kind(first) == protocol.STARTED and first[protocol.ID] == number, first
    return worker.receive()


def _question(number: int, text: str) -> dict[str, Any]:
    return protocol.question(number, protocol.question_request(f"q{number}", [text], {"seen": number}))


def test_each_message_goes_through_a_real_worker_and_back(worker: _Worker) -> None:
    ready = worker.receive()
    assert protocol.kind(ready) == protocol.READY
    info = ready[protocol.READY]
    assert info[protocol.APP_NAME] == "hostile" and info[protocol.MODELS] == {"hostile": "scripted-hostile"}
    assert info[protocol.PYTHON] == sys.version.split()[0] and info[protocol.ADK_VERSION]

    worker.send(protocol.describe(0))
    described = _answer(worker, 0)
    assert protocol.kind(described) == protocol.RESULT and described[protocol.ID] == 0
    assert described[protocol.RESULT]["name"] == "hostile"

    worker.send(_question(1, "call greet"))
    answered = _answer(worker, 1)
    assert protocol.kind(answered) == protocol.RESULT
    result = answered[protocol.RESULT]
    assert set(result) == {
        protocol.REPLAYED_MODEL_CALLS,
        protocol.LIVE_MODEL_CALLS,
        protocol.EVENTS,
        protocol.FINAL_STATE,
        protocol.TURN_TIMES,
        protocol.SPANS,
        protocol.APP_DETAILS,
        protocol.OBSERVED,
    }
    assert result[protocol.FINAL_STATE] == {"seen": 1}
    # One turn, its agent's instruction as its request sent it (ADK's app_details).
    (turn,) = result[protocol.APP_DETAILS]
    assert len(turn["agent_details"]) == 1
    assert any("greet" in json.dumps(event) for event in result[protocol.EVENTS]) and result[protocol.SPANS]

    worker.send(_question(2, "call probe"))
    failed = _answer(worker, 2)
    assert protocol.kind(failed) == protocol.ERROR
    error = failed[protocol.ERROR]
    assert error[protocol.TYPE] == "RuntimeError" and "environment seen by the agent" in error[protocol.MESSAGE]
    assert error[protocol.CODE] is None and error[protocol.PARTIAL][protocol.FINAL_STATE] == {"seen": 2}

    worker.send(_question(3, "call nap"))
    assert protocol.kind(worker.receive()) == protocol.STARTED
    worker.send(protocol.cancel(3))
    cancelled = worker.receive()
    assert protocol.kind(cancelled) == protocol.CANCELLED and cancelled[protocol.ID] == 3

    # A tool that blocks the event loop until released: the watchdog says so while it blocks
    # (the tool is released only once it has), and that the loop runs again once it returns
    # (before or after the answer it lets out: the two are not ordered). Read by what arrives, not
    # by position: a loaded machine may add stall/running pairs of its own around them.
    worker.send(_question(4, "call hold"))
    said = [worker.receive()]
    while protocol.kind(said[-1]) != protocol.STALLED:
        said.append(worker.receive_any())
    (worker.cwd / "release-hold").touch()

    def count(kind: str) -> int:
        return sum(protocol.kind(m) == kind for m in said)

    while not (count(protocol.RESULT) and count(protocol.RUNNING) >= count(protocol.STALLED)):
        said.append(worker.receive_any())  # until the answer is out and every stall has ended
    kinds = [protocol.kind(m) for m in said]
    assert kinds[0] == protocol.STARTED and protocol.STALLED in kinds[: kinds.index(protocol.RESULT)], said
    assert max(m[protocol.STALLED] for m in said if protocol.kind(m) == protocol.STALLED) >= protocol.STALL_S
    assert said[kinds.index(protocol.RESULT)][protocol.ID] == 4
    assert worker.close() == 0


def test_a_paced_worker_says_each_call_it_makes_and_asks_a_permit_once_its_model_is_paced(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "tests" / "apps" / "hostile", tmp_path / "hostile")
    files = worker_files()
    paced = _Worker(files, tmp_path, agent_spec(str(tmp_path / "hostile")), pacing=True)
    try:
        assert protocol.kind(paced.receive()) == protocol.READY
        # Not paced yet (no quota, nothing throttled): each call goes at once and says so.
        paced.send(_question(1, "call greet"))
        assert protocol.kind(paced.receive()) == protocol.STARTED
        took = 0
        while protocol.kind(message := paced.receive()) == protocol.TOOK:
            went = message[protocol.TOOK]
            assert went[protocol.MODEL_NAME] == "scripted-hostile" and isinstance(went[protocol.API_KEY_ID], str)
            spent = paced.receive()
            assert protocol.kind(spent) == protocol.SPENT and spent[protocol.SPENT][protocol.ID] == went[protocol.ID]
            assert spent[protocol.SPENT][protocol.OUTCOME] == protocol.OK
            took += 1
        assert protocol.kind(message) == protocol.RESULT and took == 2  # the tool call, then the answer
        # Paced: every call waits for its grant.
        paced.send(protocol.pace("scripted-hostile", "*"))
        paced.send(_question(2, "call greet"))
        assert protocol.kind(paced.receive()) == protocol.STARTED
        permits = 0
        while protocol.kind(message := paced.receive()) == protocol.PERMIT:
            asked = message[protocol.PERMIT]
            assert asked[protocol.MODEL_NAME] == "scripted-hostile"
            paced.send(protocol.grant(asked[protocol.ID]))  # the call waits for this
            spent = paced.receive()
            assert protocol.kind(spent) == protocol.SPENT and spent[protocol.SPENT][protocol.ID] == asked[protocol.ID]
            assert spent[protocol.SPENT][protocol.OUTCOME] == protocol.OK
            permits += 1
        assert protocol.kind(message) == protocol.RESULT and permits == 2
        assert paced.close() == 0
    finally:
        paced.process.kill()
        shutil.rmtree(files, ignore_errors=True)


def test_an_agent_that_cannot_load_is_a_fatal_message(tmp_path: Path) -> None:
    files = worker_files()
    try:
        broken = _Worker(files, tmp_path, "no_such_agent_module")
        fatal = broken.receive()
        assert protocol.kind(fatal) == protocol.FATAL and "no_such_agent_module" in fatal[protocol.FATAL]
        assert broken.close() == 2
    finally:
        shutil.rmtree(files, ignore_errors=True)


def test_kind_tells_every_message_apart() -> None:
    built = {
        protocol.QUESTION: protocol.question(1, protocol.question_request("q", ["hi"], {})),
        protocol.DESCRIBE: protocol.describe(1),
        protocol.CANCEL: protocol.cancel(1),
        protocol.READY: protocol.ready("app", {}, "1.0", "3.11"),
        protocol.FATAL: protocol.fatal("why"),
        protocol.STARTED: protocol.started(1),
        protocol.RESULT: protocol.result(1, protocol.skipped("no simulator")),
        protocol.ERROR: protocol.error(1, protocol.error_payload("E", "m", None)),
        protocol.CANCELLED: protocol.cancelled(1),
        protocol.STALLED: protocol.stalled(1.25),
        protocol.RUNNING: protocol.running(),
        protocol.EXITING: protocol.exiting("why"),
        protocol.SIGNALLED: protocol.signalled(9),
        protocol.GRANT: protocol.grant(0),
        protocol.PACE: protocol.pace("gemini-2.5-flash", "*"),
        protocol.PERMIT: protocol.permit(0, "gemini-2.5-flash", "key"),
        protocol.TOOK: protocol.took(0, "gemini-2.5-flash", "key"),
        protocol.SPENT: protocol.spent(0, protocol.OK, tokens=3),
    }
    assert set(built) == {*protocol.REQUESTS, *protocol.ANSWERS}
    for name, message in built.items():
        assert protocol.kind(json.loads(protocol.encode(message))) == name
