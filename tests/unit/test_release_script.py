"""scripts/release_action.py on copies of action.yml: the release's action runs the published image."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from scripts.release_action import ReleaseError, rewrite

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "release_action.py"
IMAGE = "ghcr.io/owner/agent-eval-action"


def release(action: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--action", str(action), *args], capture_output=True, text=True, timeout=60)


@pytest.fixture
def action(tmp_path: Path) -> Path:
    copy = tmp_path / "action.yml"
    shutil.copyfile(ROOT / "action.yml", copy)
    return copy


def test_only_the_image_line_changes_and_the_metadata_is_the_same(action: Path) -> None:
    before = action.read_bytes()
    done = release(action, "--image", IMAGE, "--version", "v1.2.3")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{action}: runs.image is now docker://{IMAGE}:v1.2.3\n"
    assert before.count(b"\n  image: Dockerfile\n") == 1
    assert action.read_bytes() == before.replace(b"\n  image: Dockerfile\n", f"\n  image: docker://{IMAGE}:v1.2.3\n".encode())
    old, new = yaml.safe_load(before), yaml.safe_load(action.read_bytes())
    assert new["runs"] == {"using": "docker", "image": f"docker://{IMAGE}:v1.2.3"}
    assert {k: v for k, v in new.items() if k != "runs"} == {k: v for k, v in old.items() if k != "runs"}


def test_running_it_again_changes_nothing_and_a_new_version_replaces_the_old(action: Path) -> None:
    assert release(action, "--image", IMAGE, "--version", "v1.2.3").returncode == 0
    once = action.read_bytes()
    again = release(action, "--image", IMAGE, "--version", "v1.2.3")
    assert again.returncode == 0 and "already" in again.stdout
    assert action.read_bytes() == once
    assert release(action, "--image", IMAGE, "--version", "v1.3.0-rc.1").returncode == 0
    assert action.read_bytes() == once.replace(b":v1.2.3\n", b":v1.3.0-rc.1\n")


@pytest.mark.parametrize(
    ("image", "version", "says"),
    [
        (IMAGE, "1.2", "not semver-like"),
        (IMAGE, "v1.2.3+build.5", "not semver-like"),
        (IMAGE, "latest", "not semver-like"),
        (IMAGE, "v01.2.3", "not semver-like"),
        ("ghcr.io/Owner/Repo", "v1.2.3", "not a registry path"),
        (f"{IMAGE}:v1", "v1.2.3", "not a registry path"),
        ("agent-eval-action", "v1.2.3", "not a registry path"),
    ],
)
def test_bad_arguments_exit_2_and_leave_the_file(action: Path, image: str, version: str, says: str) -> None:
    before = action.read_bytes()
    done = release(action, "--image", image, "--version", version)
    assert done.returncode == 2 and says in done.stderr and done.stderr.startswith("release_action: ")
    assert action.read_bytes() == before


@pytest.mark.parametrize(
    ("runs", "says"),
    [
        ("runs:\n  using: node20\n  main: dist/index.js\n", "runs.using is node20, not docker"),
        ("runs:\n  using: composite\n  steps: []\n", "runs.using is composite, not docker"),
        ("runs:\n  using: docker\n  image: docker://docker.io/someone/else:v1\n", "expected Dockerfile"),
        ("runs:\n  using: docker\n  image: build/Dockerfile\n", "expected Dockerfile"),
        ("runs:\n  using: docker\n", "runs.image is missing"),
        ("runs: {using: docker, image: Dockerfile}\n", "no block-style `runs:`"),
        ("description: x\n", "no block-style `runs:`"),
    ],
)
def test_anything_but_a_dockerfile_action_is_refused(tmp_path: Path, runs: str, says: str) -> None:
    action = tmp_path / "action.yml"
    action.write_text(f"name: x\n{runs}")
    done = release(action, "--image", IMAGE, "--version", "v1.2.3")
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert action.read_text() == f"name: x\n{runs}"


def test_comments_quotes_and_crlf_survive() -> None:
    text = (
        "name: x  # the name\r\n"
        "runs:  # how it runs\r\n"
        "  # the image is rewritten at release\r\n"
        '  using: "docker"\r\n'
        "  image: 'Dockerfile'   # main builds it\r\n"
        "  args:\r\n"
        "    - image: not-this-one\r\n"
        "  env:\r\n"
        "    image: nor-this\r\n"
        "branding:\r\n"
        "  image: nor-this-either\r\n"
    )
    expected = text.replace("'Dockerfile'", f"'docker://{IMAGE}:v0.1.0'")
    assert rewrite(text, IMAGE, "v0.1.0") == expected
    assert yaml.safe_load(expected)["runs"]["image"] == f"docker://{IMAGE}:v0.1.0"
    assert rewrite(expected, IMAGE, "v0.1.0") == expected


def test_rewrite_raises_a_named_error() -> None:
    with pytest.raises(ReleaseError, match="more than once"):
        rewrite("runs:\n  using: docker\n  image: Dockerfile\n  image: Dockerfile\n", IMAGE, "v1.0.0")
    with pytest.raises(ReleaseError, match="more than one top-level"):
        rewrite("runs:\n  using: docker\n  image: Dockerfile\nruns:\n  using: docker\n", IMAGE, "v1.0.0")


def test_a_missing_file_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    done = release(tmp_path / "nope.yml", "--image", IMAGE, "--version", "v1.2.3")
    assert done.returncode == 2 and done.stderr.startswith("release_action: ") and "Traceback" not in done.stderr


def test_the_release_workflow_publishes_then_rewrites_with_the_script() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["push"]["tags"] == ["v*"] and "workflow_dispatch" in triggers
    assert workflow["permissions"] == {"contents": "write", "packages": "write"}
    steps = [step.get("uses", "") + step.get("run", "") for step in workflow["jobs"]["release"]["steps"]]
    pushed = next(i for i, s in enumerate(steps) if s.startswith("docker/build-push-action@"))
    rewritten = max(i for i, s in enumerate(steps) if "scripts/release_action.py" in s)
    assert pushed < rewritten  # the tag moves only once its image is published
