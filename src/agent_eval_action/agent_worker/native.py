"""Builds the worker's C audit hook (``_audit_hook.c``, see its header) for the interpreter that
runs this: ``python -m agent_eval_action.agent_worker.native``. ``make install`` and the action's
image build it; it needs a C compiler and the interpreter's headers (``Python.h``), and where
either is missing it says so and the worker observes with its Python hook (about 2% of a
question's CPU instead of a few tenths of a percent; docs/performance.md). An agent run by
another interpreter than the one it was built for (``agent-python``) finds no module for its
ABI and uses the Python hook too.

Standard library only, like the rest of ``agent_worker``."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "_audit_hook.c"
MODULE = "_audit_hook"


def target() -> Path:
    return HERE / (MODULE + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))


def build() -> str | None:
    """Compiles the hook next to its source; None when built, else why not."""
    if sys.platform == "win32":
        return "not built on Windows (the worker's Python hook observes there)"
    if not SOURCE.exists():
        return f"its source {SOURCE.name} is not installed here (reinstall the package: it ships the source)"
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").exists():
        return f"no Python.h in {include}: install the interpreter's headers (Debian: python3-dev)"
    link = shlex.split(sysconfig.get_config_var("LDSHARED") or "cc -shared")
    if shutil.which(link[0]) is None:
        return f"no C compiler ({link[0]}): install one (Debian: gcc)"
    built = target()
    partial = built.with_name(built.name + ".part")
    command = [*link, *shlex.split(sysconfig.get_config_var("CCSHARED") or "-fPIC"), "-O2", f"-I{include}", str(SOURCE), "-o", str(partial)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        return f"{shlex.join(command)} failed: {done.stderr.strip()[-800:]}"
    os.replace(partial, built)
    return None


def main() -> int:
    why = build()
    if why is None:
        print(f"built the C audit hook: {target()}")
    else:
        print(f"the C audit hook is not built, {why}; the worker observes with its Python hook instead")
    return 0


if __name__ == "__main__":
    sys.exit(main())
