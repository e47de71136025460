"""`make example`: the PR check of the bundled agent against its committed baseline, offline."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from agent_eval_action.text.markdown import escape_md
from tests.helpers.commands import run_cli
from tests.helpers.repos import stored
from tests.helpers.values import timings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "customer_service"
BASELINE = "evaluation/baselines/datasets/customer_service_golden.json"
TIMING = timings()
# How sure the verdict is, as the reason says it: the shipped baseline holds 10 runs a question.
SURE = (
    "q_discount_01, q_discount_02 each pass 0 of 5 runs, 10 of 10 on the base (p < 0.001); their runs fell on "
    "state_management_fidelity (one-sided Fisher test of each question's runs, Holm over 8 questions that could fall, alpha 0.01)"
)


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GOOGLE_", "INPUT_"))}
    env["PYTHONPATH"] = str(ROOT / "src")
    return run_cli(args, cwd=cwd, env=env)


def test_make_example_runs_the_pr_check_and_shows_the_regression(tmp_path: Path) -> None:
    """The command `make example` runs, from the example's folder (Makefile: example)."""
    done = run(EXAMPLE, "check", "--no-comment", "--output-dir", str(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == [
        "gate: FAILED - 2 of 8 questions lost their state writes",
        "  " + SURE,
    ]
    state = next(line for line in lines if line.startswith("  x state_management_fidelity"))
    assert state.split()[2:4] == ["100%", "60%"]
    # Each discount question failed its first run and was run again until the test decided it.
    assert state.endswith("fails the gate: q_discount_01, q_discount_02 pass less often than on the base")
    why = lines.index("  why: 2 questions got worse than on the base")
    assert lines[why + 1 : why + 5] == [
        "    q_discount_01, q_discount_02: state_management_fidelity 100% → 0%",
        '      generate_qr_code result  base: {"qr_code": "QR-123-percentage-10"}',
        "                               now:  error: discounts above 5% need approval",
        "      state discount_value     base: 10.0",
    ]
    assert lines.index("  why: 2 questions got worse than on the base") > lines.index(state) > 1  # verdict, what moved, why
    assert {p.name for p in tmp_path.iterdir()} >= {"results.json", "comment.md", "summary.md", "report.html", "junit.xml"}
    comment = (tmp_path / "comment.md").read_text().splitlines()
    assert comment[1] == "## ❌ Agent evaluation failed: 2 of 8 questions lost their state writes"
    # The trend's last bar is the row's 60% (a mean over the questions, as its history's points
    # are), not the mean over the runs that the re-run questions outweigh (23%: ▃).
    (state_row,) = [line for line in comment if line.startswith("| 🔴 | state\\_management\\_fidelity | 100% | 60% | 5 |")]
    assert "→▅ |" in state_row, state_row
    # Counts that moved within noise show two figures: counted apart from the metrics that held.
    assert "<details><summary>21 metrics unchanged, 4 changed within noise, 6 timings for information</summary>" in comment
    assert "| output\\_tokens | 28.2 | 29.5 | 8 |" in "\n".join(comment)
    # summary.md's table of every metric is over every run, said so, its means' intervals as figures.
    summary = (tmp_path / "summary.md").read_text()
    assert "| state\\_management\\_fidelity | 23.1% | 13 | 3 |" in summary, summary
    assert "Each over the 16 runs of this check (a question run again counts once a run)" in summary
    latency = next(line for line in summary.splitlines() if line.startswith("| latency |"))
    assert "+" not in latency.split(" | ")[5], latency  # [0.11 s, 0.14 s], not a change's [+0.11 s, +0.14 s]
    assert comment[3] == escape_md(SURE)
    # The baseline's timings were measured on another machine: folded for information, never a warning.
    timings = [line for line in comment if "latency" in line and line.startswith("|")]
    assert [line.split(" | ")[0] for line in timings] == ["| ℹ️ latency", "| ℹ️ turn\\_latency"], timings
    assert not any(line.startswith("| ⚠️") and "latency" in line for line in comment)
    assert '| generate\\_qr\\_code result | {"qr\\_code": "QR-123-percentage-10"} | error: discounts above 5% need approval |' in comment
    gate = json.loads((tmp_path / "results.json").read_text())["gate"]
    assert [(f["rule"], f["question"]) for f in gate["failures"]] == [
        ("question_fall", "q_discount_01"),
        ("question_fall", "q_discount_02"),
    ]


def test_the_shipped_baseline_is_the_agent_before_the_change(tmp_path: Path) -> None:
    """Honest: with the cap back at 10% the check passes, and `baseline update` writes the shipped
    baseline again (timings aside, which no two runs share)."""
    repo = tmp_path / "repo"
    copy = repo / "examples" / "customer_service"  # the same repository paths as here
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    tools = copy / "customer_service" / "tools.py"
    assert "\nMAX_DISCOUNT = 5\n" in tools.read_text()
    tools.write_text(tools.read_text().replace("\nMAX_DISCOUNT = 5\n", "\nMAX_DISCOUNT = 10\n"))
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    passed = run(copy, "check", "--no-comment", "--output-dir", str(tmp_path / "out"))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.startswith("gate: passed - ")
    shipped = stored((copy / BASELINE).read_text())
    update = run(copy, "baseline", "update")
    assert update.returncode == 0, update.stderr
    fresh = stored((copy / BASELINE).read_text())

    def stable(data: dict[str, Any]) -> object:
        # What the agent was observed to read and the environment it ran in are the machine's
        # (its interpreter and distributions): compared apart from the scores.
        (dataset,) = data["datasets"]
        questions = [
            {**{k: v for k, v in q.items() if k != "inputs"}, "scores": {n: s for n, s in q["scores"].items() if n not in TIMING}}
            for q in dataset["questions"]
        ]
        summary = {name: figures for name, figures in dataset["summary"].items() if name not in TIMING}
        rest = {k: v for k, v in dataset.items() if k not in ("environment", "environment_parts", "imports")}
        return {**rest, "questions": questions, "summary": summary}

    assert stable(fresh) == stable(shipped)
    (dataset,) = fresh["datasets"]
    assert dataset["environment"] and all(
        "examples/customer_service/customer_service/tools.py" in q["inputs"] for q in dataset["questions"]
    )


def test_example_workflows_upload_the_output_directory() -> None:
    """The comment links to the run's artifacts: every PR workflow must upload report.html there."""
    for workflow in sorted((ROOT / "examples" / "workflows").glob("*.yml")):
        spec = yaml.safe_load(workflow.read_text())
        triggers = spec.get(True, spec.get("on"))  # YAML reads a bare `on` as true
        if "pull_request" not in triggers:
            continue
        steps = [step for job in spec["jobs"].values() for step in job["steps"]]
        uploads = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
        assert any(
            s["with"].get("name") == "agent-eval-results" and s["with"]["path"] == "agent-eval-results/" and s.get("if") == "always()"
            for s in uploads
        ), workflow.name


def test_an_output_folder_that_cannot_take_the_run_holds_none_of_it(tmp_path: Path) -> None:
    """A full disk (here: a file-size limit the views' largest file, report.html, exceeds): the
    folder held the new results.json beside the previous run's report.html, and the check exited
    0. Now it holds no file of either run and the check says so, exit 3."""
    import resource
    import signal
    import sys

    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("<html>the previous run's report</html>")
    (out / "results.json").write_text("{}")

    def limited() -> None:  # in the child: writes past 250 KB fail with EFBIG instead of killing it
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (250_000, 250_000))

    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GOOGLE_", "INPUT_"))}
    env["PYTHONPATH"] = str(ROOT / "src")
    done = subprocess.run(
        [sys.executable, "-m", "agent_eval_action", "check", "--no-comment", "--output-dir", str(out)],
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limited,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"error: could not write the output folder {out} (report.html: [Errno 27] File too large)" in done.stderr, done.stderr
    assert "it now holds none of this run's files (nor an earlier run's)" in done.stderr
    left = {p.name for p in out.iterdir()} - {".agent-eval.lock"}
    assert left == set(), left


def test_the_readme_shows_what_make_example_prints(tmp_path: Path) -> None:
    """The README's sample of `make example`'s output, line by line (spacing aside, and the lines
    that move with the machine or the baseline's history: timings, the trend's bars), is what the
    check prints: it said "unchanged (22)" and a wording of known failures gone two releases ago."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```text\ngate: FAILED - 2 of 8 questions lost their state writes")
    block = readme[start + len("```text\n") : readme.index("```", start + 3)].splitlines()
    done = run(EXAMPLE, "check", "--no-comment", "--output-dir", str(tmp_path))
    printed = {" ".join(line.split()) for line in done.stdout.splitlines()}
    moving = ("...", "█", " s -> ", "make example:")
    shown = [line for line in block if line.strip() and not any(mark in line for mark in moving)]
    assert len(shown) > 15
    missing = [line for line in shown if " ".join(line.split()) not in printed]
    assert not missing, "README.md's sample output is not what the check prints:\n" + "\n".join(missing)
    # The words below the sample that explain its verdict hold the run's own figures: it once said
    # "after 4 failing runs ... 1 in 1,001 ... Holm asks of the first of two questions" where the
    # check ran 5 and tested 8.
    test = json.loads((tmp_path / "results.json").read_text())["comparison"][0]["pass_test"]
    first = min(test["tested"], key=lambda q: q["level"])
    explained = " ".join(readme[readme.index("The verdict comes first, in words") :].split()[:200])
    assert test["tested"] and all(q["decision"] == "failed" for q in test["tested"])
    assert f"the baseline holds {first['baseline_runs']} runs of each" in explained
    assert f"after {first['runs']} failing runs the chance" in explained
    assert f"is 1 in {round(1 / first['p']):,} " in explained
    assert f"under the {first['level']:g} that Holm asks of the first of the {test['m']} questions that could fall" in explained
    before = first["runs"] - 1  # the run before: not yet under, which is why the last one was run
    assert f"after {before} it was 1 in {math.comb(first['baseline_runs'] + before, before):,}, not yet under" in explained
