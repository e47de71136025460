"""Ctrl-C, SIGTERM (what GitHub sends when a job is cancelled) and shared output directories,
on the command line as a user runs it: what finished is written, the rest is skipped as
"interrupted", the agent's processes end with the run, and two runs never write one folder."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.factories import csv_row, customer_service_runs, write_csv
from tests.helpers.hostile import APPS, cli, golden
from tests.helpers.repos import ROOT, git

FAST = {f"q_fast_{i}": "call greet" for i in range(3)}
SLOW = {f"q_slow_{i}": "call nap" for i in range(5)}  # ten minutes each: they finish only if nothing stops them


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env["PYTHONPATH"] = str(ROOT / "src")
    return env


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    shutil.copytree(APPS / "hostile", tmp_path / "hostile")
    golden(tmp_path / "hostile_golden.json", {**FAST, **SLOW})
    (tmp_path / "agent-eval.toml").write_text('datasets = ["hostile_golden.json"]\nagent = "hostile"\n')
    (tmp_path / ".gitignore").write_text("agent-eval-results/\nworker-pids/\n")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "agent and dataset")
    return tmp_path


class Run:
    """The CLI in a subprocess; its stderr read as it comes, so a test waits for what it says."""

    def __init__(self, cwd: Path, *args: str):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agent_eval_action", *args],
            cwd=cwd,
            env=environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self.out: list[str] = []
        self.changed = threading.Condition()
        # Each pipe read by a thread of its own, to the end: nothing is lost to a second reader.
        self.readers = [threading.Thread(target=self._read, daemon=True), threading.Thread(target=self._read_out, daemon=True)]
        for reader in self.readers:
            reader.start()

    def _read_out(self) -> None:
        assert self.process.stdout is not None
        self.out.extend(self.process.stdout)

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()
        with self.changed:
            self.lines.append("")  # the end
            self.changed.notify_all()

    def wait_for(self, text: str, timeout: float = 180) -> None:
        with self.changed:
            found = self.changed.wait_for(lambda: any(text in line for line in self.lines) or "" in self.lines, timeout)
        assert found and any(text in line for line in self.lines), f"never said {text!r}: {''.join(self.lines)}"

    def wait_for_runs(self, dataset: str, count: int, timeout: float = 180) -> None:
        """Until the progress line says at least ``count`` of ``dataset``'s runs are done (it
        counts in steps of its own: a baseline's five runs a question move it by several)."""
        pattern = re.compile(rf"{re.escape(dataset)}: (\d+)/")

        def done() -> bool:
            return any(int(m.group(1)) >= count for line in self.lines if (m := pattern.search(line))) or "" in self.lines

        with self.changed:
            self.changed.wait_for(done, timeout)
        assert done() and "" not in self.lines, f"never said {count} of {dataset}'s runs were done: {''.join(self.lines)}"

    def finish(self, timeout: float = 120) -> tuple[int, str, str]:
        self.process.wait(timeout)
        for reader in self.readers:
            reader.join(timeout)
        return self.process.returncode, "".join(self.out), "".join(self.lines)


def gone(pid: int) -> bool:
    """The process ended (a zombie not yet reaped by its new parent counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return state[state.rfind(b")") + 2 :].split()[0] == b"Z"


def wait_until_gone(pids: list[int], timeout: float = 60) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [pid for pid in pids if not gone(pid)]
        if not alive:
            return []
        time.sleep(0.05)
    return [pid for pid in pids if not gone(pid)]


def worker_pids(repo: Path) -> list[int]:
    return [int(p.name) for p in (repo / "worker-pids").iterdir()]


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_run_writes_what_finished_skips_the_rest_and_kills_the_workers(repo: Path, signum: int, code: int) -> None:
    run = Run(repo, "run", "--progress", "always", "--workers", "1", "--no-comment")
    run.wait_for(f"hostile_golden: {len(FAST)}/{len(FAST) + len(SLOW)} runs")  # the fast ones are done
    deadline = time.monotonic() + 180
    while not ((repo / "worker-pids").is_dir() and worker_pids(repo)):  # a slow one is running in a worker
        assert time.monotonic() < deadline and run.process.poll() is None, "".join(run.lines)
        time.sleep(0.05)
    sent = time.monotonic()
    run.process.send_signal(signum)
    returncode, out, err = run.finish()
    print(f"exited {time.monotonic() - sent:.2f} s after {signal.Signals(signum).name}")  # measured, not asserted
    assert returncode == code, out + err
    assert "Task was destroyed" not in err and "Traceback" not in err and "never retrieved" not in err, err
    assert f"interrupted by {signal.Signals(signum).name}" in err
    # The progress line counts what finished: no "8/8 runs" before "5 of 8 did not finish".
    total = len(FAST) + len(SLOW)
    assert f"hostile_golden: {total}/{total} runs" not in err, err
    data = json.loads((repo / "agent-eval-results" / "results.json").read_text())
    questions = {q["id"]: q for q in data["datasets"][0]["questions"]}
    assert set(questions) == {*FAST, *SLOW}
    for qid in FAST:
        assert questions[qid]["status"] == "ok", questions[qid]
    for qid in SLOW:
        assert (questions[qid]["status"], questions[qid]["skip_reason"]) == ("skipped", "interrupted"), questions[qid]
    for view in ("comment.md", "summary.md", "junit.xml", "report.html"):
        assert (repo / "agent-eval-results" / view).stat().st_size > 0, view
    assert "interrupted" in (repo / "agent-eval-results" / "junit.xml").read_text()
    # Half a run decides nothing: neither passed nor failed, and no advice to fix a dataset that is fine.
    assert data["gate"]["outcome"] == "unchecked", data["gate"]
    assert data["gate"]["unchecked"][0].startswith(f"interrupted: {len(SLOW)} of {len(FAST) + len(SLOW)} question runs did not finish")
    assert "Agent evaluation could not be checked: interrupted" in (repo / "agent-eval-results" / "comment.md").read_text()
    assert "gate: COULD NOT BE CHECKED - interrupted" in out, out
    assert "nothing was checked" not in out + err, out + err
    # Said once: the headline's reason was its first item again, word for word; what it adds stays.
    said = f"{len(SLOW)} of {total} question runs did not finish"
    assert out.count(said) == 1, out
    assert "  ? Run the check again" in out, out
    comment = (repo / "agent-eval-results" / "comment.md").read_text()
    assert comment.count(said) == 1 and "- Run the check again" in comment, comment
    assert wait_until_gone(worker_pids(repo)) == []


def test_an_interrupted_baseline_update_says_one_thing(repo: Path) -> None:
    """No baseline is made of part of a run, and nothing then says "what finished is written"."""
    run = Run(repo, "baseline", "update", "--progress", "always", "--workers", "1")
    run.wait_for_runs("hostile_golden", len(FAST))
    deadline = time.monotonic() + 180
    while not ((repo / "worker-pids").is_dir() and worker_pids(repo)):  # a slow one is running in a worker
        assert time.monotonic() < deadline and run.process.poll() is None, "".join(run.lines)
        time.sleep(0.05)
    run.process.send_signal(signal.SIGINT)
    returncode, out, err = run.finish()
    assert returncode == 130, out + err
    assert "interrupted: no baseline was written (a baseline is never made of part of a run)" in err
    assert "what finished is written" not in err and err.rstrip().endswith("interrupted by SIGINT"), err
    assert not (repo / "evaluation" / "baselines").exists()
    assert wait_until_gone(worker_pids(repo)) == []


def test_a_second_ctrl_c_ends_the_run_at_once(repo: Path) -> None:
    run = Run(repo, "evaluate", "--progress", "always", "--workers", "1")
    run.wait_for(f"hostile_golden: {len(FAST)}/")
    run.process.send_signal(signal.SIGINT)
    run.process.send_signal(signal.SIGINT)
    returncode, out, err = run.finish()
    assert returncode == 130, out + err
    assert "Task was destroyed" not in err and "Traceback" not in err, err


def test_what_the_agent_left_running_ends_with_the_run(repo: Path) -> None:
    straggler = repo / "straggler.pid"
    golden(repo / "hostile_golden.json", {"q_spawn": f"call spawn_straggler {straggler}"})
    done = cli(repo, "evaluate", "--workers", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((repo / "agent-eval-results" / "results.json").read_text())
    assert data["datasets"][0]["questions"][0]["status"] == "ok"
    pid = int(straggler.read_text())
    assert wait_until_gone([pid]) == []  # killed with its worker's session, though in a process group of its own
    assert not straggler.with_suffix(".late").exists()


@pytest.mark.parametrize(
    ("own_process", "flags"),
    [(False, []), (True, []), (True, ["--no-warm-start"])],
    ids=["in-process", "command-forked-workers", "command-spawned-workers"],
)
def test_a_daemon_the_agent_starts_in_a_session_of_its_own_dies_before_the_run_writes(
    repo: Path, own_process: bool, flags: list[str]
) -> None:
    """A plain child and one that calls setsid: the command line is their subreaper, so both are
    killed when the workers close, and neither can overwrite the outputs after the verdict; the
    command as its own process too, its workers forked by the zygote or spawned."""
    golden(repo / "hostile_golden.json", {"q_daemon": f"call spawn_daemon {repo / 'spawned'}"})
    github_output = repo / "github_output"
    github_output.write_text("")
    done = cli(repo, "check", "--workers", "1", *flags, env={"GITHUB_OUTPUT": str(github_output)}, subprocess=own_process)
    assert done.returncode == 0, done.stdout + done.stderr
    pids = [int((repo / f"spawned.{kind}").read_text()) for kind in ("child", "daemon")]
    left = wait_until_gone(pids)
    for pid in left:  # a failing run's leftovers are not left to the next test
        os.kill(pid, signal.SIGKILL)
    assert left == []
    (repo / "spawned.go").write_text("go")  # what the daemon waited for, had it lived
    output = repo / "agent-eval-results"
    assert json.loads((output / "results.json").read_text())["datasets"][0]["questions"][0]["status"] == "ok"
    assert "pwned" not in (output / "comment.md").read_text() and "pwned" not in github_output.read_text()


def test_a_second_run_on_the_same_output_dir_is_refused_and_the_first_is_unharmed(repo: Path) -> None:
    first = Run(repo, "evaluate", "--progress", "always", "--workers", "1")
    first.wait_for(f"hostile_golden: {len(FAST)}/")
    second = cli(repo, "evaluate", "--workers", "1", subprocess=True)  # two processes: the first's children are not its
    output = repo / "agent-eval-results"
    assert second.returncode == 2, second.stdout + second.stderr
    assert f"--output-dir {output.name}: another run (process {first.process.pid}) is writing there now" in second.stderr
    first.process.send_signal(signal.SIGINT)
    returncode, out, err = first.finish()
    assert returncode == 130, out + err
    data = json.loads((output / "results.json").read_text())
    assert {q["id"] for q in data["datasets"][0]["questions"]} == {*FAST, *SLOW}
    assert not [p.name for p in output.iterdir() if p.name.endswith(".tmp")]
    # Once the first has ended, the folder is free again.
    again = cli(
        repo, "evaluate", "hostile_golden.json", "--agent", "hostile", "--workers", "1", "--output-dir", str(output), "--timeout", "1"
    )
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_report_into_a_running_runs_output_dir_is_refused_and_no_files_are_mixed(repo: Path) -> None:
    """Two CLI processes on one folder: ``report`` of the older results.json while ``evaluate``
    runs there is refused (it would put the old run's page beside the new run's results), and
    the new run's results.json is not left beside the older run's views."""
    output = repo / "agent-eval-results"
    golden(repo / "fast_golden.json", FAST)
    assert cli(repo, "evaluate", "fast_golden.json", "--workers", "1").returncode == 0
    assert cli(repo, "report", str(output / "results.json")).returncode == 0
    assert (output / "report.html").is_file()
    first = Run(repo, "evaluate", "--progress", "always", "--workers", "1")
    first.wait_for(f"hostile_golden: {len(FAST)}/")
    second = cli(repo, "report", str(output / "results.json"), subprocess=True)  # two processes, as above
    assert second.returncode == 2, second.stdout + second.stderr
    assert f"another run (process {first.process.pid}) is writing there now" in second.stderr
    first.process.send_signal(signal.SIGINT)
    returncode, out, err = first.finish()
    assert returncode == 130, out + err
    data = json.loads((output / "results.json").read_text())
    assert {q["id"] for q in data["datasets"][0]["questions"]} == {*FAST, *SLOW}
    assert sorted(p.name for p in output.iterdir()) == [".agent-eval.lock", "results.json"]  # the older run's page is gone


def test_sigterm_while_baselines_are_written_never_leaves_a_partial_baseline(tmp_path: Path) -> None:
    """Three tries, each stopped as soon as a baseline file (or its temporary file) appears."""
    rows = [csv_row(run, pad_chars=20_000) for run in customer_service_runs()] * 40
    for name in ("a", "b", "c", "d"):
        write_csv(tmp_path / f"recorded_{name}.csv", rows)
    git(tmp_path, "init", "-q", "-b", "main")
    baselines = tmp_path / "evaluation" / "baselines"
    for _ in range(3):
        shutil.rmtree(baselines, ignore_errors=True)
        run = Run(tmp_path, "baseline", "update", "--datasets", "recorded_*.csv")
        while run.process.poll() is None and not (baselines.is_dir() and any(baselines.rglob("*"))):
            time.sleep(0.001)
        run.process.send_signal(signal.SIGTERM)
        returncode, out, err = run.finish()
        assert returncode in (0, 143), out + err
        for file in baselines.rglob("*") if baselines.is_dir() else []:
            if file.is_file():
                assert not file.name.endswith(".tmp"), file
                data = json.loads(file.read_text())  # whole: never 0 bytes, never cut
                assert len(data["datasets"][0]["questions"]) == len(customer_service_runs()), file
