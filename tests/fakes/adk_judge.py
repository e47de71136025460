"""A judge model for ADK's judged criteria, for :class:`tests.fakes.gemini_server.FakeGemini`:
it answers ADK's judge prompts (final_response_match_v2, the rubric-based ones, the two steps of
hallucinations_v1) in the form ADK parses, from what the prompt says, never from who asks.

- ``final_response_match_v2``: valid when every number of the reference is in the agent's
  response (and a reference without numbers shares a word with it). A reference that says
  "about" makes the judge unsure: valid on 2 of every 5 identical requests, so ADK's majority of
  5 samples says invalid; a response that says "Hello" is valid on 3 of every 5.
- The rubrics: a property that quotes a word ('shipped') is met when the judged text (the final
  answer, the tool calls, the conversation) says it; one without a quote always is.
- hallucinations_v1: the segmenter splits on ". " and "? "; the validator calls a sentence
  ``supported`` when each of its numbers is in the context (tool calls' random ids left out),
  ``contradictory`` when one is not, ``not_applicable`` when it has none.

Identical requests are counted (``asked``) by what decides their answer, so a run that sends
the same request five times gets the same five answers in any order; ``reset`` forgets them.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter

NUMBER = re.compile(r"\d+(?:\.\d+)?")
IDS = re.compile(r'"id":\s*"[^"]*"')


def _last(text: str, tag: str) -> str:
    """The last ``<tag>...</tag>`` block (ADK's prompts show an example before the real one)."""
    end = text.rfind(f"</{tag}>")
    start = text.rfind(f"<{tag}>", 0, end)
    return text[start + len(tag) + 2 : end] if start >= 0 else ""


class AdkJudge:
    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()
        self.lock = threading.Lock()

    def reset(self) -> None:
        with self.lock:
            self.asked.clear()

    def _nth(self, key: str) -> int:
        with self.lock:
            self.asked[key] += 1
            return self.asked[key] - 1

    def __call__(self, prompt: str) -> str:
        if "is_the_agent_response_valid" in prompt:
            return self._match(prompt)
        if "**Response Begin**" in prompt:
            return self._segment(prompt)
        if "**Sentences Begin**" in prompt:
            return self._validate(prompt)
        if "<properties>" in prompt:
            return self._rubrics(prompt)
        return "I cannot rate this."

    def _match(self, prompt: str) -> str:
        found = re.search(
            r'"Agent response": (.*?),\n\s*"Reference response": (.*?),\n\}', prompt[prompt.rindex("Below are the inputs") :], re.DOTALL
        )
        response, reference = (found.group(1), found.group(2)) if found else ("", "")
        numbers = NUMBER.findall(reference)
        valid = all(n in NUMBER.findall(response) for n in numbers) and bool(reference.strip())
        if not numbers:
            valid = valid and bool(set(re.findall(r"\w+", reference.lower())) & set(re.findall(r"\w+", response.lower())))
        reasoning = f"the reference says {reference.strip()!r}; the agent said {response.strip()!r}"
        k = self._nth(f"match|{response}|{reference}") % 5
        if "about" in reference:
            valid, reasoning = k < 2, "unsure whether an approximate price matches"
        elif "Hello" in response:
            valid, reasoning = k < 3, "a greeting, mostly taken as matching"
        label = "valid" if valid else "invalid"
        return json.dumps({"reasoning": reasoning, "is_the_agent_response_valid": label}, indent=2)

    def _rubrics(self, prompt: str) -> str:
        block = _last(prompt, "properties")
        judged = _last(prompt, "final_answer") or _last(prompt, "conversation_history") or _last(prompt, "response")
        rubrics: list[tuple[str, str]] = []
        if block.strip().startswith("["):
            rubrics = [(str(r["id"]), str(r["property"])) for r in json.loads(block)]
        else:
            rubrics = re.findall(r"^\*\s+\[id: (.*?)\] (.*)$", block, re.MULTILINE)
        out = []
        for rubric_id, prop in rubrics:
            quoted = re.search(r"'([^']+)'", prop)
            met = quoted is None or quoted.group(1).lower() in judged.lower()
            why = f"the text {'says' if met else 'does not say'} {quoted.group(1)!r}" if quoted else "nothing to check"
            out.append(
                f"ID: {rubric_id}\nProperty: {prop}\nEvidence: the text judged\nRationale: {why}\nVerdict: {'yes' if met else 'no'}\n"
            )
        return "\n".join(out)

    def _segment(self, prompt: str) -> str:
        response = prompt.split("**Response Begin**")[-1].split("**Response End**")[0].strip()
        sentences = [s.strip() for s in re.split(r"(?<=[.?!])\s+", response) if s.strip()]
        return "\n".join(f"<sentence>{s}</sentence>" for s in sentences)

    def _validate(self, prompt: str) -> str:
        context = prompt.split("**Context Begin**")[-1].split("**Context End**")[0]
        # A tool call's id ("adk-" and a random UUID) is no fact: its digits ("…-99a…") made a
        # sentence saying 99 supported in one run and contradicted in the next.
        context = IDS.sub("", context)
        sentences = re.findall(r"<sentence>(.*?)</sentence>", prompt.split("**Sentences Begin**")[-1], re.DOTALL)
        have = set(NUMBER.findall(context))
        out = []
        for sentence in sentences:
            numbers = NUMBER.findall(sentence)
            label = "not_applicable" if not numbers else "supported" if set(numbers) <= have else "contradictory"
            out.append(
                f"sentence: {sentence}\nlabel: {label}\nrationale: numbers {numbers} against the context\n"
                f"supporting_excerpt: null\ncontradicting_excerpt: null"
            )
        return "\n".join(out)
