"""Tests that need cmark-gfm or Chromium skip locally, saying how to install them, and fail on CI."""

from __future__ import annotations

import pytest

from tests.helpers.browser import require


def test_missing_renderer_skips_locally_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        require("chromium", None, "opening report.html in a real browser")
    assert str(skipped.value) == (
        "chromium is not installed, so opening report.html in a real browser is skipped; "
        "install it with: apt-get install -y cmark-gfm chromium (Debian/Ubuntu)"
    )


def test_missing_renderer_fails_on_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"cmark-gfm is not installed.*\(CI must run this: \.ci/run installs it\)"):
        require("cmark-gfm", None, "rendering the comment as GitHub does")
    assert require("cmark-gfm", "/usr/bin/cmark-gfm", "rendering") == "/usr/bin/cmark-gfm"
