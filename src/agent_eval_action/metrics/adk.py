"""ADK's deterministic metrics under ADK's names, computed as the pinned ADK computes them.

``tool_trajectory_avg_score`` (``evaluation/trajectory_evaluator.py``): per turn (ADK
invocation), 1.0 when the turn's tool calls match the reference's (name and arguments equal;
``EXACT`` by default, ``IN_ORDER`` / ``ANY_ORDER`` from the criterion's ``match_type``, names
only with ``ignore_args``), else 0.0; the mean over the turns.

``response_match_score`` (``evaluation/final_response_match_v1.py``): per turn, the ROUGE-1 F
measure of the final response against the reference response, with ADK's Unicode-aware,
stemming tokenizer; the mean over the turns. A turn without a reference response scores 0, as
in ADK (its reference text is empty).

Tool calls follow the one definition of ``calls.py``: ``transfer_to_agent`` counts only where
the reference names it (references recorded from ADK sessions do name it).

``adk_agreement`` reads the scores ADK itself recorded (an eval history, ``score.*`` columns)
and says whether ours reproduce them.
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from agent_eval_action.metrics.calls import counts
from agent_eval_action.metrics.registry import MetricContext, register, unscored
from agent_eval_action.metrics.response import rouge_tokens
from agent_eval_action.metrics.rouge import rouge
from agent_eval_action.models.questions import Question, ReferenceToolCall, ToolInteraction
from agent_eval_action.models.scores import Score, scored
from agent_eval_action.models.traces import Trace

TRAJECTORY = "tool_trajectory_avg_score"
RESPONSE = "response_match_score"
MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")
# Two scores agree when they differ by less than this (ours are stored with 6 decimals).
AGREEMENT_TOLERANCE = 1e-6

Call = tuple[str, dict[str, Any]]


def match_type(criterion: Mapping[str, Any] | None) -> str:
    """The criterion's ``match_type`` as ADK reads it (names or numbers, any case, ``-`` or ``_``)."""
    value = (criterion or {}).get("match_type", (criterion or {}).get("matchType", "EXACT"))
    if isinstance(value, enum.Enum):  # ADK's ToolTrajectoryCriterion.MatchType
        value = value.name
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(MATCH_TYPES):
        return MATCH_TYPES[value]
    normalized = str(value).strip().upper().replace("-", "_").replace(" ", "_")
    if normalized not in MATCH_TYPES:
        raise ValueError(f"match_type {value!r} is not one of {', '.join(MATCH_TYPES)}")
    return normalized


def _same(actual: Call, expected: Call, ignore_args: bool) -> bool:
    return actual[0] == expected[0] and (ignore_args or actual[1] == expected[1])


def _exact(actual: list[Call], expected: list[Call], ignore_args: bool) -> bool:
    return len(actual) == len(expected) and all(_same(a, e, ignore_args) for a, e in zip(actual, expected, strict=True))


def _in_order(actual: list[Call], expected: list[Call], ignore_args: bool) -> bool:
    if not expected:
        return True
    position = 0
    for call in actual:
        if _same(call, expected[position], ignore_args):
            position += 1
            if position == len(expected):
                return True
    return False


def _any_order(actual: list[Call], expected: list[Call], ignore_args: bool) -> bool:
    left = list(actual)
    for want in expected:
        index = next((i for i, call in enumerate(left) if _same(call, want, ignore_args)), None)
        if index is None:
            return False
        left.pop(index)
    return True


MATCHERS: dict[str, Callable[[list[Call], list[Call], bool], bool]] = {"EXACT": _exact, "IN_ORDER": _in_order, "ANY_ORDER": _any_order}


def expected_turn_calls(question: Question) -> list[list[ReferenceToolCall]] | None:
    """The reference's tool calls per turn, as ADK's eval data gives them.

    Only ADK's references: a golden reference lists the arguments to check, not every
    argument, so ADK's full comparison would fail it where ``tool_usage_accuracy`` is right.
    """
    return question.reference_data.turn_tool_calls


def actual_turn_calls(question: Question, trace: Trace) -> list[list[ToolInteraction]] | str:
    """The run's tool calls per turn (as ``calls.py`` counts them), or why they are unknown."""
    if trace.tool_interactions is None:
        return trace.missing.get("tool_calls", "the run recorded no tool calls")
    turns = len(trace.turns) or len(question.user_inputs)
    out: list[list[ToolInteraction]] = [[] for _ in range(turns)]
    for call in trace.tool_interactions:
        if not counts(call.tool_name, question):
            continue
        turn = call.turn if call.turn is not None else 0 if turns == 1 else None
        if turn is None or turn >= turns:
            return "the run's tool calls are not attributed to its turns (ADK compares them turn by turn)"
        out[turn].append(call)
    return out


@register(
    TRAJECTORY,
    "higher",
    "ADK's metric: share of turns whose tool calls match the reference's (EXACT unless the criterion's match_type says "
    "IN_ORDER or ANY_ORDER), as google-adk computes it.",
)
def tool_trajectory_avg_score(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    expected = expected_turn_calls(question)
    if expected is None:
        why = (
            "no reference tool calls"
            if question.reference_data.reference_tool_interactions is None
            else "no per-turn reference tool calls from ADK's eval data (tool_usage_accuracy scores this reference)"
        )
        return unscored(why)
    actual = actual_turn_calls(question, trace)
    if isinstance(actual, str):
        return unscored(actual)
    if len(actual) != len(expected):
        return unscored(f"the run has {len(actual)} turn(s), the reference {len(expected)}: ADK cannot pair them")
    if not actual:
        return unscored("no turns to compare")
    criterion = ctx.criteria.get(TRAJECTORY)
    kind = match_type(criterion)
    ignore_args = bool((criterion or {}).get("ignore_args", (criterion or {}).get("ignoreArgs", False)))
    matcher = MATCHERS[kind]
    per_turn = []
    for calls, refs in zip(actual, expected, strict=True):
        got = [(c.tool_name, c.input_arguments) for c in calls]
        want = [(r.tool_name, r.input_arguments) for r in refs]
        per_turn.append(1.0 if matcher(got, want, ignore_args) else 0.0)
    matched = int(sum(per_turn))
    return scored(
        value=sum(per_turn) / len(per_turn),
        explanation=f"{matched} of {len(per_turn)} turn(s) match the reference tool calls ({kind}{', names only' if ignore_args else ''})",
        details={"match_type": kind, "ignore_args": ignore_args, "per_turn": per_turn},
    )


# ADK's _UnicodeAwareTokenizer (final_response_match_v1.py), with rouge-score's default
# tokenizer and Porter stemmer for ASCII words.
def _is_cjk(code: int) -> bool:
    return 0x4E00 <= code <= 0x9FFF or 0x3040 <= code <= 0x309F or 0x30A0 <= code <= 0x30FF or 0xAC00 <= code <= 0xD7AF


def _is_non_spaced_script(code: int) -> bool:
    return 0x0E00 <= code <= 0x0E7F or 0x0E80 <= code <= 0x0EFF or 0x1780 <= code <= 0x17FF or 0x1000 <= code <= 0x109F


def adk_tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).lower()
    if text.isascii():
        # Then each word is a run of [a-z0-9] (no script of its own, no mark) and rouge-score's
        # tokenizer splits the text into the same words and stems each as it stems one alone: one
        # call instead of a step of Python per character and a call per word.
        return rouge_tokens(text)
    chars: list[str] = []
    for char in text:
        code = ord(char)
        if _is_cjk(code):
            chars.extend((" ", char, " "))
        elif _is_non_spaced_script(code):
            if unicodedata.category(char).startswith("M"):
                chars.append(char)  # a combining mark stays with its base character
            else:
                chars.extend((" ", char))
        elif char.isalnum() or unicodedata.category(char).startswith("M"):
            chars.append(char)
        else:
            chars.append(" ")
    tokens: list[str] = []
    for word in "".join(chars).split():
        if word.isascii():
            tokens.extend(rouge_tokens(word))
        else:
            tokens.append(word)
    return tokens


@cache
def _rouge1() -> Any:
    modules = rouge()
    base: Any = modules.tokenizers.Tokenizer

    class AdkTokenizer(base):  # type: ignore[misc]
        def tokenize(self, text: str) -> list[str]:
            return adk_tokens(text)

    return modules.rouge_scorer.RougeScorer(["rouge1"], tokenizer=AdkTokenizer())


def rouge_1(reference: str, candidate: str) -> float:
    """ROUGE-1 F measure as ADK's RougeEvaluator computes it."""
    return float(_rouge1().score(reference, candidate)["rouge1"].fmeasure)


def _turn_texts(question: Question, trace: Trace) -> list[str] | str:
    """Each turn's final response as ADK's eval reads it: its text parts joined by newlines."""
    texts: list[str] = []
    for index, turn in enumerate(trace.turns):
        if turn.response_parts is not None:
            texts.append("\n".join(turn.response_parts))
        elif turn.response is not None:
            texts.append(turn.response)
        elif index == len(trace.turns) - 1 and trace.final_response is not None:
            texts.append(trace.final_response)
        else:
            return "the run's response to each turn was not recorded"
    if not texts and trace.final_response is not None and len(question.user_inputs) == 1:
        texts.append(trace.final_response)
    return texts


@register(
    RESPONSE,
    "higher",
    "ADK's metric: ROUGE-1 F of each turn's final response against the reference response (stemmed, ADK's tokenizer), "
    "mean over turns, as google-adk computes it.",
)
def response_match_score(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    ref = question.reference_data
    references = ref.turn_references
    # Where ADK itself scored the run without any expected response (an eval history), it scored
    # ROUGE against empty references: 0. Elsewhere no reference means unscored.
    adk_scored = f"score.{RESPONSE}" in trace.recorded_metrics or RESPONSE in trace.recorded_turn_scores
    if references is None or (not any(references) and not adk_scored):
        if not ref.reference_response:
            return unscored("no reference response")
        return unscored("no per-turn reference responses from ADK's eval data (response_match scores this reference)")
    texts = _turn_texts(question, trace)
    if isinstance(texts, str):
        return unscored(texts)
    if len(texts) != len(references):
        return unscored(f"the run has {len(texts)} turn(s), the reference {len(references)}: ADK cannot pair them")
    per_turn = [rouge_1(expected or "", got) for expected, got in zip(references, texts, strict=True)]
    empty = sum(1 for expected in references if not expected)
    note = f"; {empty} turn(s) without a reference score 0, as in ADK" if empty else ""
    return scored(
        value=sum(per_turn) / len(per_turn),
        explanation=f"mean ROUGE-1 F over {len(per_turn)} turn(s){note}",
        details={"per_turn": [round(v, 6) for v in per_turn]},
    )


COMPUTED = {TRAJECTORY: tool_trajectory_avg_score, RESPONSE: response_match_score}


@register(
    "adk_agreement",
    "higher",
    "Share of the scores ADK recorded for the run (eval history, score.* columns) of tool_trajectory_avg_score and "
    "response_match_score that ours reproduce, for the case and for each invocation ADK scored.",
    kind="trace",
)
def adk_agreement(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    compared: dict[str, dict[str, Any]] = {}
    uncomputed: list[str] = []
    for name, metric in COMPUTED.items():
        recorded = trace.recorded_metrics.get(f"score.{name}")
        recorded_turns = trace.recorded_turn_scores.get(name)
        if recorded is None and recorded_turns is None:
            continue
        ours = metric(question, trace, ctx)
        if ours.value is None:
            uncomputed.append(f"{name} ({ours.explanation})")
            continue
        entry: dict[str, Any] = {"adk": recorded, "ours": ours.value}
        differs = [] if recorded is None or abs(ours.value - recorded) < AGREEMENT_TOLERANCE else ["the case"]
        if recorded_turns is not None:
            ours_turns = ours.details.get("per_turn") or []
            entry["adk_per_turn"], entry["ours_per_turn"] = recorded_turns, ours_turns
            differs += [
                f"turn {turn + 1}"
                for turn, adk in enumerate(recorded_turns)
                if adk is not None and (turn >= len(ours_turns) or abs(ours_turns[turn] - adk) >= AGREEMENT_TOLERANCE)
            ]
        entry["agrees"] = not differs
        if differs and recorded_turns is not None:
            entry["differs"] = differs
        if differs and name == TRAJECTORY and any(c.tool_name == "transfer_to_agent" for c in trace.tool_interactions or ()):
            entry["note"] = "ADK counts every transfer_to_agent as a tool call; here it is an agent step unless the reference names it"
        compared[name] = entry
    if not compared:
        if uncomputed:
            return unscored(f"ADK recorded scores we could not compute: {'; '.join(uncomputed)}")
        return unscored("the source recorded no ADK score to compare with")
    agreeing = [name for name, entry in compared.items() if entry["agrees"]]
    differing = [_difference(name, entry) for name, entry in compared.items() if not entry["agrees"]]
    explanation = f"{len(agreeing)} of {len(compared)} recorded ADK score(s) reproduced" + (
        f"; differs: {', '.join(differing)}" if differing else ""
    )
    return scored(value=len(agreeing) / len(compared), explanation=explanation, details={"compared": compared, "not_computed": uncomputed})


def _difference(name: str, entry: dict[str, Any]) -> str:
    """Where ADK's recorded score and ours part: the case's mean, or the invocations (turns) that differ."""
    differs = entry.get("differs", ["the case"])
    if differs == ["the case"]:
        return f"{name} ADK {entry['adk']:.4g} vs ours {entry['ours']:.4g}"
    where = ", ".join(differs)
    turns = [int(part.split()[1]) - 1 for part in differs if part.startswith("turn ")]
    detail = "; ".join(
        f"turn {t + 1} ADK {entry['adk_per_turn'][t]:.4g} vs ours "
        + (f"{entry['ours_per_turn'][t]:.4g}" if t < len(entry["ours_per_turn"]) else "none")
        for t in turns
    )
    case = f"case ADK {entry['adk']:.4g} vs ours {entry['ours']:.4g}; " if "the case" in differs else ""
    return f"{name} ({where}: {case}{detail})"
