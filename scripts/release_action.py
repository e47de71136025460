"""Point a release's action.yml at the published image:
``python3 scripts/release_action.py --image ghcr.io/owner/repo --version v1.2.3 [--action action.yml]``.

On main, ``runs.image`` is ``Dockerfile``, so every job that uses the action builds the image
first. A tagged release runs ``docker://IMAGE:VERSION`` instead, which the job pulls. Only the
value of the ``image:`` line under ``runs:`` changes; every other byte stays as it was, comments
and line endings included. Running it again with the same arguments changes nothing. Exit 2 with
a message when the file is not a Dockerfile action, or the image or version is not usable.

Standard library only: the release workflow runs it with the runner's python3, before anything
is installed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

# Semver without build metadata: an image tag cannot hold "+", and is at most 128 characters.
VERSION = re.compile(r"v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z][0-9A-Za-z.-]*)?")
# A registry host (optionally :port) and a lowercase repository path, without a tag or digest.
COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
IMAGE = re.compile(rf"[A-Za-z0-9.-]+(?::\d+)?(?:/{COMPONENT})+")
TOP_LEVEL_RUNS = re.compile(r"runs:[ \t]*(#.*)?")
# key: value  # comment -- the value as written (plain or quoted) and whatever follows it.
ENTRY = re.compile(r"(?P<indent>[ \t]+)(?P<key>[A-Za-z_-]+):(?P<gap>[ \t]*)(?P<value>\"[^\"]*\"|'[^']*'|[^\s#]+)?(?P<rest>.*)")


class ReleaseError(ValueError):
    """What is wrong with the arguments or the action file, in words for the release log."""


def _unquoted(value: str) -> str:
    return value[1:-1] if value[:1] in "\"'" and value[-1:] == value[:1] else value


def rewrite(text: str, image: str, version: str) -> str:
    """action.yml's text with ``runs.image`` set to ``docker://IMAGE:VERSION``."""
    if not VERSION.fullmatch(version) or len(version) > 128:
        raise ReleaseError(f"version {version!r} is not semver-like (v1.2.3 or v1.2.3-rc.1; no build metadata)")
    if not IMAGE.fullmatch(image):
        raise ReleaseError(f"image {image!r} is not a registry path (lowercase, without a tag), e.g. ghcr.io/owner/repo")
    target = f"docker://{image}:{version}"
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if TOP_LEVEL_RUNS.fullmatch(line.rstrip("\r\n"))]
    if len(starts) != 1:
        raise ReleaseError("no block-style `runs:` mapping at the top level" if not starts else "more than one top-level `runs:`")
    entries: dict[str, list[tuple[int, re.Match[str]]]] = {}
    indent: str | None = None
    for i in range(starts[0] + 1, len(lines)):
        line = lines[i].rstrip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[:1].isspace():
            break  # the next top-level key
        match = ENTRY.fullmatch(line)
        if indent is None:
            indent = match.group("indent") if match else None
        if match and match.group("indent") == indent:
            entries.setdefault(match.group("key"), []).append((i, match))
    using = [_unquoted(m.group("value") or "") for _, m in entries.get("using", [])]
    if using != ["docker"]:
        raise ReleaseError(f"runs.using is {', '.join(using) or 'missing'}, not docker: only a Docker action can run a prebuilt image")
    found = entries.get("image", [])
    if len(found) != 1:
        raise ReleaseError("runs.image is missing" if not found else "runs.image appears more than once")
    i, match = found[0]
    current = _unquoted(match.group("value") or "")
    if current != "Dockerfile" and not current.startswith(f"docker://{image}:"):
        raise ReleaseError(f"runs.image is {current!r}: expected Dockerfile (or docker://{image}:<version> from an earlier run)")
    value = match.group("value")
    quote = value[0] if value[:1] in "\"'" else ""
    ending = lines[i][len(lines[i].rstrip("\r\n")) :]
    lines[i] = f"{match.group('indent')}image:{match.group('gap') or ' '}{quote}{target}{quote}{match.group('rest')}{ending}"
    return "".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", required=True, help="the published image without a tag, e.g. ghcr.io/owner/repo")
    parser.add_argument("--version", required=True, help="the release's version and image tag, e.g. v1.2.3")
    parser.add_argument("--action", type=Path, default=Path("action.yml"), help="the action metadata file (default action.yml)")
    args = parser.parse_args(argv)
    try:
        # newline="" keeps \r\n as it is, so only the image line's bytes can change.
        with args.action.open(encoding="utf-8", newline="") as file:
            text = file.read()
        new = rewrite(text, args.image, args.version)
    except (OSError, ReleaseError) as failed:
        print(f"release_action: {args.action}: {failed}", file=sys.stderr)
        return 2
    if new == text:
        print(f"{args.action}: runs.image is already docker://{args.image}:{args.version}")
        return 0
    with args.action.open("w", encoding="utf-8", newline="") as file:
        file.write(new)
    print(f"{args.action}: runs.image is now docker://{args.image}:{args.version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
