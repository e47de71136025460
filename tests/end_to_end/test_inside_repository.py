"""Inputs stay inside the repository: a pull request that links a dataset, the config, a template
or a judge prompt to a file outside (``/proc/self/environ``) gets exit 2 and a message naming the
link, and nothing of the file's content anywhere. What the user names on the command line is
theirs: a file is read wherever it is, symlinks and all."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.commands import run_cli
from tests.helpers.factories import csv_row, customer_service_runs, write_csv
from tests.helpers.repos import git

ROOT = Path(__file__).resolve().parents[2]
MARKER = "MARKER_outside_7f3a9c"
CANARY = {"ZZ_CANARY_VALUE": "canary-plain-value-52918"}  # no secret-like name: never redacted, so never hidden by redaction


def cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    full.update({"PYTHONPATH": str(ROOT / "src"), **CANARY, **(env or {})})
    return run_cli(args, cwd=cwd, env=full)


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """Another directory, outside the repository, with files holding the marker."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    rows = [csv_row(run) for run in customer_service_runs()[:2]]
    rows[0]["final_response"] = MARKER
    rows[1]["reference_data"] = "{" + MARKER  # broken JSON: its error message would quote the cell
    write_csv(other / "stolen.csv", rows)
    (other / "prompt.txt").write_text(f"{MARKER} rate {{{{ final_response }}}}")
    (other / "comment.md.j2").write_text(f"{{{{ marker }}}} {MARKER}")
    (other / "definitions.json").write_text(json.dumps({"tone": {"template": MARKER}}))
    (other / "agent-eval.toml").write_text(f'output-dir = "{MARKER}"\n')
    return other


@pytest.fixture
def repo(tmp_path: Path, elsewhere: Path) -> Path:
    repo = tmp_path / "repo"
    datasets = repo / "evaluation" / "datasets"
    datasets.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    write_csv(datasets / "good.csv", [csv_row(run) for run in customer_service_runs()])
    (datasets / "env.jsonl").symlink_to("/proc/self/environ")
    (datasets / "stolen.csv").symlink_to(elsewhere / "stolen.csv")
    (repo / "evaluation" / "linked").symlink_to(elsewhere, target_is_directory=True)
    return repo


def assert_nothing_read(*texts: str) -> None:
    for text in texts:
        assert MARKER not in text and CANARY["ZZ_CANARY_VALUE"] not in text, text


def test_dataset_links_outside_are_refused_and_the_valid_dataset_is_scored(repo: Path) -> None:
    for args in (
        ["evaluate"],  # the config's globs
        ["evaluate", "evaluation/datasets"],  # a directory
        ["run"],
    ):
        done = cli(repo, *args)
        assert done.returncode == 2, (args, done.stdout + done.stderr)
        reason = "resolves outside the repository"
        assert f"error: evaluation/datasets/env.jsonl: {reason} ({repo})" in done.stderr, (args, done.stderr)
        assert f"error: evaluation/datasets/stolen.csv: {reason}" in done.stderr
        results = (repo / "agent-eval-results" / "results.json").read_text()
        assert_nothing_read(done.stdout, done.stderr, results)
        assert [d["name"] for d in json.loads(results)["datasets"]] == ["good"], args
        assert "Traceback" not in done.stderr

    linked = cli(repo, "evaluate", "evaluation/linked")  # a directory that is itself a link
    assert linked.returncode == 2 and "evaluation/linked/stolen.csv: resolves outside the repository" in linked.stderr
    validated = cli(repo, "validate", "evaluation/datasets")
    assert validated.returncode == 2 and "ok: evaluation/datasets/good.csv" in validated.stdout
    assert_nothing_read(linked.stdout, linked.stderr, validated.stdout, validated.stderr)


def test_a_link_inside_the_repository_is_fine_and_so_is_the_actions_workspace(repo: Path, tmp_path: Path) -> None:
    (repo / "evaluation" / "datasets" / "env.jsonl").unlink()
    (repo / "evaluation" / "datasets" / "stolen.csv").unlink()
    (repo / "evaluation" / "datasets" / "again.csv").symlink_to(repo / "evaluation" / "datasets" / "good.csv")
    assert cli(repo, "evaluate", "evaluation/datasets/again.csv").returncode == 0
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    # The config's glob names the repository's datasets from a folder outside it: confined to the
    # working directory, unless that repository is the Actions workspace.
    (outside / "agent-eval.toml").write_text(f"datasets = ['{repo}/evaluation/datasets/good.csv']\n")
    refused = cli(outside, "evaluate")
    assert refused.returncode == 2 and "good.csv: resolves outside the repository" in refused.stderr
    assert cli(outside, "evaluate", env={"GITHUB_WORKSPACE": str(repo)}).returncode == 0


def test_files_named_on_the_command_line_are_read_wherever_they_are(repo: Path, elsewhere: Path, tmp_path: Path) -> None:
    """``validate ~/Downloads/run.csv`` from inside a repository: the user chose the file."""
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    write_csv(downloads / "run.csv", [csv_row(run) for run in customer_service_runs()])
    for command in ("validate", "evaluate"):
        done = cli(repo / "evaluation", command, str(downloads / "run.csv"))
        assert done.returncode == 0, (command, done.stdout + done.stderr)
    assert "ok: " + str(downloads / "run.csv") in cli(repo, "validate", str(downloads / "run.csv")).stdout
    converted = cli(repo, "convert", str(downloads / "run.csv"), "--to", "golden", "-o", str(tmp_path / "golden.json"))
    assert converted.returncode == 0, converted.stderr
    # A link the user names is followed too (symlinks and all) ...
    linked = cli(repo, "validate", "evaluation/datasets/stolen.csv")
    assert "resolves outside" not in linked.stderr and "stolen.csv" in linked.stdout, linked.stdout + linked.stderr
    # ... and a folder named outside the repository is read, but a link in it must not lead out of it.
    (downloads / "more.csv").symlink_to(elsewhere / "stolen.csv")
    folder = cli(repo, "validate", str(downloads))
    assert f"ok: {downloads / 'run.csv'}" in folder.stdout, folder.stdout + folder.stderr
    assert f"error: {downloads / 'more.csv'}: resolves outside the repository" in folder.stderr
    assert_nothing_read(folder.stdout, folder.stderr)
    glob = cli(repo, "validate", f"{downloads}/*.csv")
    assert f"ok: {downloads / 'run.csv'}" in glob.stdout and "more.csv: resolves outside the repository" in glob.stderr


@pytest.mark.parametrize(
    ("config", "setting"),
    [
        ("templates_dir = '{elsewhere}'", "templates_dir: {elsewhere} resolves outside the repository"),
        ("templates_dir = 'templates'", "templates_dir comment.md.j2: templates/comment.md.j2 resolves outside the repository"),
        ("[judges.tone]\nprompt_file = '{elsewhere}/prompt.txt'", "judges.tone.prompt_file: {elsewhere}/prompt.txt resolves outside"),
        ("metric_definitions = ['{elsewhere}/definitions.json']", "metric_definitions: {elsewhere}/definitions.json resolves outside"),
    ],
)
def test_settings_naming_files_outside_are_refused(repo: Path, elsewhere: Path, config: str, setting: str) -> None:
    (repo / "evaluation" / "datasets" / "env.jsonl").unlink()
    (repo / "evaluation" / "datasets" / "stolen.csv").unlink()
    (repo / "templates").mkdir()
    (repo / "templates" / "comment.md.j2").symlink_to(elsewhere / "comment.md.j2")
    (repo / "agent-eval.toml").write_text(config.format(elsewhere=elsewhere) + "\n")
    done = cli(repo, "run")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"error: {setting.format(elsewhere=elsewhere)}" in done.stderr, done.stderr
    assert_nothing_read(done.stdout, done.stderr)
    for name in ("results.json", "comment.md", "summary.md"):
        if (repo / "agent-eval-results" / name).is_file():
            assert_nothing_read((repo / "agent-eval-results" / name).read_text())


def test_a_config_file_found_outside_is_refused_and_one_named_is_read(repo: Path, elsewhere: Path, tmp_path: Path) -> None:
    (repo / "agent-eval.toml").symlink_to(elsewhere / "agent-eval.toml")
    done = cli(repo, "evaluate")
    assert done.returncode == 2 and "error: config: agent-eval.toml resolves outside the repository" in done.stderr
    assert_nothing_read(done.stdout, done.stderr)
    (repo / "evaluation" / "app").mkdir()  # found from a subfolder, above it: the same
    below = cli(repo / "evaluation" / "app", "evaluate")
    assert below.returncode == 2 and "error: config: ../../agent-eval.toml resolves outside the repository" in below.stderr
    assert_nothing_read(below.stdout, below.stderr)
    # The action's config input is a PR's to set: confined.
    (repo / "agent-eval.toml").unlink()
    (repo / "linked.toml").symlink_to(elsewhere / "agent-eval.toml")
    home = tmp_path / "home"
    home.mkdir()
    env = {"GITHUB_WORKSPACE": str(repo), "GITHUB_EVENT_NAME": "workflow_dispatch", "INPUT_CONFIG": "linked.toml"}
    action = cli(tmp_path, "action", env={**env, "HOME": str(home), "INPUT_COMMENT": "false"})
    assert action.returncode == 2 and "error: config: linked.toml resolves outside the repository" in action.stderr
    # A config the user names on the command line is theirs: read where it is, its paths relative to its folder.
    (elsewhere / "agent-eval.toml").write_text("datasets = ['stolen.csv']\n")
    named = cli(repo, "evaluate", "--config", str(elsewhere / "agent-eval.toml"))
    assert "error: config" not in named.stderr, named.stderr
    assert "error: ../elsewhere/stolen.csv: resolves outside the repository" in named.stderr  # its datasets stay confined
