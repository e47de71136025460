"""What the command line's process keeps to its end (``system/collector.py``): a command's large
result is never freed object by object in a process that exits whole; anywhere else it is freed."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import gc, sys, weakref
from agent_eval_action.system import collector
class Result: pass
if sys.argv[1] == "command line":
    collector.for_command_line()
result = collector.kept_to_exit(Result())
gone = weakref.ref(result)
del result
gc.collect()
print("kept" if gone() is not None else "freed")
"""


def run(process: str) -> str:
    done = subprocess.run([sys.executable, "-c", CODE, process], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_command_lines_process_keeps_a_commands_result_to_its_exit() -> None:
    # It ends with os._exit (cli.main.entry): the memory goes back whole, with no pass over it.
    assert run("command line") == "kept"


def test_any_other_process_frees_it() -> None:
    # A library call, or a command run inside another process (the tests run them in theirs).
    assert run("library") == "freed"
