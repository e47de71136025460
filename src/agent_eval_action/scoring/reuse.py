"""Question-level reuse: a PR that edits one question of a thousand runs one.

A question's scores are taken from the baseline only when that is provably the same work: the
question's content (user inputs, references, metadata, initial state) hashes the same, it has at
least as many runs as this run asks for (all of them are carried: a baseline of 5 runs a
question stands for a PR run of 1), and what its runs read is unchanged. A baseline that
recorded what the agent read (its ``environment`` fingerprint and each run's observed
``inputs``, ``repo/observed.py``): the same environment and every observed input as it was. An
older baseline: no agent path changed and the agent code's fingerprint is HEAD's (the caller
checks that before handing it over).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Sequence

from agent_eval_action.datasets import Record
from agent_eval_action.datasets.base import question_key as base_question_key
from agent_eval_action.models.questions import Question
from agent_eval_action.models.results import DatasetResult, QuestionResult
from agent_eval_action.repo.observed import RepositoryInputs
from agent_eval_action.text.jsonish import dumps_sorted


def question_hash(question: Question) -> str:
    """Stable across runs, machines and key order; ``line`` (where it sits in its file) is left out."""
    content = question.model_dump(mode="json", exclude={"line"})
    return hashlib.sha256(dumps_sorted(content).encode()).hexdigest()[:20]


# :func:`question_hash` without the id: what a question asks and expects, whatever it is called
# (in datasets.base, where a reader hashes it with the question's content in one dump).
question_key = base_question_key


def pair_by_content(current: DatasetResult, before: DatasetResult) -> dict[str, str]:
    """Question id now -> id in ``before``, for the questions of ``current`` whose id ``before``
    lacks and whose content (``content_key``) is that of a question of ``before`` whose id
    ``current`` lacks: renamed, not new. One to one, in file order."""
    now_ids = {q.id for q in current.questions}
    before_ids = {q.id for q in before.questions}
    waiting: dict[str, list[str]] = defaultdict(list)
    for q in before.questions:
        if q.content_key and q.id not in now_ids and q.id not in waiting[q.content_key]:
            waiting[q.content_key].append(q.id)
    pairs: dict[str, str] = {}
    for q in current.questions:
        if q.id in pairs or q.id in before_ids or not q.content_key or not waiting.get(q.content_key):
            continue
        pairs[q.id] = waiting[q.content_key].pop(0)
    return pairs


def renamed(before: DatasetResult, pairs: dict[str, str]) -> DatasetResult:
    """``before`` with the questions of ``pairs`` (new id -> old id) under their new ids."""
    new = {old: now for now, old in pairs.items()}
    questions = [q.model_copy(update={"id": new[q.id]}) if q.id in new else q for q in before.questions]
    return before.model_copy(update={"questions": questions})


def split_reusable(
    records: list[Record],
    baseline: DatasetResult | None,
    runs: int,
    *,
    inputs: RepositoryInputs | None = None,
    environment: str | None = None,
) -> tuple[list[QuestionResult], list[Record]]:
    """(results carried over from ``baseline``, marked reused; records that must run).
    ``inputs``: the repository now; ``environment``: the agent's environment fingerprint now."""
    if baseline is None:
        return [], records
    observed = baseline.environment is not None
    if observed and (inputs is None or environment != baseline.environment):
        return [], records
    before: dict[str, list[QuestionResult]] = defaultdict(list)
    for result in baseline.questions:
        before[result.id].append(result)
    carried: list[QuestionResult] = []
    to_run: list[Record] = []
    for record in records:
        old = before.get(record.question.id, [])
        # A baseline of more runs than this run asks for (baseline-runs) stands for it whole.
        same = len(old) >= runs and all(
            still_valid(r, record.question, code=True, inputs=inputs if observed else None, imports=baseline.imports or ()) for r in old
        )
        if same:
            carried.extend(r.model_copy(update={"reused": True}) for r in old)
        else:
            to_run.append(record)
    return carried, to_run


def same_code(stored_fingerprint: str | None, fingerprint: str | None) -> bool:
    """Whether stored runs were made by the agent code that runs now: both hashes known and equal."""
    return fingerprint is not None and stored_fingerprint == fingerprint


def still_valid(
    run: QuestionResult,
    question: Question,
    *,
    code: bool,
    inputs: RepositoryInputs | None = None,
    imports: Sequence[str] = (),
    errored: Callable[[QuestionResult], bool] | None = None,
) -> bool:
    """The one decision "this stored run of a question still stands for it now": the agent code
    that made it is the code now (``code``: :func:`same_code`, or the environment, checked by the
    caller for a whole baseline), the question's content hashes the same, it ran to a score, and,
    given the repository now (``inputs``; ``imports``: the baseline's import folders), every
    input the run was observed to read is unchanged (a run that observed nothing does not stand).
    Reuse, the baseline's pooling of runs across updates and compare-with = "base"'s pooling all
    ask here. ``errored``: which runs that ended in an error stand too (the baseline's pooling
    keeps the agent's own errors, so its record is never purged of them run by run)."""
    ran = run.status == "ok" or (run.status == "error" and errored is not None and errored(run))
    if not (code and run.content_hash == question_hash(question) and ran):
        return False
    return inputs is None or (run.inputs is not None and not inputs.changed(run.inputs, imports))


def pooled_runs(
    records: list[Record],
    stored: DatasetResult | None,
    fingerprint: str | None,
    want: int,
    *,
    inputs: RepositoryInputs | None = None,
    environment: str | None = None,
    errored: Callable[[QuestionResult], bool] | None = None,
) -> tuple[list[QuestionResult], dict[str, int]]:
    """Runs of ``stored`` (an earlier baseline) that still stand for the questions of ``records``,
    the newest ``want - 1`` a question; and how many more runs each question needs to have
    ``want`` (at least one: every update refreshes every question, so a record ages out within
    ``want`` updates and a change nothing observed cannot keep a stale record forever). A stored
    run that ended in the agent's own error (``errored``) stands like a run that scored: a record
    is never purged of its failures run by run, which would leave it a selection of passes. A
    baseline that observed what the agent read stands only in the same environment
    (``environment``) and for the runs whose inputs are unchanged in the repository now (``inputs``)."""
    before: dict[str, list[QuestionResult]] = defaultdict(list)
    for result in stored.questions if stored is not None else []:
        before[result.id].append(result)
    carried: list[QuestionResult] = []
    need: dict[str, int] = {}
    code = stored is not None and same_code(stored.agent_fingerprint, fingerprint)
    observed = stored is not None and stored.environment is not None
    if stored is not None and observed:
        code = code and inputs is not None and environment == stored.environment
    seen = inputs if observed else None
    imports = (stored.imports or ()) if stored is not None else ()
    for record in records:
        runs = before.get(record.question.id, [])
        # A run that ended in an error sent no observation of what it read: it read what the
        # question's runs that finished read (the same question, code and environment).
        read: dict[str, str] = {}
        for r in runs:
            read.update(r.inputs or {})
        standing = [
            r
            for r in runs
            if still_valid(
                r if r.inputs is not None or r.status != "error" or not read else r.model_copy(update={"inputs": read}),
                record.question,
                code=code,
                inputs=seen,
                imports=imports,
                errored=errored,
            )
        ]
        # The newest runs (the highest numbers: an update numbers its new runs after those it keeps).
        kept = sorted(standing, key=lambda r: r.run)[max(0, len(standing) - (want - 1)) :] if want > 1 else []
        # Kept as stored (not marked reused): a baseline made again of the same runs keeps its bytes.
        carried.extend(r.model_copy(update={"run": i}) for i, r in enumerate(kept))
        if len(kept) < want:
            need[record.question.id] = want - len(kept)
    return carried, need
