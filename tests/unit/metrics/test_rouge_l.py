"""ROUGE as ADK and rouge-score give it, by faster means: ROUGE-L by the bit-vector LCS (``text.lcs``) to the float, ADK's tokens of an ASCII text in one call."""

from __future__ import annotations

import random

from agent_eval_action.metrics.adk import adk_tokens
from agent_eval_action.metrics.response import rouge_l, rouge_tokens
from agent_eval_action.metrics.rouge import rouge

WORDS = ["the", "order", "ships", "shipped", "shipping", "refund", "refunds", "is", "a", "your", "Order", "42", "café", "-", "ok"]


def test_rouge_l_is_rouge_scores_rouge_l_with_its_stemmer() -> None:
    theirs = rouge().rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    rng = random.Random(7)
    texts = ["", " ", "!!", "The order shipped.", "Your refund is on its way."]
    texts += [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 120))) for _ in range(200)]
    for _ in range(300):
        reference, candidate = rng.choice(texts), rng.choice(texts)
        expected = float(theirs.score(reference, candidate)["rougeL"].fmeasure)
        got = rouge_l(reference, candidate)
        assert type(got) is float and got == expected, (reference, candidate)


def test_adks_tokens_of_an_ascii_text_are_those_its_character_by_character_reading_gives() -> None:
    rng = random.Random(11)
    pieces = [*WORDS, "Hello,", "WORLD", "x1", "3.14", "e-mail", "\t", "\n", "  ", "!!", "(ok)", "don't", "Running", "flies"]
    for _ in range(500):
        text = "".join(rng.choice(pieces) + rng.choice(["", " ", "-", "/"]) for _ in range(rng.randint(0, 40)))
        if not text.isascii():
            continue
        # A non-ASCII word at the end sends the text through the reading character by character.
        assert adk_tokens(text) == adk_tokens(text + " ü")[:-1], text


def test_rouge_tokens_are_rouge_scores_tokens_with_its_porter_stemmer() -> None:
    modules = rouge()
    stemmer = modules.porter.PorterStemmer()  # not memoized: theirs as it comes
    rng = random.Random(13)
    pieces = [*WORDS, "Hello,", "WORLD", "x1", "3.14", "e-mail", "\t", "\n", "  ", "!!", "(ok)", "don't", "Running", "flies"]
    pieces += [
        "İstanbul",
        "naïve",
        "Straße",
        "日本語",
        "ﬁnance",
        "ｆｕｌｌ",
        "a\u0301",
        "ing",
        "sses",
        "ies",
        "ational",
        "1st",
        "__",
        "\u00a0",
    ]
    for _ in range(600):
        text = "".join(rng.choice(pieces) + rng.choice(["", " ", "-", "/", "\n"]) for _ in range(rng.randint(0, 40)))
        assert rouge_tokens(text) == modules.tokenize.tokenize(text, stemmer), text
        # The same text's ASCII characters only: split by the ASCII path (str.translate).
        plain = text.encode("ascii", "ignore").decode()
        assert rouge_tokens(plain) == modules.tokenize.tokenize(plain, stemmer), plain
    every = " ".join(f"word{chr(c)}Word{chr(c)}9" for c in range(128))  # each ASCII character between two words
    assert rouge_tokens(every) == modules.tokenize.tokenize(every, stemmer)
    assert len(rouge_tokens(every)) > 128
