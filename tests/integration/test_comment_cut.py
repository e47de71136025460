"""A comment too long for GitHub is cut between whole blocks, every <details> closed, so the cut
notice is where a reader sees it: rendered by GitHub's renderer (cmark-gfm)."""

from __future__ import annotations

from html.parser import HTMLParser

from agent_eval_action.text.markdown import cut_blocks
from agent_eval_action.views.render import Renderer, render_comment, render_summary
from tests.helpers.browser import cmark_gfm, markdown_to_html, require
from tests.helpers.publishing import sample_view

NOTICE = "This comment was cut at"


class Visible(HTMLParser):
    """The text of the rendered comment with how many <details> each piece sits in; a <details>
    shows its <summary> only, so text inside one is hidden until the reader opens it."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.in_summary = 0
        self.pieces: list[tuple[int, str]] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.depth += tag == "details"
        self.in_summary += tag == "summary"

    def handle_endtag(self, tag: str) -> None:
        self.depth -= tag == "details"
        self.in_summary -= tag == "summary"

    def handle_data(self, data: str) -> None:
        self.pieces.append((self.depth - (1 if self.in_summary else 0), data))

    def hidden(self, text: str) -> bool:
        return any(depth > 0 for depth, data in self.pieces if text in data)

    def shown(self, text: str) -> bool:
        return any(depth == 0 for depth, data in self.pieces if text in data)


def test_the_cut_notice_of_600_regressed_questions_is_never_inside_a_details() -> None:
    binary = require("cmark-gfm", cmark_gfm(), "rendering the comment as GitHub does")
    renderer = Renderer()
    page = sample_view("x" * 40, n=1300, distinct=True)  # 650 questions got worse, one crashed
    full = render_comment(renderer, page, limit=10_000_000)
    assert "650 questions in cs_golden got worse" in full and full.count("<details") >= 3
    folded = renderer.render("comment.md.j2", {**page, "show_details": False})
    # Every limit from the header to the whole folded comment: the cut falls before, inside and
    # after each <details> (the "metrics unchanged" table, the notes) in turn.
    for limit in range(700, len(folded), max(len(folded) // 60, 1)):
        comment = render_comment(renderer, page, limit=limit)
        assert len(comment) <= limit and comment.startswith("<!-- agent-eval-action:default -->")
        assert comment.count("<details") == comment.count("</details>"), limit
        html = markdown_to_html(comment, binary)
        seen = Visible(html)
        assert seen.shown(NOTICE) and not seen.hidden(NOTICE), (limit, comment[-400:])
        assert comment.rstrip().endswith("<!-- agent-eval-action:default -->")


def test_a_cut_keeps_whole_blocks_and_closes_what_is_open() -> None:
    text = "## head\n\npara\n\n<details><summary>s</summary>\n\n| a |\n|---|\n| 1 |\n| 2 |\n\n</details>\n\ntail\n"
    assert cut_blocks(text, 14) == "## head\n\n"
    inside = cut_blocks(text, 60)
    assert inside.endswith("\n</details>\n") and "| 1 |" not in inside  # the table is whole or absent
    whole = cut_blocks(text, len(text) - 5)
    assert "| 2 |" in whole and whole.count("<details") == whole.count("</details>") == 1 and "\ntail" not in whole
    fenced = "```\ncode\n\nmore\n```\n\nafter\n"
    assert cut_blocks(fenced, len(fenced) - 3) == "```\ncode\n\nmore\n```\n\n"  # no cut at the blank line inside the fence
    assert cut_blocks("é" * 10 + "\n\n" + "é" * 10, 24, measure=lambda s: len(s.encode())) == "é" * 10 + "\n\n"


def test_the_step_summary_is_cut_the_same_way() -> None:
    page = sample_view("x" * 40, n=200, distinct=True)
    summary = render_summary(Renderer(), page, limit=6_000)
    assert len(summary.encode()) <= 6_000 and "Cut to stay under" in summary
    head = summary[: summary.index("Cut to stay under")]
    assert head.count("<details") == head.count("</details>")
