"""compare-with = "base": the merge-base's agent run now beside the PR's, in real git
repositories, through the CLI, with a stochastic scripted model whose "model version" moves
between the baseline commit and now (tests/apps/drifting)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.commands import cli
from tests.helpers.drifting import CONFIG, QUESTIONS, drifting_repo
from tests.helpers.repos import ROOT, git
from tests.helpers.values import timings

DATASET = Path("evaluation") / "datasets" / "prices.json"


def check(repo: Path, *args: str, version: str, code: int, env: dict[str, str] | None = None) -> tuple[dict[str, Any], str]:
    """Runs `check --base main ARGS` under the model version; returns results.json and what it printed."""
    done = cli(repo, "check", "--base", "main", *args, env={"MODEL_VERSION": version, **(env or {})})
    assert done.returncode == code, done.stdout + done.stderr
    return json.loads((repo / "agent-eval-results" / "results.json").read_text()), done.stdout + done.stderr


def comment(repo: Path) -> str:
    return (repo / "agent-eval-results" / "comment.md").read_text()


def edit(repo: Path, path: str, old: str, new: str, message: str) -> None:
    file = repo / path
    assert old in file.read_text()
    file.write_text(file.read_text().replace(old, new))
    git(repo, "commit", "-qam", message)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return drifting_repo(tmp_path / "repo")


def test_drift_fails_baseline_mode_and_is_reported_apart_in_base_mode(repo: Path) -> None:
    """A PR that changes nothing the agent does, checked after the model moved from v1 to v2."""
    (repo / "README.md").write_text("docs only\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-qm", "docs")

    results, printed = check(repo, version="v2", code=1)
    # Fields that say nothing are left out of results.json.
    assert results["compare_with"] == "baseline" and "base_run" not in results and "drift" not in results
    assert any(f["metric"] == "response_match" for f in results["gate"]["failures"])
    (hint,) = results["drift_notes"]
    assert "model drift is the likely cause" in hint and 'compare-with = "base"' in hint
    assert "**Model drift:** scores moved although this PR changed no agent code" in comment(repo)
    assert "model drift: scores moved" in printed

    cache = repo / "model-cache"
    results, printed = check(repo, "--compare-with", "base", "--model-cache", str(cache), "--max-model-calls", "1000", version="v2", code=0)
    assert results["compare_with"] == "base" and results["gate"]["outcome"] == "passed"
    # The cache is off for both sides (a replay would hide the drift), and the terminal says so.
    assert "the model-call cache is off for both sides" in printed
    assert not cache.exists() and all(d["model_calls"] is None for d in results["datasets"])
    # One budget covers both sides: a tool call and an answer per question, on each.
    assert results["run"]["budget"]["calls"] == 2 * 2 * QUESTIONS
    assert results["base_run"]["questions"] == QUESTIONS and results["base_run"]["runs"] == 1
    assert results["base_run"]["model_calls"] == 2 * QUESTIONS  # a tool call and an answer per question
    assert results["base_run"]["commit"] == git(repo, "rev-parse", "main").strip()
    (drift,) = results["drift"]
    moved = {m["metric"]: m for m in drift["metrics"]}["response_match"]
    assert moved["verdict"] == "regressed" and moved["baseline"] == 1.0
    # What the note counts as drift is stored with it (fail-on-drift fails on it); a PR's comparison has none.
    assert "response_match" in drift["drift_metrics"] and all("drift_metrics" not in c for c in results["comparison"])
    (line,) = results["drift_notes"]
    assert f"of {QUESTIONS} questions answer differently than the stored baseline with the same code (response_match 100%" in line
    assert "python -m agent_eval_action baseline update" in line
    assert "**Model drift:** prices: the model moved" in comment(repo) and "model drift: prices: the model moved" in printed
    assert "20 questions, compared with the base's agent run now (" in comment(repo)
    cost = f"base re-run: {QUESTIONS} questions × 1 run, {2 * QUESTIONS} model calls"
    assert cost in comment(repo) and cost in printed
    assert "every model call goes to the model" in printed
    # The base's checkout is gone, and git's record of it.
    assert git(repo, "worktree", "list").count("\n") == 1
    assert not (repo / ".git" / "worktrees").exists() or not list((repo / ".git" / "worktrees").iterdir())


def test_a_drift_in_doubt_runs_the_bases_questions_again_until_it_is_said(repo: Path) -> None:
    """The model moved a little behind its name (v1.1: one question of 20 now answered wrong, the
    others word for word as before). At one run a question the fall is plausible, not beyond the
    test's level (no drift was said at one run: with the re-runs turned off when this test was
    written, the note was empty); the question in doubt runs again on the base's side until the
    test decides, and the drift is said."""
    (repo / "README.md").write_text("docs only\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-qm", "docs")

    results, printed = check(repo, "--compare-with", "base", version="v1.1", code=0)
    assert results["gate"]["outcome"] == "passed"  # the PR's side answers as the base's does
    assert results["base_run"]["reruns"] >= 1 and results["base_run"]["model_calls"] > 2 * QUESTIONS, results["base_run"]
    assert "re-runs of the questions in doubt" in printed
    (line,) = results["drift_notes"]
    assert line.startswith(f"prices: the model moved: 1 of {QUESTIONS} questions answer differently than the stored baseline"), line
    (drift,) = results["drift"]
    assert "response_match" in drift["drift_metrics"]


def test_one_question_drifted_behind_an_unchanged_pr_is_hinted_in_baseline_mode(repo: Path) -> None:
    """v1.1 answers one question of 20 wrong, every other word for word as v1: no metric's mean
    moved past its interval, but that question fails every run against its record. The check
    fails on it, and the hint says drift is the likely cause (it waited for a metric's verdict)."""
    (repo / "README.md").write_text("docs only\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-qm", "docs")

    results, _ = check(repo, version="v1.1", code=1)
    assert {f.get("question") for f in results["gate"]["failures"]} == {"q01"}
    (hint,) = results["drift_notes"]
    assert hint.startswith("scores moved although this PR changed no agent code: ") and "model drift is the likely cause" in hint


def test_fail_on_drift_fails_the_drifted_check(repo: Path) -> None:
    edit(repo, "agent-eval.toml", "reuse = false\n", "reuse = false\n\n[gate]\nfail-on-drift = true\n", "fail on drift")
    # The gate's rules come from the base: put the setting there.
    git(repo, "checkout", "-q", "main")
    git(repo, "cherry-pick", "pr")
    git(repo, "checkout", "-q", "pr")
    git(repo, "reset", "-q", "--hard", "main")
    results, _ = check(repo, "--compare-with", "base", version="v2", code=1)
    assert [f["rule"] for f in results["gate"]["failures"]] == ["drift"]


def test_a_broken_tool_fails_in_both_modes(repo: Path) -> None:
    edit(repo, "drifting/agent.py", "PRICES.get(item, 9)}", "PRICES.get(item, 9) + 10}", "break the tool")
    results, _ = check(repo, version="v1", code=1)
    assert any(f["metric"] == "response_match" for f in results["gate"]["failures"])
    assert "drift_notes" not in results  # the PR changed the agent: no drift hint
    results, _ = check(repo, "--compare-with", "base", "--runs", "2", version="v1", code=1)
    assert any(f["metric"] == "response_match" for f in results["gate"]["failures"])
    # runs = K applies to both sides, and the questions in doubt run on, on both sides alike (0 of
    # 2 against the base's runs is not yet a decision).
    runs = len(results["datasets"][0]["questions"])
    assert results["base_run"]["runs"] == 2 and runs > 2 * QUESTIONS
    assert results["base_run"]["reruns"] == runs - 2 * QUESTIONS
    assert results["base_run"]["model_calls"] == 2 * runs
    # The base's own run under the baseline's model version: nothing but the timings moved.
    untimed = [m for m in results["drift"][0]["metrics"] if m["metric"] not in timings()]
    assert untimed and all(m["verdict"] in ("unchanged", "new") for m in untimed), untimed
    assert "drift_notes" not in results


def test_a_slower_tool_is_caught_by_the_latency_rule_in_base_mode_only(tmp_path: Path) -> None:
    repo = drifting_repo(tmp_path / "repo", latency_rule=True)
    edit(
        repo,
        "drifting/agent.py",
        '    marks = os.environ.get("MARKS_FILE")',
        '    __import__("time").sleep(0.1)\n    marks = os.environ.get("MARKS_FILE")',
        "slow tool",
    )
    results, printed = check(repo, version="v1", code=0)
    assert not any(f["metric"] == "latency" for f in results["gate"]["failures"])
    assert "timings, for information" in printed, printed  # timed at another hour: information
    results, printed = check(repo, "--compare-with", "base", version="v1", code=1)
    (failure,) = [f for f in results["gate"]["failures"] if f["metric"] == "latency"]
    assert failure["rule"] == "max_regression" and failure["current"] > failure["baseline"]
    # Both sides timed in this job: even the timing no rule names is compared, not folded away.
    assert "timings, for information" not in printed, printed
    assert any(line.lstrip().startswith("! turn_latency") for line in printed.splitlines()), printed


def our_packages() -> str:
    """Our venv's site-packages: where the agents' venvs find ADK (nothing is downloaded here)."""
    return sysconfig.get_paths()["purelib"]


def test_each_side_runs_in_its_own_environment(repo: Path, tmp_path: Path) -> None:
    edit(repo, "requirements.txt", "marker-base", "marker-pr", "new dependencies")
    marks = tmp_path / "marks.txt"
    ours = our_packages()
    env = {"MARKS_FILE": str(marks), "RUNNER_TEMP": str(tmp_path / "runner")}
    (tmp_path / "runner").mkdir()
    check(repo, "--compare-with", "base", "--install", f"python install.py {ours}", version="v1", code=0, env=env)
    seen: dict[str, set[str]] = {"base": set(), "pr": set()}
    for line in marks.read_text().splitlines():
        folder, mark = line.split("\t")
        seen["pr" if Path(folder).resolve() == repo.resolve() else "base"].add(mark)
    assert seen == {"base": {"marker-base"}, "pr": {"marker-pr"}}
    assert len(list((tmp_path / "runner").glob("agent-eval-venv-*"))) == 2
    # Unchanged dependencies: one venv, made once, shared by both sides. One question in flight at
    # a time shows the order the two sides are run in: interleaved, which side first alternating
    # question by question (so neither always meets the pool's queue first).
    edit(repo, "requirements.txt", "marker-pr", "marker-base", "back to the base's dependencies")
    marks.write_text("")
    args = ("--compare-with", "base", "--install", f"python install.py {ours}", "--concurrency", "1")
    _, printed = check(repo, *args, version="v1", code=0, env=env)
    lines = [line.split("\t") for line in marks.read_text().splitlines()]
    assert {mark for _, mark in lines} == {"marker-base"}
    sides = ["pr" if Path(folder).resolve() == repo.resolve() else "base" for folder, _ in lines]
    assert sides == [side for i in range(QUESTIONS) for side in (("base", "pr") if i % 2 == 0 else ("pr", "base"))]
    assert len(list((tmp_path / "runner").glob("agent-eval-venv-*"))) == 2
    assert "cached" in printed


def test_the_base_checkout_is_removed_when_the_base_cannot_be_installed(repo: Path, tmp_path: Path) -> None:
    edit(repo, "requirements.txt", "marker-base", "marker-pr", "new dependencies")
    (tmp_path / "runner").mkdir()
    command = f"grep -q marker-pr requirements.txt && python install.py {our_packages()}"  # fails on the base's file
    env = {"MODEL_VERSION": "v1", "RUNNER_TEMP": str(tmp_path / "runner")}
    done = cli(repo, "check", "--base", "main", "--compare-with", "base", "--install", command, env=env)
    assert done.returncode == 3, done.stdout + done.stderr  # an infrastructure failure
    printed = done.stdout + done.stderr
    assert "the install command exited with 1 for the base's agent" in printed
    assert git(repo, "worktree", "list").count("\n") == 1
    assert not (repo / ".git" / "worktrees").exists() or not list((repo / ".git" / "worktrees").iterdir())


def test_without_a_base_branch_the_stored_baselines_are_compared(repo: Path) -> None:
    done = cli(repo, "check", "--compare-with", "base", env={"MODEL_VERSION": "v1"})
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((repo / "agent-eval-results" / "results.json").read_text())
    assert results["compare_with"] == "baseline" and "base_run" not in results
    assert any('compare-with = "base" needs a base branch' in n for n in results["gate"]["notes"])


def test_the_action_input_compares_with_the_base(repo: Path, tmp_path: Path) -> None:
    from tests.helpers.commands import action, base_env

    (repo / "README.md").write_text("docs only\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-qm", "docs")
    event = {"pull_request": {"number": 5, "head": {"sha": "cafef00d"}}}
    env = {**base_env(tmp_path, repo, event, "pull_request"), "GITHUB_BASE_REF": "main", "INPUT_COMMENT": "false", "MODEL_VERSION": "v2"}
    drifted = action(repo, env)
    assert drifted.returncode == 1, drifted.stdout + drifted.stderr
    done = action(repo, {**env, "INPUT_COMPARE-WITH": "base"})
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((repo / "agent-eval-results" / "results.json").read_text())
    assert results["compare_with"] == "base" and results["base_run"]["questions"] == QUESTIONS
    assert "**Model drift:** prices: the model moved" in (tmp_path / "summary").read_text()
    wrong = action(repo, {**env, "INPUT_COMPARE-WITH": "head"})
    assert wrong.returncode == 2 and "compare_with" in wrong.stdout + wrong.stderr


def test_a_project_in_a_subfolder_runs_its_base_from_the_same_subfolder(tmp_path: Path) -> None:
    project = drifting_repo(tmp_path / "repo", folder="agents")
    edit(project, "drifting/agent.py", "PRICES.get(item, 9)}", "PRICES.get(item, 9) + 10}", "break the tool")
    results, _ = check(project, "--compare-with", "base", version="v1", code=1)
    assert results["base_run"]["datasets"] == ["agents/evaluation/datasets/prices.json"]
    assert any(f["metric"] == "response_match" for f in results["gate"]["failures"])
    # The base's agent was the base's own: its run answers as the stored baseline did.
    assert "drift_notes" not in results


def test_an_interrupted_check_removes_the_base_checkout(repo: Path, tmp_path: Path) -> None:
    """SIGTERM while both sides run: what finished is written (exit 143), the worktree is gone."""
    edit(
        repo,
        "drifting/agent.py",
        '    return {"item": item',
        '    __import__("time").sleep(60)\n    return {"item": item',
        "a tool that hangs",
    )
    marks = tmp_path / "marks.txt"
    marks.write_text("")
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "MODEL_VERSION": "v1", "MARKS_FILE": str(marks), "TMPDIR": str(temp)}
    env.pop("GITHUB_BASE_REF", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_eval_action", "check", "--base", "main", "--compare-with", "base"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not marks.read_text() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)  # waiting for the event (a tool call began), not for a time
        assert marks.read_text(), "no tool call began"
        # The base's files are there while it runs, in no worktree of the repository's.
        assert len(list(temp.glob("agent-eval-base-*"))) == 1 and git(repo, "worktree", "list").count("\n") == 1
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 143, output
    assert not list(temp.glob("agent-eval-base-*"))
    # The base's runs the interrupt stopped are no drift: only finished ones are compared with the
    # stored baseline, and under the baseline's model version they answer as it did.
    written = json.loads((repo / "agent-eval-results" / "results.json").read_text())
    assert written["gate"]["outcome"] == "unchecked"
    assert not any("the model moved" in note for note in written.get("drift_notes", [])), written.get("drift_notes")
    assert git(repo, "worktree", "list").count("\n") == 1
    assert not (repo / ".git" / "worktrees").exists() or not list((repo / ".git" / "worktrees").iterdir())


def test_the_base_runs_the_agent_its_own_config_names(repo: Path) -> None:
    """The PR renames the agent's package: the base's checkout has only the old one, which its config names."""
    git(repo, "mv", "drifting", "renamed")
    (repo / "agent-eval.toml").write_text(CONFIG.replace('agent = "drifting"', 'agent = "renamed"'))
    git(repo, "commit", "-qam", "rename the agent's package")
    results, _ = check(repo, "--compare-with", "base", version="v1", code=0)
    assert results["base_run"]["questions"] == QUESTIONS and not results["problems"]
    assert results["gate"]["outcome"] == "passed"


def test_the_runs_beside_the_worse_questions_are_the_base_run_made_now(repo: Path) -> None:
    edit(repo, "drifting/agent.py", "PRICES.get(item, 9)}", "PRICES.get(item, 9) + 10}", "break the tool")
    # Under v2 the base's own answers already miss response_match's pass threshold (0.67 < 0.8):
    # a fall among runs that fail on both sides is shown, not decided (the per-question test
    # needs a pass to lose). The worse questions still show the base's run made now beside them.
    check(repo, "--compare-with", "base", version="v2", code=0)
    # The stored baseline (v1) answered "apple costs 1"; the base's agent answers so now under v2.
    assert "| answer | apple costs 1 (as of v2) | apple costs 11 (as of v2) |" in comment(repo)


def test_shards_merged_say_they_were_compared_with_the_stored_baselines(repo: Path) -> None:
    for index in (1, 2):
        done = cli(repo, "check", "--base", "main", "--compare-with", "base", "--shard", f"{index}/2", "--output-dir", f"shard{index}")
        assert done.returncode == 0, done.stdout + done.stderr
        shard = json.loads((repo / f"shard{index}" / "results.json").read_text())
        assert shard["compare_with"] == "base" and shard["base_run"]["questions"] < QUESTIONS
    done = cli(repo, "merge", "shard1/results.json", "shard2/results.json", "--output-dir", "merged", env={"MODEL_VERSION": "v1"})
    assert done.returncode == 0, done.stdout + done.stderr
    merged = json.loads((repo / "merged" / "results.json").read_text())
    assert merged["compare_with"] == "baseline"
    assert any('compare-with = "base" is not kept across shards' in n for n in merged["gate"]["notes"])


def test_the_base_runs_are_judged_as_the_prs_are(repo: Path) -> None:
    """A judged metric beside the base's agent: the base's runs are judged too, so both sides
    have it on every question (judged on one side only, a run of the PR's that missed it would
    read as a fall the base could never show)."""
    from tests.fakes.gemini_server import FakeGemini

    judge = FakeGemini()
    judge.reply = lambda prompt: json.dumps({"score": 5, "explanation": "matches"})
    config = repo / "agent-eval.toml"
    config.write_text(config.read_text() + '\n[judges.response_correctness]\n[judge]\ncache-dir = ""\n')
    git(repo, "commit", "-qam", "judge the answers")
    env = {"AGENT_EVAL_JUDGE_API_KEY": "k", "AGENT_EVAL_JUDGE_BASE_URL": judge.url}
    try:
        results, printed = check(repo, "--compare-with", "base", version="v1", code=0, env=env)
    finally:
        judge.close()
    (comparison,) = results["comparison"]
    (judged,) = [m for m in comparison["metrics"] if m["metric"] == "response_correctness"]
    assert (judged["baseline"], judged["current"], judged["n_shared"]) == (1.0, 1.0, QUESTIONS), judged
    # Every run judged, the base's as the PR's: one call a run, no cache.
    runs = sum(1 for q in results["datasets"][0]["questions"]) + results["base_run"]["questions"] + results["base_run"]["reruns"]
    assert len(judge.prompts) == runs, printed
    assert results["datasets"][0]["judge_usage"]["calls"] == runs  # what the check's judging cost, the base's too
    assert not any("judge" in note for note in results["gate"]["notes"]), results["gate"]["notes"]
