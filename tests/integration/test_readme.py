"""The README's "Use it in your repo" steps, pasted as written into a fresh repository with an ADK
app, one code block after another. The commands are read from the README itself, so the README
and this test cannot drift apart. The one step not run is the install: this checkout is the
installed package here (the step is checked to name this package at a release tag, installed as a
tool of its own). tests/end_to_end/test_first_day.py follows the same steps with a team's own
ADK 1.x agent in its own .venv."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.helpers.readme import steps
from tests.helpers.repos import app_repo, git

ROOT = Path(__file__).resolve().parents[2]


def test_the_install_step_names_this_package_at_a_release_tag() -> None:
    (install, *_) = steps()
    name = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
    # In an environment of its own (uv tool / pipx), never in the agent's.
    assert re.fullmatch(rf'uv tool install --compile-bytecode "{name} @ git\+https://github\.com/[\w-]+/{name}@v\d+"\n', install), install
    # The same repository and tag the workflows' `uses:` name.
    uses = re.search(rf"uses: ([\w-]+/{name}@v\d+)", (ROOT / "examples" / "workflows" / "agent-eval-pr.yml").read_text())
    assert uses and f"github.com/{uses.group(1)}" in install, (install, uses)


def test_the_readme_steps_work_when_pasted_into_a_fresh_repository(tmp_path: Path) -> None:
    _install, *rest = steps()
    assert len(rest) >= 4, "init, baseline, commit and PR steps expected"
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    seed = app_repo(tmp_path / "seed")
    git(seed, "push", "-q", str(origin), "main")
    git(tmp_path, "clone", "-q", str(origin), "repo")
    repo = tmp_path / "repo"
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")

    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GOOGLE_", "INPUT_"))}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "/usr/bin:/bin")])  # `python` is ours
    env["PYTHONPATH"] = str(ROOT / "src")  # the installed package is this checkout
    for block in rest:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"$ {block}{done.stdout}{done.stderr}"

    # main on the remote has what init wrote and the baseline; the PR branch is pushed.
    pushed = git(repo, "ls-tree", "-r", "--name-only", "origin/main").split()
    assert {"agent-eval.toml", "evaluation/datasets/shop_golden.json", ".github/workflows/agent-eval.yml"} <= set(pushed)
    assert any(p.startswith("evaluation/baselines/") for p in pushed), pushed
    # Recorded after the commit: the baseline knows the agent's code, so PRs can reuse its scores.
    (baseline,) = [p for p in pushed if p.startswith("evaluation/baselines/")]
    assert json.loads((repo / baseline).read_text())["datasets"][0]["agent_fingerprint"], baseline
    branches = git(origin, "branch", "--format=%(refname:short)").split()
    assert sorted(branches) == ["main", "try-agent-eval"]
    results = json.loads((repo / "agent-eval-results" / "results.json").read_text())
    assert results["gate"]["outcome"] == "passed"
    assert results["selection"]["base_ref"] == "main"
