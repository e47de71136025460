"""Redactor: which environment values are secrets, and how they are replaced; LogStream: what
reaches the log line by line."""

from __future__ import annotations

import io
import json
from typing import TextIO

from agent_eval_action.text.redaction import Redactor
from agent_eval_action.text.workflow import Command, LogStream, annotation, command, group, in_actions, mask, neutralize

ENV = {
    "GITHUB_TOKEN": "ghs_0123456789abcdef",
    "INPUT_GITHUB-TOKEN": "ghs_input_token_value",
    "AGENT_EVAL_JUDGE_API_KEY": "AIzaJudgeKey-123456",
    "AGENT_EVAL_AUTH_TOKEN": "eyJhbGciOi.auth.token",
    "my_service_Password": "correct horse battery",
    "GCP_CREDENTIALS_JSON": '{"type": "service_account"}',
    "OPENAI_SECRET": "sk-secret-value-1",
    "ID_JWT": "jwt-named-by-config-123",
    "HOME": "/home/someone/secretive",
    "SHORT_TOKEN": "1234567",
    "PATH": "/usr/bin:/bin",
}


def test_known_variables_and_name_patterns_are_secrets() -> None:
    redactor = Redactor.from_env(ENV)
    for name in ("GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "AGENT_EVAL_JUDGE_API_KEY", "AGENT_EVAL_AUTH_TOKEN"):
        assert redactor.text(f"x {ENV[name]} y") == "x *** y", name
    # TOKEN, SECRET, KEY, PASSWORD, CREDENTIAL anywhere in the name, any case.
    for name in ("my_service_Password", "GCP_CREDENTIALS_JSON", "OPENAI_SECRET"):
        assert redactor.text(ENV[name]) == "***", name
    # Other names are not secrets, whatever their value says.
    assert redactor.text(ENV["HOME"]) == ENV["HOME"]
    assert redactor.text(ENV["ID_JWT"]) == ENV["ID_JWT"]


def test_extra_names_come_from_the_config() -> None:
    assert Redactor.from_env(ENV, ["ID_JWT"]).text("Bearer jwt-named-by-config-123") == "Bearer ***"


def test_values_shorter_than_eight_characters_are_left_alone() -> None:
    redactor = Redactor.from_env({**ENV, "API_KEY": "true", "GITHUB_TOKEN": "x"})
    assert redactor.text("1234567 true x") == "1234567 true x"
    assert Redactor(("1234567", "12345678")).text("1234567 12345678") == "1234567 ***"


def test_longest_first() -> None:
    redactor = Redactor(("abcdefgh", "abcdefgh-ijklmn"))
    assert redactor.text("[abcdefgh-ijklmn] [abcdefgh]") == "[***] [***]"
    assert Redactor(("abcdefgh-ijklmn", "abcdefgh")).text("abcdefgh-ijklmn") == "***"


def test_json_escaped_form_is_redacted_too() -> None:
    value = 'pa"ss\\word\nline2'
    redactor = Redactor((value,))
    encoded = json.dumps({"error": f"failed with {value}"})
    assert value not in redactor.text(encoded) and "***" in redactor.text(encoded)
    assert json.loads(redactor.text(encoded)) == {"error": "failed with ***"}
    ascii_escaped = json.dumps({"e": "clé-secrète-42"})  # \u00e9, as ensure_ascii writers put it
    assert Redactor(("clé-secrète-42",)).text(ascii_escaped) == '{"e": "***"}'


def test_no_secret_leaves_the_very_same_text() -> None:
    text = "nothing to see here " * 10
    assert Redactor().text(text) is text
    assert Redactor(("abcdefghij",)).text(text) == text
    assert not Redactor(("short",)).active


class Screen(io.StringIO):
    """A StringIO that is a terminal or not (a plain StringIO never is)."""

    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def stream(tty: bool = False, secrets: tuple[str, ...] = ("ghs_0123456789abcdef",)) -> tuple[LogStream, io.StringIO]:
    raw = Screen(tty)
    return LogStream(raw, Redactor(secrets)), raw


def test_forged_commands_are_neutralized_line_by_line() -> None:
    log, raw = stream()
    print("error in q\n::set-output name=passed::true: boom\n  ::error::forged\rx\r::warning::cr", file=log)
    print("::set-env name=X::y and ##[error]legacy anywhere", file=log)
    log.drain()
    lines = raw.getvalue().replace("\r", "\n").splitlines()
    assert not [line for line in lines if line.lstrip().startswith("::")], lines
    assert not any("##[" in line for line in lines)
    assert lines[1] == ":\u200b:set-output name=passed::true: boom"  # readable, only defused


def test_our_own_commands_pass_and_are_redacted_except_add_mask() -> None:
    log, raw = stream()
    out: TextIO = log  # a LogStream is a TextIO for the type checker too: no cast where the CLI passes it on
    print("before", file=log)
    command(out, Command("group", "Evaluate"), actions=True)
    command(out, annotation("error", "ghs_0123456789abcdef leaked", file="a.csv", line=3), actions=True)
    mask("ghs_0123456789abcdef", out, actions=True)
    log.drain()
    assert raw.getvalue().splitlines() == [
        "before",
        "::group::Evaluate",
        "::error file=a.csv,line=3::*** leaked",
        "::add-mask::ghs_0123456789abcdef",
    ]


def test_outside_actions_our_commands_print_as_plain_lines() -> None:
    """A terminal gets what a command says, readably, and nothing the runner would obey: no
    group markers, no mask (naming the secret), and an annotation as `error: file:line: message`."""
    log, raw = stream()
    out: TextIO = log
    with group(out, "Evaluate", actions=False):
        command(out, annotation("error", "ghs_0123456789abcdef leaked", file="a.csv", line=3, title="agent-eval regression"), actions=False)
        command(out, annotation("warning", "::set-output name=x::y forged"), actions=False)
    mask("ghs_0123456789abcdef", out, actions=False)
    log.drain()
    assert raw.getvalue().splitlines() == ["== Evaluate", "error: a.csv:3: *** leaked", "warning: ::set-output name=x::y forged"]
    assert in_actions({"GITHUB_ACTIONS": "true"}) and not in_actions({}) and not in_actions({"GITHUB_ACTIONS": "false"})


def test_a_secret_printed_in_one_call_is_redacted_even_across_lines() -> None:
    secret = "-----BEGIN KEY-----\nabcdefgh\n-----END KEY-----"
    log, raw = stream(secrets=(secret,))
    print(f"error: {secret}", file=log)
    log.drain()
    assert raw.getvalue().startswith("error: ***\n") and "BEGIN" not in raw.getvalue()


def test_a_log_sees_whole_lines_only_a_terminal_sees_progress() -> None:
    log, raw = stream(tty=False)
    print("\r::error::half", end="", file=log, flush=True)
    assert raw.getvalue() == "\r"  # the line after it is held: it may go on
    log.drain()
    assert raw.getvalue() == "\r:\u200b:error::half"
    live, screen = stream(tty=True)
    print("\rscoring: 10/20", end="", file=live, flush=True)
    assert screen.getvalue() == "\rscoring: 10/20"


def test_neutralize_leaves_ordinary_text() -> None:
    assert neutralize("  a::b") == "  a::b"
    assert neutralize(" \t::x") == " \t:\u200b:x"
