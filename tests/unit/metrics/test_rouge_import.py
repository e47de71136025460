"""rouge-score and its Porter stemmer load without nltk's ``__init__``, leave no trace of that in
``sys.modules``, and score and stem exactly as with nltk imported whole (each case in a fresh
interpreter: what was imported before is the point)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

WORDS = ["running", "cats", "generously", "agreed", "happiness", "relational", "ponies", "sized"]
PAIRS = [("Your cart has 2 bags of potting soil", "You have two bags of soil in the cart"), ("the cats are running", "a cat runs")]

PROBE = f"""
import json, sys
if sys.argv[1] == "nltk first":
    import nltk
from agent_eval_action.metrics.rouge import rouge
from agent_eval_action.metrics.response import rouge_l
from agent_eval_action.metrics.adk import rouge_1
r = rouge()
left = sorted(n for n in sys.modules if n == "nltk" or n.startswith("nltk."))
stems = [r.porter.PorterStemmer().stem(w) for w in {WORDS!r}]
scores = [[rouge_l(a, b), rouge_1(a, b)] for a, b in {PAIRS!r}]
import nltk  # anyone's later import: the whole package
whole = [nltk.stem.PorterStemmer().stem(w) for w in {WORDS!r}]
print(json.dumps({{"left": left, "stems": stems, "whole": whole, "scores": scores, "full": hasattr(nltk, "sent_tokenize")}}))
"""


def _probe(mode: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True)
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_rouge_without_nltk_init_scores_and_stems_as_with_nltk_whole() -> None:
    bare, whole = _probe("fresh"), _probe("nltk first")
    assert bare["left"] == []  # nothing of nltk stays imported: a later import runs all of it
    assert "nltk.stem.porter" in whole["left"]  # (nltk imported first: the plain imports)
    assert bare["full"] and whole["full"]
    assert bare["stems"] == bare["whole"] == whole["stems"] == ["run", "cat", "gener", "agre", "happi", "relat", "poni", "size"]
    assert bare["scores"] == whole["scores"]
