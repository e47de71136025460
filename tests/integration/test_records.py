"""The stored record is evidence (issue 46): `baseline update` never records an outage as the base
(exit 3, the previous record kept), never purges a question's failures run by run, and
refreshes every question on each update, so a change nothing observed ages out of the record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers.commands import cli
from tests.helpers.repos import DATASET, commit, counting_repo, stored

BASELINE = Path("evaluation") / "baselines" / DATASET.relative_to("evaluation")  # the dataset's path mirrored once


def repo_of(tmp_path: Path, runs: int) -> Path:
    repo = counting_repo(tmp_path / "repo", 4)
    config = repo / "agent-eval.toml"
    config.write_text(config.read_text().replace("baseline-runs = 1", f"baseline-runs = {runs}"))
    commit(repo, f"{runs} base runs")
    return repo


def update(repo: Path, **env: str) -> tuple[int, str, dict[str, list[dict[str, Any]]]]:
    done = cli(repo, "baseline", "update", env={"CALLS_FILE": str(repo.parent / "calls.txt"), **env})
    data = stored((repo / BASELINE).read_text())
    by_id: dict[str, list[dict[str, Any]]] = {}
    for run in data["datasets"][0]["questions"]:
        by_id.setdefault(run["id"], []).append(run)
    return done.returncode, done.stdout + done.stderr, by_id


def passes(runs: list[dict[str, Any]]) -> int:
    return sum(1 for r in runs if r["status"] == "ok" and r["scores"]["tool_usage_accuracy"]["value"] == 1.0)


def test_a_baseline_update_in_an_outage_keeps_the_previous_record_and_exits_3(tmp_path: Path) -> None:
    repo = repo_of(tmp_path, 3)
    code, printed, before = update(repo)
    assert code == 0, printed
    commit(repo, "baselines")
    # q01's model calls fail (no key: the model call itself); the others answer.
    code, printed, after = update(repo, COUNTING_OUTAGE="1: ")
    assert code == 3, printed
    assert "error: evaluation/datasets/prices.json: 1 question could not be recorded (q01: no API key" in printed, printed
    assert "their previous record is kept" in printed
    assert after["q01"] == before["q01"]  # as it was, byte for byte: no outage run became the base
    assert all(r["status"] == "ok" for runs in after.values() for r in runs)
    # The others were refreshed: one new run each, the newest two kept.
    assert [r["run"] for r in after["q00"]] == [0, 1, 2]


def test_a_flaky_tools_failures_stay_in_the_record_across_updates(tmp_path: Path) -> None:
    """A tool that fails every other call: the record was purged of its errors run by run (2 of 5
    ok became 5 of 5 after three updates); now every run of a round is kept and only the oldest
    make way, so the record keeps about the tool's real rate."""
    repo = repo_of(tmp_path, 4)
    flaky = {"COUNTING_FLAKY_TOOL": "pear"}  # q01 asks about pears
    code, printed, first = update(repo, **flaky)
    assert code == 0, printed
    assert [r["status"] for r in first["q01"]].count("error") == 2
    rates = []
    for _ in range(3):
        commit(repo, "baselines")
        code, printed, now = update(repo, **flaky)
        assert code == 0, printed
        assert len(now["q01"]) == 4
        rates.append([r["status"] for r in now["q01"]].count("error"))
    assert min(rates) >= 1 and max(rates) <= 3, rates  # never purged to 0 errors: 1 new run a round, alternating


def test_an_unobserved_change_ages_out_of_the_record_within_its_runs(tmp_path: Path) -> None:
    """The agent breaks through something no observation sees (here its environment): each update
    refreshes one run of every question, so after baseline-runs updates the record is all new."""
    repo = repo_of(tmp_path, 3)
    code, printed, before = update(repo)
    assert code == 0 and all(passes(runs) == 3 for runs in before.values()), printed
    seen = []
    for _ in range(3):
        commit(repo, "baselines")
        code, printed, now = update(repo, COUNTING_BROKEN="1")
        assert code == 0, printed
        seen.append(passes(now["q00"]))
    assert seen == [2, 1, 0]  # one stale run aged out per update


def test_a_record_the_base_has_moved_away_from_is_not_blamed_on_the_pr(tmp_path: Path) -> None:
    """main changed its agent after its last `baseline update` (the update was interrupted): an
    unchanged PR was blamed for main's change (exit 1, "inputs the agent read changed"). The
    record's files are not the merge-base's: the check says so and exits 3."""
    from tests.helpers.repos import git

    repo = repo_of(tmp_path, 2)
    code, printed, _ = update(repo)
    assert code == 0, printed
    commit(repo, "baselines")
    agent = repo / "counting" / "agent.py"
    agent.write_text(agent.read_text().replace('args={"item": item}', 'args={"item": "wrong"}'))
    commit(repo, "main breaks the agent; its baseline is not updated")
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "README.md").write_text("docs\n")
    commit(repo, "a harmless PR")
    done = cli(repo, "check", "--base", "main", env={"CALLS_FILE": str(tmp_path / "calls.txt")})
    assert done.returncode == 3, done.stdout + done.stderr
    assert "the stored baseline of evaluation/datasets/prices.json is not the base's: the base changed counting/agent.py" in done.stdout
    assert "FAILED" not in done.stdout
