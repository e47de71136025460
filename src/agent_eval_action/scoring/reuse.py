"""Question-level reuse: a PR that edits one question of a thousand runs one.

A question's scores are taken from the baseline only when that is provably the same work: no
agent path changed, the baseline was made with the same agent code (its fingerprint, a hash of
the agent paths' blobs, equals HEAD's), the question's content (user inputs, references,
metadata, initial state) hashes the same, and it has at least as many runs as this run asks for
(all of them are carried: a baseline of 5 runs a question stands for a PR run of 1).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict

from agent_eval_action.core.models import DatasetResult, Question, QuestionResult
from agent_eval_action.datasets import Record


def question_hash(question: Question) -> str:
    """Stable across runs, machines and key order; ``line`` (where it sits in its file) is left out."""
    content = question.model_dump(mode="json", exclude={"line"})
    return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:20]


def split_reusable(records: list[Record], baseline: DatasetResult | None, runs: int) -> tuple[list[QuestionResult], list[Record]]:
    """(results carried over from ``baseline``, marked reused; records that must run)."""
    if baseline is None:
        return [], records
    before: dict[str, list[QuestionResult]] = defaultdict(list)
    for result in baseline.questions:
        before[result.id].append(result)
    carried: list[QuestionResult] = []
    to_run: list[Record] = []
    for record in records:
        old = before.get(record.question.id, [])
        # A baseline of more runs than this run asks for (baseline-runs) stands for it whole.
        same = len(old) >= runs and all(still_valid(r, record.question, code=True) for r in old)
        if same:
            carried.extend(r.model_copy(update={"reused": True}) for r in old)
        else:
            to_run.append(record)
    return carried, to_run


def same_code(stored_fingerprint: str | None, fingerprint: str | None) -> bool:
    """Whether stored runs were made by the agent code that runs now: both hashes known and equal."""
    return fingerprint is not None and stored_fingerprint == fingerprint


def still_valid(run: QuestionResult, question: Question, *, code: bool) -> bool:
    """The one decision "this stored run of a question still stands for it now": the agent code
    that made it is the code now (``code``: :func:`same_code`, or checked by the caller for a
    whole baseline), the question's content hashes the same, and it ran to a score. Reuse, the
    baseline's pooling of runs across updates and compare-with = "base"'s pooling all ask here.
    (The observed inputs of a question, issue 34, are one more key to add here.)"""
    return code and run.content_hash == question_hash(question) and run.status == "ok"


def pooled_runs(
    records: list[Record], stored: DatasetResult | None, fingerprint: str | None, want: int
) -> tuple[list[QuestionResult], dict[str, int]]:
    """Runs of ``stored`` (an earlier baseline) that still stand for the questions of ``records``,
    at most ``want`` a question; and how many more runs each question needs to
    have ``want`` (questions that need none are left out)."""
    before: dict[str, list[QuestionResult]] = defaultdict(list)
    for result in stored.questions if stored is not None else []:
        before[result.id].append(result)
    carried: list[QuestionResult] = []
    need: dict[str, int] = {}
    code = stored is not None and same_code(stored.agent_fingerprint, fingerprint)
    for record in records:
        kept = [r for r in before.get(record.question.id, []) if still_valid(r, record.question, code=code)][:want]
        # Kept as stored (not marked reused): a baseline made again of the same runs keeps its bytes.
        carried.extend(r.model_copy(update={"run": i}) for i, r in enumerate(kept))
        if len(kept) < want:
            need[record.question.id] = want - len(kept)
    return carried, need
