"""What the suite's zygote template (``run/workers/template.py``) refuses to fork: each such
zygote is then started fresh (``tests/integration/test_warm_start.py`` runs both)."""

from __future__ import annotations

import os
import socket
import sys
import threading

from agent_eval_action.run.workers.template import _refused, refusal


def test_an_interpreter_setting_or_an_import_time_one_of_its_own_is_refused() -> None:
    python = sys.executable
    assert refusal({"python": python, "env": {"PYTHONPATH": "/x"}}, python, {}) is None  # given after the fork
    assert refusal({"python": python, "env": {"PYTHONHASHSEED": "7"}}, python, {}) == "PYTHONHASHSEED differs from the template's"
    assert refusal({"python": python, "env": {"OTEL_PROPAGATORS": "b3"}}, python, {}) == "OTEL_PROPAGATORS differs from the template's"
    assert refusal({"python": python, "env": {}}, python, {"LC_ALL": "C"}) == "LC_ALL differs from the template's"
    assert refusal({"python": "/other/python", "env": {}}, python, {}).startswith("another Python")  # type: ignore[union-attr]


def test_a_template_with_a_thread_of_its_own_or_a_request_that_is_none_forks_nothing() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    read, write = os.pipe()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        request = {"python": sys.executable, "env": {}}
        assert _refused(ours, [request], [read, write], {}) == "not a request (a JSON object and two descriptors)"
        assert _refused(ours, request, [read], {}) == "not a request (a JSON object and two descriptors)"
        assert _refused(ours, request, [read, write], {}) == "the template has a thread besides its own: forking it is not safe"
    finally:
        stop.set()
        thread.join()
        for end in (ours, theirs):
            end.close()
        os.close(read)
        os.close(write)
