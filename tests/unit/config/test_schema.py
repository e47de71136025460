"""The schema (``config.schema``, ``config.tables``): settings spelt with hyphens or underscores,
a bad one named with its fix (did you mean), flags laid over a file through the same validation,
and where a config came from kept apart from its settings (``Origin``)."""

from __future__ import annotations

import pickle

import pytest

from agent_eval_action.config import Config, Origin, config_from_text
from agent_eval_action.system.errors import ConfigError


def _refusal(text: str, name: str = "agent-eval.toml", table: str | None = None) -> str:
    with pytest.raises(ConfigError) as refused:
        config_from_text(text, name, table)
    return str(refused.value)


def test_an_unknown_setting_is_named_with_the_one_it_misspells() -> None:
    said = _refusal("dataset = []\n")
    assert said.startswith("agent-eval.toml: dataset") and "did you mean `datasets`" in said


def test_an_unknown_setting_in_a_table_is_named_with_its_table() -> None:
    said = _refusal("[gate]\nmax-regresion = 0.1\n")
    assert "gate.max_regresion" in said and "did you mean `max-regression`" in said
    said = _refusal("[tool.agent-eval.judge]\nmodle = 'x'\n", "pyproject.toml", "tool.agent-eval")
    assert said.startswith("pyproject.toml [tool.agent-eval]: judge.modle") and "did you mean `model`" in said


def test_a_name_near_nothing_asks_to_check_the_spelling() -> None:
    assert "unknown setting (check the spelling)" in _refusal("zzz = 1\n")


def test_an_unknown_metric_is_named_with_the_one_it_misspells() -> None:
    said = _refusal('metrics = ["tool_trajectory_avg_scor"]\n')
    assert "metrics" in said and "did you mean `tool_trajectory_avg_score`" in said


def test_values_are_checked_where_they_are_written() -> None:
    assert "max_regression" in _refusal('[gate]\nmax-regression = "five"\n')
    assert "concurrency" in _refusal('concurrency = "lots"\n')
    assert "quota" in _refusal('[quota]\n"gemini-2.5-flash" = "fast"\n')
    assert "datasets" in _refusal('datasets = ["!drafts/**"]\n')


def test_hyphens_and_underscores_are_one_setting_but_model_names_keep_theirs() -> None:
    config = config_from_text('output-dir = "a"\n[prices."gemini-x"]\ninput = 1\noutput = 2\n[quota]\n"m-1" = "5rpm"\n', "f", None)
    assert config is not None and config.output_dir == "a" and "gemini-x" in config.prices and config.quota["m-1"].rpm == 5


def test_flags_are_validated_as_the_file_is_and_named_as_given() -> None:
    config = config_from_text("seed = 1\n", "agent-eval.toml", None)
    assert config is not None
    laid = config.with_overrides(runs=3, seed=None)
    assert laid.runs == 3 and laid.seed == 1
    assert laid.origin.given == {"runs"} and laid.origin.file == "agent-eval.toml"
    with pytest.raises(ConfigError, match=r"agent-eval\.toml: runs"):
        config.with_overrides(runs=0)
    with pytest.raises(ConfigError, match="command line: runs"):
        Config().with_overrides(runs=0)


def test_where_a_config_came_from_is_never_a_setting() -> None:
    config = config_from_text("seed = 1\n", "agent-eval.toml", None)
    assert config is not None
    assert config.origin == Origin(source="agent-eval.toml", file="agent-eval.toml")
    assert "file" not in config.model_dump() and "origin" not in config.model_dump()
    moved = config.with_origin(metrics_folder="/tmp/m")
    assert moved.origin.metrics_folder == "/tmp/m" and config.origin.metrics_folder is None
    with pytest.raises(AttributeError):
        config.origin.file = "other.toml"  # type: ignore[misc]


def test_the_origin_survives_copies_and_pickling_but_not_a_new_validation() -> None:
    config = config_from_text("seed = 1\n", "agent-eval.toml", None)
    assert config is not None
    given = config.with_overrides(runs=2)
    assert given.model_copy(update={"seed": 4}).origin == given.origin
    assert pickle.loads(pickle.dumps(given)).origin == given.origin
    assert Config.model_validate(given.model_dump()).origin == Origin()


def test_the_gate_override_lies_over_any_gate() -> None:
    from agent_eval_action.config import GateConfig

    config = Config().with_origin(gate_override=(("max_regression", "10%"),))
    assert config.with_gate(GateConfig(max_regression=0.01, alpha=0.05)).gate.max_regression == "10%"
    assert config.with_gate(GateConfig(alpha=0.05)).gate.alpha == 0.05
