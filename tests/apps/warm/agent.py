"""The warm-start test agent (see the package's docstring)."""

from __future__ import annotations

import gc
import os
import random
import signal
import threading
from collections.abc import AsyncGenerator
from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

COLLECTOR_AT_IMPORT = gc.isenabled()
PROMPT = (Path(__file__).parent / "prompt.txt").read_text(encoding="utf-8").strip()

if os.environ.get("WARM_SEED"):
    random.seed(int(os.environ["WARM_SEED"]))  # as an agent that wants its draws repeatable does
if os.environ.get("WARM_IMPORT_HANG") == "1":
    threading.Event().wait()  # an import that never ends
if os.environ.get("WARM_IMPORT_THREAD") == "1":
    threading.Thread(target=threading.Event().wait, name="exporter", daemon=True).start()


def _started() -> dict:
    """What a process starts with that the code it runs can see, as the import found it."""
    import sys

    names = ("SIGINT", "SIGTERM", "SIGCHLD", "SIGPIPE", "SIGHUP", "SIGXFSZ", "SIGUSR1")
    return {
        "path": list(sys.path),
        "cwd": os.getcwd(),
        "argv": list(sys.argv),
        "main": getattr(sys.modules["__main__"].__spec__, "name", None),
        "env": dict(os.environ),
        "flags": list(sys.flags),
        "dont_write_bytecode": sys.dont_write_bytecode,
        "signals": {name: str(signal.getsignal(getattr(signal, name))) for name in names},
        "session_leader": os.getsid(0) == os.getpid(),
        "stdin": os.readlink("/proc/self/fd/0").split(":")[0],  # the zygote's control socket
    }


STARTED = _started()


def started() -> dict:
    """Says what the process that imported this module started with (sys.path, folder, environment...)."""
    return STARTED


def kill_self() -> dict:
    """Kills its own process."""
    os.kill(os.getpid(), signal.SIGKILL)
    return {}


def pid() -> dict:
    """Says which process answers."""
    return {"pid": os.getpid()}


def draw() -> dict:
    """Three draws of ``random``'s module generator, and which process made them."""
    return {"pid": os.getpid(), "draws": [random.random() for _ in range(3)]}


def collector() -> dict:
    """Says whether the cyclic collector was on while this module imported and is on now, and how
    many objects it keeps frozen out of its scans."""
    return {"at_import": COLLECTOR_AT_IMPORT, "now": gc.isenabled(), "frozen": gc.get_freeze_count()}


class WarmModel(BaseLlm):
    model: str = "scripted-warm"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        answer = next((p.function_response.response for p in last.parts or [] if p.function_response), None)
        said = "".join(p.text or "" for p in last.parts or [])
        if answer is not None:
            part = types.Part(text=str(answer))
        elif said.startswith("call "):
            part = types.Part(function_call=types.FunctionCall(name=said.split()[1], args={}))
        else:
            part = types.Part(text=said.removeprefix("say "))
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


root_agent = LlmAgent(name="warm", model=WarmModel(), instruction=PROMPT, tools=[kill_self, pid, collector, draw, started])
