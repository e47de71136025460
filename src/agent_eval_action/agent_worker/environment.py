"""The agent's environment as its interpreter sees it, printed as one JSON line: the Python
(version, implementation, platform) and every installed distribution (name, version, and a
hash of its RECORD: a wheel swapped under the same name and version installs other files).
Run by the parent (``run/fingerprint.py``) as ``python environment.py`` under the agent's
Python, from the agent's folder: standard library only.
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


def describe() -> dict[str, object]:
    from importlib import metadata

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as the worker's loader has it: distributions beside the agent count
    found = set()
    for dist in metadata.distributions():
        head = _headers(dist)
        name, version = head["Name"] or "", head["Version"] or ""
        record = dist.read_text("RECORD") or dist.read_text("SOURCES.txt") or ""
        found.add((name.lower().replace("_", "-"), version, hashlib.sha256(_installed(record).encode()).hexdigest()[:16]))
    return {
        "version": sys.version,
        "implementation": sys.implementation.name,
        "platform": platform.machine(),
        "distributions": sorted(found),
    }


def _headers(dist: Any) -> Message:
    """The headers of ``dist``'s metadata, read as ``dist.metadata`` reads them (the same
    files) but without parsing the long description after them: that parse was two thirds of
    this script's time, run once a check per side."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or dist.read_text("") or ""
    return HeaderParser().parsestr(re.split(r"\r?\n\r?\n", text, maxsplit=1)[0])


def _installed(record: str) -> str:
    """A RECORD without the hashes of the files outside site-packages (``../../../bin/pip``):
    a script's first line names the venv's own interpreter, so two venvs made alike from two
    trees (run/environments.py keys each on its tree) would never match."""
    return "\n".join(line.split(",", 1)[0] if line.startswith("../") else line for line in record.splitlines())


if __name__ == "__main__":
    sys.stdout.write(json.dumps(describe()) + "\n")
