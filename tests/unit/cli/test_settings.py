"""The settings table (``cli.settings``) is the one declaration of the command line's setting
flags and the action's inputs: action.yml agrees with it, every flag parses to what the action's
input gives, and the parser is made from it."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import yaml

from agent_eval_action.cli.main import build_parser
from agent_eval_action.cli.settings import SETTINGS, action_inputs, flags_from_inputs, laid_over, read_inputs
from agent_eval_action.config import Config
from agent_eval_action.system.errors import ConfigError

ACTION_YML = Path(__file__).resolve().parents[3] / "action.yml"


def _declared() -> dict[str, dict[str, object]]:
    inputs: dict[str, dict[str, object]] = yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))["inputs"]
    return inputs


def test_every_input_of_action_yml_is_a_row_and_every_row_with_an_input_is_in_action_yml() -> None:
    assert set(_declared()) == set(action_inputs())


def test_action_yml_descriptions_and_defaults_are_the_tables() -> None:
    for name, spec in _declared().items():
        row = action_inputs()[name]
        assert spec["description"] == row.description, f"action.yml's {name} description: copy it from cli/settings.py"
        assert str(spec.get("default", "")) == row.default, name
        assert spec.get("required") is False, name


def test_every_config_setting_an_input_or_flag_lays_over_the_config_is_a_config_setting() -> None:
    for row in SETTINGS:
        if row.read is not None or row.commands:
            assert row.name in Config.model_fields, row.name


def test_an_inputs_default_is_the_configs_where_both_have_one() -> None:
    for row in action_inputs().values():
        if row.read is not None and row.default:
            assert row.read(row.input or "", row.default) == getattr(Config(), row.name), row.name


def _option_dests(parser: argparse.ArgumentParser) -> set[str]:
    return {action.dest for action in parser._actions if action.option_strings}


def test_each_commands_flags_are_the_rows_naming_it() -> None:
    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    parsers = dict(sub.choices)
    (update,) = [a for a in parsers["baseline"]._actions if isinstance(a, argparse._SubParsersAction)]
    parsers["baseline"] = update.choices["update"]
    for name, parser in parsers.items():
        command = {"run": "check"}.get(name, name)
        rows = {row.name for row in SETTINGS if row.help is not None and command in (*row.commands, *row.own)}
        assert rows <= _option_dests(parser), (name, rows - _option_dests(parser))
        assert set(laid_over(name) or ()) <= rows


def test_a_flag_and_the_input_of_one_setting_give_the_config_the_same_value() -> None:
    flags = "--datasets a/*.json b/*.csv --metrics tool_trajectory_avg_score,response_match --runs 3 --concurrency auto"
    args = build_parser().parse_args(
        ["check", *flags.split(), "--max-cost-usd", "2.5", "--no-comment", "--compare-with", "base", "--agent", "app"]
    )
    from_flags = Config().with_overrides(**{name: getattr(args, name) for name in laid_over("check") or ()})
    env = {
        "INPUT_DATASETS": "a/*.json\nb/*.csv",
        "INPUT_METRICS": "tool_trajectory_avg_score, response_match",
        "INPUT_RUNS": "3",
        "INPUT_CONCURRENCY": "auto",
        "INPUT_MAX-COST-USD": "2.5",
        "INPUT_COMMENT": "false",
        "INPUT_COMPARE-WITH": "base",
        "INPUT_AGENT": "app",
    }
    from_inputs = Config().with_overrides(**flags_from_inputs(read_inputs(env)))
    assert from_flags.model_dump() == from_inputs.model_dump()
    assert from_inputs.origin.given == {"datasets", "metrics", "runs", "concurrency", "max_cost_usd", "comment", "compare_with", "agent"}


def test_unset_inputs_leave_the_config_as_it_is() -> None:
    flags = flags_from_inputs(read_inputs({}))
    assert set(flags.values()) == {None}
    assert Config().with_overrides(**flags).origin.given == frozenset()


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("INPUT_RUNS", "three", "input runs"),
        ("INPUT_COMMENT", "maybe", "input comment"),
        ("INPUT_MAX-COST-USD", "a lot", "input max-cost-usd"),
    ],
)
def test_an_unreadable_input_is_refused_naming_it(variable: str, value: str, named: str) -> None:
    with pytest.raises(ConfigError) as refused:
        flags_from_inputs(read_inputs({variable: value}))
    assert str(refused.value).startswith(named) and repr(value) in str(refused.value)


def test_help_says_exit_1_only_for_commands_with_a_gate() -> None:
    """init, validate, evaluate, convert, report and baseline update apply no gate: their help said
    "1 gate failed" all the same (evaluate's still did: it scores, and exits 0, 2 or 3)."""
    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    commands = sub.choices
    for name in ("init", "validate", "evaluate", "convert", "report"):
        assert "1 gate failed" not in commands[name].format_help() and "0 done" in commands[name].format_help(), name
    (actions,) = [a for a in commands["baseline"]._actions if isinstance(a, argparse._SubParsersAction)]
    assert "1 gate failed" not in actions.choices["update"].format_help()
    for name in ("check", "merge", "compare"):
        assert "1 gate failed" in commands[name].format_help(), name
    assert " --runs K " in commands["check"].format_help()
