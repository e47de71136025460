"""Question-level reuse: a PR that edits one question of a thousand runs one.

A question's scores are taken from the baseline only when that is provably the same work: the
question's content (user inputs, references, metadata, initial state) hashes the same, it has as
many runs as this run asks for, and what its runs read is unchanged. A baseline that recorded
what the agent read (its ``environment`` fingerprint and each run's observed ``inputs``,
``repo/observed.py``): the same environment and every observed input as it was. An older
baseline: no agent path changed and the agent code's fingerprint is HEAD's (the caller checks
that before handing it over).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict

from agent_eval_action.core.models import DatasetResult, Question, QuestionResult
from agent_eval_action.datasets import Record
from agent_eval_action.repo.observed import RepositoryInputs


def question_hash(question: Question) -> str:
    """Stable across runs, machines and key order; ``line`` (where it sits in its file) is left out."""
    content = question.model_dump(mode="json", exclude={"line"})
    return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:20]


def question_key(question: Question) -> str:
    """:func:`question_hash` without the id: what a question asks and expects, whatever it is called."""
    content = question.model_dump(mode="json", exclude={"line", "id"})
    return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:20]


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
        same = len(old) == runs and all(r.content_hash == question_hash(record.question) and r.status == "ok" for r in old)
        if same and observed:
            assert inputs is not None
            same = all(r.inputs is not None and not inputs.changed(r.inputs, baseline.imports or ()) for r in old)
        if same:
            carried.extend(r.model_copy(update={"reused": True}) for r in old)
        else:
            to_run.append(record)
    return carried, to_run
