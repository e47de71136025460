"""Response similarity: ROUGE-L F1 (Google's ``rouge-score``, as ADK uses) against the reference."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

from agent_eval_action.metrics.registry import MetricContext, register, unscored
from agent_eval_action.metrics.rouge import rouge
from agent_eval_action.models.questions import Question
from agent_eval_action.models.scores import Score, scored
from agent_eval_action.models.traces import Trace
from agent_eval_action.text.lcs import lcs_length


class CachedStemmer:
    """rouge-score's Porter stemmer (nltk), memoized: stemming is most of ROUGE's cost and words
    repeat endlessly across answers."""

    def __init__(self) -> None:
        self.stem = lru_cache(maxsize=200_000)(rouge().porter.PorterStemmer().stem)


@cache
def cached_stemmer() -> CachedStemmer:
    return CachedStemmer()


@cache
def _tokenizer() -> Any:
    modules = rouge()
    base: Any = modules.tokenizers.Tokenizer

    class StemmingTokenizer(base):  # type: ignore[misc]
        """rouge-score's default tokenizer with stemming, with the stems memoized."""

        def tokenize(self, text: str) -> list[str]:
            return list(modules.tokenize.tokenize(text, cached_stemmer()))

    return StemmingTokenizer()


def rouge_l(reference: str, candidate: str) -> float:
    """ROUGE-L F1 as rouge-score's ``RougeScorer(["rougeL"])`` gives it with our tokenizer: the
    same tokens and arithmetic, the LCS's length from :func:`lcs_length`."""
    tokenizer = _tokenizer()
    target, prediction = tokenizer.tokenize(reference), tokenizer.tokenize(candidate)
    if not target or not prediction:
        return 0.0
    common = lcs_length(target, prediction)
    return float(rouge().rouge_scorer.scoring.fmeasure(common / len(prediction), common / len(target)))


@register("response_match", "higher", "ROUGE-L F1 of the agent's response against the reference response.", prepare=_tokenizer)
def response_match(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    ref = question.reference_data
    per_turn = ref.turn_references or []
    pairs = [
        (expected, turn.response) for expected, turn in zip(per_turn, trace.turns, strict=False) if expected and turn.response is not None
    ]
    if pairs and len(trace.turns) == len(per_turn) and len(pairs) == sum(1 for e in per_turn if e):
        values = [rouge_l(expected, got) for expected, got in pairs]
        return scored(
            value=sum(values) / len(values),
            explanation=f"mean ROUGE-L F1 over {len(values)} turn(s) with a reference",
            details={"per_turn": [round(v, 4) for v in values]},
        )
    if not ref.reference_response:
        return unscored("no reference response")
    if trace.final_response is None:
        return unscored("the run recorded no final response")
    return scored(value=rouge_l(ref.reference_response, trace.final_response), explanation="ROUGE-L F1 of the final response")
