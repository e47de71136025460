"""ROUGE-L by the bit-vector LCS (``text.lcs``) gives what rouge-score's RougeScorer gives, to the float."""

from __future__ import annotations

import random

from agent_eval_action.metrics.response import _tokenizer, rouge_l
from agent_eval_action.metrics.rouge import rouge

WORDS = ["the", "order", "ships", "shipped", "shipping", "refund", "refunds", "is", "a", "your", "Order", "42", "café", "-", "ok"]


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
