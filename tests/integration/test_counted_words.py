"""Every counted thing read with 0, 1 and 2 of it: the terminal, the comment, the step summary,
report.html and JUnit, rendered from real results through the real templates, and the dataset
loader's warnings. Seen: "1 question pass less often", "45 question runs reused from the
baseline, 2 run", "1 question still hold TODO placeholders"."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from agent_eval_action import compare
from agent_eval_action.datasets import LoadedDataset
from agent_eval_action.datasets.golden import load_golden
from agent_eval_action.metrics import MetricContext
from agent_eval_action.metrics.registry import default_pass_thresholds
from agent_eval_action.models.results import QuestionResult, Results
from agent_eval_action.models.scores import Score
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.text.markdown import plural
from agent_eval_action.views.background import Background
from agent_eval_action.views.junit import write_junit
from agent_eval_action.views.page import build
from agent_eval_action.views.render import Renderer, view
from agent_eval_action.views.report import render_report
from agent_eval_action.views.terminal import render

PATH = "evaluation/datasets/cs.json"
METRICS = ["tool_usage_accuracy", "state_management_fidelity"]
SCORER = Scorer.for_names(METRICS, MetricContext(), pass_thresholds=default_pass_thresholds({}))
NOUNS = r"(question run|question|run|metric|error|dataset|reason|model call|time)"
VERBS_ONE = r"(passes|holds|needs|ends|makes|fails|was|is)"
VERBS_MANY = r"(pass|hold|need|end|make|fail|were|are)"


def side(questions: list[QuestionResult], reused: int = 0) -> Results:
    dataset = SCORER.summarize(LoadedDataset(path=PATH, name="cs", format="golden", records=iter(())), questions)
    dataset.reused = reused
    return Results(datasets=[dataset])


def runs(qid: str, count: int, value: float = 1.0, **fields: object) -> list[QuestionResult]:
    return [QuestionResult(id=qid, run=k, scores={m: Score(value=value) for m in METRICS}, **fields) for k in range(count)]  # type: ignore[arg-type]


def scenario(count: int) -> tuple[Results, Results]:
    """``count`` of each thing: questions that fall, errors, reused and skipped runs, questions
    added and removed, questions that pass on both sides, failing on both sides."""
    base: list[QuestionResult] = []
    head: list[QuestionResult] = []
    for i in range(3):  # held
        base += runs(f"held{i}", 5)
        head += runs(f"held{i}", 1)
    for i in range(count):
        base += runs(f"fell{i}", 5)
        head += runs(f"fell{i}", 10, value=0.0)  # re-run to the cap: the test decides
        base += runs(f"gone{i}", 5)
        head += runs(f"new{i}", 1, value=0.0)
        base += runs(f"err{i}", 5)
        head.append(QuestionResult(id=f"err{i}", status="error", error="KeyError: 'portfolio'"))
        base += runs(f"known{i}", 5, value=0.5)
        head += runs(f"known{i}", 1, value=0.5)
        head += runs(f"kept{i}", 1, reused=True)
        base += runs(f"kept{i}", 5)
        head.append(QuestionResult(id=f"skip{i}", status="skipped", skip_reason="the agent budget was reached"))
        base += runs(f"skip{i}", 5)
    return side(head, reused=count), side(base)


def said(count: int, tmp_path: Path) -> str:
    head, base = scenario(count)
    results = compare(head, base)
    page = build(results, background=Background(base_runs={PATH: base.datasets[0]}))
    renderer = Renderer()
    junit = ET.parse(write_junit(page, tmp_path / "junit.xml")).getroot()
    failures = " ".join(f.get("message") or "" for f in junit.iter("failure"))
    html = re.sub(r"<[^>]+>", " ", render_report(page))
    texts = [
        render(page),
        renderer.render("comment.md.j2", view(page)).replace("\\", ""),
        renderer.render("summary.md.j2", view(page)).replace("\\", ""),
        html,
        failures,
    ]
    return "\n".join(texts)


def disagreements(text: str) -> list[str]:
    """Counts whose noun or verb disagrees with the number: "1 questions", "2 question", "1 question pass"."""
    # "1 of 10 questions passes", "0 of 1 run passes": the noun agrees with the second number;
    # which number the verb agrees with is a matter of taste, not checked.
    found = re.findall(r"\bof 1 (?:question|run)s\b", text)
    found += [m.group(0) for m in re.finditer(r"\bof (?:[02-9]|\d\d+) (?:question|run)\b(?!s)", text)]
    text = re.sub(r"\b\d+ of \d+ (?:question run|question|run)s?(?: \w+)?", "", text)
    found += re.findall(rf"\b1 {NOUNS}s\b", text)
    found += [m.group(0) for m in re.finditer(rf"\b(0|[2-9]|\d\d+) {NOUNS}\b(?!s| run)", text)]
    found += [m.group(0) for m in re.finditer(rf"\b1 {NOUNS} {VERBS_MANY}\b", text)]
    found += [m.group(0) for m in re.finditer(rf"\b(0|[2-9]|\d\d+) {NOUNS}s {VERBS_ONE}\b", text)]
    return [str(f) for f in found]


@pytest.mark.parametrize("count", [0, 1, 2])
def test_every_view_counts_in_words_that_agree(count: int, tmp_path: Path) -> None:
    text = said(count, tmp_path)
    assert disagreements(text) == []
    if count:
        runs_ran = 3 + count * (10 + 1 + 1 + 1)  # held, and each fell (10), new, known, err
        assert f"{count} question run{'s' if count != 1 else ''} reused from the baseline, {runs_ran} ran" in text
        # A question this change adds has no base to be "no worse than".
        assert f"need a look in cs (no worse than on the base branch; {count} of them added by this change)" in text
        assert " ".join(
            ["failing,", "added", "by", "this", "change", "(no", "base", "to", "compare", "with):", "new0", "(tool_usage_accuracy,"]
        ) in " ".join(text.split())
        whose = f"{plural(count, 'question')} (known0{', known1' if count == 2 else ''})"
        assert f"tool_usage_accuracy, state_management_fidelity below their thresholds on the base too: {whose}" in text


def test_the_checker_finds_what_was_seen() -> None:
    for seen in ("1 question pass less often", "45 question runs reused, 1 questions", "1 question still hold TODO placeholders"):
        assert disagreements(seen.replace("still ", "")) != [], seen
    assert disagreements("1 of 10 questions passes less often; 2 of 10 questions pass; 1 question run needs a look") == []


@pytest.mark.parametrize("count", [0, 1, 2])
def test_the_loaders_warning_on_drafts_agrees(count: int, tmp_path: Path) -> None:
    questions = [
        {"id": f"q{i}", "user_inputs": ["TODO: the user's words"], "agents_evaluated": ["a"], "reference_data": {}} for i in range(count)
    ]
    questions.append({"id": "done", "user_inputs": ["hello"], "agents_evaluated": ["a"], "reference_data": {}})
    path = tmp_path / "d_golden.json"
    text = json.dumps({"golden_questions": questions})
    path.write_text(text)
    loaded = load_golden(str(path), json.loads(text), text)
    list(loaded.records)
    drafts = [w for w in loaded.warnings if "TODO" in w]
    assert len(drafts) == (1 if count else 0)
    if count:
        verb = "holds" if count == 1 else "hold"
        assert f"{count} question{'s' if count != 1 else ''} still {verb} TODO placeholders" in drafts[0]
