"""CLI start-up: ``python -m agent_eval_action --help`` against a bare ``python -c pass``."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from typing import Any


def _time(args: list[str], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def measure(repeats: int = 15) -> dict[str, Any]:
    bare = [sys.executable, "-c", "pass"]
    ours = [sys.executable, "-m", "agent_eval_action", "--help"]
    _time(ours, 2)  # warm the file cache
    # Interleave so drift hits both alike.
    bare_s, ours_s = [], []
    for _ in range(3):
        bare_s.append(_time(bare, repeats // 3))
        ours_s.append(_time(ours, repeats // 3))
    b, o = statistics.median(bare_s), statistics.median(ours_s)
    return {"bare_s": b, "help_s": o, "overhead_ms": (o - b) * 1000, "ratio": o / b, "samples": {"ours": ours_s, "bare": bare_s}}
