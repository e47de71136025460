"""Files we write are whole or absent, and one run at a time holds an output directory."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_eval_action.system.files import LOCK_NAME, OutputDirInUse, output_lock, write_atomic


def test_writers_of_one_file_never_share_a_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    texts = [f"{i}:" + str(i) * 200_000 for i in range(8)]
    failures: list[BaseException] = []

    def write(text: str) -> None:
        try:
            for _ in range(10):
                write_atomic(target, text)
        except BaseException as error:  # noqa: BLE001 - collected for the assertion
            failures.append(error)

    threads = [threading.Thread(target=write, args=(text,)) for text in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert target.read_text() in texts  # one writer's whole text, never a mix or a cut
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no temporary file left


def test_a_write_that_fails_midway_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "baseline.json"
    write_atomic(target, "old")

    def pieces() -> Iterator[str]:
        yield "new, first half"
        raise RuntimeError("stopped midway")

    with pytest.raises(RuntimeError):
        write_atomic(target, pieces())
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["baseline.json"]


def test_a_second_holder_of_an_output_dir_is_refused_naming_the_first(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    with output_lock(folder):
        with pytest.raises(OutputDirInUse) as refused, output_lock(folder):
            pass
        assert f"--output-dir {folder}: another run (process {os.getpid()}) is writing there now" in str(refused.value)
        assert refused.value.exit_code == 2
    with output_lock(folder):  # released when the first ended
        assert (folder / LOCK_NAME).read_text().strip() == str(os.getpid())


def test_a_written_file_is_readable_by_others_as_open_would_make_it(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    os.umask(mask)
    written = write_atomic(tmp_path / "comment.md", "text")
    plain = tmp_path / "plain.md"
    plain.write_text("text")
    assert written.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777 == 0o666 & ~mask
