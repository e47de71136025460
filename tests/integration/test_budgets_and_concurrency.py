"""Adaptive concurrency against a loopback Gemini API with a hidden quota, and budgets: the
agent's (a scripted model counting its calls across worker processes) and the judges'."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action.datasets import Record
from agent_eval_action.models.questions import Question
from agent_eval_action.models.traces import Trace
from agent_eval_action.run.adaptive import Limiter
from agent_eval_action.run.judges.client import judge_from_env
from agent_eval_action.run.judges.engine import JudgeEngine, JudgeMetric, JudgeSettings
from tests.fakes.gemini_server import FakeGemini
from tests.helpers.commands import cli
from tests.helpers.repos import commit, counting_repo, git, golden

ROOT = Path(__file__).resolve().parents[2]


# -- the limiter, on a clock of our own ----------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def busy(limit: Limiter) -> None:
    """Every slot taken and more waiting: the limit is the bottleneck."""
    limit.in_flight, limit.waiting = limit.limit, 1


def test_the_limit_doubles_while_calm_halves_once_per_burst_then_adds_one() -> None:
    clock = Clock()
    limit = Limiter(start=4, ceiling=40, interval_s=1.0, slow_start_s=1.0, clock=clock)
    seen = []
    for _ in range(3):
        clock.now += 1
        busy(limit)
        limit.tick()
        seen.append(limit.limit)
    assert seen == [8, 16, 32]  # slow start
    clock.now += 1
    assert limit.congested() is True
    assert limit.congested() is True  # the same burst: one halving
    assert limit.limit == 16 and limit.decreases == 1 and limit.congestion == 2
    clock.now += 0.5
    busy(limit)
    assert not limit.tick()  # not a calm interval yet
    for expected in (17, 18):
        clock.now += 1
        busy(limit)
        assert limit.tick()
        assert limit.limit == expected  # additive increase after the first congestion
    limit.in_flight, limit.waiting = 3, 0
    clock.now += 1
    assert not limit.tick()  # nothing waiting: no reason to raise it
    assert limit.stats().reached == 32


def test_the_ceiling_holds_and_a_fixed_number_never_moves() -> None:
    clock = Clock()
    limit = Limiter(start=16, ceiling=20, interval_s=1.0, clock=clock)
    for _ in range(5):
        clock.now += 1
        busy(limit)
        limit.tick()
    assert limit.limit == 20
    fixed = Limiter(8, clock=clock)
    clock.now += 5
    busy(fixed)
    assert not fixed.tick()
    assert fixed.congested() is False and fixed.limit == 8
    assert fixed.stats().concurrency == "8"


# -- a model API with a quota only it knows ------------------------------------------------------


@pytest.fixture
def quota() -> Iterator[FakeGemini]:
    server = FakeGemini(reply=lambda prompt: "Fine, thanks.", latency_s=0.15, limit=12)
    yield server
    server.close()


QUESTIONS = 150


def test_auto_concurrency_settles_near_a_hidden_limit_with_no_question_failing(tmp_path: Path, quota: FakeGemini) -> None:
    shutil.copytree(ROOT / "tests" / "apps" / "rate_limited", tmp_path / "rate_limited", ignore=shutil.ignore_patterns("__pycache__"))
    questions = [
        {
            "id": f"q{i:03d}",
            "user_inputs": [f"hello {i}"],
            "agents_evaluated": ["rate_limited"],
            "reference_data": {"reference_response": "Fine, thanks."},
        }
        for i in range(QUESTIONS)
    ]
    (tmp_path / "many.json").write_text(json.dumps({"golden_questions": questions}))
    env = {"FAKE_GEMINI_URL": quota.url, "GOOGLE_API_KEY": "loopback-key", "GOOGLE_GENAI_USE_VERTEXAI": "false"}
    args = ("evaluate", "many.json", "--agent", "rate_limited.agent:root_agent", "--retries", "2", "--progress", "always")
    done = cli(tmp_path, *args, "--output-dir", "out", env=env)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    statuses = [q["status"] for q in results["datasets"][0]["questions"]]
    assert statuses == ["ok"] * QUESTIONS  # every 429 was absorbed: none became the question's error
    run = results["run"]
    assert run["concurrency"] == "auto" and run["ceiling"] == 64
    assert quota.throttled > 0 and run["congestion"] > 0 and run["decreases"] >= 1  # it found the limit...
    assert quota.in_flight_peak == 12
    # Where the limit then settles is tests/unit/run/test_adaptive.py's, on simulated time: here,
    # on a busy machine, the agent's own CPU can hold calls back from the quota, and then a limit
    # that grows past 12 is right (a run under two CPU hogs ended at 35).
    assert "concurrency" in done.stderr  # the progress line shows the limit as it moves
    assert "concurrency auto: at most " in done.stdout and "; the limit rose to" in done.stdout


# -- budgets -------------------------------------------------------------------------------------


def counting_folder(tmp_path: Path, count: int) -> Path:
    """The counting agent beside ``count`` of its questions in prices.json (no repository: evaluate only)."""
    shutil.copytree(ROOT / "tests" / "apps" / "counting", tmp_path / "counting", ignore=shutil.ignore_patterns("__pycache__"))
    golden(tmp_path / "prices.json", count)
    return tmp_path


def run_counting(repo: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    counter = repo / "calls.txt"
    counter.write_text("")
    done = cli(repo, "evaluate", "prices.json", "--agent", "counting", "--output-dir", "out", *args, env={"CALLS_FILE": str(counter)})
    assert done.returncode == 0, done.stdout + done.stderr
    return len(counter.read_text().splitlines()), json.loads((repo / "out" / "results.json").read_text()), done.stdout


@pytest.mark.parametrize("concurrency", ["1", "auto"])
def test_a_budget_of_n_model_calls_stops_at_n_with_the_rest_skipped(tmp_path: Path, concurrency: str) -> None:
    repo = counting_folder(tmp_path, 40)
    made, results, shown = run_counting(repo, "--max-model-calls", "10", "--concurrency", concurrency)
    assert made == 10  # two calls a question: five questions, then no new one starts
    questions = results["datasets"][0]["questions"]
    ran = [q for q in questions if q["status"] == "ok"]
    skipped = [q for q in questions if q["status"] == "skipped"]
    assert len(ran) == 5 and len(skipped) == 35
    assert not [q for q in questions if q["status"] == "error"]  # skipped for budget: not errors...
    reason = "budget max-model-calls 10 reached: not run; raise it or select fewer questions"
    assert {q["skip_reason"] for q in skipped} == {reason}
    for question in skipped:  # ...and not zeros: every metric unscored, with the reason
        assert all(score["value"] is None for score in question["scores"].values())
    assert results["datasets"][0]["summary"]["tool_usage_accuracy"]["n"] == 5
    assert results["run"]["budget"] == {
        "max_calls": 10,
        "max_cost_usd": None,
        "calls": 10,
        "cost_usd": 0.0,
        "skipped": 35,
        "reached": "max-model-calls 10 reached",
    }
    assert f"35 question runs skipped ({reason})" in shown
    assert "agent budget 10 of 10 calls, reached: 35 not run" in shown


@pytest.mark.parametrize("concurrency", ["1", "auto"])
def test_a_cost_budget_stops_at_the_price(tmp_path: Path, concurrency: str) -> None:
    repo = counting_folder(tmp_path, 20)
    (repo / "agent-eval.toml").write_text("[prices.scripted-counting]\ninput = 1000000\noutput = 0\n")  # $20 a call
    made, results, _ = run_counting(repo, "--max-cost-usd", "100", "--concurrency", concurrency)
    assert made == 6  # $40 a question: after three, $120 >= $100
    assert results["run"]["budget"]["cost_usd"] == 120.0
    assert sum(q["status"] == "skipped" for q in results["datasets"][0]["questions"]) == 17


def test_without_a_budget_nothing_is_skipped_and_no_budget_is_reported(tmp_path: Path) -> None:
    repo = counting_folder(tmp_path, 6)
    made, results, _ = run_counting(repo)
    assert made == 12
    assert results["run"]["budget"] is None and results["run"]["concurrency"] == "auto"


@pytest.mark.parametrize("rate_limit", [0.0, 50.0])
def test_judge_calls_count_against_their_own_budget(rate_limit: float) -> None:
    server = FakeGemini()
    try:
        client = judge_from_env({"GOOGLE_API_KEY": "loopback", "AGENT_EVAL_JUDGE_BASE_URL": server.url})
        metric = JudgeMetric(name="helpfulness", template="Rate: {{ final_response }}")
        settings = JudgeSettings(concurrency=4, max_calls=3, cache_dir=None, rate_limit=rate_limit)
        engine = JudgeEngine([metric], settings, client)
        records = [Record(question=Question(id=f"q{i}", user_inputs=["hi"]), trace=Trace(final_response=f"answer {i}")) for i in range(10)]
        scores = asyncio.run(engine.score(records))
    finally:
        server.close()
    assert len(server.prompts) == 3
    values = [s["helpfulness"] for s in scores.values()]
    assert sum(v.value is not None for v in values) == 3
    skipped = [v for v in values if v.value is None]
    assert len(skipped) == 7
    assert {v.explanation for v in skipped} == {"budget [judge] max-calls 3 reached: not run; raise it or select fewer questions"}
    assert engine.budget.use().skipped == 7 and engine.usage.failed == 0


# -- budgets in a PR check: what a budget skipped was not checked ----------------------------------


def counting_pr(tmp_path: Path, questions: int, base_config: str = "") -> Path:
    """main: the counting agent, ``questions`` of its questions and their baseline; then branch pr."""
    repo = counting_repo(tmp_path / "repo", questions)
    if base_config:
        (repo / "agent-eval.toml").write_text((repo / "agent-eval.toml").read_text() + base_config)
        commit(repo, "settings")
    update = cli(repo, "baseline", "update", env={"CALLS_FILE": str(tmp_path / "calls.txt")})
    assert update.returncode == 0, update.stdout + update.stderr
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


def check_counting(repo: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    done = cli(repo, "check", "--base", "main", *args, env={"CALLS_FILE": str(repo.parent / "calls.txt")})
    return done.returncode, json.loads((repo / "agent-eval-results" / "results.json").read_text()), done.stdout + done.stderr


def test_a_budget_in_the_prs_config_cannot_skip_the_questions_it_broke(tmp_path: Path) -> None:
    repo = counting_pr(tmp_path, 8)
    agent = repo / "counting" / "agent.py"
    agent.write_text(agent.read_text().replace('args={"item": item}', 'args={"item": "wrong"}'))
    config = repo / "agent-eval.toml"
    config.write_text(config.read_text() + "max-model-calls = 2\n")
    commit(repo, "a cheaper check")
    code, results, printed = check_counting(repo)
    assert code == 1, printed  # the budget is the base's (none): all 8 ran, all 8 regressed
    assert not any(q["status"] == "skipped" for q in results["datasets"][0]["questions"])
    assert any(f["metric"] == "tool_usage_accuracy" for f in results["gate"]["failures"])
    assert "max-model-calls (unset) -> 2" in results["gate"]["config_changes"]


def test_a_budget_that_stops_the_re_runs_of_a_fall_never_passes_it(tmp_path: Path) -> None:
    """The observed case: one question broken for good, a budget that pays for the first runs (16
    calls) and two re-runs: 0 of 3 runs pass, 5 of 5 on the base (p = 0.018), stopped. It was
    "INCONCLUSIVE", exit 0; a fall the money stopped is "could not be checked" (exit 3). Without
    the budget the same PR fails by name."""
    repo = counting_repo(tmp_path / "repo", 8)
    config = repo / "agent-eval.toml"
    config.write_text(config.read_text().replace("baseline-runs = 1", "baseline-runs = 5"))
    commit(repo, "five base runs")
    assert cli(repo, "baseline", "update", env={"CALLS_FILE": str(tmp_path / "calls.txt")}).returncode == 0
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "pr")
    agent = repo / "counting" / "agent.py"
    agent.write_text(agent.read_text().replace('args={"item": item}', 'args={"item": "wrong" if said.startswith("0:") else item}'))
    commit(repo, "q00 broken")
    code, results, printed = check_counting(repo, "--max-model-calls", "20", "--concurrency", "1")
    assert code == 3, printed
    gate = results["gate"]
    assert gate["outcome"] == "unchecked" and not gate["passed"]
    assert any("q00: 0 of 3 runs pass, 5 of 5 on the base" in line for line in gate["unchecked"]), gate
    assert "COULD NOT BE CHECKED" in printed and "INCONCLUSIVE" not in printed, printed
    code, results, printed = check_counting(repo)
    assert code == 1, printed
    assert {(f["rule"], f["question"]) for f in results["gate"]["failures"]} == {("question_fall", "q00")}


def test_a_check_a_budget_cut_short_could_not_be_checked_unless_the_base_allows_a_partial_one(tmp_path: Path) -> None:
    repo = counting_pr(tmp_path, 8)
    code, results, printed = check_counting(repo, "--all", "--no-reuse", "--max-model-calls", "2", "--concurrency", "1")
    assert code == 3, printed
    assert results["gate"]["outcome"] == "unchecked"
    (reason, *_) = results["gate"]["unchecked"]
    assert reason.startswith("partial: 7 of 8 question runs were skipped by the budget (max-model-calls = 2)"), reason
    assert "COULD NOT BE CHECKED - partial: 7 of 8 question runs were skipped by the budget" in printed, printed
    comment = (repo / "agent-eval-results" / "comment.md").read_text()
    assert "could not be checked: partial: 7 of 8 question runs were skipped by the budget" in comment, comment
    assert "held on" not in printed + comment

    allowed = counting_pr(tmp_path / "allowed", 8, "\n[gate]\nallow-partial = true\n")
    code, results, printed = check_counting(allowed, "--all", "--no-reuse", "--max-model-calls", "2", "--concurrency", "1")
    assert code == 0, printed
    # The headline counts only what was checked.
    assert "held on 1 question (7 skipped, not checked: [gate] allow-partial)" in printed, printed
