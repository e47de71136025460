"""Rendering results with Jinja templates shipped as package data (filters in Python).

Users override a template by putting a file of the same name in ``templates_dir``, or extend
the built-in one with ``{% extends "builtin/comment.md.j2" %}`` and their own blocks. With a
``templates_dir`` every template renders in Jinja's sandbox (a repository's template is code from
the PR); ours alone render without it, as report.html's always did: the sandbox's check of every
attribute a template reads was a quarter of the comment's and summary's rendering.
"""

from __future__ import annotations

from typing import Any

from agent_eval_action.models.results import Results
from agent_eval_action.system.errors import ConfigError
from agent_eval_action.text.markdown import code_block, cut_blocks, escape_html, escape_md, plural, printed
from agent_eval_action.views.background import Background
from agent_eval_action.views.figures import ci, fmt, signed
from agent_eval_action.views.metric_rows import MARKS
from agent_eval_action.views.page import Page, QuestionView, page_of

__all__ = ["COMMENT_LIMIT", "QuestionView", "Renderer", "ci", "fmt", "marker", "render_comment", "signed", "view"]

COMMENT_LIMIT = 65_000
SUMMARY_LIMIT = 1_000_000  # GitHub refuses step summaries over 1 MiB
DETAIL_QUESTIONS = 30
# Rows of one regressed question's side-by-side table in the comment (report.html has all).
DIFF_ROWS = 12
VERDICT_EMOJI = {"improved": "🟢", "regressed": "🔴", "unchanged": "⚪", "new": "🆕", "removed": "➖"}


def marker(key: str) -> str:
    return f"<!-- agent-eval-action:{key} -->"


def view(
    page: Page | Results,
    *,
    key: str = "default",
    thresholds: dict[str, float] | None = None,
    sha: str | None = None,
    run_url: str | None = None,
    background: Background | None = None,
) -> dict[str, Any]:
    """The template context: the page's parts and where the comment goes. ``page``: the page
    the other views show (given results, one is built from them, the ``thresholds`` and what the
    base branch knows: ``background``, base runs, metric history, gate rules)."""
    return {
        **page_of(page, thresholds, background).context(),
        "marker": marker(key),
        "sha": sha,
        "run_url": run_url,
        "detail_limit": DETAIL_QUESTIONS,
        "diff_rows": DIFF_ROWS,
        "show_details": True,
    }


class Renderer:
    def __init__(self, templates_dir: str | None = None, *, cache: Any = None, sandboxed: bool | None = None):
        """``sandboxed``: render in Jinja's sandbox; default, when there is a ``templates_dir``
        (whose templates are never rendered outside it)."""
        from jinja2 import ChoiceLoader, Environment, PackageLoader, PrefixLoader, StrictUndefined
        from jinja2.sandbox import SandboxedEnvironment

        from agent_eval_action.system.inside import template_loader
        from agent_eval_action.views.compiled import SANDBOXED, UNSANDBOXED, bytecode_cache

        builtin = PackageLoader("agent_eval_action.views", "templates")
        loaders: list[Any] = [PrefixLoader({"builtin": builtin})]
        if templates_dir:
            loaders.append(template_loader(templates_dir))  # refuses files outside the repository
        loaders.append(builtin)
        if templates_dir and sandboxed is False:
            raise ValueError("a repository's templates render in Jinja's sandbox only")
        sandboxed = bool(templates_dir) if sandboxed is None else sandboxed
        # Sandboxed templates compile to other code (each call goes through the sandbox): caches apart.
        kind = SANDBOXED if sandboxed else UNSANDBOXED
        self.env = (SandboxedEnvironment if sandboxed else Environment)(
            loader=ChoiceLoader(loaders),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
            finalize=printed,  # a template that prints agent text unescaped still shows no bidi control
            bytecode_cache=cache if cache is not None else bytecode_cache(kind),
        )
        self.env.filters.update(
            escape_md=escape_md,
            escape_html=escape_html,
            mark=lambda m: MARKS.get(m, ""),
            fmt=fmt,
            signed=signed,
            ci=ci,
            code=code_block,
            emoji=lambda v: VERDICT_EMOJI.get(v, ""),
            tojson_compact=_json,
            plural=plural,
        )

    def render(self, name: str, context: dict[str, Any]) -> str:
        from jinja2 import TemplateError

        try:
            text = self.env.get_template(name).render(**context)
        except TemplateError as error:
            raise ConfigError(f"template {name}", f"{type(error).__name__}: {error}") from None
        if name.startswith("comment") and context["marker"] not in text:
            raise ConfigError(
                f"template {name}", f"the rendered comment lacks the marker {context['marker']}; keep `{{{{ marker }}}}` in it"
            )
        return text


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def render_comment(renderer: Renderer, context: dict[str, Any], limit: int = COMMENT_LIMIT) -> str:
    """The comment under ``limit``: full, else with details folded away, else truncated with a notice."""
    text = renderer.render("comment.md.j2", context)
    if len(text) <= limit:
        return text
    text = renderer.render("comment.md.j2", {**context, "show_details": False})
    if len(text) <= limit:
        return text
    notice = f"\n> ⚠️ This comment was cut at {limit:,} characters; the job's step summary and `results.json` have everything.\n\n{context['marker']}\n"
    # Cut between whole blocks with every <details> closed: a notice inside a folded section is never seen.
    return cut_blocks(text, limit - len(notice)) + notice


def render_summary(renderer: Renderer, context: dict[str, Any], limit: int = SUMMARY_LIMIT) -> str:
    text = renderer.render("summary.md.j2", {**context, "detail_limit": 10_000})
    if len(text.encode()) <= limit:
        return text
    text = renderer.render("summary.md.j2", {**context, "detail_limit": 10_000, "show_details": False})
    notice = "\n> ⚠️ Cut to stay under GitHub's 1 MiB step-summary limit; see `results.json`.\n"
    return cut_blocks(text, limit - len(notice.encode()), measure=lambda line: len(line.encode())) + notice
