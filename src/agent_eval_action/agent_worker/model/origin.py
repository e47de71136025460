"""Where an error was raised: inside the model call, or in the agent's own code. Told by where
the exception passed (the paced model wrapper tags what the model call raised, ``pacing.py``),
never by its text: a tool that calls a wrong port raises "Connection refused" as a model client
would, and it is the PR's error all the same.

The tag is an attribute of the exception (``protocol.ORIGIN_ATTRIBUTE``), so it survives ADK
re-raising it, an agent's callback wrapping it (``raise X from error``: the cause is read too),
and, in the parent, the trip over the protocol (``run.workers.process.RemoteError``).
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Iterator

from .. import protocol

# Statuses of a model call the API refused for what it was asked (a malformed request, an unknown
# model, a prompt too long): the agent's request, so the agent's error. 401 / 403 (credentials),
# 408 (a timeout) and 429 (a quota) are the API's.
REFUSED_REQUEST = frozenset({400, 404, 409, 411, 413, 414, 415, 422})


def tag(error: BaseException, origin: str) -> None:
    """Marks ``error`` as raised at ``origin`` (``protocol.ORIGINS``), unless already marked."""
    if getattr(error, protocol.ORIGIN_ATTRIBUTE, None) is None:
        with contextlib.suppress(AttributeError, TypeError):  # an exception that takes no attributes stays the agent's
            setattr(error, protocol.ORIGIN_ATTRIBUTE, origin)


def origin_of(error: BaseException) -> str | None:
    """The origin ``error`` (or an error it was raised from, explicitly) was marked with; None: unmarked."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found = getattr(current, protocol.ORIGIN_ATTRIBUTE, None)
        if found in protocol.ORIGINS:
            return str(found)
        current = current.__cause__
    return None


def status_code(error: BaseException) -> int | None:
    """The HTTP status an API error carries (google-genai's ``code``, other clients' ``status_code``)."""
    for attribute in ("code", "status_code"):
        value = getattr(error, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    value = getattr(getattr(error, "response", None), "status_code", None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


API_ERROR = "error"  # the Gemini API's error object (its key, not our protocol's)
API_DETAILS = "details"  # the Gemini API error's details list (its key, not our protocol's)
# google.rpc.ErrorInfo reasons of a 400 that are about who asks, not what was asked.
CREDENTIAL_REASONS = frozenset({"API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED", "API_KEY_HTTP_REFERRER_BLOCKED"})


def _reasons(error: BaseException) -> set[str]:
    """The ErrorInfo ``reason`` fields of an API error's JSON (google-genai's ``details``)."""
    details = getattr(error, API_DETAILS, None)
    inner = details.get(API_ERROR, details) if isinstance(details, dict) else None
    items = inner.get(API_DETAILS) if isinstance(inner, dict) else None
    return (
        {str(item.get("reason")) for item in items if isinstance(item, dict) and item.get("reason")} if isinstance(items, list) else set()
    )


# Where a model client and its transport live: an error raised in their code (a status, a
# timeout, a cut body or stream, an unreadable reply, no key) is the model call's. One raised in
# any other module during the call is the agent's own: a BaseLlm the project wrote itself (a
# scripted model, a router) that fails is the PR's bug, whatever the call it was making.
CLIENT_MODULES = (
    "google.",
    "httpx",
    "httpcore",
    "h11",
    "h2",
    "aiohttp",
    "requests",
    "urllib3",
    "urllib.",
    "http.",
    "ssl",
    "socket",
    "asyncio",
    "anyio",
    "json",
    "grpc",
    "websockets",
    "litellm",
    "openai",
    "anthropic",
    "concurrent.",
    "agent_eval_",
)


def raised_in(error: BaseException) -> str:
    """The module whose code raised ``error`` (its innermost frame): '' when unknown."""
    tb = error.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return str(tb.tb_frame.f_globals.get("__name__", ""))


def model_call_origin(error: BaseException) -> str:
    """The origin of an error the model call raised: the model's when a client's or transport's
    code raised it (``CLIENT_MODULES``), unless the API refused the agent's request
    (``REFUSED_REQUEST``; an invalid API key, which the API answers 400, is not the request's);
    the agent's when its own code did (its own BaseLlm's bug)."""
    site = raised_in(error)
    if site and not site.startswith(CLIENT_MODULES) and not type(error).__module__.startswith(CLIENT_MODULES):
        return protocol.AGENT
    if status_code(error) in REFUSED_REQUEST and not (_reasons(error) & CREDENTIAL_REASONS):
        return protocol.AGENT
    return protocol.MODEL


# What a client says when it has no credentials or they are refused, often raised before any
# request (google-genai without a key: "Missing key inputs argument!"; google-auth's
# DefaultCredentialsError), so with no status to read. verdict/outages.py names the cause by them.
NO_CREDENTIALS = (
    r"Missing key inputs",
    r"API key not valid",
    r"API_KEY_INVALID",
    r"No API key",
    r"UNAUTHENTICATED",
    r"PERMISSION_DENIED",
    r"DefaultCredentialsError",
    r"Could not resolve API token",
    r"unregistered callers",
)
_NO_CREDENTIALS = re.compile("|".join(NO_CREDENTIALS), re.IGNORECASE)


def worth_retrying(error: BaseException) -> bool:
    """Marked the model's or outside's and worth another try: not a refusal of who asks (400 for
    a bad key, 401, 403, or a client's words for no credentials), which asking again cannot
    change: a run without a key ended at once, not after the backoff's 15-20 s."""
    if origin_of(error) not in (protocol.MODEL, protocol.OUTSIDE) or status_code(error) in (400, 401, 403):
        return False
    return not _NO_CREDENTIALS.search(f"{type_name(error)}: {error}")


def type_name(error: BaseException) -> str:
    """The exception's class name; for one carried over from the agent's process, the original's."""
    return str(getattr(error, "remote_type", type(error).__name__))


# Per question (set in its task, inherited by the tasks it starts): how many of its model calls
# are waiting for their reply right now. A question whose time runs out while one waits ran out
# of time in the model call (a stalled API), not in the agent.
WAITING: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("agent_eval_model_waiting", default=None)


@contextlib.contextmanager
def waiting_for_model() -> Iterator[None]:
    counter = WAITING.get()
    if counter is None:
        yield
        return
    counter[0] += 1
    try:
        yield
    finally:
        counter[0] -= 1
