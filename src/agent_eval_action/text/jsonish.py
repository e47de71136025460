"""Helpers for loosely typed JSON: camelCase or snake_case keys, JSON text inside strings, and
decoding data so that odd input is an error with a reason or repaired, never a crash (nesting
past a stated depth, lone surrogates, NaN and Infinity where only finite numbers belong)."""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

# JSON data nests at most this deep (arrays and objects inside each other). Python's decoder stops
# near 1,000 with a RecursionError, and results are serialized with a limit near 255 levels of
# which our own models take about 15: 200 leaves room and no real dataset comes near it.
MAX_DEPTH = 200
# A lone surrogate can only come from a JSON escape (text is read as strict UTF-8): its JSON text
# holds ``\ud800``-``\udfff``. Searching for that is cheap; walking every string is not.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
LONE_SURROGATES = "lone surrogates (half of a UTF-16 pair, e.g. the JSON escape \\ud83d without its other half) replaced with U+FFFD"

# A recorded number that is ±Infinity (or overflows to it) cannot be scored: its row is refused.
# ``json.dumps(value, sort_keys=True, ensure_ascii=False)`` (and with ``default=str``) without
# making a new encoder on every call: what each content hash and transcript cut dumps per row.
dumps_sorted = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
dumps_sorted_any = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str).encode
NOT_FINITE = "{value} is not a finite number: record a finite value, or leave it out when nothing was measured"


class TooDeep(ValueError):
    """JSON nested deeper than a limit (:data:`MAX_DEPTH` for data)."""

    def __init__(self, depth: int = MAX_DEPTH) -> None:
        super().__init__(f"nested more than {depth} levels deep (arrays and objects inside each other): flatten it")


class NotFinite(ValueError):
    """A stored number that is NaN or infinite."""


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def get(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` under its snake_case or camelCase name (ADK writes either)."""
    if not isinstance(obj, dict):
        return default
    if key in obj:
        return obj[key]
    return obj.get(camel(key), default)


def loads(text: str, *, finite: bool = False, depth: int | None = MAX_DEPTH) -> tuple[Any, int]:
    """JSON text of data -> (value, how many lone surrogates were replaced with U+FFFD).

    Raises ``ValueError``: :class:`json.JSONDecodeError`; :class:`TooDeep` past ``depth`` (None:
    only where Python's decoder stops); with ``finite``, :class:`NotFinite` for NaN, Infinity or a
    number too large for a float (stored results hold only finite figures).
    """
    try:
        if finite:
            value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
        else:
            value, checked = _decoded(text, depth)
            if checked:
                return value, 0
    except RecursionError:
        raise TooDeep(depth or sys.getrecursionlimit()) from None
    # Each level takes two characters at least, and one opening bracket: a short text (most cells,
    # a span's attributes) or one with few brackets (counted in C, 20x faster than the walk) is not walked.
    if (
        depth is not None
        and len(text) > 2 * depth
        and isinstance(value, dict | list)
        and text.count("[") + text.count("{") > depth
        and deeper_than(value, depth)
    ):
        raise TooDeep(depth)
    if _SURROGATE_ESCAPE.search(text) is None:
        return value, 0
    try:
        return scrub(value)
    except RecursionError:  # only without a depth limit: nested as deep as the decoder allows
        raise TooDeep(depth or sys.getrecursionlimit()) from None


def _decoded(text: str, depth: int | None) -> tuple[Any, bool]:
    """``json.loads(text)``, the same value, decoded by pydantic-core's parser (jiter) where it
    can: about twice as fast (a recorded table's cells: 0.54 -> 0.24 s of CPU for 2,000 rows). It
    gives what Python's decoder gives for every text both accept (NaN and Infinity, big integers,
    each float's bits, the last of a repeated key at the first one's place: tests/unit/text);
    whatever it refuses (a lone surrogate's escape, nesting past its own limit, malformed text) is
    decided by Python's decoder, as before, with its error messages. Two settings of Python's own
    jiter does not follow: a limit on an integer's digits lower than the default 4,300 (jiter's
    own; ``PYTHONINTMAXSTRDIGITS``): then Python's decoder reads every text; and the recursion
    limit, which made Python's decoder call a text nested far less than ``MAX_DEPTH`` too deep
    when it was called deep in the stack: jiter reads it.

    With the value, whether it needs no more looking at (``loads``' depth and surrogate checks
    cost half again what decoding did): jiter refuses every escape of a lone surrogate (a Rust
    string cannot hold one), and nesting past its own limit. The text is decoded inside one more
    array (one value in it: exactly one JSON value, nothing after it), so where that limit is
    ``MAX_DEPTH`` (checked once, :func:`_fast_parser`) a value it reads nests ``MAX_DEPTH`` deep
    at most."""
    parse, bounded = _fast or _fast_parser()
    if 0 < sys.get_int_max_str_digits() < _JITER_DIGITS:
        return json.loads(text), False
    try:
        wrapped = parse(f"[{text}]")
    except Exception:  # noqa: BLE001  (whatever it refuses, however: Python's decoder decides, and says why)
        return json.loads(text), False
    if type(wrapped) is not list or len(wrapped) != 1:  # "1, 2" or "": not one JSON value
        return json.loads(text), False
    return wrapped[0], bounded and (depth is None or depth >= MAX_DEPTH)


_fast: tuple[Any, bool] | None = None
# The most digits jiter reads in an integer: Python's default limit (sys.int_info.default_max_str_digits).
_JITER_DIGITS = 4300


def _fast_parser() -> tuple[Any, bool]:
    """jiter's ``from_json``, and whether it refuses any value nested deeper than ``MAX_DEPTH``
    inside one more array: it reads nesting to 200 levels (201 where the innermost container is
    empty, the most it reads). Tried once, on that most it reads, should another version read deeper."""
    global _fast
    from pydantic_core import from_json

    deepest = MAX_DEPTH + 2  # a value one level too deep, inside one more array
    try:
        from_json("[" * deepest + "]" * deepest)
    except ValueError:
        _fast = (from_json, True)
    else:
        _fast = (from_json, False)
    return _fast


def _refuse_constant(name: str) -> Any:
    raise NotFinite(f"holds {name}, which is not a finite number")


def _finite_float(numeral: str) -> float:
    # Each numeral's float as the decoder makes it, refused where it overflows (1e999 reads as
    # infinity): a call a number costs less than walking the decoded value for one (a stored
    # results file: 1.5 ms against 20-40 ms, as most hold a hash whose "9e512" looks like one).
    value = float(numeral)
    if math.isinf(value):
        raise NotFinite("holds a number too large for a float (it reads as infinity)")
    return value


def deeper_than(value: dict[str, Any] | list[Any], limit: int) -> bool:
    """Whether containers nest more than ``limit`` deep: level by level, containers only, no recursion."""
    containers = (dict, list)  # what json.loads makes: exact types, so ``type() in`` (faster than isinstance)
    level: list[Any] = [value]
    depth = 1
    while level:
        if depth > limit:
            return True
        below: list[Any] = []
        for item in level:
            below += [child for child in (item.values() if type(item) is dict else item) if type(child) in containers]
        level = below
        depth += 1
    return False


def scrub(value: Any) -> tuple[Any, int]:
    """``value`` with every lone surrogate in its strings (keys too) replaced with U+FFFD, and how
    many were; unchanged containers are returned as they are. Depth is bounded by the caller."""
    if isinstance(value, str):
        fixed, count = _LONE_SURROGATE.subn("\ufffd", value)
        return fixed, count
    if isinstance(value, list):
        pairs = [scrub(item) for item in value]
        total = sum(count for _, count in pairs)
        return ([item for item, _ in pairs] if total else value), total
    if isinstance(value, dict):
        entries = [(scrub(key), scrub(item)) for key, item in value.items()]
        total = sum(k[1] + v[1] for k, v in entries)
        return ({k[0]: v[0] for k, v in entries} if total else value), total
    return value, 0


def parse_cell(value: Any) -> tuple[Any, int]:
    """A table cell: JSON text becomes the object it encodes; empty cells become ``None``. With it,
    how many lone surrogates were replaced (see :func:`loads`).

    Raises ``ValueError`` for text that starts like JSON but is not, or nests too deep.
    """
    if value is None:
        return None, 0
    if isinstance(value, float) and value != value:  # NaN from pandas
        return None, 0
    if not isinstance(value, str):
        return value, 0
    text = value.strip()
    if not text:
        return None, 0
    if text[0] in "[{" or text in ("null", "true", "false"):
        return loads(text)
    return value, 0


def maybe_json(value: Any) -> Any:
    """JSON text decoded where it is JSON (lone surrogates replaced, too deep left as text);
    anything else unchanged."""
    if isinstance(value, str):
        try:
            return loads(value)[0]
        except ValueError:
            return value
    return value


def opt_str(value: Any) -> str | None:
    """A string field as recorded: text stays, numbers become text, anything else is absent."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None
