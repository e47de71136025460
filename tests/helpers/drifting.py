"""The drifting agent's repository (tests/apps/drifting): its answers and latencies drift with
$MODEL_VERSION, so a comparison with the base branch has something to find."""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from pathlib import Path

from tests.helpers.commands import cli
from tests.helpers.repos import DATASET, ROOT, commit, git, new_repo

ITEMS = ["apple", "pear", "plum", "fig"]


PRICES = {"apple": 1, "pear": 2, "plum": 3, "fig": 4}


QUESTIONS = 20


CONFIG = 'datasets = ["evaluation/datasets/*.json"]\nagent = "drifting"\nselect = "all"\nreuse = false\n'


LATENCY_RULE = "\n[gate.metrics.latency]\nmax-regression = 0.1\n"


# Writes a module `depmarker` (MARK = the first line of requirements.txt) into the venv it runs
# in, and lets that venv import ADK from ours (no network here).
INSTALL = """import pathlib, site, sys
packages = pathlib.Path(site.getsitepackages()[0])
(packages / "ours.pth").write_text("import site; site.addsitedir(%r)\\n" % sys.argv[1])
mark = pathlib.Path("requirements.txt").read_text().split()[0]
(packages / "depmarker.py").write_text("MARK = %r\\n" % mark)
"""


# Each kind of repository is built once per test process (its baselines take a CLI run) and
# copied for each test: the copy is the same commits, so every test still gets its own repository.
_BUILT: dict[tuple[bool, str], Path] = {}


def drifting_repo(top: Path, *, latency_rule: bool = False, folder: str = "") -> Path:
    """Branch main: the drifting agent, 20 price questions, and their baselines recorded under
    model version v1; then branch pr checked out. ``folder``: where in the repository the project
    is (returned: the project's folder)."""
    key = (latency_rule, folder)
    if key not in _BUILT:
        store = Path(tempfile.mkdtemp(prefix="drifting-repo-"))
        atexit.register(shutil.rmtree, store, ignore_errors=True)
        _build(store / "repo", latency_rule=latency_rule, folder=folder)
        _BUILT[key] = store / "repo"
    shutil.copytree(_BUILT[key], top, symlinks=True)
    return top / folder if folder else top


def _build(top: Path, *, latency_rule: bool, folder: str) -> None:
    new_repo(top)
    repo = top / folder if folder else top
    repo.mkdir(exist_ok=True)
    shutil.copytree(ROOT / "tests" / "apps" / "drifting", repo / "drifting", ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "agent-eval.toml").write_text(CONFIG + (LATENCY_RULE if latency_rule else ""))
    (repo / ".gitignore").write_text("agent-eval-results/\n__pycache__/\n")
    (repo / "requirements.txt").write_text("marker-base\n")
    (repo / "install.py").write_text(INSTALL)
    questions = []
    for i in range(QUESTIONS):
        item = ITEMS[i % len(ITEMS)]
        questions.append(
            {
                "id": f"q{i:02d}",
                "user_inputs": [f"{i}: what is the price of {item}"],
                "agents_evaluated": ["drifting"],
                "reference_data": {
                    "reference_tool_interactions": [{"tool_name": "lookup", "input_arguments": {"item": item}}],
                    "reference_response": f"{item} costs {PRICES[item]}",
                },
            }
        )
    (repo / DATASET).parent.mkdir(parents=True)
    (repo / DATASET).write_text(json.dumps({"golden_questions": questions}, indent=1))
    commit(repo, "agent and dataset")
    done = cli(repo, "baseline", "update", env={"MODEL_VERSION": "v1"})
    assert done.returncode == 0, done.stdout + done.stderr
    # Baseline files keep their layout: the fields of base mode are left out when empty.
    (stored,) = (repo / "evaluation" / "baselines").rglob("*.json")
    assert not {"compare_with", "base_run", "drift", "drift_notes"} & set(json.loads(stored.read_text()))
    commit(repo, "baselines under model v1")
    git(repo, "checkout", "-q", "-b", "pr")
