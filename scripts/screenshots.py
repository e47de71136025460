"""The README's screenshots of the comment and the report, from `make example`'s output.

    make screenshots     # = make example, then this script

The comment is rendered as GitHub renders it (cmark-gfm, GitHub's extensions) inside a page
styled like a PR comment, the report is opened from file://, both in headless Chromium.
Needs cmark-gfm, chromium and an emoji font (Debian: cmark-gfm chromium fonts-noto-color-emoji);
with pngquant installed the PNGs are quantized to about a third of their size.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.helpers.browser import INSTALL, browser, chromium, cmark_gfm, markdown_to_html

# Close to github.com's comment styles: enough for a reader to recognize the page.
GITHUB_CSS = """
body { margin: 0; background: #fff; color: #1f2328; font: 14px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif, "Noto Color Emoji"; }
.comment { margin: 16px; border: 1px solid #d1d9e0; border-radius: 6px; }
.comment > .who { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px; color: #59636e; border-radius: 6px 6px 0 0; }
.comment > .who b { color: #1f2328; }
.markdown-body { padding: 16px; }
.markdown-body h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; margin: 0 0 16px; }
.markdown-body h3 { font-size: 1.25em; margin: 24px 0 16px; }
.markdown-body p, .markdown-body ul, .markdown-body table, .markdown-body details { margin: 0 0 16px; }
.markdown-body table { border-collapse: collapse; display: block; width: max-content; max-width: 100%; overflow: auto; }
.markdown-body th, .markdown-body td { border: 1px solid #d1d9e0; padding: 6px 13px; }
.markdown-body th { font-weight: 600; }
.markdown-body tr:nth-child(2n) { background: #f6f8fa; }
.markdown-body summary { cursor: pointer; }
.markdown-body sub { color: #59636e; }
.markdown-body a { color: #0969da; text-decoration: none; }
"""


def comment_page(markdown: str, binary: str) -> str:
    body = markdown_to_html(markdown, binary)
    return (
        '<!doctype html><html><head><meta charset="utf-8"><style>'
        + GITHUB_CSS
        + '</style></head><body><div class="comment"><div class="who"><b>github-actions</b> bot commented</div>'
        + f'<div class="markdown-body">{body}</div></div></body></html>'
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="agent-eval-results", help="make example's output directory")
    parser.add_argument("--out", default="docs/screenshots", help="where the PNGs go")
    args = parser.parse_args(argv)
    binary, markdown = chromium(), cmark_gfm()
    if not binary or not markdown:
        print(f"screenshots need chromium and cmark-gfm: {INSTALL}, plus fonts-noto-color-emoji", file=sys.stderr)
        return 2
    results, out = Path(args.results), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, browser(binary) as page:
        comment = Path(tmp) / "comment.html"
        comment.write_text(comment_page((results / "comment.md").read_text(encoding="utf-8"), markdown), encoding="utf-8")
        page.open(comment.resolve().as_uri(), width=980)
        written = [page.screenshot(out / "comment.png", 980, selector=".comment", max_height=2000)]
        page.open((results / "report.html").resolve().as_uri() + "#filter=regressed", width=1280)
        page.evaluate("document.querySelectorAll('details.question[data-regressed=\"1\"]').forEach((d, i) => d.open = i === 0)")
        written.append(page.screenshot(out / "report.png", 1280, max_height=1700))
    quantize = shutil.which("pngquant")
    for path in written:
        if quantize:
            subprocess.run([quantize, "--quality", "70-90", "--speed", "1", "--force", "--output", str(path), str(path)], check=True)
        print(f"wrote {path} ({path.stat().st_size // 1024} KB{'' if quantize else '; install pngquant to make it smaller'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
