"""Bidirectional controls in agent text (the RTL override U+202E, which makes "exe.txt" read as
"txt.exe") are shown as escapes in every view: comment.md, summary.md, report.html, the terminal."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from agent_eval_action.text.markdown import BIDI_CONTROLS, escape_html, escape_md, show_controls
from tests.helpers.commands import cli
from tests.helpers.factories import Call, Run, runs, write_dataset
from tests.helpers.repos import commit, git, new_repo

RLO = "\u202e"
HOSTILE_RESULT = {"file": f"invoice{RLO}fdp.exe", "note": f"isolated \u2066text\u2069 and {RLO}reversed"}


def hostile(items: list[Run]) -> list[Run]:
    """The first run calls its tools with a wrong argument and gets a result holding U+202E."""
    run = items[0]
    turns = [
        [(agent, [Call(c.tool, {**c.args, "customer_id": f"9{RLO}99"}, HOSTILE_RESULT, c.error) for c in calls]) for agent, calls in turn]
        for turn in run.turns
    ]
    items[0] = dataclasses.replace(run, turns=turns, final_response=f"Done: {RLO}cod.exe", state={**run.state, "note": f"{RLO}evil"})
    return items


def test_a_tool_result_with_an_rtl_override_is_shown_escaped_everywhere(tmp_path: Path) -> None:
    dataset = "evaluation/datasets/cs_runs.csv"
    repo = new_repo(tmp_path / "repo", {"agent-eval.toml": 'datasets = ["evaluation/datasets/*.csv"]\n', dataset: runs(8)})
    commit(repo, "datasets")
    assert cli(repo, "baseline", "update").returncode == 0
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    write_dataset(repo / dataset, hostile(runs(8)))
    commit(repo, "a hostile tool result")
    summary = tmp_path / "summary.md"
    done = cli(repo, "run", "--base", "main", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 1, done.stdout + done.stderr
    out = repo / "agent-eval-results"
    views = {
        "terminal": done.stdout + done.stderr,
        "comment.md": (out / "comment.md").read_text(encoding="utf-8"),
        "summary.md": (out / "summary.md").read_text(encoding="utf-8"),
        "step summary": summary.read_text(encoding="utf-8"),
        "report.html": (out / "report.html").read_text(encoding="utf-8"),
    }
    for name, text in views.items():
        assert not any(chr(code) in text for code in BIDI_CONTROLS), name
        assert "\\u202e" in text, name  # shown, not dropped
    assert "fdp.exe" in views["report.html"] and "\\u2066" in views["report.html"]  # the tool result itself
    assert RLO in (out / "results.json").read_text(encoding="utf-8")  # the data keeps what the agent said


def test_every_bidi_control_is_escaped_by_every_filter() -> None:
    text = "".join(f"a{chr(code)}" for code in BIDI_CONTROLS)
    for escaped in (show_controls(text), escape_md(text), escape_html(text)):
        assert not any(chr(code) in escaped for code in BIDI_CONTROLS)
        assert escaped.count("u20") + escaped.count("u061c") == len(BIDI_CONTROLS)
    assert show_controls(f"x{RLO}y") == "x\\u202ey" and show_controls(show_controls(RLO)) == "\\u202e"
