"""Whether recorded scoring writes the same results.json as another commit: byte for byte, on
the bench's recorded files (bench/out/recorded_N.csv, made as ``make bench`` makes them).

    python -m bench.identical --ref cd05beb [--rows 2000,20000]

Each side is ``bench.recorded --mode ours`` (the command line's ``evaluate``) in a process of its
own: the ref's ``src`` (``git archive``) against this worktree's. Exit 0 when every file's results
are identical, 1 naming the first byte that differs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from bench.goals import OUT, ROOT


def results_of(src: Path, file: Path, keep: Path) -> bytes:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(ROOT)]), "AGENT_EVAL_BENCH_KEEP_RESULTS": str(keep)}
    subprocess.run(
        [sys.executable, "-m", "bench.recorded", str(file), "--mode", "ours"], cwd=ROOT, env=env, check=True, capture_output=True
    )
    return keep.read_bytes()


def first_difference(a: bytes, b: bytes) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ref", required=True, help="the commit to compare with (its src, from git archive)")
    parser.add_argument("--rows", default="2000,20000", help="the bench files' sizes (comma-separated)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-identical-") as work:
        archive = subprocess.run(["git", "archive", args.ref, "src"], cwd=ROOT, check=True, capture_output=True).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(work, filter="data")
        same = True
        for rows in (int(n) for n in args.rows.split(",")):
            file = OUT / f"recorded_{rows}.csv"
            if not file.exists():
                OUT.mkdir(parents=True, exist_ok=True)  # a fresh checkout has no bench/out yet
                subprocess.run(
                    [sys.executable, "-m", "bench.recorded", str(file), "--make", "--rows", str(rows)],
                    cwd=ROOT,
                    env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])},
                    check=True,
                )
            before = results_of(Path(work) / "src", file, Path(work) / f"before-{rows}.json")
            after = results_of(ROOT / "src", file, Path(work) / f"after-{rows}.json")
            if before == after:
                print(f"{file.name}: results.json identical ({len(after):,} bytes) at {args.ref} and here")
            else:
                at = first_difference(before, after)
                print(
                    f"{file.name}: results.json differs from byte {at:,}: {before[at - 80 : at + 80]!r} against {after[at - 80 : at + 80]!r}"
                )
                same = False
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
