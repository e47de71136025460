"""``python -m agent_eval_action.views``: compiles our templates into their cache
(``views.compiled``), whatever ``PYTHONDONTWRITEBYTECODE`` says, as ``compileall`` does for
modules: ``make install`` and the action's image run it."""

from __future__ import annotations

from agent_eval_action.views.compiled import SANDBOXED, TEMPLATES, UNSANDBOXED, bytecode_cache, folder
from agent_eval_action.views.render import Renderer
from agent_eval_action.views.report import environment


def precompile() -> None:
    envs = {
        UNSANDBOXED: Renderer(cache=bytecode_cache(UNSANDBOXED, write=True)).env,
        # With a repository's templates-dir, ours render sandboxed too: compiled for that as well.
        SANDBOXED: Renderer(cache=bytecode_cache(SANDBOXED, write=True), sandboxed=True).env,
        "report": environment(bytecode_cache("report", write=True)),
    }
    for kind, names in TEMPLATES.items():
        for name in names:
            envs[kind].get_template(name)
    # Readable by whoever runs the install (an image built as root, run as the runner's user).
    for entry in (folder() / "__jinjacache__").rglob("*"):
        entry.chmod(0o755 if entry.is_dir() else 0o644)


if __name__ == "__main__":
    precompile()
