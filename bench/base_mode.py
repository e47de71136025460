"""Base mode against baseline mode, and what the verdict's sequential re-runs cost, on one real
git repository: the tests' counting agent (a scripted ADK model that counts its calls, with a
loopback latency per call) and ``--questions`` of its price questions, a baseline of 5 runs a
question written and committed on main, and two PR branches:

- ``pr`` touches the agent's code (a comment), so every question runs: the check against the
  stored baselines (the default) and with ``--compare-with base`` (the merge-base's agent run now,
  beside the PR's), whole processes, alternated (issue 39: at most 2.2x);
- ``broken`` also breaks one question (its tool call goes wrong), so the verdict re-runs it, in
  sequence, until it fails by name.

Each PR's check at the defaults is set beside the same check held to one run a question (the same
changes on a branch off ``main-once``, whose config adds ``[gate] max-reruns = 1``; a model-call
budget would not do: it starts one question alone to learn what a question costs), alternated:
model calls and wall time per question. The base environment's install is measured apart: base mode with an ``--install``
command, first with no venv made (it pays the base's), then again (the base's venv cached, median of
``--repeats``); the PR's own venv is made anew on every check, so every run pays it. The install command links the
bench's own packages into the venv (no download: what is measured is the venv's making around
a team's command, not the command).

Only the command line is used, as a subprocess (the package's internals may move):

    python -m bench.base_mode [--questions 64] [--latency-ms 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.goals import GOALS, bench_env
from bench.verdicts import alternate, median, ratio, reported, row

BROKEN = "0:"  # the question whose text starts so (q00) is the one the broken PR breaks
AGENT_LINE = '            item = said.split()[-1] if said else "nothing"\n'


def make_repos(folder: Path, questions: int, latency_ms: int) -> dict[str, Path]:
    """The four checkouts, each on its PR branch: ``pr`` and ``broken`` off main; ``pr-once`` and
    ``broken-once`` the same changes off ``main-once``, whose ``[gate] max-reruns = 1`` holds the
    check to one run a question (the gate's rules are the base's)."""
    from tests.helpers.repos import commit, counting_repo, git

    repo = counting_repo(folder / "repo", questions)
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.json"]\nagent = "counting"\n')
    commit(repo, "baseline-runs at the default (5)")
    _cli(repo, latency_ms, "baseline", "update")
    commit(repo, "baselines")
    git(repo, "checkout", "-q", "-b", "main-once")
    with (repo / "agent-eval.toml").open("a") as config:
        config.write("[gate]\nmax-reruns = 1\n")
    commit(repo, "one run a question")
    git(repo, "checkout", "-q", "main")
    repos = {}
    for name, base, broken in (
        ("pr-once", "main-once", False),
        ("broken-once", "main-once", True),
        ("broken", "main", True),
        ("pr", "main", False),
    ):
        checkout = repo if name == "pr" else folder / name
        if checkout != repo:
            shutil.copytree(repo, checkout, symlinks=True)
        git(checkout, "checkout", "-q", "-b", name, base)
        _change_agent(checkout / "counting" / "agent.py", broken)
        commit(checkout, "the PR's change to the agent")
        repos[name] = checkout
    return repos


def _change_agent(agent: Path, broken: bool) -> None:
    """Touch the agent's code (every question runs), and with ``broken`` break one question."""
    text = agent.read_text() + "\n# the PR touched the agent: every question runs\n"
    if broken:
        if AGENT_LINE not in text:
            raise SystemExit(f"tests/apps/counting/agent.py changed: no line {AGENT_LINE.strip()!r} to break a question after")
        text = text.replace(AGENT_LINE, AGENT_LINE + f'            item = "nothing" if said.startswith({BROKEN!r}) else item\n')
    agent.write_text(text)


def _cli(repo: Path, latency_ms: int, *args: str, runner_temp: Path | None = None) -> tuple[float, int]:
    """Seconds of the whole CLI process, and the model calls it made; exit 0 or 1 (else it stops the bench)."""
    calls = repo.parent / f"calls-{repo.name}.txt"
    calls.write_text("")
    env = bench_env(CALLS_FILE=str(calls), COUNTING_LATENCY_MS=str(latency_ms))
    if runner_temp is not None:
        env["RUNNER_TEMP"] = str(runner_temp)
    command = [sys.executable, "-m", "agent_eval_action", *args]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}: {(done.stdout + done.stderr)[-2000:]}")
    return seconds, len(calls.read_text().splitlines())


def install_command() -> str:
    """A team's install command stand-in: the bench's own packages (ADK among them) linked into the venv."""
    code = f"import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()['purelib'], 'bench-link.pth').write_text({sysconfig.get_paths()['purelib']!r})"
    return f"python -c {shlex.quote(code)}"


def measure(questions: int = 64, latency_ms: int = 1000, repeats: int = 3) -> dict[str, Any]:
    """Every side alternated ``repeats`` times: seconds and model calls of each run; then the install apart."""
    with tempfile.TemporaryDirectory(prefix="bench-base-mode-") as tmp:
        repos = make_repos(Path(tmp), questions, latency_ms)
        check = ("check", "--no-comment", "--progress", "never")
        calls: dict[str, list[int]] = {}

        def side(name: str, repo: str, *args: str) -> tuple[str, Callable[[], float]]:
            base = "main-once" if repo.endswith("-once") else "main"

            def once() -> float:
                seconds, made = _cli(repos[repo], latency_ms, *check, "--base", base, *args)
                calls.setdefault(name, []).append(made)
                return seconds

            return name, once

        group = dict(
            [
                side("baseline mode", "pr"),
                side("base mode", "pr", "--compare-with", "base"),
                side("unchanged, one run a question", "pr-once"),
                side("one broken", "broken"),
                side("one broken, one run a question", "broken-once"),
            ]
        )
        samples = alternate(group, repeats)
        venvs = Path(tmp) / "venvs"
        venvs.mkdir()
        install = ("--compare-with", "base", "--install", install_command())
        first = _cli(repos["pr"], latency_ms, *check, "--base", "main", *install, runner_temp=venvs)[0]
        cached = [_cli(repos["pr"], latency_ms, *check, "--base", "main", *install, runner_temp=venvs)[0] for _ in range(repeats)]
    return {
        "questions": questions,
        "latency_ms": latency_ms,
        "samples": samples,
        "calls": calls,
        "install": {"first_s": first, "cached": cached, "cached_s": median(cached), "base_install_s": first - median(cached)},
    }


def per_question(seconds: list[float], calls: list[int], questions: int) -> dict[str, float]:
    """Median seconds and model calls of a side's runs, each per question."""
    return {"seconds": median(seconds) / questions, "calls": median(calls) / questions}


def rows(result: dict[str, Any], simulated: dict[str, Any] | None = None) -> list[str]:
    """Base mode against baseline mode, the base's install apart, and the re-runs' cost per question."""
    return [*_base_rows(result), *_rerun_rows(result, simulated)]


def _base_rows(result: dict[str, Any]) -> list[str]:
    s, n, i = result["samples"], result["questions"], result["install"]
    where = f"{n} questions of a scripted ADK agent (two model calls each, {result['latency_ms']} ms a call), a PR touching the agent"
    return [
        row(
            f"`check --compare-with base` (the base's agent run now, beside the PR's), whole process: {where}",
            f"{median(s['base mode']):.2f} s, {median(result['calls']['base mode']):.0f} model calls",
            f"the same PR against the stored baselines {median(s['baseline mode']):.2f} s, "
            f"{median(result['calls']['baseline mode']):.0f} model calls",
            ratio(s["base mode"], s["baseline mode"]),
            GOALS["base_mode"],
            {k: s[k] for k in ("base mode", "baseline mode")},
        ),
        reported(
            "the base environment's install, apart: base mode with an `--install` command (the bench's packages linked into each venv)",
            f"{i['first_s']:.2f} s with the base's venv made",
            f"{i['cached_s']:.2f} s with it cached (median of {len(i['cached'])}; the PR's venv is made on every run)",
            f"{i['base_install_s']:+.2f} s",
        ),
    ]


def _rerun_rows(result: dict[str, Any], simulated: dict[str, Any] | None) -> list[str]:
    s, c, n = result["samples"], result["calls"], result["questions"]
    lines = []
    for scenario, ours, capped, sim in (
        ("an unchanged PR", "baseline mode", "unchanged, one run a question", "unchanged"),
        ("a PR with one broken question", "one broken", "one broken, one run a question", "one_broken"),
    ):
        at, one = per_question(s[ours], c[ours], n), per_question(s[capped], c[capped], n)
        also = ""
        if simulated is not None:
            also = "; simulated stochastic agent (bench/aa_gate.py): " + ", ".join(
                f"{mode} mode {simulated[mode][sim]['cost']:.2f}x" for mode in ("baseline", "base")
            )
        lines.append(
            reported(
                f"the verdict's sequential re-runs on {scenario}, per question ({n} questions, {result['latency_ms']} ms a model call)",
                f"{at['calls']:.2f} model calls, {at['seconds']:.3f} s a question",
                f"one run a question (the base's `[gate] max-reruns = 1`): {one['calls']:.2f} calls, {one['seconds']:.3f} s",
                f"{at['calls'] / one['calls']:.2f}x calls, {at['seconds'] / one['seconds']:.2f}x time{also}",
            )
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=64)
    parser.add_argument("--latency-ms", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    result = measure(args.questions, args.latency_ms, args.repeats)
    print(json.dumps(result, indent=1))
    print("\n".join(rows(result)))


if __name__ == "__main__":
    main()
