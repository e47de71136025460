"""The worker's process: ``python -m agent_eval_worker`` under the agent's own interpreter.

Protocol, one JSON object per line. The parent writes requests on our stdin:
``{"id": N, "question": {"id", "user_inputs", "initial_state"}}``, or ``{"id": N, "describe": true}``
for the agent's tree (``tree.agent_tree``: names, descriptions, tools and their schemas, sub-agents). We answer on the file
descriptor that was stdout when we started (the agent's own prints go to stderr instead):
first ``{"ready": {"app_name", "models", "adk_version", "python"}}`` or ``{"fatal": "why"}``,
then per request ``{"id": N, "started": true}`` when it is read, and ``{"id": N, "result":
{...}}`` or ``{"id": N, "error": {"type", "message", "code", "partial"?}}`` (``partial``: the
result so far, when the agent raised mid-question); ``{"exiting": "why"}`` before
the process ends on its own. Questions run concurrently in one event loop; the parent decides how many.
Anything the agent raises, ``SystemExit`` and ``KeyboardInterrupt`` included, is that question's
error; what kills the process (``os._exit``, a signal) costs the questions in flight, and the
parent starts another worker.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from typing import IO, Any

from .loader import AgentLoadError, LoadedAgent, load_agent
from .runner import AgentSessions, partial_run
from .tree import agent_tree


def _protocol_stream() -> IO[str]:
    """Our stdout, kept for the protocol; fd 1 (and sys.stdout) then point at stderr, so a
    print() in the agent can never corrupt an answer."""
    stream = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return stream


def error_payload(error: BaseException) -> dict[str, Any]:
    code = None
    for attribute in ("code", "status_code"):
        value = getattr(error, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool):
            code = value
            break
    if code is None:
        value = getattr(getattr(error, "response", None), "status_code", None)
        code = value if isinstance(value, int) else None
    if isinstance(error, SystemExit):
        message = f"the agent called sys.exit({error.code!r})"
    elif isinstance(error, KeyboardInterrupt):
        message = "the agent raised KeyboardInterrupt"
    else:
        message = str(error).strip() or repr(error)
    return {"type": type(error).__name__, "message": message, "code": code}


class Worker:
    def __init__(self, sessions: AgentSessions, out: IO[str], agent: LoadedAgent):
        self.sessions = sessions
        self.agent = agent
        self.out = out
        self.lock = threading.Lock()
        self.tasks: set[asyncio.Task[None]] = set()
        self.in_flight: set[Any] = set()

    def send(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, ensure_ascii=False, default=str)
        with self.lock:
            self.out.write(text + "\n")
            self.out.flush()

    async def answer(self, request: dict[str, Any]) -> None:
        number = request.get("id")
        # Said before the agent runs: a question this worker never started is safe to give to another.
        self.send({"id": number, "started": True})
        self.in_flight.add(number)
        try:
            if request.get("describe"):
                result = agent_tree(self.agent.root_agent)
            else:
                result = await self.sessions.run(request["question"])
        except BaseException as error:  # noqa: BLE001 - the agent's failure, whatever it is (sys.exit too), is this question's
            payload = error_payload(error)
            partial = partial_run(error)
            if partial is not None:
                payload["partial"] = partial  # what the run did before the error: its tool calls, its state
            self.send({"id": number, "error": payload})
            return
        finally:
            self.in_flight.discard(number)
        self.send({"id": number, "result": result})

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=2**26)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                break  # the parent closed our stdin: finish what is in flight, then leave
            request = json.loads(line)
            task = asyncio.ensure_future(self.answer(request))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)

    def run(self) -> int:
        """Serves until the parent closes stdin. ``SystemExit`` or ``KeyboardInterrupt`` raised in
        a task of the agent's own (asyncio lets those through every task) stops the event loop:
        the questions in flight get that as their error, and this process ends for a new one."""
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self.serve())
        except BaseException as error:  # noqa: BLE001 - the agent stopped our loop; say so, then end
            payload = error_payload(error)
            for number in sorted(self.in_flight, key=str):
                self.send({"id": number, "error": payload})
            self.send({"exiting": payload["message"]})
            self.out.flush()
            os._exit(3)  # the agent's threads and tasks are not ours to wind down
        loop.close()
        return 0


def _leave(code: int) -> None:
    """Ends the process once every answer is out: the agent's atexit handlers run (its telemetry
    flushes), the interpreter's teardown of every module does not; it only cost the parent,
    which waits for us, a few hundred milliseconds."""
    import atexit

    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(code)


def main() -> int:
    out = _protocol_stream()
    spec = os.environ.get("AGENT_EVAL_WORKER_AGENT", "")
    capture = os.environ.get("AGENT_EVAL_WORKER_SPANS", "1") == "1"
    cache = os.environ.get("AGENT_EVAL_WORKER_MODEL_CACHE") or None
    try:
        agent = load_agent(spec)
        sessions = AgentSessions(agent, capture_spans=capture, model_cache=cache)
    except AgentLoadError as error:
        out.write(json.dumps({"fatal": str(error)}) + "\n")
        out.flush()
        return 2
    except BaseException as error:  # noqa: BLE001 - building the Runner failed: the user's agent, not us
        out.write(json.dumps({"fatal": f"setting up the ADK Runner raised {type(error).__name__}: {error}"}) + "\n")
        out.flush()
        return 2
    try:
        from google.adk import version

        adk_version = version.__version__
    except ImportError:
        adk_version = "unknown"
    worker = Worker(sessions, out, agent)
    worker.send({"ready": {**sessions.describe(), "adk_version": adk_version, "python": sys.version.split()[0]}})
    return worker.run()


if __name__ == "__main__":
    _leave(main())
