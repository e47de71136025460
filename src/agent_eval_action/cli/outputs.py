"""What a command leaves in the output directory: results.json (secrets redacted), and when the
folder cannot take a run's files, none of them (never one run's files beside another's)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TextIO

from agent_eval_action.config import Config
from agent_eval_action.models.results import Results
from agent_eval_action.service import api
from agent_eval_action.system.errors import ExitCode
from agent_eval_action.text.workflow import redactor_for


def written_results(results: Results, config: Config, *, alone: bool = False) -> Path:
    """results.json in the output directory, secrets redacted (the config's ``agent_auth_env`` too).
    ``alone``: this command writes no views, so the views an earlier run left there (its
    comment.md, summary.md, junit.xml, report.html) are removed: the folder never holds one run's
    results beside another run's views."""
    folder = Path(config.output_dir)
    if alone:
        from agent_eval_action.publish import VIEWS

        for name in VIEWS:
            (folder / name).unlink(missing_ok=True)
    return api.write_results(results, folder / "results.json", redactor_for([config.agent_auth_env]))


def unwritten(folder: Path, what: str, err: TextIO) -> int:
    """The output directory could not take this run's files (a full disk): none of them stays, nor
    an earlier run's, so nothing stale is uploaded or published beside a part of this run (exit 3)."""
    from agent_eval_action.publish import VIEWS

    for name in ("results.json", *VIEWS):
        with contextlib.suppress(OSError):
            (folder / name).unlink(missing_ok=True)
    print(
        f"error: could not write the output folder {folder} ({what}): it now holds none of this run's files (nor an earlier run's); "
        "free some space and run again",
        file=err,
    )
    return int(ExitCode.INFRASTRUCTURE)
