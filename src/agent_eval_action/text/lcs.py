"""The longest common subsequence of two sequences, by its length: ROUGE-L over a response's
tokens, ``trajectory_accuracy`` over a run's steps."""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """The length of the longest common subsequence of two lists (tokens, steps), by the bit-vector
    algorithm (Crochemore, Iliopoulos, Pinzon and Reid, 2001): a bit per token of the longer list,
    a few integer operations per token of the other, where rouge-score's table takes a step of
    Python per pair of tokens (two answers of 200 words: 40,000 steps). Tokens are matched as a
    dict's keys are (a float NaN matches itself here, never in the table): text tokens alike."""
    if len(a) < len(b):
        a, b = b, a
    where: dict[Hashable, int] = {}
    for i, token in enumerate(a):
        where[token] = where.get(token, 0) | 1 << i
    full = (1 << len(a)) - 1
    # Bit i of v is zero where the LCS of a[: i + 1] and the tokens of b read so far is one longer
    # than that of a[:i]: the zeros count the LCS's length.
    v = full
    for token in b:
        u = v & where.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()
