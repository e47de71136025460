"""Infrastructure is not the PR: a question run that ended in a model/API error (no key, no
connection, quota still exhausted after the retries, a 5xx) did not run the PR's agent at all. It
is "not run", never a regression; when such runs dominate, the check could not be checked, and
the cause is said once. A tool's or the agent's own error stays the PR's."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

# (cause said once, patterns of the error text), checked in order: the first that matches names it.
CAUSES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "no API key or credentials for the model: set GOOGLE_API_KEY (or the Vertex AI credentials) in the step's env",
        (
            r"Missing key inputs",
            r"API key not valid",
            r"API_KEY_INVALID",
            r"No API key",
            r"UNAUTHENTICATED",
            r"PERMISSION_DENIED",
            r"DefaultCredentialsError",
            r"Could not resolve API token",
            r"unregistered callers",
        ),
    ),
    (
        "the model API could not be reached (connection refused, DNS or network)",
        (r"ConnectError", r"ConnectionError", r"Connection refused", r"Name or service not known", r"getaddrinfo", r"ConnectTimeout"),
    ),
    ("the model API's quota stayed exhausted after the retries (429)", (r"RESOURCE_EXHAUSTED", r"Too Many Requests")),
    ("the model API failed (5xx)", (r"ServerError", r"\b50[0234] (INTERNAL|UNAVAILABLE|Bad Gateway|Service Unavailable)")),
)
_COMPILED = tuple((cause, re.compile("|".join(patterns), re.IGNORECASE)) for cause, patterns in CAUSES)


def outage_cause(error: str | None) -> str | None:
    """The infrastructure cause of a question's error, None when the error is the agent's (a tool
    that raised, a timeout, a crash of its process)."""
    if not error:
        return None
    for cause, pattern in _COMPILED:
        if pattern.search(error):
            return cause
    return None


def main_cause(errors: Iterable[str | None]) -> tuple[str, int] | None:
    """The most frequent infrastructure cause among ``errors`` and how many runs ended in one
    (any cause), or None when none did."""
    causes = Counter(c for c in (outage_cause(e) for e in errors) if c is not None)
    if not causes:
        return None
    return causes.most_common(1)[0][0], sum(causes.values())
