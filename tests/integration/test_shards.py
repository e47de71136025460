"""Sharding: deterministic slices whose union is the whole; merged shards equal one unsharded run."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_eval_action.config import Config
from agent_eval_action.models.results import Results
from agent_eval_action.repo.results_io import read_results
from agent_eval_action.scoring.shards import in_shard, merge_results, merge_scorer, parse_shard
from agent_eval_action.system.errors import ConfigError, DatasetError
from tests.helpers.commands import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "recorded" / "customer_service_runs.csv"


@settings(suppress_health_check=[HealthCheck.too_slow])  # a loaded machine draws slowly; the property is all that counts
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=200, unique=True), st.integers(min_value=1, max_value=12))
def test_shards_partition_the_questions(ids: list[str], n: int) -> None:
    owners = [[i for i in range(1, n + 1) if in_shard("dataset", qid, i, n)] for qid in ids]
    assert all(len(owner) == 1 for owner in owners)  # every question in exactly one shard


def test_shards_are_stable_and_balanced() -> None:
    ids = [f"q{i}" for i in range(4000)]
    sizes = [sum(in_shard("d", q, i, 4) for q in ids) for i in range(1, 5)]
    assert sum(sizes) == 4000 and min(sizes) > 900
    assert in_shard("d", "q1", 1, 4) == in_shard("d", "q1", 1, 4)
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "x", "1-2"):
        with pytest.raises(ConfigError):
            parse_shard(bad)


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("GITHUB_ACTIONS", None)
    return run_cli(args, cwd=cwd, env=env)


def _big_dataset(tmp_path: Path) -> Path:
    from tests.helpers.factories import runs, write_dataset

    path = tmp_path / "evaluation" / "datasets" / "big_runs.csv"
    write_dataset(path, runs(60, broken={3, 9, 27}))
    (tmp_path / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.csv"]\n')
    return path


def test_merged_shards_equal_an_unsharded_run(tmp_path: Path) -> None:
    _big_dataset(tmp_path)
    whole = cli(tmp_path, "run", "--output-dir", "whole", "--no-comment")
    assert whole.returncode == 0, whole.stderr
    for i in (1, 2, 3):
        done = cli(tmp_path, "run", "--shard", f"{i}/3", "--output-dir", f"shard{i}", "--no-comment")
        assert done.returncode == 0, done.stderr
        assert json.loads((tmp_path / f"shard{i}" / "results.json").read_text())["shard"] == f"{i}/3"
    merged = cli(tmp_path, "merge", "shard*/results.json", "--output-dir", "merged", "--no-comment")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "merged 3 shards: 60 question runs" in merged.stdout
    a, b = read_results(tmp_path / "whole" / "results.json"), read_results(tmp_path / "merged" / "results.json")
    assert a.datasets == b.datasets
    assert a.comparison == b.comparison and a.gate == b.gate
    # The action's `merge` input goes through the same code.
    (tmp_path / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env |= {"PYTHONPATH": str(ROOT / "src"), "HOME": str(tmp_path / "home"), "GITHUB_WORKSPACE": str(tmp_path), "GITHUB_EVENT_NAME": "pull_request",
            "INPUT_MERGE": "shard*/results.json", "INPUT_COMMENT": "false", "INPUT_OUTPUT-DIR": "via_action"}  # fmt: skip
    action = run_cli(["action"], cwd=tmp_path, env=env)
    assert action.returncode == 0, action.stdout + action.stderr
    assert read_results(tmp_path / "via_action" / "results.json").datasets == a.datasets


def test_two_datasets_with_one_name_stay_two_when_merged(tmp_path: Path) -> None:
    from tests.helpers.factories import runs, write_dataset

    for folder, count in (("a", 10), ("b", 14)):
        write_dataset(tmp_path / "evaluation" / folder / "cs.csv", runs(count))
    (tmp_path / "agent-eval.toml").write_text('datasets = ["evaluation/*/cs.csv"]\n')
    for i in (1, 2):
        done = cli(tmp_path, "run", "--shard", f"{i}/2", "--output-dir", f"shard{i}", "--no-comment")
        assert done.returncode == 0, done.stderr
    merged = cli(tmp_path, "merge", "shard*/results.json", "--output-dir", "merged", "--no-comment")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    datasets = read_results(tmp_path / "merged" / "results.json").datasets
    assert sorted((d.path, len(d.questions)) for d in datasets) == [("evaluation/a/cs.csv", 10), ("evaluation/b/cs.csv", 14)]


def test_merge_refuses_runs_that_do_not_belong_together(tmp_path: Path) -> None:
    scorer = merge_scorer(Config())

    def shard(s: str | None, version: str = "0.1.0") -> Results:
        return Results(tool_version=version, shard=s)

    with pytest.raises(DatasetError, match="missing shard"):
        merge_results([("a", shard("1/3")), ("b", shard("2/3"))], scorer)
    with pytest.raises(DatasetError, match="also comes from a"):
        merge_results([("a", shard("1/2")), ("b", shard("1/2"))], scorer)
    with pytest.raises(DatasetError, match="different splits"):
        merge_results([("a", shard("1/2")), ("b", shard("2/3"))], scorer)
    with pytest.raises(DatasetError, match="has no `shard`"):
        merge_results([("a", shard(None))], scorer)
    with pytest.raises(DatasetError, match="different versions"):
        merge_results([("a", shard("1/2")), ("b", shard("2/2", "0.2.0"))], scorer)
    done = cli(tmp_path, "merge", "nothing*.json")
    assert done.returncode == 2 and "matched no results files" in done.stderr


def test_the_example_sharded_decides_as_the_unsharded_check(tmp_path: Path) -> None:
    """The bundled example in five shards, as examples/workflows/agent-eval-sharded.yml runs
    them: shard 2 holds no question (a shard with nothing to do: exit 0, merged as nothing), the
    two broken discount questions fall in shards 3 and 5; each shard re-runs its fall until it
    holds at the whole check's level, so the merge fails both by name, as the unsharded check does."""
    example = ROOT / "examples" / "customer_service"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GOOGLE_", "INPUT_"))}
    env["PYTHONPATH"] = str(ROOT / "src")
    whole = run_cli(["check", "--no-comment", "--output-dir", str(tmp_path / "whole")], cwd=example, env=env)
    assert whole.returncode == 1, whole.stdout + whole.stderr
    codes = {}
    for i in range(1, 6):
        done = run_cli(["check", "--shard", f"{i}/5", "--no-comment", "--output-dir", str(tmp_path / f"shard{i}")], cwd=example, env=env)
        codes[i] = done.returncode
        if i == 2:
            assert done.returncode == 0, done.stdout + done.stderr
            assert "no question has a score" not in done.stdout + done.stderr
    assert codes == {1: 0, 2: 0, 3: 1, 4: 0, 5: 1}
    merged = run_cli(
        ["merge", str(tmp_path / "shard*" / "results.json"), "--no-comment", "--output-dir", str(tmp_path / "merged")], cwd=example, env=env
    )
    assert merged.returncode == 1, merged.stdout + merged.stderr
    a, b = read_results(tmp_path / "whole" / "results.json"), read_results(tmp_path / "merged" / "results.json")
    assert a.gate is not None and b.gate is not None
    named = {(f.rule, f.question) for f in a.gate.failures}
    assert named == {("question_fall", "q_discount_01"), ("question_fall", "q_discount_02")}
    assert {(f.rule, f.question) for f in b.gate.failures} == named
    assert not b.problems and b.gate.outcome == "failed"
