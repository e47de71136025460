"""The README's "Use it in your repo" steps as a newcomer pastes them: its bash blocks, in order."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def steps() -> list[str]:
    """The bash blocks of the README's "Use it in your repo", in order, as written (dedented)."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Use it in your repo\n") :]
    section = section[: section.index("\n## ", 1)]
    blocks = re.findall(r"^( *)```bash\n(.*?)^\1```$", section, re.S | re.M)
    return ["".join(line[len(indent) :] + "\n" for line in body.splitlines()) for indent, body in blocks]


def offline_lines() -> list[str]:
    """The command lines of the README's "Try your agent offline" block: record, then replay."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Try your agent offline\n") :]
    section = section[: section.index("\n## ", 1)]
    (body,) = re.findall(r"^```bash\n(.*?)^```$", section, re.S | re.M)
    return [line for line in body.splitlines() if line.strip()]
