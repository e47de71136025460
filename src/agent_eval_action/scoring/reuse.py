"""Question-level reuse: a PR that edits one question of a thousand runs one.

A question's scores are taken from the baseline only when that is provably the same work: no
agent path changed, the baseline was made with the same agent code (its fingerprint, a hash of
the agent paths' blobs, equals HEAD's), the question's content (user inputs, references,
metadata, initial state) hashes the same, and it has as many runs as this run asks for.
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
        same = len(old) == runs and all(r.content_hash == question_hash(record.question) and r.status == "ok" for r in old)
        if same:
            carried.extend(r.model_copy(update={"reused": True}) for r in old)
        else:
            to_run.append(record)
    return carried, to_run
