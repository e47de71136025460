"""ROUGE-L by the bit-vector LCS gives what rouge-score's table gives, to the float."""

from __future__ import annotations

import random

from agent_eval_action.metrics.response import _tokenizer, lcs_length, rouge_l
from agent_eval_action.metrics.rouge import rouge

WORDS = ["the", "order", "ships", "shipped", "shipping", "refund", "refunds", "is", "a", "your", "Order", "42", "café", "-", "ok"]


def test_the_lcs_length_is_the_tables_for_any_token_lists() -> None:
    table = rouge().rouge_scorer._lcs_table  # rouge-score's own DP table
    rng = random.Random(5)
    for _ in range(3000):
        alphabet = rng.randint(1, 8)  # few distinct tokens: many matches, long common subsequences
        a = [str(rng.randrange(alphabet)) for _ in range(rng.randint(0, 70))]
        b = [str(rng.randrange(alphabet)) for _ in range(rng.randint(0, 70))]
        assert lcs_length(a, b) == table(a, b)[-1][-1] == lcs_length(b, a), (a, b)


def test_rouge_l_is_rouge_scores_rouge_l_with_our_tokenizer() -> None:
    theirs = rouge().rouge_scorer.RougeScorer(["rougeL"], tokenizer=_tokenizer())
    rng = random.Random(7)
    texts = ["", " ", "!!", "The order shipped.", "Your refund is on its way."]
    texts += [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 120))) for _ in range(200)]
    for _ in range(600):
        reference, candidate = rng.choice(texts), rng.choice(texts)
        expected = float(theirs.score(reference, candidate)["rougeL"].fmeasure)
        got = rouge_l(reference, candidate)
        assert type(got) is float and got == expected, (reference, candidate)
