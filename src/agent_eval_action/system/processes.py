"""How many processes a run uses: the one formula the config and the early start of the agent's
workers share (standard library only: the early start runs before pydantic is imported)."""

from __future__ import annotations

import os

# By default an agent worker process is started for each this many runs of questions: one worker
# carries dozens of questions in flight at once (they mostly wait on the model), and each one
# more costs a start of ADK (about 1 s of CPU), which pays only when ADK's own CPU per question
# (about 15 ms) adds up to more.
RUNS_PER_WORKER = 32
MAX_PROCESSES = 4


def processes(workers: int) -> int:
    """How many processes do the run's parallel work: ``workers``, else one per CPU, at most 4."""
    return workers or max(1, min(os.cpu_count() or 1, MAX_PROCESSES))


def agent_workers(workers: int, question_runs: int | None) -> int:
    """Agent worker processes for ``question_runs`` runs of questions (None: not known):
    ``workers`` when set; else :func:`processes`, but one per ``RUNS_PER_WORKER`` runs, so a
    small run does not pay a second start of ADK (about 1 s of CPU) it has no use for."""
    if workers or question_runs is None:
        return processes(workers)
    return max(1, min(processes(workers), -(-question_runs // RUNS_PER_WORKER)))
