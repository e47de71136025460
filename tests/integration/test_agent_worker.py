"""The user's agent in its own processes: hostile agent code costs only its own questions, never
the run, the exit code or our secrets; import failures are bad input naming the module."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.adk_venvs import ADK_1, adk_venv
from tests.helpers.factories import csv_row, customer_service_runs, write_csv
from tests.helpers.hostile import APPS, cli, golden
from tests.helpers.values import timings

ROOT = Path(__file__).resolve().parents[2]
SECRET_VALUES = {
    "GITHUB_TOKEN": "ghs_worker_secret_0001",
    "INPUT_GITHUB-TOKEN": "ghs_worker_secret_0002",
    "AGENT_EVAL_JUDGE_API_KEY": "judge-key-worker-0003",
    "AGENT_EVAL_AUTH_TOKEN": "auth-token-worker-0004",
    "ACTIONS_RUNTIME_TOKEN": "runtime-token-0005",
    "MY_AUTH": "custom-auth-env-0006",
}
HOSTILE = {
    "q_exit": "call exit_zero",
    "q_hard_exit": "call hard_exit",
    "q_interrupt": "call interrupt",
    "q_kill": "call kill_self",
    "q_block": "call block",
    "q_swallow": "call swallow",
    "q_probe": "call probe",
}

# The hostile questions that must time out (block, swallow) wait forever, so their timeout is
# the only thing that can end them; every ordinary question takes well under a second from when
# its worker starts it (a tenth of this on a quiet machine, first question of a new worker included).
HOSTILE_TIMEOUT = "5"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(APPS / "hostile", tmp_path / "hostile")
    shutil.copytree(APPS / "exits_at_import", tmp_path / "exits_at_import")
    write_csv(tmp_path / "recorded.csv", [csv_row(r) for r in customer_service_runs()])
    return tmp_path


def questions_of(project: Path) -> dict[str, dict]:
    data = json.loads((project / "agent-eval-results" / "results.json").read_text())
    return {q["id"]: q for d in data["datasets"] for q in d["questions"]}


def test_each_hostile_question_errors_alone_and_the_run_ends_within_its_timeouts(project: Path) -> None:
    """One question at a time. Each question's time counts from when its worker started it, so
    a worker restarted after a crash (loading ADK on a busy machine) costs the next one nothing;
    the timeout leaves a wide margin for the ordinary questions."""
    friendly = {f"q_ok_{i}": "call greet" for i in range(4)}
    ordered = {"q_ok_0": "call greet", **HOSTILE, **{k: v for k, v in friendly.items() if k != "q_ok_0"}}
    golden(project / "hostile_golden.json", ordered)
    env = dict(SECRET_VALUES)
    # The config withholds MY_AUTH, which the command line does not know: the workers started
    # early (before the config is read) see it, so the run must refuse them and start its own.
    (project / "agent-eval.toml").write_text('agent-auth-env = "MY_AUTH"\n')
    done = cli(
        project,
        "evaluate",
        "hostile_golden.json",
        "recorded.csv",
        "--agent",
        "hostile",
        "--timeout",
        HOSTILE_TIMEOUT,
        "--retries",
        "0",
        "--concurrency",
        "1",
        "--workers",
        "1",
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    got = questions_of(project)
    errors = {qid: got[qid]["error"] for qid in HOSTILE}
    assert errors["q_exit"] == "SystemExit: the agent called sys.exit(0)"
    assert errors["q_interrupt"] == "KeyboardInterrupt: the agent raised KeyboardInterrupt"
    assert errors["q_hard_exit"].startswith("the agent process exited with code 0 while running this question")
    assert errors["q_kill"].startswith("the agent process was killed by signal SIGKILL while running this question")
    assert errors["q_block"] == errors["q_swallow"] == f"timed out after {HOSTILE_TIMEOUT} s"
    assert all(got[qid]["status"] == "error" for qid in HOSTILE)
    for qid in friendly:  # before and after every crash, on restarted workers
        assert got[qid]["status"] == "ok", got[qid]
        assert got[qid]["scores"]["tool_usage_accuracy"]["value"] == 1.0
    # The clean environment itself: the agent saw none of our secrets (not merely redacted).
    probe = errors["q_probe"]
    assert probe.startswith("RuntimeError: environment seen by the agent:")
    for name in SECRET_VALUES:
        assert f"'{name}': None" in probe
    # The recorded dataset in the same run is scored too.
    assert {"q_cart_01", "q_crm_01"} <= set(got) and got["q_cart_01"]["status"] == "ok"


def test_at_concurrency_each_hostile_question_costs_only_itself(project: Path) -> None:
    """The default setting, many questions in one worker: a question that exits, interrupts,
    kills its process, blocks or leaves unserializable state gets its own error; the harmless
    ones beside it are ok however the crashes interleave with them (no retries allowed, so a
    second chance can only be the pool's own re-run of innocent neighbours)."""
    hostile = {
        "q_exit": "call exit_zero",
        "q_interrupt": "call interrupt",
        "q_hard_exit": "call hard_exit",
        "q_kill": "call kill_self",
        "q_block": "call block",
        "q_swallow": "call swallow",
        "q_unserializable": "call unserializable",
    }
    pings = {f"q_ping_{i}": "call greet" for i in range(8)}
    interleaved = dict(zip([*pings][:7], [*pings.values()][:7], strict=True))
    order: dict[str, str] = {}
    for (hid, htext), (pid, ptext) in zip(hostile.items(), interleaved.items(), strict=True):
        order[pid], order[hid] = ptext, htext
    order["q_ping_7"] = pings["q_ping_7"]
    golden(project / "hostile_golden.json", order)
    done = cli(
        project,
        "evaluate",
        "hostile_golden.json",
        "--agent",
        "hostile",
        "--timeout",
        HOSTILE_TIMEOUT,
        "--retries",
        "0",
        "--concurrency",
        "8",
        "--workers",
        "1",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    got = questions_of(project)
    for qid in pings:
        assert got[qid]["status"] == "ok", got[qid]
        assert got[qid]["scores"]["tool_usage_accuracy"]["value"] == 1.0
    errors = {qid: got[qid]["error"] for qid in hostile}
    assert errors["q_exit"] == "SystemExit: the agent called sys.exit(0)"
    assert errors["q_interrupt"] == "KeyboardInterrupt: the agent raised KeyboardInterrupt"
    assert errors["q_hard_exit"].startswith("the agent process exited with code 0 while running this question"), errors
    assert errors["q_kill"].startswith("the agent process was killed by signal SIGKILL while running this question"), errors
    assert errors["q_block"] == errors["q_swallow"] == f"timed out after {HOSTILE_TIMEOUT} s"
    assert errors["q_unserializable"].startswith("UnserializableAnswer: what the agent's run left"), errors
    assert "keys must be str" in errors["q_unserializable"]


@pytest.mark.parametrize(
    ("how", "reason"),
    [
        ("sys.exit", "importing 'exits_at_import.agent' raised SystemExit: 0"),
        ("os._exit", "the agent process exited with code 0 while loading exits_at_import"),
        ("missing", "No module named 'a_dependency_nobody_installed'"),
    ],
)
def test_an_agent_that_fails_at_import_is_bad_input_and_the_rest_is_still_evaluated(project: Path, how: str, reason: str) -> None:
    golden(project / "hostile_golden.json", {"q_ok": "call greet"})
    done = cli(project, "evaluate", "hostile_golden.json", "recorded.csv", "--agent", "exits_at_import", env={"EXIT_HOW": how})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "hostile_golden.json: --agent: " in done.stderr and reason in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    data = json.loads((project / "agent-eval-results" / "results.json").read_text())
    assert [d["name"] for d in data["datasets"]] == ["recorded"] and len(data["datasets"][0]["questions"]) == 6


def test_a_tool_that_returns_a_lone_surrogate_is_scored_not_timed_out(project: Path) -> None:
    """The answer cannot be written as UTF-8 as it is: the lone surrogate travels as U+FFFD (as
    the dataset readers make it) and the question is scored; it used to wait out its timeout."""
    golden(project / "hostile_golden.json", {"q_surrogate": "call surrogate", "q_ok": "call greet"})
    done = cli(project, "evaluate", "hostile_golden.json", "--agent", "hostile", "--workers", "1", "--timeout", "60")
    assert done.returncode == 0, done.stdout + done.stderr
    questions = questions_of(project)
    assert questions["q_surrogate"]["status"] == "ok", questions["q_surrogate"]
    assert questions["q_surrogate"]["scores"]["tool_usage_accuracy"]["value"] == 1.0
    assert "broken \ufffd half" in json.dumps(questions["q_surrogate"], ensure_ascii=False)


def test_a_pr_cannot_pass_our_secrets_to_its_own_agent(tmp_path: Path) -> None:
    """`[agent-env] allow` decides which of our secrets the agent reads: a PR's is a change of the
    gate's (applies after merge), and the check runs with the base's."""
    from tests.helpers.repos import commit, git, new_repo

    repo = new_repo(tmp_path / "repo")
    shutil.copytree(APPS / "hostile", repo / "hostile")
    golden(repo / "hostile_golden.json", {"q_probe": "call probe"})
    (repo / "agent-eval.toml").write_text('datasets = ["hostile_golden.json"]\nagent = "hostile"\nagent_auth_env = "MY_AUTH"\n')
    commit(repo, "agent")
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "agent-eval.toml").write_text(
        'datasets = ["hostile_golden.json"]\nagent = "hostile"\nagent_auth_env = "NOTHING"\n[agent-env]\nallow = ["GITHUB_TOKEN"]\n'
    )
    commit(repo, "give the agent the token and the base's auth secret")
    secrets = {name: SECRET_VALUES[name] for name in ("GITHUB_TOKEN", "MY_AUTH")}
    done = cli(repo, "check", "--base", "main", env=secrets)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    error = json.loads((repo / "agent-eval-results" / "results.json").read_text())["datasets"][0]["questions"][0]["error"]
    assert "'GITHUB_TOKEN': None" in error and "'MY_AUTH': None" in error, error
    assert "agent-auth-env MY_AUTH -> NOTHING" in done.stdout, done.stdout
    assert "agent-env.allow [] -> ['GITHUB_TOKEN']" in done.stdout, done.stdout


def test_a_missing_agent_python_names_the_setting(project: Path) -> None:
    golden(project / "hostile_golden.json", {"q_ok": "call greet"})
    done = cli(project, "evaluate", "hostile_golden.json", "--agent", "hostile", "--agent-python", str(project / "no-python"))
    assert done.returncode == 2 and "--agent-python: cannot start" in done.stderr, done.stderr


def test_worker_traces_equal_in_process_traces(tmp_path: Path) -> None:
    example = ROOT / "examples" / "customer_service"
    dataset = example / "evaluation" / "datasets" / "customer_service_golden.json"
    runs = {}
    for mode in ("--workers=2", "--in-process"):
        out = tmp_path / mode.strip("-")
        done = cli(example, "evaluate", str(dataset), "--agent", "customer_service", mode, "--output-dir", str(out))
        assert done.returncode == 0, done.stderr
        data = json.loads((out / "results.json").read_text())
        runs[mode] = {
            q["id"]: {m: s["value"] for m, s in q["scores"].items() if m not in timings()} for q in data["datasets"][0]["questions"]
        }
    assert runs["--workers=2"] == runs["--in-process"]
    assert runs["--workers=2"]["q_address_01"]["tool_usage_accuracy"] == 0.0  # the bundled example's deliberate failure


# Token counts are left out: the scripted model counts the prompt ADK builds, and ADK 1.x builds
# other instructions around the same conversation. Everything the agent did must be equal.
VERSION_BOUND = {*timings(), "input_tokens", "total_tokens", "cost_usd", "max_call_tokens", "token_usage_v1"}


def test_the_example_on_google_adk_1_scores_as_on_2(tmp_path: Path) -> None:
    python = adk_venv(ADK_1)
    version = subprocess.run(
        [str(python), "-c", "from google.adk import version; print(version.__version__)"], capture_output=True, text=True
    )
    assert version.stdout.strip() == ADK_1
    assert subprocess.run([str(python), "-c", "import pandas"], capture_output=True).returncode != 0  # nothing of ours in there
    example = ROOT / "examples" / "customer_service"
    dataset = example / "evaluation" / "datasets" / "customer_service_golden.json"
    scores = {}
    for label, extra in (("adk1", ["--agent-python", str(python)]), ("adk2", [])):
        out = tmp_path / label
        done = cli(example, "evaluate", str(dataset), "--agent", "customer_service", "--output-dir", str(out), *extra)
        assert done.returncode == 0, done.stdout + done.stderr
        data = json.loads((out / "results.json").read_text())
        scores[label] = {
            q["id"]: {m: s["value"] for m, s in q["scores"].items() if m not in VERSION_BOUND} for q in data["datasets"][0]["questions"]
        }
    assert scores["adk1"] == scores["adk2"]
    assert len(scores["adk1"]) == 8 and scores["adk1"]["q_cart_01"]["tool_usage_accuracy"] == 1.0


def test_a_worker_captures_spans_per_question_and_withholds_secrets_from_its_environment() -> None:
    import asyncio

    from agent_eval_action.models.questions import Question
    from agent_eval_action.run.agent.env import agent_environment
    from agent_eval_action.run.workers.pool import WorkerPool
    from agent_eval_action.run.workers.start import WorkerSettings

    env = agent_environment({**os.environ, "GITHUB_TOKEN": "ghs_x_secret_123", "INPUT_FOO": "bar"}, also_withhold=["MY_AUTH"])
    assert "GITHUB_TOKEN" not in env and "INPUT_FOO" not in env and env.get("PATH") == os.environ.get("PATH")

    async def go() -> list:
        pool = WorkerPool(WorkerSettings(agent="shop", python=sys.executable, cwd=APPS, env=env, workers=2))
        await pool.start()
        try:
            questions = [Question(id=f"q{i}", user_inputs=["look up my order", "thanks"]) for i in range(6)]
            return await asyncio.gather(*(pool.run_question(q, 120) for q in questions))
        finally:
            await pool.close()

    traces = asyncio.run(go())
    for trace in traces:
        names = [s.name for s in trace.spans]
        assert any(n.startswith("invoke_agent") for n in names) and any(n.startswith("execute_tool") for n in names)
        assert len({s.trace_id for s in trace.spans}) == 2  # one per turn, none borrowed from another question
        assert [c.tool_name for c in trace.tool_interactions or []] == ["lookup_order"]
        assert trace.final_state == {"last_order": "A1", "lookups": 1}


def test_a_worker_that_cannot_even_say_it_is_stalled_is_killed_after_its_grace() -> None:
    """A call that keeps the GIL stops the worker's watchdog too: no ``stalled`` comes, and the
    cancel goes unanswered; the question's time out is still its own error once the grace is over."""
    import asyncio

    from agent_eval_action.models.questions import Question
    from agent_eval_action.run.agent.env import agent_environment
    from agent_eval_action.run.workers.pool import WorkerPool
    from agent_eval_action.run.workers.start import WorkerSettings

    async def go() -> BaseException | None:
        pool = WorkerPool(WorkerSettings(agent="hostile", python=sys.executable, cwd=APPS, env=agent_environment(os.environ), workers=1))
        await pool.start()
        try:
            await pool.run_question(Question(id="q_grip", user_inputs=["call grip"]), 1)
        except BaseException as error:  # noqa: BLE001 - what the question ended with is the point
            return error
        finally:
            await pool.close()
        return None

    assert isinstance(asyncio.run(go()), TimeoutError)
