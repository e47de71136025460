"""The warm start (run/workers/zygote.py, agent_worker/zygote.py): the agent's workers and their
replacements are forked by one process that loaded the agent once; an agent whose import started
a thread gets spawned workers instead, and the run says so once. The hostile-question suite
(tests/integration/test_agent_worker.py and the CLI tests of tests/apps/hostile) runs with the
warm start on, its default."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import os
import signal
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from agent_eval_action.models.questions import Question
from agent_eval_action.models.traces import Trace
from agent_eval_action.run.agent.env import agent_environment
from agent_eval_action.run.workers.pool import WorkerPool
from agent_eval_action.run.workers.process import WorkerDied
from agent_eval_action.run.workers.start import WorkerSettings
from agent_eval_action.run.workers.template import ENV_TEMPLATE
from agent_eval_action.system.errors import AgentLoadError
from tests.helpers.hostile import APPS, cli, golden
from tests.helpers.repos import ROOT
from tests.helpers.zygotes import ready, running_template

PROMPT = str(APPS / "warm" / "prompt.txt")
WARNING = "the agent's workers are spawned, not forked"


def parent(pid: int) -> int:
    """The parent process of ``pid``, from /proc (the field after the command's closing paren)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def pool_of(workers: int, *, warm_start: bool = True, startup_timeout_s: float = 180.0, **env: str) -> WorkerPool:
    return WorkerPool(
        WorkerSettings(
            agent="warm",
            python=sys.executable,
            cwd=APPS,
            env={**agent_environment(os.environ), **env},
            workers=workers,
            capture_spans=False,
            warm_start=warm_start,
            startup_timeout_s=startup_timeout_s,
        )
    )


def answered_by(trace: Trace) -> int:
    assert trace.final_response is not None and trace.final_response.startswith("{'pid': ")
    return int(trace.final_response.removeprefix("{'pid': ").rstrip("}"))


def test_the_workers_and_a_killed_ones_replacement_are_forked_and_every_question_lists_what_the_import_read() -> None:
    async def go() -> tuple[int, list[int], list[Trace], BaseException | None, Trace, list[int]]:
        pool = pool_of(2)
        await pool.start()
        try:
            assert pool._zygote is not None
            zygote = pool._zygote.process.pid
            first = [worker.process.pid for worker in pool.workers]
            traces = await asyncio.gather(*(pool.run_question(Question(id=f"q{i}", user_inputs=["call pid"]), 60) for i in range(4)))
            try:
                await pool.run_question(Question(id="q_kill", user_inputs=["call kill_self"]), 60)
                died = None
            except WorkerDied as error:
                died = error
            after = await pool.run_question(Question(id="q_after", user_inputs=["call pid"]), 60)
            now = [worker.process.pid for worker in pool.workers]
            assert pool.restarts == 1 and len(set(now) - set(first)) == 1  # one replaced
            return zygote, first, traces, died, after, [parent(pid) for pid in now]
        finally:
            await pool.close()

    zygote, first, traces, died, after, parents = asyncio.run(go())
    assert set(parents) == {zygote}  # the replacement too: forked, not spawned
    assert {answered_by(trace) for trace in traces} == set(first)  # both forked workers answered
    for trace in [*traces, after]:
        assert trace.observed is not None and PROMPT in trace.observed["file"], trace.observed
    assert isinstance(died, WorkerDied) and "SIGKILL" in str(died)


def test_an_agent_whose_import_starts_a_thread_gets_spawned_workers(caplog) -> None:  # type: ignore[no-untyped-def]
    async def go() -> tuple[list[int], list[Trace], bool]:
        pool = pool_of(2, WARM_IMPORT_THREAD="1")
        await pool.start()
        try:
            parents = [parent(worker.process.pid) for worker in pool.workers]
            traces = await asyncio.gather(*(pool.run_question(Question(id=f"q{i}", user_inputs=["call pid"]), 60) for i in range(2)))
            assert pool._zygote is not None
            return parents, traces, await pool._zygote.warm()
        finally:
            await pool.close()

    with caplog.at_level("WARNING"):
        parents, traces, warm = asyncio.run(go())
    assert not warm and set(parents) == {os.getpid()}  # ours: spawned
    for trace in traces:
        assert trace.observed is not None and PROMPT in trace.observed["file"]
    said = [r.getMessage() for r in caplog.records if WARNING in r.getMessage()]
    assert len(said) == 1 and "started 1 thread(s) (exporter)" in said[0]


def test_warm_start_off_spawns_every_worker() -> None:
    async def go() -> list[int]:
        pool = pool_of(2, warm_start=False)
        await pool.start()
        try:
            assert pool._zygote is None
            await pool.run_question(Question(id="q", user_inputs=["say hi"]), 60)
            return [parent(worker.process.pid) for worker in pool.workers]
        finally:
            await pool.close()

    assert set(asyncio.run(go())) == {os.getpid()}


def test_the_command_line_says_once_that_a_threaded_import_is_spawned_and_still_evaluates(tmp_path: Path) -> None:
    dataset = golden(tmp_path / "golden.json", {f"q{i}": "call pid" for i in range(4)})
    (tmp_path / "warm").symlink_to(APPS / "warm")
    done = cli(tmp_path, "evaluate", "--agent", "warm", "--workers", "2", str(dataset), env={"WARM_IMPORT_THREAD": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(WARNING) == 1, done.stderr
    assert "started 1 thread(s) (exporter)" in done.stderr


@pytest.mark.parametrize("warm_start", [True, False], ids=["forked", "spawned"])
def test_the_agent_imports_with_the_collector_off_and_its_objects_stay_out_of_later_scans(warm_start: bool) -> None:
    """The collections an import of ADK sets off found almost nothing to free and cost ~17% of
    its CPU: the worker imports with the collector off, freezes what the import made, and
    answers with the collector on (agent_worker/__main__.py's ``loading``)."""

    async def go() -> list[Trace]:
        pool = pool_of(2, warm_start=warm_start)
        await pool.start()
        try:
            return list(
                await asyncio.gather(*(pool.run_question(Question(id=f"q{i}", user_inputs=["call collector"]), 60) for i in range(2)))
            )
        finally:
            await pool.close()

    for trace in asyncio.run(go()):
        assert trace.final_response is not None
        seen = ast.literal_eval(trace.final_response)
        assert seen["at_import"] is False and seen["now"] is True, seen
        assert seen["frozen"] > 10_000, seen  # ADK's and the agent's modules, functions and classes


def test_an_import_that_never_ends_is_the_agents_load_error_after_the_startup_time() -> None:
    async def go() -> BaseException | None:
        pool = pool_of(2, startup_timeout_s=3, WARM_IMPORT_HANG="1")
        try:
            await pool.start()
        except AgentLoadError as error:
            return error
        finally:
            await pool.close()
        return None

    error = asyncio.run(go())
    assert isinstance(error, AgentLoadError) and "loading the agent took longer than 3 s" in str(error)


def test_when_the_zygote_is_killed_its_workers_ends_are_still_seen_and_replacements_are_spawned(caplog) -> None:  # type: ignore[no-untyped-def]
    async def go() -> tuple[BaseException | None, Trace, int, int]:
        pool = pool_of(1)
        await pool.start()
        try:
            assert pool._zygote is not None
            zygote = pool._zygote.process
            forked = pool.workers[0].process.pid
            assert parent(forked) == zygote.pid
            os.kill(zygote.pid, signal.SIGKILL)
            await zygote.wait()
            await pool._zygote.reader  # its output read to the end
            try:
                await pool.run_question(Question(id="q_kill", user_inputs=["call kill_self"]), 60)
                died = None
            except WorkerDied as error:  # its end seen without the zygote to say it
                died = error
            after = await pool.run_question(Question(id="q_after", user_inputs=["call pid"]), 60)
            return died, after, forked, parent(pool.workers[0].process.pid)
        finally:
            await pool.close()

    with caplog.at_level("WARNING"):
        died, after, forked, spawned_by = asyncio.run(go())
    assert isinstance(died, WorkerDied)
    assert answered_by(after) != forked and spawned_by == os.getpid()
    assert [r.getMessage() for r in caplog.records if "warm-start process ended" in r.getMessage()] == [
        "the warm-start process ended: the agent's workers are spawned from now on"
    ]


def drawn(warm_start: bool, questions: int, seed: str | None = None) -> dict[int, list[float]]:
    """The first draws each worker made from ``random`` (two workers), by its process id."""

    async def go() -> list[Trace]:
        pool = pool_of(2, warm_start=warm_start, WARM_SEED=seed) if seed else pool_of(2, warm_start=warm_start)
        await pool.start()
        try:
            return list(
                await asyncio.gather(*(pool.run_question(Question(id=f"q{i}", user_inputs=["call draw"]), 60) for i in range(questions)))
            )
        finally:
            await pool.close()

    first: dict[int, list[float]] = {}
    for trace in asyncio.run(go()):
        said = ast.literal_eval(trace.final_response or "")
        first.setdefault(said["pid"], said["draws"])
    return first


def test_an_agent_that_seeds_random_at_import_draws_the_same_in_forked_and_spawned_workers() -> None:
    """os.fork() re-seeds random's generator in the child: a forked worker must draw what a fresh
    process that imported the agent draws, and every worker the same."""
    forked = drawn(True, 2, seed="7")
    spawned = drawn(False, 2, seed="7")
    assert len({str(d) for d in forked.values()}) == 1 and len({str(d) for d in spawned.values()}) == 1, (forked, spawned)
    assert next(iter(forked.values())) == next(iter(spawned.values()))


def test_an_agent_that_seeds_nothing_draws_apart_in_each_forked_worker() -> None:
    """As two fresh processes do: the zygote's generator is not handed to every worker."""
    forked = drawn(True, 8)
    assert len(forked) == 2 and len({str(d) for d in forked.values()}) == 2, forked


def _started_zygote(env: dict[str, str] | None = None) -> tuple[int, dict, str]:
    """The parent of a one-worker pool's zygote, what its agent's import found, and its worker files."""

    async def go() -> tuple[int, str, str]:
        pool = pool_of(1)
        pool.settings = replace(pool.settings, env={**pool.settings.env, **(env or {})})
        await pool.start()
        try:
            assert pool._zygote is not None and await pool._zygote.warm()
            trace = await pool.run_question(Question(id="q", user_inputs=["call started"]), 60)
            assert trace.final_response is not None
            return parent(pool._zygote.process.pid), trace.final_response, str(pool._files)
        finally:
            await pool.close()

    zygotes_parent, said, files = asyncio.run(go())
    started = ast.literal_eval(said)
    started["env"].pop(ENV_TEMPLATE, None)
    return zygotes_parent, started, files


def _template_of(pid: int) -> bool:
    return b"agent_eval_action.run.workers.template" in Path(f"/proc/{pid}/cmdline").read_bytes()


@pytest.mark.parametrize(
    "pythonpath",
    [None, "src", str(ROOT / "src")],
    ids=["the-suites-template", "a-relative-pythonpath-to-what-a-pth-file-adds", "an-absolute-pythonpath"],
)
def test_a_zygote_forked_by_the_suites_template_starts_as_a_fresh_interpreter_does(
    zygote_template: str | None, monkeypatch: pytest.MonkeyPatch, pythonpath: str | None
) -> None:
    """The suite's zygotes come from a template that imported ADK once (tests/conftest.py): the
    agent must find its process as a fresh ``python -m agent_eval_worker`` leaves it, whatever
    PYTHONPATH the test process has (the template's own path is the interpreter's, asked of it:
    the editable install's ``.pth`` adds ``src``, which a PYTHONPATH naming it too had hidden)."""
    if zygote_template is None or not ready(zygote_template):
        pytest.skip("the zygotes are started fresh in this run (Linux only; AGENT_EVAL_TEST_FRESH_ZYGOTES=1)")
    monkeypatch.setenv(ENV_TEMPLATE, zygote_template)
    with contextlib.ExitStack() as stack:
        if pythonpath is not None:  # a template of a test process with this PYTHONPATH
            monkeypatch.setenv("PYTHONPATH", pythonpath)
            monkeypatch.chdir(ROOT)
            template = stack.enter_context(running_template(os.environ))
            assert template is not None
            monkeypatch.setenv(ENV_TEMPLATE, template)
        forked, fresh, forked_files, fresh_files = _forked_and_fresh(monkeypatch)
    assert forked_files in forked["path"] and fresh_files in fresh["path"]
    same = ast.literal_eval(repr(forked).replace(forked_files, fresh_files))
    assert same == fresh
    assert fresh["main"] == "agent_eval_worker.__main__" and fresh["session_leader"] and fresh["stdin"] == "socket"
    assert fresh["signals"]["SIGUSR1"] == str(signal.SIG_IGN) and fresh["signals"]["SIGTERM"] == str(signal.SIG_DFL)


def _forked_and_fresh(monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict, str, str]:
    """What the agent's import found in a zygote forked by the template, then in a fresh one."""
    # A signal this process ignores stays ignored in a process it starts.
    before = signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    try:
        forked_by, forked, forked_files = _started_zygote()
        monkeypatch.delenv(ENV_TEMPLATE)
        fresh_by, fresh, fresh_files = _started_zygote()
    finally:
        signal.signal(signal.SIGUSR1, before)

    assert _template_of(forked_by) and fresh_by == os.getpid()
    return forked, fresh, forked_files, fresh_files


@pytest.mark.parametrize(
    ("env", "template"),
    [({"PYTHONHASHSEED": "7"}, None), ({}, "/nonexistent/socket")],
    ids=["an-interpreter-setting-of-its-own", "no-template-there"],
)
def test_a_zygote_the_template_cannot_start_as_fresh_is_started_fresh(
    zygote_template: str | None, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], template: str | None
) -> None:
    if zygote_template is None or not ready(zygote_template):
        pytest.skip("the zygotes are started fresh in this run (Linux only; AGENT_EVAL_TEST_FRESH_ZYGOTES=1)")
    monkeypatch.setenv(ENV_TEMPLATE, zygote_template)
    if template is not None:
        monkeypatch.setenv(ENV_TEMPLATE, template)
    zygotes_parent, started, _ = _started_zygote(env)
    assert zygotes_parent == os.getpid()
    assert all(started["env"].get(name) == value for name, value in env.items())


def zygote_settings() -> WorkerSettings:
    return WorkerSettings(agent="warm", python=sys.executable, cwd=APPS, env=agent_environment(os.environ), capture_spans=False)


def test_a_fresh_zygotes_end_is_seen_with_its_code_and_it_is_reaped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A zygote started fresh (``launch.py``: our child, started before any event loop, as the
    command line's early start starts it) is adopted by the loop: its end is seen with its code,
    and it is reaped, never left a zombie."""
    import shutil

    from agent_eval_action.run.workers.start import worker_files
    from agent_eval_action.run.workers.zygote import Zygote

    monkeypatch.delenv(ENV_TEMPLATE, raising=False)

    async def go() -> tuple[int, int]:
        files = worker_files()
        try:
            zygote = await Zygote.start(zygote_settings(), files)
            assert await zygote.warm(60)  # it loaded the agent: it is running
            os.kill(zygote.process.pid, signal.SIGKILL)
            code = await asyncio.wait_for(zygote.process.wait(), 30)
            await zygote.close()
            return zygote.process.pid, code
        finally:
            shutil.rmtree(files, ignore_errors=True)

    pid, code = asyncio.run(go())
    assert code == -signal.SIGKILL
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped already


def test_an_adoption_cancelled_kills_the_zygote_and_closes_its_output_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A zygote launched, then its adoption cancelled while the loop sets up its output (a
    Ctrl-C, a time out): it is killed and reaped, and the pipe's end is closed once, by its
    reader (closed twice, the second close could hit a descriptor opened meanwhile)."""
    import shutil

    from agent_eval_action.run.workers.launch import launch_zygote
    from agent_eval_action.run.workers.start import worker_files
    from agent_eval_action.run.workers.zygote import Zygote

    monkeypatch.delenv(ENV_TEMPLATE, raising=False)
    errors: list[dict[str, object]] = []

    async def go() -> int:
        asyncio.get_running_loop().set_exception_handler(lambda _, context: errors.append(context))
        files = worker_files()
        try:
            launched = launch_zygote(zygote_settings(), files)
            adopting = asyncio.ensure_future(Zygote.adopt(launched))
            await asyncio.sleep(0)  # it waits for its output's transport now
            adopting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await adopting
            for _ in range(5):
                await asyncio.sleep(0)  # the transport's close runs
            return launched.pid
        finally:
            shutil.rmtree(files, ignore_errors=True)

    pid = asyncio.run(go())
    assert errors == []
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # killed, and waited for
