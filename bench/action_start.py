"""Job start to the first evaluated question, for the action's two ways of getting its image:
``python -m bench.action_start [--pulls N] [--compare-ref REF]``.

A ``runs.using: docker`` action whose ``image`` is the Dockerfile is built at every job start (a
hosted runner has no layer cache); a tagged release points ``image`` at ``docker://`` a prebuilt
image, which the job pulls instead. Both then run the entrypoint. This measures both side by side
on the bundled example (offline, scripted model), with podman or docker:

- build: ``build --no-cache`` of this checkout's Dockerfile, then run until the first question;
- pull: the same image pushed to a loopback registry (Debian's ``docker-registry``), removed,
  pulled and run until the first question, which is what ``docker://`` costs apart from the
  network (the registry's compressed layer size is reported: that is what a runner downloads).

"First question" is the first progress line (``<dataset>: 1/N runs``), which the action prints
when the first question's run has finished (the example's config gets ``progress = "always"``).
The base image is not pulled in either way (it is the local one scripts/container-setup.sh
makes, or AGENT_EVAL_BASE_IMAGE), so both leave out the same base-image pull.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
STATE = Path(os.environ.get("AGENT_EVAL_CONTAINER_STATE", "/tmp/agent-eval-container"))
LOCAL_BASE = "localhost/agent-eval-base:bookworm"
TAG = "localhost/agent-eval-action:bench"
FIRST_QUESTION = re.compile(r": 1(/\d+)? runs\b")
INSTALL_HINT = (
    "install podman (Debian/Ubuntu: apt-get install podman runc; `bash scripts/container-setup.sh` does that and makes "
    "the local base image), or start a Docker engine"
)


@dataclass(frozen=True)
class Tool:
    name: str  # podman or docker
    env: dict[str, str]

    def run(self, *args: str, check: bool = True, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.name, *args], env=self.env, capture_output=True, text=True, check=check, timeout=timeout)

    def insecure(self) -> list[str]:
        # docker already treats registries on 127.0.0.0/8 as insecure; podman is told.
        return ["--tls-verify=false"] if self.name == "podman" else []

    def exists(self, image: str) -> bool:
        return self.run("image", "inspect", image, check=False).returncode == 0

    def size(self, image: str) -> int:
        return int(self.run("image", "inspect", "--format", "{{.Size}}", image).stdout.strip())


def container_tool() -> Tool | str:
    """podman (with the containers.conf scripts/container-setup.sh writes), else a docker whose
    engine answers; otherwise why neither can be used."""
    env = dict(os.environ)
    if shutil.which("podman"):
        if "CONTAINERS_CONF" not in env and (STATE / "containers.conf").exists():
            env["CONTAINERS_CONF"] = str(STATE / "containers.conf")
        tool = Tool("podman", env)
        done = tool.run("info", check=False, timeout=120)
        if done.returncode == 0:
            return tool
        return f"podman is installed but `podman info` failed: {done.stderr.strip()[-300:]}"
    if shutil.which("docker"):
        tool = Tool("docker", env)
        if tool.run("info", check=False, timeout=60).returncode == 0:
            return tool
        return f"docker is only a client here (no engine answers `docker info`); {INSTALL_HINT}"
    return f"no podman or docker on PATH; {INSTALL_HINT}"


def _base(tool: Tool) -> str | None:
    """The base image passed as BASE_IMAGE: none means the Dockerfile's default, pulled."""
    if os.environ.get("AGENT_EVAL_BASE_IMAGE"):
        return os.environ["AGENT_EVAL_BASE_IMAGE"]
    return LOCAL_BASE if tool.exists(LOCAL_BASE) else None


def build(tool: Tool, context: Path, tag: str, base: str | None) -> float:
    args = ["build", "--no-cache", "--network", "host", "-t", tag]
    if base:
        args += ["--build-arg", f"BASE_IMAGE={base}"]
        if tool.name == "podman":
            args.append("--pull=never")
    t0 = time.perf_counter()
    tool.run(*args, str(context))
    return time.perf_counter() - t0


def workspace(tmp: Path) -> Path:
    """A checkout of the bundled example as the runner mounts it, with the runner's file commands."""
    ws = tmp / "workspace"
    shutil.copytree(ROOT / "examples" / "customer_service", ws, ignore=shutil.ignore_patterns("__pycache__"))
    with (ws / "agent-eval.toml").open("a") as config:
        config.write('\nprogress = "always"\n')
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "example"]):
        subprocess.run(["git", "-c", "user.email=bench@example.com", "-c", "user.name=bench", *args], cwd=ws, check=True)
    (tmp / "file_commands").mkdir()
    for name in ("output", "summary"):
        (tmp / "file_commands" / name).touch()
    (tmp / "event.json").write_text("{}")
    return ws


def first_question(tool: Tool, image: str, tmp: Path) -> dict[str, float]:
    """Seconds from `run` to the first question's progress line, and to the end of the run."""
    mounts = {tmp / "workspace": "/github/workspace", tmp / "file_commands": "/github/file_commands", tmp: "/github/workflow"}
    env = {
        "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": "/github/workspace", "GITHUB_EVENT_NAME": "workflow_dispatch",
        "GITHUB_EVENT_PATH": "/github/workflow/event.json", "GITHUB_REPOSITORY": "o/r", "GITHUB_OUTPUT": "/github/file_commands/output",
        "GITHUB_STEP_SUMMARY": "/github/file_commands/summary", "INPUT_COMMENT": "false", "INPUT_OUTPUT-DIR": "agent-eval-results",
        "HOME": "/github/workflow",
    }  # fmt: skip
    args = [tool.name, "run", "--rm", "--network", "none", "--workdir", "/github/workspace"]
    for host, target in mounts.items():
        args += ["-v", f"{host}:{target}"]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    t0 = time.perf_counter()
    proc = subprocess.Popen([*args, image], env=tool.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    first: float | None = None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if first is None and FIRST_QUESTION.search(line):
            first = time.perf_counter() - t0
    code = proc.wait()
    total = time.perf_counter() - t0
    # The example's gate passes or fails (0 or 1); anything else means the run did not evaluate.
    if first is None or code not in (0, 1):
        raise RuntimeError(f"the action exited {code} without a first-question line:\n{''.join(lines)[-2000:]}")
    return {"first_question_s": first, "run_s": total}


@contextlib.contextmanager
def loopback_registry(tmp: Path) -> Iterator[str | None]:
    """Debian's docker-registry on a free 127.0.0.1 port (its address), or None when not installed."""
    binary = shutil.which("docker-registry")
    if binary is None:
        yield None
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = tmp / "registry.yml"
    config.write_text(f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {tmp / 'registry'}\nhttp:\n  addr: 127.0.0.1:{port}\n")
    proc = subprocess.Popen([binary, "serve", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("the loopback docker-registry did not start")
            time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _blobs_bytes(storage: Path) -> int:
    """What a runner downloads: the compressed layers and config stored in the registry."""
    return sum(f.stat().st_size for f in (storage / "docker" / "registry" / "v2" / "blobs").rglob("data"))


def _context_at(ref: str, tmp: Path) -> Path:
    """The build context (what .dockerignore lets through) as it was at a git ref."""
    context = tmp / f"context-{re.sub(r'[^A-Za-z0-9]', '_', ref)}"
    context.mkdir()
    archive = subprocess.run(
        ["git", "archive", ref, "Dockerfile", "requirements.runtime.lock", "src"], cwd=ROOT, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(context)], input=archive.stdout, check=True)
    shown = subprocess.run(["git", "show", f"{ref}:.dockerignore"], cwd=ROOT, capture_output=True, check=False)
    if shown.returncode == 0:
        (context / ".dockerignore").write_bytes(shown.stdout)
    return context


def measure(pulls: int = 3, compare_ref: str | None = None) -> dict[str, Any]:
    """Both ways side by side; ``{"skipped": reason}`` when no container tool can run here."""
    tool = container_tool()
    if isinstance(tool, str):
        return {"skipped": tool}
    base = _base(tool)
    result: dict[str, Any] = {"tool": tool.name, "base_image": base or "the Dockerfile's default (pulled)"}
    with tempfile.TemporaryDirectory(prefix="agent-eval-action-start-") as name:
        tmp = Path(name)
        workspace(tmp)
        if compare_ref:
            old = f"{TAG}-{re.sub(r'[^A-Za-z0-9_.-]', '_', compare_ref)}"
            seconds = build(tool, _context_at(compare_ref, tmp), old, base)
            result["compare"] = {"ref": compare_ref, "build_s": seconds, "image_bytes": tool.size(old)}
            tool.run("rmi", old, check=False)
        result["build_s"] = build(tool, ROOT, TAG, base)
        result["image_bytes"] = tool.size(TAG)
        result["base_bytes"] = tool.size(base) if base else None
        result["build_run"] = first_question(tool, TAG, tmp)
        result["prebuilt_run"] = first_question(tool, TAG, tmp)  # a self-hosted runner that kept the image
        with loopback_registry(tmp) as registry:
            if registry is None:
                result["pull"] = {"skipped": "no docker-registry on PATH (Debian: apt-get install docker-registry)"}
            else:
                remote = f"{registry}/agent-eval-action:bench"
                tool.run("tag", TAG, remote)
                tool.run("push", *tool.insecure(), remote)
                samples = []
                for _ in range(pulls):
                    tool.run("rmi", "-f", TAG, remote, check=False)
                    t0 = time.perf_counter()
                    tool.run("pull", *tool.insecure(), remote)
                    pulled = time.perf_counter() - t0
                    samples.append({"pull_s": pulled, **first_question(tool, remote, tmp)})
                samples.sort(key=lambda s: s["pull_s"] + s["first_question_s"])
                result["pull"] = {"compressed_bytes": _blobs_bytes(tmp / "registry"), "runs": len(samples), **samples[len(samples) // 2]}
                tool.run("rmi", "-f", remote, check=False)
        tool.run("rmi", "-f", TAG, check=False)
    result["build_to_first_s"] = result["build_s"] + result["build_run"]["first_question_s"]
    pull = result["pull"]
    if "pull_s" in pull:
        result["pull_to_first_s"] = pull["pull_s"] + pull["first_question_s"]
        result["ratio"] = result["build_to_first_s"] / result["pull_to_first_s"]
    return result


def rows(r: dict[str, Any]) -> list[str]:
    """Markdown table rows in bench/run.py's columns (benchmark | ours | reference | ratio | goal)."""
    if "skipped" in r:
        return [f"| action start (job start -> first question) | skipped: {r['skipped']} | | | |"]
    mb = 1e6  # podman and docker report sizes in decimal MB
    size = f"image {r['image_bytes'] / mb:.0f} MB"
    if r.get("base_bytes"):
        size += f" ({(r['image_bytes'] - r['base_bytes']) / mb:.0f} MB on the {r['base_bytes'] / mb:.0f} MB base)"
    out = []
    pull = r["pull"]
    if "pull_s" in pull:
        out.append(
            f"| action start, job start -> first question, `docker://` prebuilt image | {r['pull_to_first_s']:.1f} s "
            f"(pull {pull['pull_s']:.1f} s from a loopback registry, {pull['compressed_bytes'] / mb:.0f} MB compressed; run {pull['first_question_s']:.1f} s) "
            f"| Dockerfile built at job start {r['build_to_first_s']:.1f} s (build {r['build_s']:.1f} s, run {r['build_run']['first_question_s']:.1f} s) "
            f"| {r['ratio']:.1f}x faster | prebuilt |"
        )
    else:
        out.append(
            f"| action start, job start -> first question | image already present {r['prebuilt_run']['first_question_s']:.1f} s; pull skipped: {pull['skipped']} "
            f"| Dockerfile built at job start {r['build_to_first_s']:.1f} s | | |"
        )
    compare = r.get("compare")
    if compare:
        out.append(
            f"| action image size | {size}, built in {r['build_s']:.0f} s | {compare['ref']}: {compare['image_bytes'] / mb:.0f} MB, built in {compare['build_s']:.0f} s "
            f"| {r['image_bytes'] / compare['image_bytes']:.2f}x | as small as it can be |"
        )
    else:
        out.append(f"| action image size | {size}, built in {r['build_s']:.0f} s | | | as small as it can be |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pulls", type=int, default=3, help="pull-and-run repeats (the median is reported)")
    parser.add_argument("--compare-ref", help="also build the image of this git ref (e.g. main) and report its size and build time")
    args = parser.parse_args()
    result = measure(pulls=args.pulls, compare_ref=args.compare_ref)
    if "skipped" in result:
        print(f"skipped: the action start bench (image built vs pulled, job start -> first question, image size): {result['skipped']}")
        return
    print("| benchmark | ours | reference | ratio | goal |")
    print("|---|---|---|---|---|")
    print("\n".join(rows(result)))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "action_start.json").write_text(json.dumps(result, indent=2))
    print(f"\nwrote {OUT / 'action_start.json'}", file=sys.stderr)


if __name__ == "__main__":
    main()
