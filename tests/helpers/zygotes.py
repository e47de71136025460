"""The test suite's zygote template (``run/workers/template.py``), started for a test process."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from agent_eval_action.run.agent.env import agent_environment
from agent_eval_action.run.workers.template import ENV_TEMPLATE


def ready(path: str, timeout_s: float = 60) -> bool:
    """Whether the template at ``path`` answers, waiting for it up to ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)
    return os.path.exists(path)


@contextlib.contextmanager
def running_template(environ: Mapping[str, str], *, wait: bool = True) -> Iterator[str | None]:
    """A template started from this process with ``environ`` as an agent gets it (our secrets
    withheld: what another process reads as a zygote's environment in /proc, fixed when the
    template started); yields its socket once it answers (None: it did not start), or at once
    (``wait=False``: it answers once the socket is there, :func:`ready`)."""
    folder = Path(tempfile.mkdtemp(prefix="agent-eval-template-"))  # short: a socket's path has ~100 bytes
    path = folder / "zygotes"
    env = {name: value for name, value in agent_environment(environ).items() if name != ENV_TEMPLATE}
    env.setdefault("PYTHONUNBUFFERED", "1")  # as every zygote's environment has it (run/workers/start.py)
    with open(folder / "template.log", "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "agent_eval_action.run.workers.template", str(path), str(os.getpid())],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    deadline = time.monotonic() + 60
    while wait and not path.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield str(path) if path.exists() or not wait else None
    finally:
        process.kill()
        process.wait()
        shutil.rmtree(folder, ignore_errors=True)
