"""What the worker's audit hook records, per question: in a subprocess (an audit hook cannot be
removed, and would stay in the test process), with questions running concurrently in one loop."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.repos import ROOT

SCRIPT = r"""
import asyncio, json, os, sys, threading
sys.path.insert(0, sys.argv[1])
from agent_eval_action.agent_worker import observe

obs = observe.start([sys.prefix, sys.base_prefix], native=sys.argv[2] == "native")
assert obs.native == (sys.argv[2] == "native"), "the C hook was asked for and not installed, or the reverse"
open("loaded.txt").read()  # read while the agent loads: every question's
sys.path.insert(0, os.path.abspath("lib"))
import helper_mod  # code: every question that ends after it

read_done = None

async def question(name, started, go):
    own, token = obs.begin()
    try:
        started.set()
        await go.wait()  # both questions are in flight at once
        with open(f"{name}.txt") as f:
            f.read()
        if name == "a":  # a thread of the agent's own carries no question: every question's
            reader = threading.Thread(target=lambda: open("from_thread.txt").read())
            reader.start()
            reader.join()
            read_done.set()
        else:
            await read_done.wait()  # b ends after it: the thread's read is b's too
        await asyncio.create_task(asyncio.to_thread(os.listdir, f"dir_{name}"))  # a task and a thread it starts: its own
        with os.scandir(f"scan_{name}") as entries:  # listed too, as os.scandir
            list(entries)
        try:
            open(f"missing_{name}.txt")
        except FileNotFoundError:
            pass
        with open(f"written_{name}.txt", "w") as f:  # written, not read: no input
            f.write("x")
        return obs.paths(own)
    finally:
        obs.end(token)

async def main():
    global read_done
    read_done = asyncio.Event()
    go = asyncio.Event()
    starts = [asyncio.Event(), asyncio.Event()]
    tasks = [asyncio.create_task(question(n, s, go)) for n, s in zip(("a", "b"), starts)]
    for s in starts:
        await s.wait()
    go.set()
    return await asyncio.gather(*tasks)

a, b = asyncio.run(main())
print(json.dumps({"a": a, "b": b}))
"""


def native_hook() -> str:
    """The C audit hook built for this interpreter (make install builds it), else skip saying how
    to build it (fail on CI, which must test it)."""
    from agent_eval_action.agent_worker import native
    from tests.helpers.browser import require

    built = native.target()
    return require(
        "the C audit hook",
        str(built) if built.exists() else None,
        "observing with it",
        install=f"make install, or {sys.executable} -m agent_eval_action.agent_worker.native (it needs gcc and the interpreter's Python.h)",
    )


@pytest.mark.parametrize("hook", ["native", "python"])
def test_each_question_gets_its_own_reads_and_the_shared_ones(tmp_path: Path, hook: str) -> None:
    if hook == "native":
        native_hook()
    for name in ("loaded.txt", "a.txt", "b.txt", "from_thread.txt"):
        (tmp_path / name).write_text("x")
    for name in ("dir_a", "dir_b", "scan_a", "scan_b", "lib"):
        (tmp_path / name).mkdir()
    (tmp_path / "lib" / "helper_mod.py").write_text("X = 1\n")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ROOT / "src"), hook], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(done.stdout)
    here = str(tmp_path.resolve())
    for name, other in (("a", "b"), ("b", "a")):
        files = set(seen[name]["file"])
        assert {f"{here}/loaded.txt", f"{here}/{name}.txt", f"{here}/missing_{name}.txt", f"{here}/from_thread.txt"} <= files
        assert f"{here}/{other}.txt" not in files and f"{here}/missing_{other}.txt" not in files
        assert not any("written_" in f for f in files)
        assert any(f.startswith(f"{here}/lib/helper_mod") for f in files)  # its source or its bytecode
        assert seen[name]["listed"] == [f"{here}/dir_{name}", f"{here}/scan_{name}"]
        assert f"{here}/lib" in seen[name]["searched"]  # the finder's listing: a search, not a read
    assert "helper_mod" in seen["a"]["imported"] + seen["b"]["imported"]


RELATIVE = r"""
import asyncio, contextlib, json, os, sqlite3, sys
sys.path.insert(0, sys.argv[1])
from agent_eval_action.agent_worker import observe

obs = observe.start([sys.prefix, sys.base_prefix], native=sys.argv[2] == "native")

async def question():
    own, token = obs.begin()
    try:
        with contextlib.chdir("prompts"):
            open("moved.md").read()  # from the working directory of that moment
            os.listdir("nested")
        fd = os.open("held", os.O_RDONLY)
        with open("by_fd.md", opener=lambda path, flags: os.open(path, flags, dir_fd=fd)) as f:
            f.read()  # from the folder the descriptor holds
        os.close(fd)
        sqlite3.connect("data.db").close()  # SQLite opens it itself: its own event
        sqlite3.connect("file:uri.db?mode=ro", uri=True).close()
        sqlite3.connect(":memory:").close()  # no file
        return obs.paths(own)
    finally:
        obs.end(token)

print(json.dumps(asyncio.run(question())))
"""


@pytest.mark.parametrize("hook", ["native", "python"])
def test_relative_reads_resolve_to_the_real_file_and_sqlite_databases_are_read(tmp_path: Path, hook: str) -> None:
    if hook == "native":
        native_hook()
    (tmp_path / "prompts" / "nested").mkdir(parents=True)
    (tmp_path / "prompts" / "moved.md").write_text("x")
    (tmp_path / "held").mkdir()
    (tmp_path / "held" / "by_fd.md").write_text("x")
    for name in ("data.db", "uri.db"):
        sqlite3.connect(tmp_path / name).close()
    done = subprocess.run(
        [sys.executable, "-c", RELATIVE, str(ROOT / "src"), hook], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(done.stdout)
    here = str(tmp_path.resolve())
    files = set(seen["file"])
    assert {f"{here}/prompts/moved.md", f"{here}/held/by_fd.md", f"{here}/data.db", f"{here}/uri.db"} <= files, files
    assert not {f"{here}/moved.md", f"{here}/by_fd.md"} & files  # not at the top, where they are not
    assert not any(":memory:" in f for f in files)
    assert f"{here}/prompts/nested" in seen["listed"]
