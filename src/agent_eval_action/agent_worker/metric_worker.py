"""The metric worker's process: ``python -m agent_eval_worker.metric_worker`` under the agent's
own Python, with the agent's clean environment (none of our secrets).

Custom metrics are code we did not write (in a PR check, the base's version of it): they run
here, never in the process that holds the GitHub token and decides the gate. The metrics named
in ``protocol.ENV_METRICS`` are imported from the working directory; each request carries one
question and its trace as results.json writes them, shown to the function as read-only objects
whose fields read as attributes (``trace.final_response``) or keys (``trace["final_response"]``).
Protocol: ``protocol.py`` (its last section).
"""

from __future__ import annotations

import importlib
import json
import math
import os
import sys
import traceback
from collections.abc import Callable
from typing import IO, Any

from . import protocol


class View(dict[str, Any]):
    """A JSON object whose keys also read as attributes, as our models' fields do."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def view(data: Any) -> Any:
    if isinstance(data, dict):
        return View({key: view(value) for key, value in data.items()})
    if isinstance(data, list):
        return [view(item) for item in data]
    return data


def load(specs: dict[str, str]) -> tuple[dict[str, Callable[..., Any]], dict[str, str]]:
    """Each ``module:function`` imported from the working directory; the ones that failed, why."""
    sys.path.insert(0, os.getcwd())
    functions: dict[str, Callable[..., Any]] = {}
    failures: dict[str, str] = {}
    for name, spec in specs.items():
        module_name, _, attr = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
        except BaseException as error:  # noqa: BLE001 - the user's module failed (sys.exit too): say where
            frames = traceback.extract_tb(error.__traceback__)
            place = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
            failures[name] = f"importing {module_name!r} raised {type(error).__name__}: {error}{place}"
            continue
        function = getattr(module, attr, None)
        if callable(function):
            functions[name] = function
        else:
            failures[name] = f"module {module_name!r} has no function {attr!r}"
    return functions, failures


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def answer(number: Any, spec: str, value: Any) -> dict[str, Any]:
    """What the function returned, as a score: a finite number, None (unscored), or a score
    (our ``Score``, or any object or dict with ``value`` and ``explanation``)."""
    if value is None:
        return protocol.scored(number, None, f"{spec} returned None", {})
    if _finite(value):
        return protocol.scored(number, float(value), spec, {"source": "custom"})
    fields = value if isinstance(value, dict) else getattr(value, "__dict__", None)
    if isinstance(fields, dict) and protocol.VALUE in fields and protocol.EXPLANATION in fields:
        score, details = fields[protocol.VALUE], fields.get(protocol.DETAILS) or {}
        if score is None or _finite(score):
            return protocol.scored(
                number,
                None if score is None else float(score),
                str(fields[protocol.EXPLANATION]),
                dict(details) if isinstance(details, dict) else {},
            )
        value = score
    return protocol.scored(number, None, f"{spec} returned {type(value).__name__} {value!r}, not a finite number, None or a Score", {})


def serve(out: IO[str], specs: dict[str, str], functions: dict[str, Callable[..., Any]]) -> None:
    for line in sys.stdin:
        request = json.loads(line)
        number = request.get(protocol.ID)
        body = request[protocol.SCORE]
        name = body[protocol.METRIC]
        try:
            value = functions[name](view(body[protocol.QUESTION]), view(body[protocol.TRACE]))
            message = answer(number, specs[name], value)
            text = protocol.encode(message)
        except BaseException as error:  # noqa: BLE001 - the metric's failure (sys.exit too) is this score's
            shown = str(error).strip() or repr(error)
            text = protocol.encode(protocol.error(number, protocol.error_payload(type(error).__name__, shown, None)))
        out.write(text + "\n")
        out.flush()


def main() -> int:
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # a print() in a metric goes to stderr, never into an answer
    sys.stdout = sys.stderr
    specs = json.loads(os.environ.get(protocol.ENV_METRICS) or "{}")
    functions, failures = load(specs)
    out.write(protocol.encode(protocol.metrics_ready(failures)) + "\n")
    out.flush()
    serve(out, specs, functions)
    return 0


if __name__ == "__main__":
    sys.stderr.flush()
    os._exit(main())
