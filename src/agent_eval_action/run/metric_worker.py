"""Custom metrics scored in a process of their own (``agent_worker/metric_worker.py``), under the
agent's Python, with the agent's environment (ours minus our secrets), from a folder we name
(the project's, or in a PR check a copy of the base's metric modules).

A metric that raises, crashes its process, or hangs past the timeout leaves that one score
unscored with the reason; the process is started again for the next score. Nothing of the
metric's code is ever imported here.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from agent_eval_action.agent_worker import protocol
from agent_eval_action.metrics.registry import unscored
from agent_eval_action.models.questions import Question
from agent_eval_action.models.scores import Score
from agent_eval_action.models.traces import Trace
from agent_eval_action.repo.metric_code import changed_since_written
from agent_eval_action.run.agent.env import agent_environment
from agent_eval_action.run.workers.start import interpreter, kill_session, worker_files
from agent_eval_action.system.errors import ConfigError

if TYPE_CHECKING:
    from agent_eval_action.config import Config

# The first start imports the user's modules (and what they import): a busy machine is slow.
STARTUP_TIMEOUT_S = 180.0


class MetricCodeChanged(Exception):
    """The metrics' code is not as it was read: never imported so."""

    def __init__(self, paths: list[str]):
        super().__init__(f"the base's metric code changed since it was read ({', '.join(paths[:5])}): not imported")
        self.paths = paths


class MetricWorker:
    """One metric process for a run; :meth:`score` is safe to call from several threads."""

    def __init__(
        self,
        specs: Mapping[str, str],
        *,
        python: str,
        cwd: Path,
        env: Mapping[str, str],
        timeout_s: float,
        changed: Callable[[], list[str]] | None = None,
    ):
        self.specs = dict(specs)
        self.python, self.cwd, self.timeout_s = python, cwd, timeout_s
        # What of the metrics' code is not as it was read (the base's, repo/metric_code.py): asked
        # before every start, which imports it; a process is never started on changed code.
        self.changed = changed
        self.env = dict(env)
        self.lock = threading.Lock()
        self.files: Path | None = None
        self.process: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[str] = queue.Queue()
        self.stderr: IO[str] | None = None
        self.failures: dict[str, str] = {}
        self.number = 0

    def start(self) -> None:
        """Starts the process; a metric that cannot be imported is a :class:`ConfigError` naming
        its setting (the metric's import ran there, never here)."""
        with self.lock:
            try:
                self._spawn()
            except MetricCodeChanged:
                return  # nothing imported: each score says why, and the check counts it unsound
        if self.failures:
            name, why = next(iter(self.failures.items()))
            self.close()
            raise ConfigError(f"custom-metrics.{name}.function", why)

    def _spawn(self) -> None:
        moved = self.changed() if self.changed is not None else []
        if moved:
            raise MetricCodeChanged(moved)
        if self.files is None:
            self.files = worker_files()
        env = dict(self.env)
        env["PYTHONPATH"] = str(self.files)
        env[protocol.ENV_METRICS] = json.dumps(self.specs)
        env.setdefault("PYTHONUNBUFFERED", "1")
        self.stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115 - closed with the process
        try:
            self.process = subprocess.Popen(
                [self.python, "-m", f"{protocol.PACKAGE}.{protocol.METRIC_MODULE}"],
                cwd=self.cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,  # killed with whatever it starts (kill_session)
            )
        except OSError as error:
            raise ConfigError("agent-python", f"cannot start {self.python} to score the custom metrics: {error}") from None
        self.lines = queue.Queue()
        threading.Thread(target=self._pump, args=(self.process, self.lines), name="agent-eval-metrics", daemon=True).start()
        ready = self._receive(STARTUP_TIMEOUT_S)
        if not isinstance(ready, dict) or protocol.READY not in ready:
            why = ready if isinstance(ready, str) else "it did not say it was ready"
            self._stop()
            raise ConfigError("custom-metrics", f"the custom metrics' process could not start: {why}")
        self.failures = dict(ready[protocol.READY].get(protocol.FAILURES) or {})

    @staticmethod
    def _pump(process: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put("")

    def _receive(self, timeout: float) -> dict[str, Any] | str:
        """The next message, or why none came: the process ended, or the time ran out."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return f"no answer within {timeout:g} s (timeout)"
        if not line:
            assert self.process is not None
            code = self.process.wait()
            return f"the metric's process ended (exit code {code}){self._last_words()}"
        message = protocol.decode(line)
        return message if message is not None else self._receive(timeout)

    def _last_words(self) -> str:
        if self.stderr is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self.stderr.seek(0)
            tail = [line for line in self.stderr.read().splitlines() if line.strip()]
            return f": {tail[-1].strip()[:300]}" if tail else ""
        return ""

    def score(self, name: str, question: Question, trace: Trace) -> Score:
        """The metric ``name`` on one question's run; unscored with the reason when it fails."""
        request_question = question.model_dump(mode="json")
        request_trace = trace.model_dump(mode="json")
        with self.lock:
            if self.process is None:
                try:
                    self._spawn()
                except MetricCodeChanged as changed:
                    return unscored(f"metric not scored: {changed}")
            assert self.process is not None and self.process.stdin is not None
            self.number += 1
            number = self.number
            try:
                self.process.stdin.write(protocol.encode(protocol.score(number, name, request_question, request_trace)) + "\n")
                self.process.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass  # it died: the read below says how
            answer = self._receive(self.timeout_s)
            while isinstance(answer, dict) and answer.get(protocol.ID) != number:
                answer = self._receive(self.timeout_s)  # a late answer to a request we gave up on
            if isinstance(answer, str):
                self._stop()  # the next score starts a fresh process
                return unscored(f"metric failed: {answer}")
        if protocol.ERROR in answer:
            error = answer[protocol.ERROR]
            return unscored(f"metric failed: {error.get(protocol.TYPE)}: {error.get(protocol.MESSAGE)}")
        body = answer.get(protocol.RESULT) or {}
        details = body.get(protocol.DETAILS)
        return Score(
            value=body.get(protocol.VALUE),
            explanation=str(body.get(protocol.EXPLANATION) or ""),
            details=details if isinstance(details, dict) else {},
        )

    def _stop(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
            kill_session(process.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(5)
        if self.stderr is not None:
            self.stderr.close()
            self.stderr = None

    def close(self) -> None:
        with self.lock:
            self._stop()
            if self.files is not None:
                shutil.rmtree(self.files, ignore_errors=True)
                self.files = None


def metric_worker(config: Config) -> MetricWorker:
    """The started metric process of a run of ``config``: the agent's Python and environment
    (``agent_env``), the folder its custom metrics are imported from, the question timeout."""
    c = config
    env = agent_environment(os.environ, also_withhold=[c.agent_auth_env], pass_through=c.agent_env.allow, remove=c.agent_env.withhold)
    worker = MetricWorker(
        {name: spec.function for name, spec in c.custom_metrics.items()},
        python=interpreter(c.agent_python),
        cwd=Path(c.origin.metrics_folder) if c.origin.metrics_folder else c.import_root(),
        env=env,
        timeout_s=c.timeout,
        changed=functools.partial(changed_since_written, c.origin.metrics_folder) if c.origin.metrics_folder else None,
    )
    worker.start()
    return worker
