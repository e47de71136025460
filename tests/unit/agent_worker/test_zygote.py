"""The zygote's imports of what ADK imports only on an agent's first run (``FIRST_RUN``): in a
subprocess, so the test process's modules stay as they were."""

from __future__ import annotations

import json
import subprocess
import sys

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
