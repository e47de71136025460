"""Publishing a run: files in the output directory, the sticky PR comment, the step summary,
outputs and annotations. A publishing failure never loses results nor changes the exit code."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from agent_eval_action.models.results import Results
from agent_eval_action.models.verdicts import GateFailure
from agent_eval_action.publish.github import Comment, GitHubClient, GitHubError
from agent_eval_action.repo.results_io import redacted
from agent_eval_action.system.errors import ConfigError
from agent_eval_action.system.files import write_atomic
from agent_eval_action.text.markdown import untrusted_markdown
from agent_eval_action.text.redaction import Redactor
from agent_eval_action.text.workflow import Command, annotation, append_summary, command, in_actions, set_outputs
from agent_eval_action.views.background import Background
from agent_eval_action.views.junit import write_junit
from agent_eval_action.views.page import Page, build
from agent_eval_action.views.render import COMMENT_LIMIT, Renderer, marker, render_comment, render_summary, view
from agent_eval_action.views.report import write_report

MAX_ANNOTATIONS = 10
PERMISSION_HINT = "the workflow token needs `pull-requests: write` (fork PRs never get it: post comment.md from a `workflow_run` job)"


@dataclass(frozen=True)
class GitHubContext:
    """What the runner tells us through GITHUB_* variables."""

    in_actions: bool = False
    api_url: str = "https://api.github.com"
    repository: str | None = None
    event_name: str | None = None
    pr_number: int | None = None
    sha: str | None = None
    run_url: str | None = None
    token: str | None = field(default=None, repr=False)
    output_path: str | None = None
    summary_path: str | None = None
    # The repository's default branch, from the event payload (baselines are written only there).
    default_branch: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str], token: str | None = None) -> GitHubContext:
        event = read_event(env)
        pr = event.get("pull_request") if isinstance(event.get("pull_request"), dict) else None
        repository = event.get("repository")
        default_branch = repository.get("default_branch") if isinstance(repository, dict) else None
        number = pr.get("number") if isinstance(pr, dict) else None
        head = pr.get("head") if isinstance(pr, dict) else None
        sha = head.get("sha") if isinstance(head, dict) else None
        server, repo, run_id = env.get("GITHUB_SERVER_URL", "https://github.com"), env.get("GITHUB_REPOSITORY"), env.get("GITHUB_RUN_ID")
        return cls(
            in_actions=in_actions(env),
            api_url=env.get("GITHUB_API_URL") or "https://api.github.com",
            repository=repo,
            event_name=env.get("GITHUB_EVENT_NAME"),
            pr_number=int(number) if isinstance(number, int) else None,
            sha=str(sha) if sha else env.get("GITHUB_SHA"),
            run_url=f"{server}/{repo}/actions/runs/{run_id}" if repo and run_id else None,
            token=token if token is not None else (env.get("GITHUB_TOKEN") or env.get("INPUT_GITHUB-TOKEN") or None),
            output_path=env.get("GITHUB_OUTPUT"),
            summary_path=env.get("GITHUB_STEP_SUMMARY"),
            default_branch=str(default_branch) if default_branch else None,
        )


def read_event(env: Mapping[str, str]) -> dict[str, object]:
    """The event payload the runner wrote to ``$GITHUB_EVENT_PATH`` ({} when absent or unreadable)."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return {}
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return {}
    return event if isinstance(event, dict) else {}


@dataclass(kw_only=True)
class PublishSettings:
    comment: bool = True
    comment_key: str = "default"
    templates_dir: str | None = None
    thresholds: dict[str, float] = field(default_factory=dict)
    # The repository root: dataset paths in results are relative to it (annotations read the files there).
    root: Path = field(default_factory=Path.cwd)


@dataclass
class Published:
    comment_url: str | None = None
    comment_file: str | None = None
    warnings: list[str] = field(default_factory=list)
    # A view the output directory could not take (a full disk): "report.html: [Errno 28] ...".
    # The caller then empties the folder of this run's files: never one run's beside another's.
    unwritten: str | None = None


def publish(
    results: Results,
    output_dir: Path,
    settings: PublishSettings,
    context: GitHubContext,
    *,
    client_factory: Callable[[str, str], GitHubClient] = lambda api, token: GitHubClient(api, token),
    out: TextIO = sys.stdout,
    redactor: Redactor | None = None,
    background: Background | None = None,
    built: Page | None = None,
) -> Published:
    """Every file, comment, summary, output and annotation is made from a redacted copy of the
    results (``redactor`` defaults to this process's environment), and redacted once more as text.
    ``background``: what the base branch knows (base runs, metric history, gate rules) for the
    comment's side-by-side rows and trends, and for report.html. ``built``: the page, when the
    caller built it already from ``redacted(results, redactor)`` (else it is built here, once)."""
    redactor = redactor if redactor is not None else Redactor.from_env(os.environ)
    results = redacted(results, redactor)
    if built is None or not built.shows(results):
        built = build(results, thresholds=settings.thresholds, background=background)
    renderer = Renderer(settings.templates_dir)
    page = view(built, key=settings.comment_key, sha=context.sha, run_url=context.run_url)
    comment = redactor.text(render_comment(renderer, page))
    summary = redactor.text(render_summary(renderer, page))
    comment_file = output_dir / "comment.md"
    published = Published(comment_file=str(comment_file))
    writes: list[tuple[str, Callable[[], object]]] = [
        ("comment.md", lambda: write_atomic(comment_file, comment)),
        ("summary.md", lambda: write_atomic(output_dir / "summary.md", summary)),
        ("junit.xml", lambda: write_junit(built, output_dir / "junit.xml")),
        ("report.html", lambda: write_report(built, output_dir / "report.html", sha=context.sha, run_url=context.run_url)),
    ]
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        for name, write in writes:
            try:
                write()
            except OSError as error:
                published.unwritten = f"{name}: {error}"
                break
    except OSError as error:
        published.unwritten = f"{output_dir}: {error}"
    try:
        append_summary(context.summary_path, summary, redactor)
    except OSError as error:
        published.warnings.append(f"could not write the step summary: {error}")
    if settings.comment and context.pr_number is not None and context.repository:
        _post(comment, page, renderer, settings, context, client_factory, published, redactor)
    for note in _annotations(results, settings.root):
        command(out, note, actions=context.in_actions, redactor=redactor)
    for warning in published.warnings:
        command(out, annotation("warning", warning), actions=context.in_actions, redactor=redactor)
    outputs = {
        "passed": "true" if results.gate is None or results.gate.passed else "false",
        # passed | failed | inconclusive | unchecked (could not be checked): the outcome in one word.
        "verdict": results.gate.outcome if results.gate is not None else "passed",
        "results-json": str(output_dir / "results.json"),
        "deltas": json.dumps(_deltas(results), sort_keys=True),
    }
    if published.comment_url:
        outputs["comment-url"] = published.comment_url
    else:
        outputs["comment-file"] = str(comment_file)
    try:
        set_outputs(context.output_path, outputs, redactor)
    except OSError as error:
        command(out, annotation("warning", f"could not write outputs: {error}"), actions=context.in_actions, redactor=redactor)
    return published


def _post(
    comment: str,
    page: dict[str, object],
    renderer: Renderer,
    settings: PublishSettings,
    context: GitHubContext,
    client_factory: Callable[[str, str], GitHubClient],
    published: Published,
    redactor: Redactor,
) -> None:
    assert context.repository is not None and context.pr_number is not None
    if not context.token:
        published.warnings.append(f"no GitHub token: the comment was written to {published.comment_file}; {PERMISSION_HINT}")
        return
    client = client_factory(context.api_url, context.token)
    marker = str(page["marker"])
    try:
        try:
            posted = client.upsert_comment(context.repository, context.pr_number, marker, comment)
        except GitHubError as error:
            if error.status != 422:
                raise
            # Too long for GitHub after all (it counts differently): fold details, then try once more.
            smaller = redactor.text(render_comment(renderer, {**page, "show_details": False}, limit=COMMENT_LIMIT // 2))
            posted = client.upsert_comment(context.repository, context.pr_number, marker, smaller)
        published.comment_url = posted.url
    except GitHubError as error:
        hint = PERMISSION_HINT if error.status in (401, 403, 404) else "the results are in the step summary and results.json"
        published.warnings.append(f"could not post the PR comment ({error}); it was written to {published.comment_file}; {hint}")


def _deltas(results: Results) -> dict[str, dict[str, float | None]]:
    """Dataset -> metric -> delta, each dataset by its repository path (what its baseline is kept
    under): ``a/cs.jsonl`` and ``b/cs.jsonl`` share a name, never a path."""
    return {c.path: {m.metric: m.delta for m in c.metrics} for c in results.comparison or []}


def _annotations(results: Results, root: Path) -> list[Command]:
    """An annotation at the line of each question that fell (at most ten); ``file=`` is the
    repository-relative path GitHub expects. An error at each question the gate failed on, with
    every metric it fell on; where the gate failed on a rule that names no question (the pass rate
    over the whole dataset), a warning at each question that scored lower; none for what the gate
    held within noise (an annotation says "this failed the check")."""
    gate = results.gate
    if gate is None or gate.outcome == "passed":
        return []
    failed: dict[tuple[str, str], list[GateFailure]] = {}
    for failure in gate.failures:
        if failure.question:
            failed.setdefault((failure.dataset or "", failure.question), []).append(failure)
    lines: list[Command] = []
    # Each dataset file read once, and only for the annotations shown: with thousands of questions
    # fallen, reading the file again for each made a 10,000-question check take minutes here.
    read: dict[str, dict[str, int]] = {}

    def lines_of(path: str) -> dict[str, int]:
        if path not in read:
            read[path] = _id_lines(root / path) if path else {}
        return read[path]

    for (path, question), failures in list(failed.items())[:MAX_ANNOTATIONS]:
        lines.append(
            annotation(
                "error", _fell(question, failures), file=path or None, line=lines_of(path).get(question), title="agent-eval regression"
            )
        )
    if any(not f.question for f in gate.failures) and len(lines) < MAX_ANNOTATIONS:
        for comparison in results.comparison or []:
            where = lines_of(comparison.path)
            lower: dict[str, list[str]] = {}
            for metric in comparison.metrics:
                for drop in metric.drops:
                    if (comparison.path, drop.id) not in failed:
                        lower.setdefault(drop.id, []).append(f"{drop.metric} {drop.baseline:.3g} → {drop.current:.3g}")
            for question, moved in lower.items():
                message = f"question {question} scored lower on {', '.join(moved)} (one of the questions behind the dataset's fall)"
                lines.append(annotation("warning", message, file=comparison.path, line=where.get(question), title="agent-eval regression"))
    return lines[:MAX_ANNOTATIONS]


def _fell(question: str, failures: list[GateFailure]) -> str:
    """ "question q_risk_01 fell on tool_usage_accuracy, trajectory_accuracy: 0 of 4 runs pass, 5 of 5
    on the base: p = 0.0079": one line a question, every metric it fell on, its runs said once."""
    from agent_eval_action.views.metric_rows import metric_order

    order = metric_order()
    metrics = sorted(dict.fromkeys(f.metric for f in failures if f.metric), key=lambda m: (order.get(m, len(order)), m))
    falls = [f for f in failures if f.rule == "question_fall"]
    if falls:
        detail = falls[0].detail or falls[0].message
        rates = (detail.split(": ", 1)[1] if ": " in detail else detail).split(" (")[0]
        return f"question {question} fell on {', '.join(metrics)}: {rates}"
    moved = [
        f"{f.metric} {f.baseline:.3g} → {f.current:.3g}" for f in failures if f.metric and f.baseline is not None and f.current is not None
    ]
    if moved:
        return f"question {question} fell on {', '.join(moved)}"
    return f"question {question}: {failures[0].detail or failures[0].message}"


def _id_lines(path: Path) -> dict[str, int]:
    """Line of each question id in a dataset file: golden JSON ids, else the first line naming it."""
    from agent_eval_action.system.inside import is_inside

    if not is_inside(path):  # a merged shard's results can name any path
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    from agent_eval_action.datasets.golden import id_lines

    found = id_lines(text)
    if found:
        return found
    out: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        for token in line.replace('"', ",").split(","):
            token = token.strip()
            if token and token not in out:
                out[token] = number
    return out


def post_fork_comment(artifact: str, event: Mapping[str, object], repository: str, key: str, client: GitHubClient) -> Comment | None:
    """Posts a fork PR's comment.md (``artifact``) from a ``workflow_run`` job, trusting nothing the
    fork wrote but the text, shown as untrusted markdown: the PR is the open one whose head is the
    triggering run's head commit (asked of GitHub, never read from the artifact), the marker is
    ours, and only a comment the token's own identity wrote is edited. None when no open PR has
    that head any more (closed, or pushed again: a newer run posts)."""
    run = event.get("workflow_run")
    if not isinstance(run, dict) or run.get("event") != "pull_request":
        raise ConfigError("GITHUB_EVENT_PATH", "not a workflow_run event of a pull_request run: run this from the `on: workflow_run` job")
    sha = run.get("head_sha")
    if not isinstance(sha, str) or len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha):
        raise ConfigError("GITHUB_EVENT_PATH", "the workflow_run event has no head_sha")
    head = run.get("head_repository")
    head_repository = head.get("full_name") if isinstance(head, dict) else None
    numbers = sorted(
        {
            pull.number
            for pull in client.pulls_of_commit(repository, sha)
            if pull.state == "open" and pull.head_sha == sha and (not head_repository or pull.head_repository == head_repository)
        }
    )
    if not numbers:
        return None
    if len(numbers) > 1:
        listed = ", ".join(f"#{n}" for n in numbers)
        raise ConfigError("workflow_run", f"the run's head commit {sha[:12]} heads several open PRs ({listed}): nothing posted")
    ours = marker(key)
    body = f"{ours}\n{untrusted_markdown(artifact, COMMENT_LIMIT - len(ours) - 1)}"
    return client.upsert_comment(repository, numbers[0], ours, body)
