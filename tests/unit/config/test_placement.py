"""Path placement (``config.placement``): the paths a config writes relative to its own folder,
held relative to the working directory; a config moved into a subfolder keeps finding its files."""

from __future__ import annotations

from pathlib import Path

from agent_eval_action.config import Config, config_from_text, load_config, placed
from agent_eval_action.config.placement import moved

TEXT = """
datasets = ["evaluation/*.json", "!evaluation/drafts/**"]
output-dir = "out"
baselines-dir = "/abs/baselines"
model-cache = "~/cache"
agent-python = ".venv/bin/python"
agent = "app"
metric-definitions = ["defs.json"]
agent-paths = ["app/**"]
[judge]
cache-dir = ".cache/judges"
[judges.tone]
prompt-file = "prompts/tone.j2"
[judges.plain]
prompt = "Is it polite?"
"""


def test_every_path_setting_moves_and_what_is_not_a_relative_path_stays(tmp_path: Path) -> None:
    (tmp_path / "svc" / "app").mkdir(parents=True)
    config = config_from_text(TEXT, "svc/agent-eval.toml", None)
    assert config is not None
    done = placed(config, "svc", tmp_path)
    assert done.datasets == ["svc/evaluation/*.json", "!svc/evaluation/drafts/**"]
    assert (done.output_dir, done.baselines_dir, done.model_cache) == ("svc/out", "/abs/baselines", "~/cache")
    assert done.agent_python == "svc/.venv/bin/python" and done.agent == "svc/app"
    assert done.metric_definitions == ["svc/defs.json"] and done.agent_paths == ["svc/app/**"]
    assert done.judge.cache_dir == "svc/.cache/judges" and done.judges["tone"].prompt_file == "svc/prompts/tone.j2"
    assert done.judges["plain"].prompt_file is None
    assert done.origin.folder == str((tmp_path / "svc").resolve()) and done.origin.moved_from == "svc"
    assert done.origin.file == "svc/agent-eval.toml"  # where it came from stays


def test_placing_changes_a_copy_never_the_config_given(tmp_path: Path) -> None:
    config = config_from_text(TEXT, "agent-eval.toml", None)
    assert config is not None
    placed(config, "svc", tmp_path)
    assert config.output_dir == "out" and config.judge.cache_dir == ".cache/judges" and config.origin.folder is None


def test_a_module_name_is_not_a_path_and_an_agent_directory_only_when_it_exists(tmp_path: Path) -> None:
    assert placed(Config(agent="app.agent:root_agent"), "svc", tmp_path).agent == "app.agent:root_agent"
    assert placed(Config(agent="app"), "svc", tmp_path).agent == "app"  # no svc/app folder: a module name
    assert placed(Config(agent_python="python3.11"), "svc", tmp_path).agent_python == "python3.11"


def test_in_its_own_folder_nothing_moves(tmp_path: Path) -> None:
    done = placed(Config(output_dir="out"), ".", tmp_path)
    assert done.output_dir == "out" and done.origin.moved_from == "." and done.default_datasets() == Config().datasets


def test_moved_keeps_exclusions_and_normalises() -> None:
    assert moved("!drafts/**", "agents") == "!agents/drafts/**"
    assert moved("../shared/*.json", "a/b") == "a/shared/*.json"
    assert moved("x", "") == "x" and moved("/x", "a") == "/x"


def test_a_moved_config_finds_its_files_from_the_working_directory_and_the_import_root(tmp_path: Path) -> None:
    """Run from a folder below the config's: its paths, the built-in dataset globs and the folder
    its agent is imported from are all the config's folder's."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "agent-eval.toml").write_text('datasets = ["sets/*.json"]\n')
    (tmp_path / "agents" / "sub").mkdir()
    found = load_config(cwd=tmp_path / "agents" / "sub")
    assert found.datasets == ["../sets/*.json"]
    assert found.default_datasets() == ["../evaluation/datasets/*.json", "../evaluation/datasets/*.csv", "../evaluation/datasets/*.jsonl"]
    assert found.import_root() == (tmp_path / "agents").resolve()
