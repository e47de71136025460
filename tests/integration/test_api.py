"""The Python API: the examples of docs/python-api.md run as written, and a pytest test fails readably."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.commands import run_cli
from tests.helpers.factories import runs, write_dataset
from tests.helpers.repos import commit, git, new_repo

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "tests" / "apps"


def page_example(marker: str) -> str:
    """The python block between ``<!-- MARKER ... -->`` and ``<!-- /MARKER -->`` in docs/python-api.md."""
    text = (ROOT / "docs" / "python-api.md").read_text()
    block = re.search(rf"<!-- {marker}[^>]*-->\n```python\n(.*?)```\n<!-- /{marker} -->", text, re.S)
    assert block, f"docs/python-api.md's {marker} is missing"
    return block.group(1)


def test_the_api_example_runs_as_written(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import gc

    monkeypatch.chdir(ROOT / "examples" / "customer_service")
    path_before, frozen = list(sys.path), gc.get_freeze_count()
    exec(compile(page_example("api-example"), "docs/python-api.md", "exec"), {})
    out = capsys.readouterr()
    # The example ships a regression (the discount cap lowered under the scripted model's offer).
    assert out.out == "customer_service_golden: state fidelity 60% over 5 questions\n"
    assert out.err == ""  # the API prints nothing of its own
    assert sys.path == path_before and gc.get_freeze_count() == frozen and gc.isenabled()


def test_load_and_problems_come_back_as_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_eval_action as aea

    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad_golden.json").write_text('{"golden_questions": [{"id": "q1"}]}')
    dataset = aea.load("bad_golden.json")
    assert dataset.questions == [] and "question 'q1'" in dataset.problems[0].message
    results = aea.evaluate("missing/*.json")
    assert results.datasets == [] and "missing/*.json: matched no dataset files" in results.problems[0].message
    with pytest.raises(aea.GateFailed, match="did not complete"):
        aea.assert_passed(results)
    with pytest.raises(aea.ConfigError, match="unknown metric"):
        aea.evaluate("x.json", metrics=["no_such_metric"])


def test_a_pytest_test_fails_with_the_gates_reasons(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    new_repo(repo)
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.csv"]\n')
    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", runs(12))
    commit(repo, "datasets")
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    update = run_cli(["baseline", "update"], cwd=repo, env=env)
    assert update.returncode == 0, update.stderr
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    write_dataset(repo / "evaluation" / "datasets" / "cs_runs.csv", runs(12, broken={0, 2, 4}))
    git(repo, "commit", "-qam", "break")
    (repo / "test_agent_eval.py").write_text(page_example("pytest-example"))  # the page's test, as written
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_agent_eval.py"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "GateFailed: agent evaluation failed:" in done.stdout
    assert "cs_runs: question q_cart_01_00: 0 of 1 run passes, 1 of 1 on the base" in done.stdout
    # The verdict, not the source of assert_passed (its frame is hidden from the traceback).
    assert "lines.append" not in done.stdout and "raise GateFailed" not in done.stdout, done.stdout


@pytest.mark.parametrize("spec", ["in_process_dir", "in_process_mod.agent:root_agent"], ids=["agent directory", "module:attr"])
def test_an_agent_run_in_process_leaves_sys_path_as_found(spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's folder is on ``sys.path`` while it is imported, and off it again after."""
    import agent_eval_action as aea

    package = spec.partition(".")[0]
    shutil.copytree(APPS / "shop", tmp_path / package)  # a name no other test imports: the folder must be searched
    question = {"id": "q1", "user_inputs": ["hello"], "agents_evaluated": ["shop"], "reference_data": {"reference_response": "shop: hello"}}
    (tmp_path / "shop_golden.json").write_text(json.dumps({"golden_questions": [question]}))
    monkeypatch.chdir(tmp_path)
    before = list(sys.path)
    try:
        results = aea.evaluate("shop_golden.json", agent=spec, in_process=True)
        assert sys.path == before
        assert not results.problems and [q.status for q in results.datasets[0].questions] == ["ok"], results.problems
        assert Path(sys.modules[f"{package}.agent"].__file__ or "").parent == tmp_path / package
    finally:
        for name in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
            del sys.modules[name]


def test_compare_matches_a_single_dataset_to_a_single_baseline_and_can_leave_the_verdict_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``compare``: by path, else by name, else one dataset with the baseline's only one; with
    ``gate=False`` the comparison is made and no verdict (``report`` on results of ``evaluate``)."""
    import agent_eval_action as aea

    monkeypatch.chdir(tmp_path)
    write_dataset(tmp_path / "before.csv", runs(6))
    write_dataset(tmp_path / "after.csv", runs(6, broken={0, 2, 4}))
    before, after = aea.evaluate("before.csv"), aea.evaluate("after.csv")
    compared = aea.compare(after, before, gate=False)
    (comparison,) = compared.comparison or []
    assert comparison.status == "compared" and compared.gate is None and after.comparison is None
    metric = next(m for m in comparison.metrics if m.metric == "tool_usage_accuracy")
    assert metric.delta is not None and metric.delta < 0
    gated = aea.compare(after, before)
    assert gated.gate is not None and gated.gate.outcome == "failed"
    with pytest.raises(aea.GateFailed, match=r"0 of 1 run passes, 1 of 1 on the base"):
        aea.assert_passed(gated)
