"""The bit-vector LCS gives the length rouge-score's dynamic-programming table gives."""

from __future__ import annotations

import random

from agent_eval_action.metrics.rouge import rouge
from agent_eval_action.text.lcs import lcs_length


def test_the_lcs_length_is_the_tables_for_any_token_lists() -> None:
    table = rouge().rouge_scorer._lcs_table  # rouge-score's own DP table
    rng = random.Random(5)
    for _ in range(1500):
        alphabet = rng.randint(1, 8)  # few distinct tokens: many matches, long common subsequences
        a = [str(rng.randrange(alphabet)) for _ in range(rng.randint(0, 50))]
        b = [str(rng.randrange(alphabet)) for _ in range(rng.randint(0, 50))]
        assert lcs_length(a, b) == table(a, b)[-1][-1] == lcs_length(b, a), (a, b)
