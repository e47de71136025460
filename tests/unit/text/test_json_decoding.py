"""Data cells are decoded by pydantic-core's parser (jiter) where it can: whatever it gives must be
what Python's decoder gives, to the bit and the key order, and what it refuses is decided by
Python's decoder, with Python's error messages (jsonish.loads)."""

from __future__ import annotations

import json
import math
import struct
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_eval_action.text.jsonish import MAX_DEPTH, TooDeep, _fast_parser, deeper_than, loads

# Values as producers write them: every JSON type, big integers, any float (its bits), any text
# but lone surrogates (a producer's UTF-8 cannot hold one; their escapes are tested below).
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(st.characters(exclude_categories=["Cs"]), max_size=8), inner, max_size=5)
    ),
    max_leaves=40,
)


def same(a: Any, b: Any) -> bool:
    """Equal as values and as types, floats to the bit (-0.0 apart from 0.0), dicts in key order."""
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack("d", a) == struct.pack("d", b) or (math.isnan(a) and math.isnan(b))
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


@settings(max_examples=400, deadline=None)
@given(VALUES, st.booleans())
def test_any_value_decodes_as_pythons_decoder_decodes_it(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert same(loads(text)[0], json.loads(text)), text


@settings(max_examples=400, deadline=None)
@given(st.integers(min_value=0, max_value=2**64 - 1), st.sampled_from(["%r", "%.17g", "%.25e", "%.3g"]))
def test_every_floats_numeral_reads_as_the_same_bits(bits: int, form: str) -> None:
    number = struct.unpack("d", struct.pack("Q", bits))[0]
    if not math.isfinite(number):
        return
    text = form % number
    assert same(loads(text)[0], json.loads(text)), text


@pytest.mark.parametrize(
    "text",
    [
        "[NaN, Infinity, -Infinity]",  # Python's decoder reads them, so the cells always did
        "[1e400, -1e400, 2.5e-324, -0.0, -0, 1E5]",
        '{"a": 1, "b": 2, "a": 3}',  # the last value, at the first one's place
        "1" * 4300,  # the longest integer Python converts
        '"\\u0000 \\/ \\ud83d\\ude00"',
        " [1]  \n",
    ],
)
def test_the_edges_of_json_decode_as_pythons_decoder_decodes_them(text: str) -> None:
    assert same(loads(text)[0], json.loads(text))


@pytest.mark.parametrize(
    "text",
    ["", "1, 2", '"a"], ["b"', "tru", "[1] x", "[1,]", '{"a": 1,}', "01", "1.", ".5", '"a\nb"', '"\\x"', "\ufeff[1]", "nan", "1" * 4301],
)
def test_text_python_refuses_is_refused_with_pythons_message(text: str) -> None:
    with pytest.raises(ValueError) as python:
        json.loads(text)
    with pytest.raises(ValueError) as ours:
        loads(text)
    assert str(ours.value) == str(python.value)


def test_what_the_fast_parser_refuses_and_python_reads_is_read_as_before() -> None:
    # A lone surrogate's escape (replaced and counted), and nesting past the fast parser's own
    # limit but within Python's (refused by our depth, not by either parser).
    assert loads('["half \\ud83d"]') == (["half \ufffd"], 1)
    with pytest.raises(TooDeep):
        loads("[" * 300 + "]" * 300)
    assert loads("[" * 300 + "]" * 300, depth=None)[0] == json.loads("[" * 300 + "]" * 300)


@pytest.mark.parametrize(
    ("text", "replaced"),
    [
        ('"\\udc00"', 1),  # a low half alone
        ('"\\ud800\\u0041"', 1),  # a high half before no low one
        ('"\\ude00\\ud83d"', 2),  # the halves the wrong way round
        ('"a\\ud800"', 1),  # a high half at the end
        ('{"\\udfff": 1}', 1),  # in a key
        ('"\\ud800\\ud800"', 2),
    ],
)
def test_every_lone_surrogate_is_counted_though_the_fast_parser_reads_the_text(text: str, replaced: int) -> None:
    # The fast parser's values are not searched for lone surrogates (it refuses every escape of
    # one): each form of one must reach Python's decoder and be replaced and counted.
    value, count = loads(text)
    assert count == replaced and "\ufffd" in json.dumps(value, ensure_ascii=False)
    assert loads('"\\uD800\\uDC00"') == ("\U00010000", 0)


def test_the_installed_parser_bounds_the_depth_so_its_values_are_not_walked() -> None:
    # jiter reads 200 levels (201 with an empty innermost container): a value it reads inside one
    # more array nests MAX_DEPTH deep at most. Were another version to read deeper, loads would
    # check every value as Python's are checked (slower, as right): this says which it is.
    assert _fast_parser()[1]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["list", "dict"]), min_size=MAX_DEPTH - 3, max_size=MAX_DEPTH + 3),
    st.sampled_from(["", "1", '"x"', "[]", "{}"]),
)
def test_a_value_is_refused_exactly_when_it_nests_deeper_than_the_limit(shape: list[str], inner: str) -> None:
    # The innermost container empty ("") or holding a scalar or an empty container.
    *outer, last = shape
    text = (f"[{inner}]" if last == "list" else f'{{"k": {inner}}}') if inner else ("[]" if last == "list" else "{}")
    for kind in reversed(outer):
        text = f"[{text}]" if kind == "list" else f'{{"k": {text}}}'
    value = json.loads(text)
    if deeper_than(value, MAX_DEPTH):
        with pytest.raises(TooDeep):
            loads(text)
    else:
        assert same(loads(text)[0], value)


def test_a_lower_limit_on_an_integers_digits_is_kept_as_pythons_decoder_keeps_it() -> None:
    # jiter reads integers of up to 4,300 digits whatever Python's limit: under a lower one
    # (PYTHONINTMAXSTRDIGITS), each text is read by Python's decoder, which refuses what it refuses.
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        with pytest.raises(ValueError, match="640"):
            loads("[" + "7" * 1000 + "]")
        assert loads("[1, 2]") == ([1, 2], 0)
    finally:
        sys.set_int_max_str_digits(before)
