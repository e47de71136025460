"""The command line's subreaper: what came below the process during the block is killed, even in
a session of its own; what was there before is spared; the flag is put back; outside the block
nothing is killed (a library leaves its caller as it found it)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_eval_action.system import reaper

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's")

# A child that starts a grandchild in a session of its own, says its pid, and exits: the
# grandchild is orphaned, as a daemon's double fork leaves it.
DAEMON = (
    "import subprocess, sys; "
    "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True); "
    "open(sys.argv[1], 'w').write(str(p.pid))"
)


def subreaper_flag() -> int:
    value = ctypes.c_int(-1)
    ctypes.CDLL(None).prctl(reaper.PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0)
    return value.value


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X")


def daemon(tmp_path: Path) -> int:
    pid_file = tmp_path / "daemon.pid"
    subprocess.run([sys.executable, "-c", DAEMON, str(pid_file)], check=True, timeout=60)
    return int(pid_file.read_text())


def test_a_daemon_started_during_the_block_is_killed_and_earlier_children_are_spared(tmp_path: Path) -> None:
    before = subreaper_flag()
    earlier = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        with reaper.subreaping() as on:
            assert on and subreaper_flag() == 1
            pid = daemon(tmp_path)
            assert pid in reaper.descendants(os.getpid())  # orphaned, it was re-parented to us, not to init
            assert reaper.reap() == [pid]
        assert not alive(pid)
        assert earlier.poll() is None  # the caller's own child is not ours to kill
        assert subreaper_flag() == before
    finally:
        earlier.kill()
        earlier.wait()


def test_outside_the_block_nothing_is_killed(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        assert reaper.reap() == []
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()


def test_the_block_ends_what_came_during_it_even_when_it_raises(tmp_path: Path) -> None:
    started: list[int] = []
    with pytest.raises(RuntimeError), reaper.subreaping():
        started.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]).pid)
        raise RuntimeError("the command failed")
    assert not alive(started[0])  # reap() waits until what it killed has ended
    os.waitpid(started[0], 0)  # our child: collected, as Popen would have
