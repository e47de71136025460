from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_eval_action.config import Config, load_config
from agent_eval_action.system.errors import ConfigError


def test_defaults_without_files(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path)
    assert config.output_dir == "agent-eval-results" and config.metrics == []
    assert "gemini-2.5-flash" in config.price_table()


def test_pyproject_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.agent-eval]\ndatasets = ["d/*.json"]\nseed = 3\n')
    config = load_config(cwd=tmp_path)
    assert config.datasets == ["d/*.json"] and config.seed == 3 and config.origin.source == "pyproject.toml [tool.agent-eval]"


def test_agent_eval_toml_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.agent-eval]\nseed = 3\n")
    (tmp_path / "agent-eval.toml").write_text("seed = 4\n")
    assert load_config(cwd=tmp_path).seed == 4


def test_price_override_extends_table(tmp_path: Path) -> None:
    (tmp_path / "agent-eval.toml").write_text(
        '[prices.my-model]\ninput = 1\noutput = 2\n[prices."gemini-2.5-flash"]\ninput = 9\noutput = 9\n'
    )
    table = load_config(cwd=tmp_path).price_table()
    assert table["my-model"] == {"input": 1.0, "output": 2.0}
    assert table["gemini-2.5-flash"]["input"] == 9.0 and "gemini-2.5-pro" in table


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("seed = 'x'", "agent-eval.toml: seed: Input should be a valid integer"),
        ("[prices.m]\ninput = -1\noutput = 1\n", "agent-eval.toml: prices.m.input: Input should be greater than or equal to 0"),
        ("seed = ", "not valid TOML"),
        ('concurrency = "fast"', "agent-eval.toml: concurrency: Value error, 'fast' is neither \"auto\" nor a whole number from 1 to 1024"),
        ("concurrency = 0", "agent-eval.toml: concurrency: Value error, 0 is neither"),
        ("max-model-calls = 0", "agent-eval.toml: max_model_calls: Input should be greater than or equal to 1"),
        # A misspelt setting names the one it most likely is.
        ('dataset = ["a.json"]', "agent-eval.toml: dataset: unknown setting (did you mean `datasets`?)"),
        ("[gate]\nmax_regresion = 0.1\n", "agent-eval.toml: gate.max_regresion: unknown setting (did you mean `max-regression`?)"),
        ('[custom-metrics.m]\nfunction = "a:b"\nunits = "count"\n', "custom_metrics.m.units: unknown setting (did you mean `unit`?)"),
        (
            'metrics = ["tool_usage_acuracy"]',
            "metrics: Value error, unknown metric(s) tool_usage_acuracy (did you mean `tool_usage_accuracy`?)",
        ),
    ],
)
def test_invalid_values_name_file_and_setting(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "agent-eval.toml").write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(cwd=tmp_path)


def test_concurrency_is_auto_by_default_or_a_number(tmp_path: Path) -> None:
    assert load_config(cwd=tmp_path).concurrency == "auto" and load_config(cwd=tmp_path).most_in_flight() == 64
    (tmp_path / "agent-eval.toml").write_text("concurrency = 8\n[judge]\nmax-calls = 100\n")
    config = load_config(cwd=tmp_path)
    assert config.concurrency == 8 and config.most_in_flight() == 8 and config.judge.max_calls == 100
    assert Config().with_overrides(concurrency="AUTO").concurrency == "auto"


def test_flags_validated_like_the_file() -> None:
    with pytest.raises(ConfigError, match="unknown metric"):
        Config().with_overrides(metrics=["nope"])
    assert Config().with_overrides(output_dir="x", metrics=None).output_dir == "x"


def test_explicit_missing_config() -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config("nowhere.toml")


def test_user_simulator_table(tmp_path: Path) -> None:
    (tmp_path / "agent-eval.toml").write_text('[user-simulator]\nmodel = "scripted-user"\nturn-limit = 3\n')
    assert load_config(cwd=tmp_path).user_simulator.settings() == {"model": "scripted-user", "max_allowed_invocations": 3}
    assert Config().user_simulator.settings() == {}  # ADK's defaults and the dataset's files decide
    (tmp_path / "agent-eval.toml").write_text("[user-simulator]\nturn-limit = 0\n")
    with pytest.raises(ConfigError, match=r"agent-eval.toml: user_simulator.turn_limit: Input should be greater than or equal to 1"):
        load_config(cwd=tmp_path)


def test_a_quota_from_the_file_a_flag_or_the_action_input(tmp_path: Path) -> None:
    from agent_eval_action.cli.main import build_parser
    from agent_eval_action.cli.settings import flags_from_inputs, read_inputs

    (tmp_path / "agent-eval.toml").write_text('[quota]\n"gemini-2.5-flash" = { rpm = 120, tpm = 1000000 }\n"*" = "10rpm"\n')
    quota = load_config(cwd=tmp_path).quota
    assert (quota["gemini-2.5-flash"].rpm, quota["gemini-2.5-flash"].tpm, quota["*"].rpm, quota["*"].tpm) == (120, 1_000_000, 10, None)
    args = build_parser().parse_args(["evaluate", "--quota", "gemini-2.5-flash=60rpm", "--quota", "gemini-2.5-pro=5rpm,250000tpm"])
    flagged = Config().with_overrides(quota=args.quota).quota
    assert flagged["gemini-2.5-flash"].rpm == 60 and flagged["gemini-2.5-pro"].tpm == 250_000
    inputs = read_inputs({"INPUT_QUOTA": "gemini-2.5-flash=120rpm\ngemini-2.5-pro=5rpm"})
    assert Config().with_overrides(**flags_from_inputs(inputs)).quota["gemini-2.5-pro"].rpm == 5
    with pytest.raises(ConfigError, match=r"command line: quota: .*'120' in 'gemini-2\.5-flash=120' is not a rate like 120rpm"):
        Config().with_overrides(quota=["gemini-2.5-flash=120"])
    (tmp_path / "agent-eval.toml").write_text('[quota]\n"gemini-2.5-flash" = { rpm = 0 }\n')
    with pytest.raises(ConfigError, match=r"agent-eval\.toml: quota\.gemini-2\.5-flash\.rpm: Input should be greater than or equal to 1"):
        load_config(cwd=tmp_path)
