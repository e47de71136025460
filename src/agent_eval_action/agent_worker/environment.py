"""The agent's environment as its interpreter sees it, printed as one JSON line: the Python
(version, implementation, platform) and every installed distribution: its name, its version,
a hash of the files it installed for import (a wheel swapped under the same name and version
installs other files) and whether it is the repository's own code (installed from a folder
inside the repository, argv[1]). Its metadata (the README a long description carries, the
installer's name, the venv's scripts, compiled bytecode) is not what the agent runs: left out,
so a pip-made venv is a uv-made one at the same versions. Run by the parent
(``run/agent/fingerprint.py``) as ``python environment.py <repository>`` under the agent's Python,
from the agent's folder: standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import sys
from email.message import Message
from email.parser import HeaderParser
from typing import Any
from urllib.parse import unquote, urlparse


def describe(repository: str | None = None) -> dict[str, object]:
    from importlib import metadata

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as the worker's loader has it: distributions beside the agent count
    top = os.path.realpath(repository) if repository else None
    found: dict[tuple[str, str], dict[str, object]] = {}
    for dist in metadata.distributions():
        head = _headers(dist)
        name, version = (head["Name"] or "").lower().replace("_", "-"), head["Version"] or ""
        record = dist.read_text("RECORD") or dist.read_text("SOURCES.txt") or ""
        local, editable = _from_repository(dist, top)
        files = "" if editable else hashlib.sha256(_installed(record).encode()).hexdigest()[:16]
        found.setdefault((name, version), {"name": name, "version": version, "files": files, "repository": local})
    return {
        "version": platform.python_version(),
        "implementation": sys.implementation.name,
        "platform": platform.machine(),
        "distributions": [found[key] for key in sorted(found)],
    }


def _headers(dist: Any) -> Message:
    """The headers of ``dist``'s metadata, read as ``dist.metadata`` reads them (the same
    files) but without parsing the long description after them: that parse was two thirds of
    this script's time, run once a check per side."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or dist.read_text("") or ""
    return HeaderParser().parsestr(re.split(r"\r?\n\r?\n", text, maxsplit=1)[0])


def _from_repository(dist: Any, top: str | None) -> tuple[bool, bool]:
    """(installed from a folder inside ``top``, and editable: what it installed points there).
    PEP 610's direct_url.json says where from; a metadata folder inside ``top`` (an .egg-info
    of ``setup.py develop``) is the repository's too."""
    if top is None:
        return False, False
    try:
        where = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        where = {}
    url = urlparse(str(where.get("url", "")))
    if url.scheme == "file" and _inside(unquote(url.path), top):
        return True, bool((where.get("dir_info") or {}).get("editable"))
    folder = getattr(dist, "_path", None)
    if folder is not None and _inside(str(folder), top):
        return True, True
    return False, False


def _inside(path: str, top: str) -> bool:
    full = os.path.realpath(path)
    return full == top or full.startswith(top.rstrip(os.sep) + os.sep)


def _installed(record: str) -> str:
    """What a RECORD says was installed for import, sorted: each file with its hash, without
    the distribution's metadata folder (its README, version, installer and RECORD), compiled
    bytecode (pip writes it, uv does not) and the files outside site-packages (``../../../bin/pip``:
    a script's first line names the venv's own interpreter)."""
    kept = []
    for line in record.splitlines():
        path = line.split(",", 1)[0]
        parts = path.replace("\\", "/").split("/")
        if not path or parts[0] == ".." or "__pycache__" in parts or parts[0].endswith((".dist-info", ".egg-info")):
            continue
        kept.append(line)
    return "\n".join(sorted(kept))


if __name__ == "__main__":
    sys.stdout.write(json.dumps(describe(sys.argv[1] if len(sys.argv) > 1 else None)) + "\n")
