"""The worker's protocol, spelled once for both sides: the worker (``__main__``, ``runner``) and
the parent (``run.workers.pool``, ``run.workers.process``, ``run.agent.in_process``) import their keys and messages from here.

Standard library only, like every module of ``agent_worker`` (see its ``__init__``): this file
is copied with the others and runs under the agent's own Python.

One JSON object per line. The parent writes on the worker's stdin:

- ``question(N, {id, user_inputs, initial_state[, conversation_scenario, user_simulator]})``
- ``describe(N)``: the agent's tree (``tree.agent_tree``), for ``init``
- ``cancel(N)``: the question's time is up
- ``grant(P)``: the model call that asked for permit ``P`` may go now (``pacing.py``)
- ``pace(model, key)``: from now on the calls of ``model`` with API key ``key`` (``*``: any) ask
  for a permit; until then they go at once (sent once the model is paced: a quota given for it,
  told right after ``ready``, or the API throttled it)

The worker answers on the file descriptor that was its stdout:

- first ``ready({app_name, models, adk_version, python})`` or ``fatal("why")``
- per request ``started(N)`` when it is read, then ``result(N, {...})`` or
  ``error(N, {type, message, code, origin[, partial]})`` (``partial``: the run so far, when the agent
  raised mid-question; ``origin``: where it was raised, see ``ORIGINS``); ``cancelled(N[, origin])``
  answers a ``cancel`` (``origin`` ``model``: the time ran out while a model call waited for its reply)
- ``stalled(seconds)`` when its event loop has not turned for ``STALL_S`` (a call that blocks
  it: no ``cancel`` can be read until it returns), ``running()`` when it turns again
- ``exiting("why")`` before the process ends on its own.
- ``signalled(signal)`` when the agent's code sends a signal to its own process (``os.kill``,
  ``os.killpg``, ``signal.pthread_kill``), before it goes: a kill that follows is the agent's,
  not one from outside.
- ``permit(P, model, key)`` before each model call of the agent (with ``ENV_PACING`` = "1") that
  the parent paces (``pace``): one pacing per model and API key, the parent's (``run/pacing.py``),
  shared by every worker and the judges; ``took(P, model, key)`` instead, sent as the call goes,
  for a model not paced (a round trip to the parent before every call cost a busy run a quarter
  of its time); then ``spent(P, outcome[, retry_delay, tokens])`` once the call is over (``ok``,
  ``throttled`` with the API's RetryInfo delay or None, ``failed``, or ``unused``: never sent).

A result is ``{replayed_model_calls, live_model_calls, events, final_state, turn_times, spans[,
observed]}`` (the model calls the cache answered, and those handed to the model: ``model/calls.py``), or
``{skipped}`` for a conversation scenario ADK's simulator cannot play. ``observed``: what the
agent read for the question (``observe.py``), ``{file|listed|searched: [absolute paths]}``.
"""

from __future__ import annotations

import json
import re
from typing import Any

# The package the worker's files are copied into and run as: ``python -m agent_eval_worker``.
PACKAGE = "agent_eval_worker"

# What the parent tells the worker through its environment.
ENV_AGENT = "AGENT_EVAL_WORKER_AGENT"  # the agent to load: a directory or module[:attribute]
ENV_SPANS = "AGENT_EVAL_WORKER_SPANS"  # "1": capture OpenTelemetry spans per question; "0": not
ENV_MODEL_CACHE = "AGENT_EVAL_WORKER_MODEL_CACHE"  # the model-call cache's directory; unset: none
ENV_METRICS = "AGENT_EVAL_WORKER_METRICS"  # the metric worker's metrics: JSON {name: "module:function"}
ENV_OBSERVE = "AGENT_EVAL_WORKER_OBSERVE"  # "0": no audit hook, nothing observed (the benchmark's other side); "python": the Python hook even where the C one is built; else "1"
ENV_PACING = "AGENT_EVAL_WORKER_PACING"  # "1": ask the parent for a permit before each model call; unset: pace here
ENV_ZYGOTE = "AGENT_EVAL_WORKER_ZYGOTE"  # "1": be the zygote, forking workers on request (zygote.py); else a worker
ENVIRONMENT = (ENV_AGENT, ENV_SPANS, ENV_MODEL_CACHE, ENV_METRICS, ENV_OBSERVE, ENV_PACING, ENV_ZYGOTE)

# The request's number, on every message about one request.
ID = "id"

# Message kinds, each the key that carries it. Parent -> worker:
QUESTION = "question"
DESCRIBE = "describe"
CANCEL = "cancel"
GRANT = "grant"
PACE = "pace"
# Worker -> parent:
READY = "ready"
FATAL = "fatal"
STARTED = "started"
RESULT = "result"
ERROR = "error"
CANCELLED = "cancelled"
STALLED = "stalled"
RUNNING = "running"
EXITING = "exiting"
SIGNALLED = "signalled"
PERMIT = "permit"
TOOK = "took"
SPENT = "spent"
REQUESTS = (QUESTION, DESCRIBE, CANCEL, GRANT, PACE)
ANSWERS = (READY, FATAL, STARTED, RESULT, ERROR, CANCELLED, STALLED, RUNNING, EXITING, SIGNALLED, PERMIT, TOOK, SPENT)

# The worker's event loop is stalled when it has not turned for this long (its heartbeat, a
# timer every HEARTBEAT_S, has not run): a busy loop still turns between callbacks; only a call
# that blocks it (a sync tool that waits, a long computation) stops it.
HEARTBEAT_S = 0.1
STALL_S = 1.0

# A question's fields (its ``id`` is ``ID``).
USER_INPUTS = "user_inputs"
INITIAL_STATE = "initial_state"
CONVERSATION_SCENARIO = "conversation_scenario"
USER_SIMULATOR = "user_simulator"

# A result's fields.
REPLAYED_MODEL_CALLS = "replayed_model_calls"
LIVE_MODEL_CALLS = "live_model_calls"
EVENTS = "events"
FINAL_STATE = "final_state"
TURN_TIMES = "turn_times"
APP_DETAILS = "app_details"
SPANS = "spans"
OBSERVED = "observed"
SKIPPED = "skipped"

# An error's fields.
TYPE = "type"
MESSAGE = "message"
CODE = "code"
PARTIAL = "partial"
ORIGIN = "origin"
# Where an error was raised, as the worker knows it (never read from its text): ``model``: inside
# the model call (the LLM client and its transport: a status, a timeout, a reply cut short or
# unreadable); ``agent``: anywhere else (a tool, a callback, the agent's own code), and a model
# call the API refused for what the agent asked (a 4xx other than credentials, 408 and 429).
# ``outside`` is the parent's: the worker was killed by a signal nothing of ours sent.
MODEL = "model"
AGENT = "agent"
OUTSIDE = "outside"
ORIGINS = (MODEL, AGENT, OUTSIDE)
# The attribute an exception carries its origin in, in the worker and in the parent alike.
ORIGIN_ATTRIBUTE = "agent_eval_origin"

# The metric worker's (``python -m PACKAGE.METRIC_MODULE``; see the last section) request, its
# fields, what ``ready`` says there, and a score's fields.
METRIC_MODULE = "metric_worker"
SCORE = "score"
METRIC = "metric"
TRACE = "trace"
FAILURES = "failures"
VALUE = "value"
EXPLANATION = "explanation"
DETAILS = "details"
# A permit's fields (its number is ``ID``) and a spent one's.
MODEL_NAME = "model_name"
API_KEY_ID = "api_key_id"
OUTCOME = "outcome"
RETRY_DELAY = "retry_delay"
TOKENS = "tokens"
# What became of a permitted call.
OK = "ok"
THROTTLED = "throttled"
FAILED = "failed"
UNUSED = "unused"
OUTCOMES = (OK, THROTTLED, FAILED, UNUSED)

# What ``ready`` says of the loaded agent.
APP_NAME = "app_name"
MODELS = "models"
ADK_VERSION = "adk_version"
PYTHON = "python"

KEYS = (
    ID,
    *REQUESTS,
    *ANSWERS,
    USER_INPUTS,
    INITIAL_STATE,
    CONVERSATION_SCENARIO,
    USER_SIMULATOR,
    REPLAYED_MODEL_CALLS,
    LIVE_MODEL_CALLS,
    EVENTS,
    FINAL_STATE,
    TURN_TIMES,
    SPANS,
    APP_DETAILS,
    OBSERVED,
    SKIPPED,
    TYPE,
    MESSAGE,
    CODE,
    PARTIAL,
    ORIGIN,
    MODEL_NAME,
    API_KEY_ID,
    OUTCOME,
    RETRY_DELAY,
    TOKENS,
    APP_NAME,
    MODELS,
    ADK_VERSION,
    PYTHON,
    SCORE,
    METRIC,
    TRACE,
    FAILURES,
    VALUE,
    EXPLANATION,
    DETAILS,
)

Message = dict[str, Any]


# Surrogate code points: a Python str may hold them alone (a tool that returns "\ud800"), but no
# UTF-8 line can carry one: writing it would raise in the middle of an answer.
_SURROGATES = re.compile("[\ud800-\udfff]")


def encode(message: Message) -> str:
    """One line of the protocol, without its newline. Raises TypeError / ValueError /
    RecursionError for what JSON cannot carry (``default=str`` covers plain objects). A lone
    surrogate becomes U+FFFD, as the dataset readers make it: the answer travels and is scored."""
    return _SURROGATES.sub("\ufffd", json.dumps(message, ensure_ascii=False, default=str))


def decode(line: bytes | str) -> Message | None:
    """The message on ``line``; None for a line that is not a JSON object (stray output)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def kind(message: Message) -> str | None:
    """Which message this is: one of ``REQUESTS`` or ``ANSWERS``; None for none of them."""
    for name in (
        CANCEL,
        GRANT,
        PACE,
        PERMIT,
        TOOK,
        SPENT,
        READY,
        FATAL,
        EXITING,
        SIGNALLED,
        STARTED,
        CANCELLED,
        STALLED,
        RUNNING,
        ERROR,
        RESULT,
        DESCRIBE,
        QUESTION,
    ):
        if name in message and (message[name] or name not in (STARTED, CANCELLED, RUNNING, DESCRIBE)):
            return name
    return None


# -- parent -> worker ------------------------------------------------------------------------


def question(number: int, request: dict[str, Any]) -> Message:
    return {ID: number, QUESTION: request}


def describe(number: int) -> Message:
    return {ID: number, DESCRIBE: True}


def cancel(number: Any) -> Message:
    return {CANCEL: number}


def grant(permit: int) -> Message:
    return {GRANT: permit}


def pace(model: str, key: str) -> Message:
    return {PACE: {MODEL_NAME: model, API_KEY_ID: key}}


def question_request(
    question_id: str,
    user_inputs: list[str],
    initial_state: dict[str, Any],
    *,
    conversation_scenario: Any = None,
    user_simulator: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What the worker needs of a question (``runner.AgentSessions.run`` reads it)."""
    request: dict[str, Any] = {ID: question_id, USER_INPUTS: user_inputs, INITIAL_STATE: initial_state}
    if conversation_scenario is not None:
        request[CONVERSATION_SCENARIO] = conversation_scenario
        request[USER_SIMULATOR] = dict(user_simulator or {})
    return request


# -- worker -> parent ------------------------------------------------------------------------


def ready(app_name: str, models: dict[str, str], adk_version: str, python: str) -> Message:
    return {READY: {APP_NAME: app_name, MODELS: models, ADK_VERSION: adk_version, PYTHON: python}}


def fatal(why: str) -> Message:
    return {FATAL: why}


def started(number: Any) -> Message:
    return {ID: number, STARTED: True}


def result(number: Any, answer: dict[str, Any]) -> Message:
    return {ID: number, RESULT: answer}


def error(number: Any, payload: dict[str, Any]) -> Message:
    return {ID: number, ERROR: payload}


def cancelled(number: Any, origin: str | None = None) -> Message:
    return {ID: number, CANCELLED: True} if origin is None else {ID: number, CANCELLED: True, ORIGIN: origin}


def stalled(seconds: float) -> Message:
    return {STALLED: round(seconds, 1)}


def running() -> Message:
    return {RUNNING: True}


def exiting(why: str) -> Message:
    return {EXITING: why}


def signalled(signal: int) -> Message:
    return {SIGNALLED: signal}


def permit(number: int, model: str, key: str) -> Message:
    return {PERMIT: {ID: number, MODEL_NAME: model, API_KEY_ID: key}}


def took(number: int, model: str, key: str) -> Message:
    return {TOOK: {ID: number, MODEL_NAME: model, API_KEY_ID: key}}


def spent(number: int, outcome: str, *, retry_delay: float | None = None, tokens: int = 0) -> Message:
    return {SPENT: {ID: number, OUTCOME: outcome, RETRY_DELAY: retry_delay, TOKENS: tokens}}


def error_payload(type_name: str, message: str, code: int | None, origin: str = AGENT) -> dict[str, Any]:
    """An error's fields (``PARTIAL`` is added beside them when the run so far can travel)."""
    return {TYPE: type_name, MESSAGE: message, CODE: code, ORIGIN: origin}


def run_result(
    events: list[dict[str, Any]],
    final_state: dict[str, Any] | None,
    turn_times: list[list[float]],
    spans: list[dict[str, Any]],
    *,
    replayed: int,
    live: int,
    app_details: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """What one question's run left, as the parent turns it into a trace (``app_details``: per
    turn, ADK's ``AppDetails`` JSON its model requests showed; ``agent_worker/app_details.py``)."""
    return {
        REPLAYED_MODEL_CALLS: replayed,
        LIVE_MODEL_CALLS: live,
        EVENTS: events,
        FINAL_STATE: final_state,
        TURN_TIMES: turn_times,
        SPANS: spans,
        APP_DETAILS: app_details,
    }


def skipped(reason: str) -> dict[str, Any]:
    return {SKIPPED: reason}


# -- the metric worker (``python -m agent_eval_worker.metric_worker``) --------------------------
#
# Custom metrics (``[custom-metrics.NAME]``) run in a process of their own under the agent's
# Python, never in ours. Its environment names the metrics (``ENV_METRICS``: a JSON object of
# name -> ``module:function``); it imports them from its working directory and says ``ready``
# with the ones that failed (``{failures: {name: why}}``). Then, per request
# ``score(N, name, question, trace)`` (the two as results.json writes them), it answers
# ``result(N, {value, explanation, details})`` or ``error(N, {type, message, code})``.


def score(number: int, metric: str, question_data: dict[str, Any], trace: dict[str, Any]) -> Message:
    return {ID: number, SCORE: {METRIC: metric, QUESTION: question_data, TRACE: trace}}


def metrics_ready(failures: dict[str, str]) -> Message:
    return {READY: {FAILURES: failures}}


def scored(number: Any, value: float | None, explanation: str, details: dict[str, Any]) -> Message:
    return result(number, {VALUE: value, EXPLANATION: explanation, DETAILS: details})


# -- the zygote (``zygote.py``) --------------------------------------------------------------
# With ``ENV_ZYGOTE`` = "1" the process loads the agent once and forks the workers. The parent
# sends on its stdin, a Unix SOCK_SEQPACKET socket, one packet per request with three file
# descriptors attached (the new worker's stdin, stdout and stderr):
#
# - ``fork(N)``
#
# and reads on its stdout: ``warm()`` once the agent is loaded and forking is safe, else
# ``cold("why")`` (it forks nothing: the parent spawns workers instead); then per request
# ``forked(N, pid)``, and ``exited(pid, code)`` when a worker it forked ends (``code`` as
# asyncio gives it: negative for a signal).
FORK = "fork"
WARM = "warm"
COLD = "cold"
FORKED = "forked"
EXITED = "exited"


def fork(number: int) -> Message:
    return {FORK: number}


def warm() -> Message:
    return {WARM: True}


def cold(why: str) -> Message:
    return {COLD: why}


def forked(number: int, pid: int) -> Message:
    return {FORKED: [number, pid]}


def exited(pid: int, code: int) -> Message:
    return {EXITED: [pid, code]}
