"""Making untrusted text (agent output, dataset strings) safe inside a GitHub comment.

Nothing an agent says may break a table, start raw HTML, ping a user (``@name``), link an
issue (``#123``), open a code span or a link, or reorder the text around it on screen.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

ZERO_WIDTH = "\u200b"
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_REFERENCE = re.compile(r"#(?=\d)")
# Runs of whitespace, line breaks among them, but not the no-break space our figures keep.
_SPACES = re.compile(r"[^\S\u00a0]+")
# What GitHub would turn into a link by itself: agent text must not become a clickable link.
_AUTOLINK = re.compile(r"(?i)(?<=[a-z])(?=://)|(?<=\bwww)(?=\.)")
_SPECIAL = str.maketrans(
    {
        "|": "\\|",
        "`": "\\`",
        "[": "\\[",
        "]": "\\]",
        "*": "\\*",
        "_": "\\_",
        "~": "\\~",
        "\\": "\\\\",
        "<": "&lt;",
        ">": "&gt;",
        "&": "&amp;",
    }
)


def cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, ending in "…" at a word's end where one is near
    (a sentence cut mid-word reads as a typo); a single long token is cut where it must be."""
    if len(text) <= limit:
        return text
    head = text[: max(limit - 1, 0)]
    space = head.rfind(" ")
    if space > limit // 3 and not text[len(head)].isspace():
        head = head[:space]
    # Never inside parentheses: "(Holm over 3…" reads as a figure cut in half; cut before the
    # outermost one still open, where it opens far enough in.
    opened = _open_paren(head)
    if opened is not None and opened > limit // 3:
        head = head[:opened]
    return head.rstrip(" ,;:") + "…"


def _open_paren(text: str) -> int | None:
    """Where the outermost parenthesis still open at the end of ``text`` opens (None: all closed)."""
    depth, start = 0, None
    for i, char in enumerate(text):
        if char == "(":
            start = i if depth == 0 else start
            depth += 1
        elif char == ")" and depth:
            depth -= 1
            start = None if depth == 0 else start
    return start if depth else None


# Bidirectional controls (the RTL override U+202E among them) reorder what follows them on screen:
# agent text could show a reviewer something other than what it holds. They are shown as escapes,
# in a form with no character special to markdown, HTML or a terminal.
BIDI_CONTROLS = (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)
_SHOWN_CONTROLS = {code: f"\\u{code:04x}" for code in BIDI_CONTROLS}


def show_controls(text: str) -> str:
    """``text`` with every bidirectional control written as its escape (``\\u202e``)."""
    return text.translate(_SHOWN_CONTROLS)


_MARKUP: list[type] = []  # markupsafe's Markup, imported on the first print (a report prints ~9,000 values)


def printed(value: Any) -> Any:
    """What a template prints (its ``finalize``), with bidirectional controls shown as escapes:
    a template that prints agent text without an escaping filter still shows none. Markup is kept."""
    if not isinstance(value, str):
        return value
    if not _MARKUP:
        from markupsafe import Markup

        _MARKUP.append(Markup)
    return value if isinstance(value, _MARKUP[0]) else show_controls(value)


def escape_md(value: object, limit: int | None = None) -> str:
    """Inline-safe text for a table cell or a sentence: one line, no markup, no pings."""
    text = "" if value is None else show_controls(str(value))
    text = _SPACES.sub(" ", text).strip()  # newlines end a table row: keep one line
    if limit is not None:
        text = cut(text, limit)
    text = _AUTOLINK.sub(ZERO_WIDTH, text.translate(_SPECIAL))
    text = _MENTION.sub("@" + ZERO_WIDTH, text)
    return _REFERENCE.sub("#" + ZERO_WIDTH, text)


def code_block(value: object, limit: int = 2000) -> str:
    """A fenced block for longer text (JSON of tool arguments): a fence longer than any run inside."""
    text = "" if value is None else show_controls(str(value))
    if len(text) > limit:
        text = text[:limit] + "\n… (truncated)"
    text = _MENTION.sub("@" + ZERO_WIDTH, text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def escape_html(value: object, limit: int | None = None) -> str:
    """Text inside an HTML tag of a comment (``<summary>``): GitHub does not apply markdown
    escapes there, so a backslash would show; HTML escaping, one line, no pings."""
    text = "" if value is None else show_controls(str(value))
    text = _SPACES.sub(" ", text).strip()
    if limit is not None:
        text = cut(text, limit)
    text = _AUTOLINK.sub(ZERO_WIDTH, html.escape(text, quote=True))
    text = _MENTION.sub("@" + ZERO_WIDTH, text)
    return _REFERENCE.sub("#" + ZERO_WIDTH, text)


_OUR_MARKER = re.compile(r"(?im)^[ \t]*<!--\s*agent-eval-action:[^\n]*?-->[ \t]*$\n?")
_DETAILS_TAG = re.compile(r"(?i)<(/?)details\b[^>]*>?")


def untrusted_markdown(text: str, limit: int) -> str:
    """A comment body someone else wrote (a fork's artifact) made safe to post as ours: its
    markers are dropped and every other HTML comment is shown as text (it cannot hide a marker
    or anything else), nobody is pinged, and it is cut to ``limit`` characters at a line end
    outside any ``<details>``, so the notice of the cut is seen."""
    text = _OUR_MARKER.sub("", text.replace("\r\n", "\n")).replace("<!--", "&lt;!--")
    text = _MENTION.sub("@" + ZERO_WIDTH, text)
    if len(text) <= limit:
        return text
    notice = f"\n\n> ⚠️ This comment was cut at {limit:,} characters: the run's artifacts have all of it.\n"
    cut = text[: max(limit - len(notice), 0)]
    cut = cut[: cut.rfind("\n") + 1] or cut
    opened: list[int] = []  # where each <details> still open in the cut starts
    for tag in _DETAILS_TAG.finditer(cut):
        if tag.group(1):
            if opened:
                opened.pop()
        else:
            opened.append(tag.start())
    return (cut[: opened[0]] if opened else cut) + notice


_DETAILS_OPEN = re.compile(r"<details\b", re.IGNORECASE)
_DETAILS_CLOSE = re.compile(r"</details\s*>", re.IGNORECASE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def cut_blocks(text: str, budget: int, measure: Callable[[str], int] = len) -> str:
    """The longest start of ``text`` that ends where a block ends (a blank line or a
    ``</details>``, outside code fences), with the ``<details>`` still open there closed, that
    measures at most ``budget``: what the caller adds after it is outside every ``<details>``,
    where a reader sees it. When not even the first block fits, the cut falls at a line's end
    (an open fence closed too)."""
    depth = 0
    fence: str | None = None
    pos = used = 0
    best: str | None = None
    fallback = ""
    for line in text.splitlines(keepends=True):
        used += measure(line)
        pos += len(line)
        if used > budget:
            break
        opens = _FENCE.match(line)
        if fence is not None:
            if opens and opens.group(1)[0] == fence[0] and len(opens.group(1)) >= len(fence) and not line[opens.end() :].strip():
                fence = None
        elif opens:
            fence = opens.group(1)
        else:
            depth = max(depth + len(_DETAILS_OPEN.findall(line)) - len(_DETAILS_CLOSE.findall(line)), 0)
        head = text[:pos] if line.endswith("\n") else text[:pos] + "\n"
        closers = (f"\n{fence}\n" if fence else "") + "\n</details>\n" * depth
        if used + measure(closers) + 1 > budget:  # + 1: a last line without its newline is given one
            continue
        if fence is None and (not line.strip() or _DETAILS_CLOSE.search(line)):
            best = head + closers
        elif best is None:
            fallback = head + closers
    return best if best is not None else fallback


def plural(count: int, word: str) -> str:
    """ "1 question", "2 questions": a count in words that reads right at one."""
    return f"{count} {word}{'s' if count != 1 else ''}"


def p_words(p: float) -> str:
    """ "p = 0.0035", "p < 0.001" (never "p = < 0.001"): every view says a p-value so."""
    return f"p = {p:.2g}" if p >= 0.001 else "p < 0.001" if p >= 1e-6 else "p < 0.000001"
