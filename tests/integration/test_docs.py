"""Every example in the README and docs/ is run or checked against the code, by its kind:

- ``toml``: loaded by our config loader (the files a block names are made first);
- ``json``: a dataset, loaded by our loaders with no problem and no warning;
- ``bash``: run, unless an HTML comment ``<!-- not run: REASON -->`` just before it says why not
  (the README's "Use it in your repo" steps are run by test_readme.py);
- ``text`` synopses of the command line: each command exists and takes each flag shown;
- ``python``: run by test_api.py (each block is one of its marked examples);
- ``yaml``: a workflow whose step of this action gives only inputs action.yml declares;
- ``jinja``: rendered as the user's comment template.

And every link between the pages points at a page and a heading that exist.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import yaml

from tests.helpers.commands import run_cli

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
KINDS = {"toml", "json", "bash", "text", "python", "yaml", "jinja"}


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    kind: str
    body: str
    note: str  # the HTML comment just before the block, if any

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for page in PAGES:
        text = page.read_text()
        for match in re.finditer(r"^( *)```(\w*)\n(.*?)^\1```$", text, re.S | re.M):
            before = text[: match.start()].rstrip().splitlines()
            note = before[-1].strip() if before and before[-1].strip().startswith("<!--") else ""
            body = "".join(line[len(match.group(1)) :] + "\n" for line in match.group(3).splitlines())
            found.append(Block(page, text.count("\n", 0, match.start()) + 1, match.group(2), body, note))
    return found


def of_kind(kind: str) -> list[Block]:
    return [b for b in blocks() if b.kind == kind]


def in_readme_steps(block: Block) -> bool:
    text = block.page.read_text()
    if block.page.name != "README.md":
        return False
    start = text.index("## Use it in your repo\n")
    end = text.index("\n## ", start + 1)
    offset = sum(len(line) + 1 for line in text.splitlines()[: block.line - 1])
    return start <= offset < end


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GOOGLE_", "INPUT_"))}
    out["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), out.get("PATH", "/usr/bin:/bin")])  # `python` is ours
    out["PYTHONPATH"] = str(ROOT / "src")
    return out


def test_every_block_says_what_it_is() -> None:
    assert blocks(), "no code blocks found"
    unknown = [f"{b}: {b.kind or 'no language'}" for b in blocks() if b.kind not in KINDS]
    assert not unknown, unknown


@pytest.mark.parametrize("block", of_kind("toml"), ids=str)
def test_toml_blocks_load_as_config(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_eval_action.config import load_config

    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    # What the block names: a custom metric's module (the function its comment shows), a judge's prompt file.
    for module, function in re.findall(r'function = "(\w+):(\w+)"', block.body):
        shown = re.search(rf"# (def {function}\(.*)$", block.body, re.M)
        assert shown, f"{block}: the function {function} is not shown"
        (tmp_path / f"{module}.py").write_text(shown.group(1) + "\n")
        monkeypatch.syspath_prepend(str(tmp_path))
    for prompt in re.findall(r'prompt-file = "([^"]+)"', block.body):
        (tmp_path / prompt).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / prompt).write_text("Is this answer polite? {{ final_response }} Reference: {{ reference }}")
    (tmp_path / "agent-eval.toml").write_text(block.body)
    try:
        config = load_config("agent-eval.toml")
    finally:
        for module, _ in re.findall(r'function = "(\w+):(\w+)"', block.body):
            sys.modules.pop(module, None)
    assert config.origin.file is not None and config.origin.file.endswith("agent-eval.toml")


@pytest.mark.parametrize("block", of_kind("json"), ids=str)
def test_json_blocks_are_datasets_that_load_cleanly(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_eval_action as aea

    monkeypatch.chdir(tmp_path)
    data = json.loads(block.body)
    assert "golden_questions" in data, f"{block}: only golden datasets are shown as json"
    (tmp_path / "shown_golden.json").write_text(block.body)
    dataset = aea.load("shown_golden.json")
    assert dataset.format == "golden" and not dataset.problems and not dataset.warnings
    assert [q.id for q in dataset.questions] == [q["id"] for q in data["golden_questions"]]


@pytest.mark.parametrize("block", [b for b in of_kind("bash") if not in_readme_steps(b)], ids=str)
def test_bash_blocks_run(block: Block, tmp_path: Path) -> None:
    if block.note.startswith("<!-- not run:"):
        assert len(block.note) > len("<!-- not run: -->") + 10, f"{block}: say why it is not run"
        return
    # The repository's examples, in a place the commands may write to.
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.body], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{block}: $ {block.body}{done.stdout}{done.stderr}"


@cache
def help_of(command: str) -> str:
    # In this process: argparse wraps at $COLUMNS, else the terminal's width, else 80 (a pipe's).
    done = run_cli([*command.split(), "--help"], cwd=Path.cwd(), env={"COLUMNS": "80", **env()})
    assert done.returncode == 0, f"{command}: {done.stderr}"
    return done.stdout


@pytest.mark.parametrize("block", [b for b in of_kind("text") if "python -m agent_eval_action " in b.body], ids=str)
def test_command_synopses_name_real_commands_and_flags(block: Block) -> None:
    command = ""
    for line in block.body.splitlines():
        shown = line.split("#")[0]
        match = re.match(r"python -m agent_eval_action (baseline update|\w+)", shown)
        if match:
            command = match.group(1)
        elif not line.startswith(" "):
            continue  # not a command and not its continuation
        assert command, f"{block}: {line}"
        for flag in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", shown):
            assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", help_of(command)), f"{block}: `{command}` takes no {flag}"


def test_python_blocks_are_the_examples_test_api_runs() -> None:
    api_tests = (ROOT / "tests" / "integration" / "test_api.py").read_text()
    for block in of_kind("python"):
        marker = re.match(r"<!-- ([\w-]+)", block.note)
        assert marker and f'page_example("{marker.group(1)}")' in api_tests, f"{block} is run by no test"


@pytest.mark.parametrize("block", of_kind("yaml"), ids=str)
def test_workflow_blocks_give_only_declared_inputs(block: Block) -> None:
    declared = set(yaml.safe_load((ROOT / "action.yml").read_text())["inputs"])
    workflow = yaml.safe_load(block.body)
    steps = [s for job in workflow["jobs"].values() for s in job["steps"] if "agent-eval-action@" in s.get("uses", "")]
    assert steps, f"{block}: no step uses the action"
    for step in steps:
        assert set(step.get("with", {})) <= declared, f"{block}: {set(step['with']) - declared}"


@pytest.mark.parametrize("block", of_kind("jinja"), ids=str)
def test_template_blocks_render_as_the_users_comment(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_eval_action.views.render import Renderer, render_comment, view
    from tests.helpers.publishing import sample_results

    monkeypatch.chdir(tmp_path)  # templates_dir must lie inside the working directory
    (tmp_path / "comment.md.j2").write_text(block.body)
    comment = render_comment(Renderer(str(tmp_path)), view(sample_results()))
    footer = re.search(r"{% block footer %}(.*?){{", block.body)
    assert footer and footer.group(1).strip() in comment


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_between_pages_reach_a_page_and_a_heading() -> None:
    broken = []
    for page in PAGES:
        text = re.sub(r"^( *)```.*?^\1```$", "", page.read_text(), flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'<img src="([^"]+)"', text):
            if re.match(r"https?://", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor:
                prose = re.sub(r"^( *)```.*?^\1```$", "", linked.read_text(), flags=re.S | re.M)  # a `# comment` in code is no heading
                headings = {slug(h) for h in re.findall(r"^#+ (.*)$", prose, re.M)}
                if anchor not in headings:
                    broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


def test_the_pages_call_the_pr_check_by_its_name() -> None:
    for page in PAGES:
        assert "agent_eval_action run" not in page.read_text(), f"{page.name} still says `run`; the command is `check`"


def test_the_pages_name_only_installed_programs() -> None:
    """A program named before a command (`agent-eval fork-comment`) is one that installing the
    package puts on PATH (pyproject's [project.scripts]), and the command is one of its commands."""
    import tomllib

    scripts = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"])
    commands = set(re.findall(r"^    ([a-z][\w-]*)", help_of(""), re.M))
    wrong = []
    for page in PAGES:
        for program, command in re.findall(r"`(agent-eval(?:-action)?) ([a-z][\w-]*)", page.read_text()):
            if program not in scripts or command not in commands:
                wrong.append(f"{page.name}: `{program} {command}`")
    assert not wrong, f"no such program or command (scripts: {sorted(scripts)}): {wrong}"
