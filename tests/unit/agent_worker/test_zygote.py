"""The zygote's imports of what ADK imports only on an agent's first run (``FIRST_RUN``): in a
subprocess, so the test process's modules stay as they were."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.repos import ROOT

SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from agent_eval_action.agent_worker import zygote
done = zygote.first_run_imports((*zygote.FIRST_RUN, "google.adk.no_such_module_of_any_version"))
print(json.dumps({"done": done, "loaded": [name for name in zygote.FIRST_RUN if name in sys.modules]}))
"""


def test_the_zygote_imports_what_adks_first_run_would_and_skips_what_this_adk_lacks() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT / "src")], capture_output=True, text=True, timeout=120, check=True)
    seen = json.loads(out.stdout)
    from agent_eval_action.agent_worker.zygote import FIRST_RUN

    # Every name still exists in the ADK we pin (a rename in ADK shows here); the unknown one is skipped.
    assert seen["done"] == list(FIRST_RUN) == seen["loaded"]


# The suite template's work (the zygote's first-run imports and the deferred schemas), then a
# question of a scripted tool-calling agent (tests/apps/drifting):
# which of google-genai's deferred schemas the question still built (its classes incomplete before
# it, complete after), and what build_deferred_models gives for names it cannot build.
BUILT_BY_A_QUESTION = r"""
import asyncio, json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from agent_eval_action.agent_worker import zygote
zygote.first_run_imports()
zygote.build_deferred_models()
from google.genai import types
from google.adk.runners import InMemoryRunner
from tests.apps.drifting import agent

def incomplete():
    return {name for name, value in vars(types).items() if isinstance(value, type) and getattr(value, "__pydantic_complete__", True) is False}

before = incomplete()
runner = InMemoryRunner(agent=agent.root_agent, app_name="app")

async def ask():
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=types.Content(role="user", parts=[types.Part(text="0: what is the price of apple")])):
        pass

asyncio.run(ask())
skipped = zygote.build_deferred_models((("google.genai.types", ("NoSuchType",)), ("no.such.module", ("Content",))))
print(json.dumps({"built_by_the_question": sorted(before - incomplete()), "skipped": skipped}))
"""


def test_a_question_after_the_templates_work_builds_no_schema_of_google_genai() -> None:
    """Each forked worker built the deferred schemas of a question's types again (~30 ms of CPU a
    worker): the suite's template builds them before it forks, and this keeps the list whole as
    google-genai changes."""
    out = subprocess.run(
        [sys.executable, "-c", BUILT_BY_A_QUESTION, str(ROOT / "src"), str(ROOT)], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"built_by_the_question": [], "skipped": []}


# A thread of a C library's own, which the threading module never sees (a gRPC poller, say),
# started with pthread_create through ctypes and named as such a library names its threads; it
# sleeps argv[2] microseconds, then the zygote looks.
NATIVE = r"""
import ctypes, sys
sys.path.insert(0, sys.argv[1])
from agent_eval_action.agent_worker import zygote
libc = ctypes.CDLL(None)
sleep = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(lambda _: libc.usleep(int(sys.argv[2])))
thread = ctypes.c_ulong()
libc.pthread_create(ctypes.byref(thread), None, sleep, None)
libc.pthread_setname_np(thread, b"grpc_poller")
print(zygote.unsafe(-1))
"""


def _unsafe_beside_a_native_thread(microseconds: int) -> str:
    done = subprocess.run(
        [sys.executable, "-c", NATIVE, str(ROOT / "src"), str(microseconds)], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.strip()


def test_a_native_thread_makes_the_zygote_cold_and_is_named() -> None:
    said = _unsafe_beside_a_native_thread(30_000_000)
    assert said == "loading the agent started 1 native thread(s) (grpc_poller; a C extension's, gRPC's say)"


def test_a_thread_that_is_ending_leaves_the_zygote_warm() -> None:
    # One an import ran briefly, say: still listed by the kernel for a moment after it returned.
    assert _unsafe_beside_a_native_thread(20_000) == "None"


# A package whose module imports a dependency this environment lacks, one that imports, and a
# name that is no module: what halt_failed_imports marks, and what each import then does.
HALT = r"""
import json, pathlib, sys
top = pathlib.Path(sys.argv[2])
(top / "halting").mkdir()
(top / "halting" / "__init__.py").write_text("")
(top / "halting" / "needs.py").write_text("import not_installed_anywhere_dep\n")
(top / "halting" / "fine.py").write_text("X = 1\n")
sys.path[:0] = [sys.argv[1], str(top)]
from agent_eval_action.agent_worker import zygote
halted = zygote.halt_failed_imports(("halting.needs", "halting.fine", "halting.absent"))
try:
    import halting.needs
    again = "imported"
except ModuleNotFoundError as error:
    again = str(error)
print(json.dumps({"halted": halted, "again": again, "fine": "halting.fine" in sys.modules, "absent": "halting.absent" in sys.modules}))
"""


def test_an_import_that_fails_for_a_missing_dependency_is_halted_and_nothing_else(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", HALT, str(ROOT / "src"), str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen["halted"] == ["halting.needs"]
    assert "halted; None in sys.modules" in seen["again"]  # at once, no search of the path again
    assert seen["fine"] and not seen["absent"]


# ADK 2.x's build_node imports RemoteA2aAgent on every agent node it builds; without the a2a SDK
# (an extra: not in our environment) each try searched every path entry for `a2a` again. Counted
# by a finder ahead of the others, over three questions of a real agent, before and after.
SEARCHES = r"""
import asyncio, importlib.util, json, os, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
os.environ["CALLS_FILE"] = os.devnull
from google.adk.runners import InMemoryRunner
from google.genai import types
from tests.apps.counting import agent
from agent_eval_action.agent_worker import zygote

if importlib.util.find_spec("a2a") is not None:
    print(json.dumps({"skip": "the a2a SDK is installed here"}))
    raise SystemExit(0)
searched = []

class Counting:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] == "a2a":
            searched.append(name)
        return None

sys.meta_path.insert(0, Counting)

async def ask(runner, i):
    session = await runner.session_service.create_session(app_name="x", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text=f"{i}: the price of apple")])
    return [e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)]

runner = InMemoryRunner(agent=agent.root_agent, app_name="x")
asyncio.run(ask(runner, 0))
before = len(searched)
for i in range(1, 4):
    asyncio.run(ask(runner, i))
per_question = (len(searched) - before) / 3
halted = zygote.halt_failed_imports()
searched.clear()
answers = [asyncio.run(ask(runner, i)) for i in range(4, 7)]
print(json.dumps({"per_question": per_question, "halted": halted, "after": len(searched), "answered": [len(a) for a in answers]}))
"""


def test_adks_retried_import_of_the_a2a_agent_searches_no_more_once_halted() -> None:
    out = subprocess.run([sys.executable, "-c", SEARCHES, str(ROOT / "src"), str(ROOT)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    if "skip" in seen:
        pytest.skip(seen["skip"])
    assert seen["per_question"] >= 1  # the cost this removes: a search of the path on every question
    assert seen["halted"] == ["google.adk.agents.remote_a2a_agent"]
    assert seen["after"] == 0
    assert all(n >= 3 for n in seen["answered"])  # a tool call, its answer and the reply: the agent runs as before
