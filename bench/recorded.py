"""Recorded scoring against the parse floor: one measurement in its own process.

    python -m bench.recorded --make FILE --rows N [--answer-words W]   # write a realistic CSV
    python -m bench.recorded --mode floor|ours FILE    # print {"seconds", "peak_rss_mb", ...} as JSON

``floor`` is what merely parsing the file costs: pandas.read_csv plus json.loads of every
JSON cell. ``ours`` is the full evaluation: load, score every metric, aggregate, write
results.json. Both are timed after their imports, which are reported apart.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Where to keep ours' results.json (a copy), to check that a change left every score as it was.
KEEP_RESULTS = os.environ.get("AGENT_EVAL_BENCH_KEEP_RESULTS")
sys.path.insert(0, str(ROOT))


# Words of a customer-service answer, which the long answers are drawn from (seeded: the same file
# on every machine), so that the answer and its reference share words as real ones do.
ANSWER_TEXT = (
    "your order of potting soil shipped yesterday and should arrive within three business days we also applied "
    "the discount code to your cart so the subtotal reflects fifteen percent off please let me know if there is "
    "anything else I can help with regarding plants fertilizer delivery returns refunds or store hours"
)


def make(path: Path, rows: int, row_kb: int = 50, answer_words: int = 0) -> None:
    """``answer_words``: every row's final response and reference response that many words long
    (the runs' own are one sentence, where a real agent answers in paragraphs: the response
    metrics' cost grows with both lengths)."""
    import random

    from tests.helpers.factories import csv_row, customer_service_runs, write_csv

    runs = customer_service_runs()
    words = random.Random(rows)
    vocabulary = ANSWER_TEXT.split()
    out = []
    for i in range(rows):
        run = runs[i % len(runs)]
        run = type(run)(**{**run.__dict__, "qid": f"{run.qid}_{i:06d}", "session_id": None})
        if answer_words:
            answer, expected = (" ".join(words.choice(vocabulary) for _ in range(answer_words)) + "." for _ in range(2))
            run = type(run)(**{**run.__dict__, "final_response": answer, "reference": {**run.reference, "reference_response": expected}})
        naming = "legacy" if i % 2 else "current"
        row = csv_row(run, naming=naming, pad_chars=0)
        size = sum(len(v) for v in row.values())
        pad = max(row_kb * 1024 - size, 0)
        # Real rows are mostly prompts: in the request payload and, with content capture, in the spans.
        row = csv_row(run, naming=naming, pad_chars=pad // 3)
        out.append(row)
    write_csv(path, out)


def floor(path: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    import pandas as pd

    imported = time.perf_counter()
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    parsed = 0
    for column in frame.columns:
        for value in frame[column]:
            if value[:1] in "[{":
                json.loads(value)
                parsed += 1
    return {"seconds": time.perf_counter() - imported, "import_seconds": imported - t0, "cells": parsed, "rows": len(frame)}


def ours(path: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    import io

    import numpy  # noqa: F401  (imported lazily by the run; counted as import here)
    import pandas  # noqa: F401
    from rouge_score import rouge_scorer  # noqa: F401

    from agent_eval_action.cli import commands  # noqa: F401  (what the command imports before its work)
    from agent_eval_action.cli.main import main
    from agent_eval_action.system.collector import for_command_line

    for_command_line()  # as cli.main.entry sets up the process the command line starts

    imported = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        # Through the command line's own entry point, as `agent-eval evaluate FILE` runs: it sets
        # up the process as a user gets it (the scorer keeps its large results out of the cyclic
        # collector's later scans only there; a bare library call measured 5 s more at 20,000 rows).
        shown, sys.stdout = sys.stdout, io.StringIO()
        try:
            code = main(["evaluate", str(path), "--output-dir", out, "--progress", "never"])
        finally:
            sys.stdout = shown
        # The command is done (its results written); what follows is the bench's own check, whose
        # parse of results.json (145 MB at 20,000 rows) must not count in the command's peak.
        seconds = time.perf_counter() - imported
        peak_mb = _peak_mb()
        if KEEP_RESULTS:
            Path(KEEP_RESULTS).write_bytes((Path(out) / "results.json").read_bytes())
        results = json.loads((Path(out) / "results.json").read_text())
    rows = len(results["datasets"][0]["questions"]) if results["datasets"] else 0
    return {"seconds": seconds, "import_seconds": imported - t0, "exit_code": code, "rows": rows, "peak_rss_mb": peak_mb}


def _peak_mb() -> float:
    """This process's peak plus its largest child's (the bound counts worker processes too)."""
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file", type=Path)
    parser.add_argument("--make", action="store_true")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--answer-words", type=int, default=0, help="every answer and reference response this many words long")
    parser.add_argument("--mode", choices=["floor", "ours"])
    args = parser.parse_args()
    if args.make:
        make(args.file, args.rows, answer_words=args.answer_words)
        return
    result = floor(args.file) if args.mode == "floor" else ours(args.file)
    result.setdefault("peak_rss_mb", _peak_mb())
    print(json.dumps(result))


if __name__ == "__main__":
    main()
