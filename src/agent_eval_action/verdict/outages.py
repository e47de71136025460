"""Infrastructure is not the PR: a question run that ended in an error of the model call (no key,
no connection, quota still exhausted after the retries, a 5xx, a stall, a reply cut short or
unreadable) or whose worker was killed from outside did not run the PR's agent to its end. It is
"not run", never a regression; when such runs dominate, the check could not be checked, and the
cause is said once. A tool's, a callback's or the agent's own error stays the PR's, whatever its
text says.

Decided by where the error was raised (``QuestionResult.error_origin``, set by the agent's
worker), never by its text. The text patterns below only *name* the cause of a model error, and
decide alone for results that carry no origin: recorded files and results written before it was
recorded."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from agent_eval_action.agent_worker.model.origin import NO_CREDENTIALS
from agent_eval_action.models.results import DatasetResult
from agent_eval_action.models.scores import NOT_COMPUTED

# (cause said once, patterns of the error text), checked in order: the first that matches names it.
CAUSES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("no API key or credentials for the model: set GOOGLE_API_KEY (or the Vertex AI credentials) in the step's env", NO_CREDENTIALS),
    (
        "the model API could not be reached (connection refused, DNS or network)",
        (r"ConnectError", r"ConnectionError", r"Connection refused", r"Name or service not known", r"getaddrinfo", r"ConnectTimeout"),
    ),
    ("the model API's quota stayed exhausted after the retries (429)", (r"RESOURCE_EXHAUSTED", r"Too Many Requests")),
    ("the model API failed (5xx)", (r"ServerError", r"\b50[0234] (INTERNAL|UNAVAILABLE|Bad Gateway|Service Unavailable)")),
)
_COMPILED = tuple((cause, re.compile("|".join(patterns), re.IGNORECASE)) for cause, patterns in CAUSES)


MODEL_FAULT = "the model API failed (a stall past the time limit, a reply cut short or unreadable)"
KILLED = "the agent's process was killed from outside (a signal nothing of the agent's sent)"


def outage_cause(error: str | None, origin: str | None = None) -> str | None:
    """The infrastructure cause of a question's error, None when the error is the agent's (a tool
    that raised, a timeout in its code, a crash of its process). ``origin``: where the error was
    raised ("model", "outside", "agent"); None (an older or recorded result) reads the text."""
    if not error or origin == "agent":
        return None
    if origin == "outside":
        return KILLED
    for cause, pattern in _COMPILED:
        if pattern.search(error):
            return cause
    return MODEL_FAULT if origin == "model" else None


def main_cause(errors: Iterable[tuple[str | None, str | None]]) -> tuple[str, int] | None:
    """The most frequent infrastructure cause among ``errors`` (each an error and its origin) and
    how many runs ended in one (any cause), or None when none did."""
    causes = Counter(c for c in (outage_cause(e, o) for e, o in errors) if c is not None)
    if not causes:
        return None
    return causes.most_common(1)[0][0], sum(causes.values())


def uncomputed_criteria(dataset: DatasetResult, gated: Iterable[str]) -> tuple[list[str], list[str]]:
    """(why the check decided nothing, notes): the metrics some runs of ``dataset`` could not be
    computed for (a score's ``details[NOT_COMPUTED]``: no judge, a judge that could not be
    reached, a Vertex-backed ADK criterion), one line each. Those in ``gated`` stop the check
    (exit 3): it must not pass on what it could not see; the others are a note."""
    gated = set(gated)
    found: dict[str, list[str]] = {}
    runs = 0
    for question in dataset.questions:
        if question.status != "ok":
            continue
        runs += 1
        for name, score in question.scores.items():
            if score.value is None and NOT_COMPUTED in score.details:
                found.setdefault(name, []).append(str(score.details[NOT_COMPUTED]))
    why, notes = [], []
    for name, reasons in sorted(found.items()):
        head = f"{name} could not be computed for {len(reasons)} of {runs} question run(s) of {dataset.path} ({reasons[0]})"
        if name in gated:
            why.append(
                f"{head}; it gates this check, so the check decided nothing: make it computable, or set "
                f'`[gate] skip-criteria = ["{name}"]` in the base branch\'s config to gate without it'
            )
        else:
            notes.append(f"{head}; it does not gate this check")
    return why, notes
