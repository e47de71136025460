"""Path globs with ``**`` (any number of directories), matched against repository-relative paths."""

from __future__ import annotations

import re
from functools import cache


@cache
def _pattern(glob: str) -> re.Pattern[str]:
    out = []
    i = 0
    glob = glob.removeprefix("./")
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches(path: str, globs: list[str]) -> bool:
    path = path.removeprefix("./")
    return any(_pattern(glob).match(path) for glob in globs)
