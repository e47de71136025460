"""Our templates are compiled once (``views.compiled``): a run with the cache in place compiles
none of them, and a repository's own templates are never put in it (each case in a fresh
interpreter, where Jinja's compiler is switched off to see what would be compiled)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action.views.__main__ import precompile
from agent_eval_action.views.compiled import TEMPLATES, folder

PROBE = """
import sys
import jinja2
from agent_eval_action.views.render import Renderer
from agent_eval_action.views.report import environment

compiled = []
original = jinja2.Environment.compile
def spy(self, source, name=None, filename=None, *args, **kwargs):
    compiled.append(name)
    return original(self, source, name, filename, *args, **kwargs)
jinja2.Environment.compile = spy

renderer = Renderer(sys.argv[1] or None)
for name in ("comment.md.j2", "summary.md.j2"):
    renderer.env.get_template(name)
environment().get_template("report.html.j2")
print(",".join(str(n) for n in compiled))
"""


def _compiled(cwd: Path, templates_dir: str = "", *, may_write: bool = False) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not may_write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run([sys.executable, "-c", PROBE, templates_dir], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return [n for n in done.stdout.strip().split(",") if n]


def test_a_run_compiles_none_of_our_templates_once_they_are_compiled(tmp_path: Path) -> None:
    precompile()
    assert _compiled(tmp_path) == []


def test_a_repositorys_own_template_is_compiled_at_each_run_and_never_cached(tmp_path: Path) -> None:
    precompile()
    before = sorted((folder() / "__jinjacache__").rglob("*"))
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "comment.md.j2").write_text("{{ marker }} mine\n")
    # The process may write bytecode: only our templates would be cached.
    assert _compiled(tmp_path, "templates", may_write=True) == ["comment.md.j2"]
    assert _compiled(tmp_path, "templates", may_write=True) == ["comment.md.j2"]
    assert sorted((folder() / "__jinjacache__").rglob("*")) == before
    assert len([p for p in before if p.is_file()]) == sum(len(names) for names in TEMPLATES.values())


def test_sandboxed_code_and_plain_code_are_never_loaded_by_the_other_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A repository's template renders sandboxed, ours alone do not, and their compiled code differs
    (sandboxed code calls through the sandbox): each environment loads only its own cache's code,
    whatever cache it is handed, and a repository's templates are never rendered unsandboxed."""
    import jinja2

    from agent_eval_action.views.compiled import bytecode_cache
    from agent_eval_action.views.render import Renderer

    precompile()
    compiled: list[str | None] = []
    original = jinja2.Environment.compile

    def spy(self: jinja2.Environment, source: str, name: str | None = None, *args: Any, **kwargs: Any) -> Any:
        compiled.append(name)
        return original(self, source, name, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", spy)
    for sandboxed in (False, True):
        Renderer(sandboxed=sandboxed).env.get_template("comment.md.j2")
    assert compiled == []
    Renderer(cache=bytecode_cache("comment"), sandboxed=False).env.get_template("comment.md.j2")
    Renderer(cache=bytecode_cache("comment-own"), sandboxed=True).env.get_template("comment.md.j2")
    assert compiled == ["comment.md.j2", "comment.md.j2"]
    with pytest.raises(ValueError, match="sandbox"):
        Renderer("templates", sandboxed=False)
