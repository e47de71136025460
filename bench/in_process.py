"""The command line run in a long-lived process, as the test suite runs it, for a family whose
figures are verdicts and counts rather than seconds (``aa_real``: some 370 commands).

A lane is one such process. It starts the suite's zygote template (``run/workers/template.py``:
ADK and the first run's modules imported once, each command's zygote forked from it) and runs
each command it is sent with ``tests.helpers.commands.run_cli``: ``main(argv)`` with the
command's folder, environment, ``sys.path``, streams and signal handlers set for the call and
put back after. What runs is the same code a process of its own runs, the agent's zygote and
workers real processes; what a command no longer pays is the interpreter's start, the command
line's imports and the zygote's import of ADK (an ``aa_real`` check: 2.65 -> 1.5 s of CPU here).

    lane = Lane(); lane.run(["check", "--base", "main"], cwd=repo, env=env); lane.close()

The lane speaks JSON lines on a pipe of its own (fd 1 is pointed at fd 2 before any command
runs, so nothing a command or its children print can reach the protocol).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class Lane:
    """One process that runs commands in turn, in process."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
        self._process = subprocess.Popen(
            [sys.executable, "-m", "bench.in_process"], cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def run(self, args: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
        """``python -m agent_eval_action ARGS`` in ``cwd`` with exactly ``env``, in the lane."""
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(json.dumps({"args": list(args), "cwd": str(cwd), "env": dict(env)}) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the bench's lane process ended (exit {self._process.wait()}); its errors are above")
        done = json.loads(line)
        return subprocess.CompletedProcess(done["argv"], done["code"], done["stdout"], done["stderr"])

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def main() -> None:
    from tests.helpers.commands import run_cli
    from tests.helpers.zygotes import running_template

    from agent_eval_action.run.workers.template import ENV_TEMPLATE

    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    with running_template(os.environ) as template:
        for line in sys.stdin:
            request = json.loads(line)
            env = dict(request["env"])
            if template is not None:
                env[ENV_TEMPLATE] = template
            done = run_cli(request["args"], cwd=Path(request["cwd"]), env=env, timeout=1800)
            protocol.write(json.dumps({"argv": done.args, "code": done.returncode, "stdout": done.stdout, "stderr": done.stderr}) + "\n")


if __name__ == "__main__":
    main()
