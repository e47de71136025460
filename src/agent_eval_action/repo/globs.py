"""Path globs as GitHub users write them in ``on.push.paths`` and ``.gitignore``, one matcher for
every list of them (datasets, agent paths, baselines; paths on disk and paths a PR changed).

A pattern is matched by wcmatch (``*``, ``**`` any number of directories, ``?``, classes
``[ab]``, braces ``{json,jsonl}``; ``[[]`` or ``\\[`` is a literal ``[``); it also matches
every path below a directory it matches, as in ``.gitignore``. Patterns are read in order and
the last one that matches a path decides: ``!pattern`` excludes what those before it included,
and a later pattern can include it again, as in Actions' ``paths:`` filters. wcmatch's own
``NEGATE`` is not used: it excludes whatever the order, so nothing could be included again.
"""

from __future__ import annotations

from functools import cache

from wcmatch import glob as wc

# Names that start with a dot are matched only by a pattern that spells the dot (`.github/**`),
# as Python's glob and the shell do: `**/*.json` must not walk into .venv or .git.
FLAGS = wc.GLOBSTAR | wc.BRACE
NEGATION = "!"


def split(pattern: str) -> tuple[bool, str]:
    """(whether the pattern includes, the glob itself): ``!x`` excludes what ``x`` matches."""
    include = not pattern.startswith(NEGATION)
    glob = pattern if include else pattern[len(NEGATION) :]
    return include, glob.removeprefix("./")


def is_glob(pattern: str) -> bool:
    """Whether the pattern has wildcards, classes or braces (else it names one path)."""
    return bool(wc.is_magic(split(pattern)[1], flags=FLAGS))


@cache
def _matcher(glob: str) -> wc.WcMatcher[str]:
    below = glob.rstrip("/") + "/**"
    return wc.compile([glob, below], flags=FLAGS)


def matches(path: str, patterns: list[str]) -> bool:
    """Whether the last of ``patterns`` that matches ``path`` includes it (False if none does)."""
    path = path.removeprefix("./")
    chosen = False
    for pattern in patterns:
        include, glob = split(pattern)
        # Only a pattern that would change the answer needs matching.
        if include != chosen and _matcher(glob).match(path):
            chosen = include
    return chosen
