from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Work in ``tmp_path``, as a user whose files live there: inputs must lie inside the working
    directory's repository (the directory itself without one), and ``tmp_path`` is not in this checkout."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
