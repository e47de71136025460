from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Work in ``tmp_path``, as a user whose files live there: inputs must lie inside the working
    directory's repository (the directory itself without one), and ``tmp_path`` is not in this checkout."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
