"""The command line's early start of the agent's workers, before the rest of us is imported
(``run/workers/start.py``). Light: the standard library and that module only."""

from __future__ import annotations

from pathlib import Path

from agent_eval_action.run.agent.env import chosen_agent_python
from agent_eval_action.run.workers.start import estimated_question_runs, prestart


def start_agent_early(
    agent: str,
    *,
    python: str | None,
    model_cache: str | None,
    workers: int | None,
    paths: list[str],
    runs: int | None,
    warm_start: bool = True,
) -> None:
    """Starts the workers an evaluation of the dataset files ``paths`` by ``agent`` is expected to
    need (their count guessed from the files: ``run.workers.start.estimated_question_runs``); the run
    adopts them when its config starts them the same way, else they are killed. ``python``: the
    ``--agent-python`` given, else the one the run will find (``run.agent.env.chosen_agent_python``)."""
    python, _ = chosen_agent_python(python, Path.cwd(), ours="")
    prestart(
        agent,
        python=python,
        model_cache=model_cache,
        workers=workers,
        question_runs=estimated_question_runs(paths, runs),
        warm_start=warm_start,
    )
