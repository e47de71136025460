"""Publishing against a real HTTP server on 127.0.0.1 that behaves like the GitHub REST API."""

from __future__ import annotations

import io
import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from agent_eval_action.config import GateConfig, MetricRule
from agent_eval_action.datasets import LoadedDataset, Record
from agent_eval_action.metrics import MetricContext, default_pass_thresholds
from agent_eval_action.models.questions import Question, ReferenceData, ReferenceToolCall, ToolInteraction, Turn
from agent_eval_action.models.results import Results
from agent_eval_action.models.traces import Trace
from agent_eval_action.publish.github import GitHubClient
from agent_eval_action.publish.publisher import Published, PublishSettings, publish
from agent_eval_action.repo.results_io import write_results
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.verdict.comparison import compare_dataset
from agent_eval_action.verdict.gate import evaluate_gate, metric_kinds, rules_of
from agent_eval_action.views.background import Background
from agent_eval_action.views.render import Renderer, render_comment, render_summary, view
from tests.fakes.github_server import Failure, FakeGitHub
from tests.helpers.browser import cmark_gfm, markdown_to_html, require
from tests.helpers.publishing import DATASET, TOKEN, context, outputs, sample, sample_results, sample_view

HOSTILE = "| bad | `tick` <script>alert(1)</script> @octocat fixes #123\nnew line ]](http://evil) **x**"
GOLDEN = Path(__file__).resolve().parents[1] / "golden"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    server = FakeGitHub(token=TOKEN)
    yield server
    server.close()


def fast_client(api: str, token: str) -> GitHubClient:
    return GitHubClient(api, token, sleep=lambda s: None, backoff_s=0.0)


def do_publish(
    results: Results, server: FakeGitHub, tmp_path: Path, token: str | None = TOKEN, comment_key: str = "default"
) -> tuple[Published, str]:
    out = io.StringIO()
    write_results(results, tmp_path / "out" / "results.json")
    published = publish(
        results,
        tmp_path / "out",
        PublishSettings(thresholds=default_pass_thresholds({}), comment_key=comment_key),
        context(server, tmp_path, token),
        client_factory=fast_client,
        out=out,
    )
    return published, out.getvalue()


def test_sticky_comment_found_on_a_late_page_and_updated(github: FakeGitHub, tmp_path: Path) -> None:
    for i in range(150):
        github.add(7, f"someone else's comment {i}")
    ours = github.add(7, "<!-- agent-eval-action:default -->\nold results", author="github-actions[bot]")
    for i in range(20):
        github.add(7, f"later comment {i}")
    published, _ = do_publish(sample_results(), github, tmp_path)
    assert len(github.on(7)) == 171  # updated in place, nothing created
    assert "## ❌ Agent evaluation failed" in github.comments[ours["id"]]["body"]
    assert published.comment_url is not None and published.comment_url.endswith(f"#issuecomment-{ours['id']}")
    pages = [path for method, path, _ in github.log if method == "GET" and "/comments" in path]
    assert len(pages) == 2 and "page=2" in pages[1]
    assert [(path, status) for _, path, status in github.log if path == "/user"] == [("/user", 403)]  # an installation token
    assert outputs(tmp_path)["comment-url"] == published.comment_url


def test_twice_on_the_same_pr_leaves_one_comment(github: FakeGitHub, tmp_path: Path) -> None:
    do_publish(sample_results(), github, tmp_path)
    do_publish(sample_results(), github, tmp_path)
    assert len(github.on(7)) == 1
    do_publish(sample_results(), github, tmp_path, comment_key="nightly")
    assert len(github.on(7)) == 2  # another key is another comment


def test_502_then_success_and_rate_limits(github: FakeGitHub, tmp_path: Path) -> None:
    github.failures = [
        Failure("GET", 502),
        Failure("POST", 429, {"retry-after": "0"}),
        Failure("POST", 403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "0"}),
    ]
    published, _ = do_publish(sample_results(), github, tmp_path)
    assert published.comment_url and len(github.on(7)) == 1
    assert [status for _, _, status in github.log] == [502, 200, 429, 403, 201]


def test_403_on_writes_falls_back_to_a_file(github: FakeGitHub, tmp_path: Path) -> None:
    github.failures = [Failure("POST", 403, times=10)]
    published, printed = do_publish(sample_results(), github, tmp_path)
    assert published.comment_url is None
    assert outputs(tmp_path)["comment-file"] == str(tmp_path / "out" / "comment.md")
    assert "<!-- agent-eval-action:default -->" in (tmp_path / "out" / "comment.md").read_text()
    assert "::warning::could not post the PR comment" in printed and "pull-requests: write" in printed
    assert outputs(tmp_path)["passed"] == "false"


def test_no_token_and_bad_token(github: FakeGitHub, tmp_path: Path) -> None:
    _, printed = do_publish(sample_results(), github, tmp_path, token=None)
    assert "no GitHub token" in printed and github.log == []
    _, printed = do_publish(sample_results(), github, tmp_path, token="ghs_wrong_secret_value")
    assert "HTTP 401" in printed and "pull-requests: write" in printed
    assert "ghs_wrong_secret_value" not in printed
    for file in (tmp_path / "out").iterdir():
        assert "ghs_wrong_secret_value" not in file.read_text() and TOKEN not in file.read_text()
    assert TOKEN not in (tmp_path / "github_output").read_text() and TOKEN not in (tmp_path / "step_summary").read_text()


def test_annotations_say_only_what_failed_the_check(github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error annotation says "this failed the check": none for questions the gate held within
    noise (a passed check has drops too: a flaky question's run); a warning at each question that
    scored lower when the gate failed on a rule naming no question (the dataset's pass rate)."""
    monkeypatch.chdir(tmp_path)
    results = sample_results()
    assert results.gate is not None and results.comparison is not None and any(m.drops for m in results.comparison[0].metrics)
    held = results.model_copy(deep=True)
    assert held.gate is not None
    held.gate.outcome, held.gate.failures = "passed", []
    _, printed = do_publish(held, github, tmp_path)
    assert not [line for line in printed.splitlines() if line.startswith(("::error ", "::warning file="))], printed
    whole = results.model_copy(deep=True)
    assert whole.gate is not None
    whole.gate.failures = [whole.gate.failures[0].model_copy(update={"question": None, "rule": "pass_rate"})]
    _, printed = do_publish(whole, github, tmp_path)
    warned = [line for line in printed.splitlines() if line.startswith("::warning file=")]
    assert warned and not [line for line in printed.splitlines() if line.startswith("::error ")], printed
    assert "scored lower on" in warned[0] and "one of the questions behind the dataset's fall" in warned[0]


def test_422_too_long_shrinks_and_retries_once(github: FakeGitHub, tmp_path: Path) -> None:
    github.max_body = 2500
    published, printed = do_publish(sample_results(n=40), github, tmp_path)
    assert published.comment_url, printed
    (comment,) = github.on(7)
    assert len(comment["body"]) <= 2500 and "need a look" not in comment["body"]


def test_outputs_summary_annotations_and_junit(github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = tmp_path / "evaluation" / "datasets" / "cs_golden.json"
    dataset.parent.mkdir(parents=True)
    dataset.write_text(json.dumps({"golden_questions": [{"id": f"q{i:02d}ok" if i == 0 else f"q{i:02d}"} for i in range(12)]}, indent=2))
    monkeypatch.chdir(tmp_path)  # the checkout the dataset's path is relative to (annotations read its lines)
    _, printed = do_publish(sample_results(), github, tmp_path)
    values = outputs(tmp_path)
    assert values["passed"] == "false" and values["results-json"].endswith("results.json")
    assert json.loads(values["deltas"])["evaluation/datasets/cs_golden.json"]["tool_usage_accuracy"] == pytest.approx(-0.5)
    errors = [line for line in printed.splitlines() if line.startswith("::error ")]
    assert 0 < len(errors) <= 10
    assert (
        errors[0] == "::error file=evaluation/datasets/cs_golden.json,line=4,title=agent-eval regression::"
        "question q00ok fell on state_management_fidelity, tool_usage_accuracy: 0 of 1 run passes, 1 of 1 on the base"
    )
    # One cause, one line of the file: each question is annotated once, with every metric it fell on.
    named = [line.split("::question ")[1].split(" fell on ")[0] for line in errors]
    assert len(named) == len(set(named))
    summary = (tmp_path / "step_summary").read_text()
    assert "Every metric, every dataset" in summary and len(summary.encode()) < 1_000_000
    suites = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    first = suites.find("testsuite")
    assert first is not None and first.get("name") == "cs_golden" and first.get("failures") == "12" and first.get("errors") == "1"
    assert suites.findall("testsuite")[-1].get("name") == "gate"


class RenderedComment(HTMLParser):
    """What GitHub shows of a comment: cmark-gfm's HTML read back into tables, visible text and tags."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tables: list[list[int]] = []
        self.tags: set[str] = set()
        self.links: list[str] = []
        self.text: list[str] = []
        self.summaries: list[str] = []
        self.headings: list[str] = []
        self._in: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self._in.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append(0)
        elif tag in ("td", "th"):
            self.tables[-1][-1] += 1
        elif tag == "a":
            self.links.append(dict(attrs).get("href") or "")
        elif tag == "summary":
            self.summaries.append("")
        elif tag in ("h2", "h3"):
            self.headings.append("")

    def handle_endtag(self, tag: str) -> None:
        while self._in and self._in.pop() != tag:
            pass

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if "summary" in self._in:
            self.summaries[-1] += data
        if "h2" in self._in or "h3" in self._in:
            self.headings[-1] += data


def rendered(comment: str) -> RenderedComment:
    binary = require("cmark-gfm", cmark_gfm(), "rendering the comment as GitHub does")
    return RenderedComment(markdown_to_html(comment, binary))


# A backslash before ASCII punctuation, or an HTML entity, left in the visible text: an escape
# that did not apply (markdown escapes inside an HTML tag, an entity escaped twice).
ARTEFACT = re.compile(r"\\[!-/:-@\[-`{-~]|&(?:[a-z]+|#\d+|#x[0-9a-f]+);", re.I)
ALLOWED_TAGS = {"h2", "h3", "p", "ul", "li", "strong", "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "sub", "a"}


def test_hostile_agent_text_cannot_break_the_comment() -> None:
    """Agent text with pipes, HTML, pings, links and newlines, rendered by GitHub's renderer."""
    comment = render_comment(Renderer(), sample_view(HOSTILE))
    page = rendered(comment)
    assert len(page.tables) == 3  # what moved, unchanged metrics, one side-by-side table (the six questions differ alike)
    for rows in page.tables:
        assert len(set(rows)) == 1, rows  # every row of a table has as many cells as its header
    assert page.tags <= ALLOWED_TAGS, page.tags - ALLOWED_TAGS  # no <script>, no <img>, no agent markup
    assert page.links == ["https://github.com/o/r/actions/runs/42#artifacts", "https://github.com/o/r/actions/runs/42"]  # ours only
    visible = "".join(page.text)
    assert not ARTEFACT.search(visible), ARTEFACT.search(visible)
    assert "<script>alert(1)</script>" in visible  # shown as text, exactly
    assert "@octocat" not in visible and "#123" not in visible  # no pings, no issue links
    assert "@\u200boctocat" in visible and "#\u200b123" in visible
    summary = rendered(render_summary(Renderer(), sample_view(HOSTILE)))  # the comment plus every metric of every dataset
    assert len(summary.tables) == 4 and all(len(set(rows)) == 1 for rows in summary.tables)
    assert summary.tags <= ALLOWED_TAGS and not ARTEFACT.search("".join(summary.text))


def test_comment_shows_no_escape_artefacts_where_github_renders_html() -> None:
    """Inside <summary> markdown escapes do not apply: names with underscores must read as written."""
    comment = render_comment(Renderer(), sample_view())
    page = rendered(comment)
    visible = "".join(page.text)
    assert not ARTEFACT.search(visible), ARTEFACT.search(visible)
    assert page.summaries == [
        "1 metric unchanged",
        "6 questions in cs_golden got worse than on the base branch",
        "1 question needs a look in cs_golden (added by this change: no base to compare with)",
    ]  # no notes: the means' max_regression is decided question by question, and said there
    assert page.headings == [
        "❌ Agent evaluation failed: 6 of 13 questions no longer make the expected tool calls (and 1 more reason)",
        "cs_golden",
    ]
    for rows in page.tables:
        assert len(set(rows)) == 1, rows


def test_what_moved_marks_and_words() -> None:
    """🔴 for a row that fails the gate, with the rule in words; the trend ends at this PR's value."""
    comment = render_comment(Renderer(), sample_view())
    assert (
        "| 🔴 | tool\\_usage\\_accuracy | 100% | 50% | 12 | −50\u00a0pts | [−75\u00a0pts, −25\u00a0pts] | ▇██→▅ | fails the gate: as the row above |"
    ) in comment
    assert "| 🔴 | state\\_management\\_fidelity | 100% | 50% |" in comment and "| █·█→▅ |" in comment
    assert "| latency | 1.55\u00a0s | 1.55\u00a0s | 12 |  | 0 |" in comment  # unchanged, no rule: no trend


def test_size_limits(tmp_path: Path) -> None:
    page = sample_view("x" * 400, n=400, distinct=True)
    renderer = Renderer()
    full = render_comment(renderer, page, limit=10_000_000)
    assert len(full) > 20_000 and "got worse than on the base branch" in full
    comment = render_comment(renderer, page, limit=20_000)
    assert len(comment) <= 20_000 and "<!-- agent-eval-action:default -->" in comment
    assert "got worse than on the base branch</summary>" not in comment and "details folded away to fit" in comment
    assert "was cut" not in comment
    cut = render_comment(renderer, page, limit=1_000)
    assert len(cut) <= 1_000 and "was cut at 1,000 characters" in cut and cut.startswith("<!-- agent-eval-action:default -->")


def test_rendered_comment_matches_the_golden_file() -> None:
    comment = render_comment(Renderer(), sample_view())
    golden = GOLDEN / "comment.md"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(comment)
    assert comment == golden.read_text()


@pytest.mark.usefixtures("in_tmp")  # templates_dir must lie inside the working directory
def test_user_template_extends_the_builtin(tmp_path: Path) -> None:
    (tmp_path / "comment.md.j2").write_text('{% extends "builtin/comment.md.j2" %}{% block footer %}\nCustom footer{% endblock %}')
    comment = render_comment(Renderer(str(tmp_path)), view(sample_results()))
    assert comment.rstrip().endswith("Custom footer") and "## ❌ Agent evaluation failed" in comment
    (tmp_path / "comment.md.j2").write_text("no marker here")
    from agent_eval_action.system.errors import ConfigError

    with pytest.raises(ConfigError, match="lacks the marker"):
        render_comment(Renderer(str(tmp_path)), view(sample_results()))
    (tmp_path / "comment.md.j2").write_text("{{ marker }} {{ ''.__class__.__mro__ }}")
    with pytest.raises(ConfigError, match=r"SecurityError|unsafe"):
        render_comment(Renderer(str(tmp_path)), view(sample_results()))


def test_our_templates_render_the_same_out_of_the_sandbox_that_a_repositorys_templates_render_in() -> None:
    """Without a templates-dir only our templates render, outside Jinja's sandbox (its check of each
    attribute read was a quarter of the rendering): the very text the sandbox gives them."""
    from agent_eval_action.views.render import render_summary

    own, sandboxed = Renderer(), Renderer(sandboxed=True)
    assert type(own.env).__name__ == "Environment" and type(sandboxed.env).__name__ == "SandboxedEnvironment"
    for shown in (sample_view(), sample_view(HOSTILE), sample_view(distinct=True)):
        assert render_comment(own, shown) == render_comment(sandboxed, shown)
        assert render_summary(own, shown) == render_summary(sandboxed, shown)


def _timed(latency: float) -> list[Record]:
    """Eight questions answered right, every turn taking ``latency`` seconds (plus a little per question)."""
    out = []
    for i in range(8):
        question = Question(
            id=f"q{i}",
            user_inputs=["hi"],
            reference_data=ReferenceData(reference_tool_interactions=[ReferenceToolCall(tool_name="lookup", input_arguments={"q": "ok"})]),
        )
        seconds = latency + i / 1000
        trace = Trace(
            turns=[Turn(user_input="hi", response="Found ok", duration_s=seconds)],
            final_response="Found ok",
            tool_interactions=[ToolInteraction(tool_name="lookup", input_arguments={"q": "ok"}, output_result={"found": True})],
            latency_s=seconds,
            latency_source="measured",
        )
        out.append(Record(question=question, trace=trace))
    return out


def test_a_pr_that_changes_only_the_machine_shows_no_alarm_on_github() -> None:
    """The baseline was written on a machine that answered in 0.16 s, this run took 0.57 s on
    another: no ⚠️ row as GitHub renders the comment; the timings are folded, for information."""
    scorer = Scorer.for_names(
        ["tool_usage_accuracy", "latency", "turn_latency"], MetricContext(), pass_thresholds=default_pass_thresholds({})
    )
    dataset = LoadedDataset(path=DATASET, name="cs_golden", format="golden", records=iter(()))
    before, after = scorer.score_dataset(dataset, _timed(0.16)), scorer.score_dataset(dataset, _timed(0.57))
    comparison = compare_dataset(after, before, baseline_path="evaluation/baselines/cs_golden.json")

    def comment(gate_config: GateConfig) -> str:
        gate = evaluate_gate([after], [comparison], gate_config, metric_kinds())
        results = Results(tool_version="0.1.0", datasets=[after], comparison=[comparison], gate=gate)
        background = Background(
            base_label="merge-base 1a2b3c4", base_runs={DATASET: before}, rules=rules_of(results, gate_config, metric_kinds())
        )
        return render_comment(Renderer(), view(results, thresholds=default_pass_thresholds({}), background=background))

    page = rendered(comment(GateConfig()))
    visible = "".join(page.text)
    assert page.headings[0] == "✅ Agent evaluation passed: 1 gated metric held on 8 questions"
    assert "⚠️" not in visible and "🔴" not in visible and "worse" not in visible
    assert "Nothing moved." in visible
    assert page.summaries == ["1 metric unchanged, 2 timings for information"]
    assert "ℹ️ latency0.16\u00a0s0.57\u00a0s8" in visible.replace("\n", "") and "ℹ️ turn_latency" in visible
    assert "latency, turn_latency: timings, measured on whatever machine ran each side" in visible
    for rows in page.tables:
        assert len(set(rows)) == 1, rows
    # A rule that names latency compares it: a 3.5x slowdown fails it.
    gated = rendered(comment(GateConfig(metrics={"latency": MetricRule(max_regression="20%")})))
    assert gated.headings[0].startswith("❌ Agent evaluation failed: latency rose")
    assert "🔴latency0.16\u00a0s0.57\u00a0s8" in "".join(gated.text).replace("\n", "").replace(" ", "")


def test_one_question_and_one_run_read_in_the_singular_on_github() -> None:
    _, one = sample(n=1)  # the base side: one question, one run
    twice = one.model_copy(update={"questions": [*one.questions, one.questions[0].model_copy(update={"run": 1})]})
    for current, words in ((one, "1 question, compared with merge-base 1a2b3c4."), (twice, "1 question, 2 runs, compared with")):
        comparison = compare_dataset(current, one, baseline_path="evaluation/baselines/cs_golden.json")
        results = Results(tool_version="0.1.0", datasets=[current], comparison=[comparison])
        page = rendered(render_comment(Renderer(), view(results, background=Background(base_label="merge-base 1a2b3c4"))))
        visible = "".join(page.text)
        assert words in visible and "1 questions" not in visible and "1 runs" not in visible, visible
