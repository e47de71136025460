"""Publishing against a real HTTP server on 127.0.0.1 that behaves like the GitHub REST API."""

from __future__ import annotations

import io
import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from agent_eval_action.compare import compare_dataset
from agent_eval_action.config import GateConfig
from agent_eval_action.flow import metric_kinds
from agent_eval_action.gate import evaluate_gate
from agent_eval_action.github import GitHubClient
from agent_eval_action.loaders import LoadedDataset, Record
from agent_eval_action.metrics import MetricContext
from agent_eval_action.models import Question, ReferenceData, ReferenceToolCall, Results, ToolInteraction, Trace
from agent_eval_action.publish import GitHubContext, PublishSettings, publish
from agent_eval_action.render import Renderer, render_comment, view
from agent_eval_action.results_io import write_results
from agent_eval_action.scoring import Scorer, default_pass_thresholds
from tests.fakes.github_server import Failure, FakeGitHub

HOSTILE = "| bad | `tick` <script>alert(1)</script> @octocat fixes #123\nnew line ]](http://evil) **x**"
TOKEN = "ghs_test_token"
GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _records(n: int, broken: set[int], text: str = "ok") -> list[Record]:
    out = []
    for i in range(n):
        question = Question(
            id=f"q{i:02d}{text if i == 0 else ''}",
            user_inputs=["hi"],
            agents_evaluated=["app"],
            reference_data=ReferenceData(
                reference_tool_interactions=[ReferenceToolCall(tool_name="lookup", input_arguments={"q": text})],
                reference_state_variables={"note": text},
            ),
        )
        arg = "wrong" if i in broken else text
        trace = Trace(
            tool_interactions=[ToolInteraction(tool_name="lookup", input_arguments={"q": arg})],
            final_state={"note": arg},
            latency_s=1.0 + i / 10,
            latency_source="measured",
        )
        out.append(Record(question=question, trace=trace))
    out.append(Record(question=Question(id=f"crash {text}", user_inputs=["x"]), trace=Trace(error=f"RuntimeError: {text}")))
    return out


def sample_results(text: str = "ok", n: int = 12) -> Results:
    scorer = Scorer.for_names(
        ["tool_usage_accuracy", "state_management_fidelity", "latency"], MetricContext(), pass_thresholds=default_pass_thresholds({})
    )
    dataset = LoadedDataset(path="evaluation/datasets/cs_golden.json", name="cs_golden", format="golden", records=iter(()))
    before = scorer.score_dataset(dataset, _records(n, set(), text)[:-1])
    after = scorer.score_dataset(dataset, _records(n, set(range(0, n, 2)), text))
    comparison = compare_dataset(after, before, baseline_path="evaluation/baselines/cs_golden.json")
    gate = evaluate_gate([after], [comparison], GateConfig(), metric_kinds())
    return Results(tool_version="0.1.0", datasets=[after], comparison=[comparison], gate=gate)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    server = FakeGitHub(token=TOKEN)
    yield server
    server.close()


def context(server: FakeGitHub, tmp_path: Path, token: str | None = TOKEN) -> GitHubContext:
    return GitHubContext(
        in_actions=True, api_url=server.url, repository="o/r", event_name="pull_request", pr_number=7, sha="0123456789abcdef",
        run_url="https://github.com/o/r/actions/runs/42", token=token,
        output_path=str(tmp_path / "github_output"), summary_path=str(tmp_path / "step_summary"),
    )  # fmt: skip


def fast_client(api: str, token: str) -> GitHubClient:
    return GitHubClient(api, token, sleep=lambda s: None, backoff_s=0.0)


def do_publish(results: Results, server: FakeGitHub, tmp_path: Path, token: str | None = TOKEN, **settings: object) -> tuple[object, str]:
    out = io.StringIO()
    write_results(results, tmp_path / "out" / "results.json")
    published = publish(
        results,
        tmp_path / "out",
        PublishSettings(thresholds=default_pass_thresholds({}), **settings),
        context(server, tmp_path, token),
        client_factory=fast_client,
        out=out,
    )  # type: ignore[arg-type]
    return published, out.getvalue()


def outputs(tmp_path: Path) -> dict[str, str]:
    text = (tmp_path / "github_output").read_text()
    found = dict(re.findall(r"^([a-z-]+)<<(ghadelimiter_[0-9a-f]+)\n", text, re.M))
    values = {}
    for name, delimiter in found.items():
        values[name] = text.split(f"{name}<<{delimiter}\n", 1)[1].split(f"\n{delimiter}\n", 1)[0]
    return values


def test_sticky_comment_found_on_a_late_page_and_updated(github: FakeGitHub, tmp_path: Path) -> None:
    for i in range(150):
        github.add(7, f"someone else's comment {i}")
    ours = github.add(7, "<!-- agent-eval-action:default -->\nold results", author="github-actions[bot]")
    for i in range(20):
        github.add(7, f"later comment {i}")
    published, _ = do_publish(sample_results(), github, tmp_path)
    assert len(github.on(7)) == 171  # updated in place, nothing created
    assert "## ❌ Agent evaluation failed" in github.comments[ours["id"]]["body"]
    assert published.comment_url.endswith(f"#issuecomment-{ours['id']}")  # type: ignore[attr-defined]
    pages = [path for method, path, _ in github.log if method == "GET" and "/comments" in path]
    assert len(pages) == 2 and "page=2" in pages[1]
    assert [(path, status) for _, path, status in github.log if path == "/user"] == [("/user", 403)]  # an installation token
    assert outputs(tmp_path)["comment-url"] == published.comment_url  # type: ignore[attr-defined]


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
    assert published.comment_url and len(github.on(7)) == 1  # type: ignore[attr-defined]
    assert [status for _, _, status in github.log] == [502, 200, 429, 403, 201]


def test_403_on_writes_falls_back_to_a_file(github: FakeGitHub, tmp_path: Path) -> None:
    github.failures = [Failure("POST", 403, times=10)]
    published, printed = do_publish(sample_results(), github, tmp_path)
    assert published.comment_url is None  # type: ignore[attr-defined]
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


def test_422_too_long_shrinks_and_retries_once(github: FakeGitHub, tmp_path: Path) -> None:
    github.max_body = 2500
    published, printed = do_publish(sample_results(n=40), github, tmp_path)
    assert published.comment_url, printed  # type: ignore[attr-defined]
    (comment,) = github.on(7)
    assert len(comment["body"]) <= 2500 and "need a look" not in comment["body"]


def test_outputs_summary_annotations_and_junit(github: FakeGitHub, tmp_path: Path) -> None:
    dataset = tmp_path / "evaluation" / "datasets" / "cs_golden.json"
    dataset.parent.mkdir(parents=True)
    dataset.write_text(json.dumps({"golden_questions": [{"id": f"q{i:02d}ok" if i == 0 else f"q{i:02d}"} for i in range(12)]}, indent=2))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        _, printed = do_publish(sample_results(), github, tmp_path)
    finally:
        os.chdir(cwd)
    values = outputs(tmp_path)
    assert values["passed"] == "false" and values["results-json"].endswith("results.json")
    assert json.loads(values["deltas"])["cs_golden"]["tool_usage_accuracy"] == pytest.approx(-0.5)
    errors = [line for line in printed.splitlines() if line.startswith("::error ")]
    assert 0 < len(errors) <= 10
    assert (
        errors[0]
        == "::error file=evaluation/datasets/cs_golden.json,line=4,title=agent-eval regression::tool_usage_accuracy fell from 1 to 0 on question q00ok"
    )
    summary = (tmp_path / "step_summary").read_text()
    assert "Every metric, every dataset" in summary and len(summary.encode()) < 1_000_000
    suites = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    first = suites.find("testsuite")
    assert first is not None and first.get("name") == "cs_golden" and int(first.get("failures")) == 12 and first.get("errors") == "1"
    assert suites.findall("testsuite")[-1].get("name") == "gate"


def _table_rows(tokens: list) -> list[int]:  # type: ignore[type-arg]
    counts, cells = [], 0
    for token in tokens:
        if token.type == "tr_open":
            cells = 0
        elif token.type in ("td_open", "th_open"):
            cells += 1
        elif token.type == "tr_close":
            counts.append(cells)
    return counts


def test_hostile_agent_text_cannot_break_the_page(github: FakeGitHub, tmp_path: Path) -> None:
    results = sample_results(HOSTILE)
    comment = render_comment(Renderer(), view(results, thresholds=default_pass_thresholds({})))
    parser = MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(comment)
    rows = _table_rows(tokens)
    assert rows and len(set(rows)) == 1  # every row of every table has the same cells
    html = [t.content for t in tokens if t.type in ("html_block", "html_inline")]
    html += [c.content for t in tokens for c in t.children or [] if c.type == "html_inline"]
    assert not any("script" in h for h in html)
    inline = " ".join(c.content for t in tokens for c in t.children or [] if c.type == "text")
    assert "@octocat" not in inline and "#123" not in inline
    assert not any(c.type == "link_open" and "evil" in str(c.attrs) for t in tokens for c in t.children or [])
    assert not any(c.type == "code_inline" for t in tokens for c in t.children or [])


def test_size_limits(tmp_path: Path) -> None:
    results = sample_results("x" * 400, n=400)
    renderer = Renderer()
    page = view(results, thresholds=default_pass_thresholds({}))
    comment = render_comment(renderer, page, limit=20_000)
    assert len(comment) <= 20_000 and "<!-- agent-eval-action:default -->" in comment
    folded = render_comment(renderer, page, limit=3_000)
    assert len(folded) <= 3_000 and "need a look" not in folded and "was cut" not in folded
    cut = render_comment(renderer, page, limit=1_000)
    assert len(cut) <= 1_000 and "was cut at 1,000 characters" in cut and cut.startswith("<!-- agent-eval-action:default -->")


def test_rendered_comment_matches_the_golden_file() -> None:
    comment = render_comment(
        Renderer(),
        view(
            sample_results(),
            thresholds=default_pass_thresholds({}),
            sha="0123456789abcdef",
            run_url="https://github.com/o/r/actions/runs/42",
        ),
    )
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
    from agent_eval_action.errors import ConfigError

    with pytest.raises(ConfigError, match="lacks the marker"):
        render_comment(Renderer(str(tmp_path)), view(sample_results()))
    (tmp_path / "comment.md.j2").write_text("{{ marker }} {{ ''.__class__.__mro__ }}")
    with pytest.raises(ConfigError, match=r"SecurityError|unsafe"):
        render_comment(Renderer(str(tmp_path)), view(sample_results()))
