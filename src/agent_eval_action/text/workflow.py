"""GitHub Actions workflow commands and file commands ($GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY).

The runner obeys any line of a step's stdout or stderr that starts (after leading spaces) with
``::`` -- and any line holding ``##[``, the legacy form -- so text that came from data (question
ids, agent output, error messages) could otherwise set outputs or forge annotations. The CLI
writes through :class:`LogStream`, which redacts secrets and defuses such lines; our own
commands go through :func:`command`, the one way a command reaches the log.

Commands are written only in a step of a workflow (:func:`in_actions`); on a terminal the same
information prints as plain lines (``error: path:line: message``), and groups and masks, which
mean nothing there, print as a title or not at all.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from agent_eval_action.text.markdown import show_controls
from agent_eval_action.text.redaction import Redactor

ZERO_WIDTH = "\u200b"
_LINE_END = re.compile(r"(\r\n|\r|\n)")  # the runner reads lines as .NET's ReadLine does: \r alone ends one too
FLUSH_AT = 1 << 16  # characters held back at most while waiting for the end of a write


def neutralize(line: str) -> str:
    """One line of untrusted text that the runner cannot take for a command: a zero-width space
    goes between the leading colons (the runner trims whitespace, not that) and into ``##[``."""
    stripped = line.lstrip()
    if stripped.startswith("::"):
        at = len(line) - len(stripped) + 1
        line = line[:at] + ZERO_WIDTH + line[at:]
    return line.replace("##[", "##" + ZERO_WIDTH + "[") if "##[" in line else line


class LogStream(io.TextIOBase, TextIO):
    """A text stream over the process's stdout or stderr that redacts secrets and neutralizes
    every line, except the commands written through :func:`command`. A ``TextIO`` for the type
    checker too, so it goes wherever ``sys.stdout`` goes (``print(file=)``, :func:`command`).

    Text is held until a write ends a line (``print`` writes its text, then the newline), so a
    secret printed in one call is redacted whole even when it spans lines. On a terminal a
    flush also shows a partial line (live progress); in a log only whole lines go out.

    A reader that goes away (``check | head -3``) ends what is shown, not the command: the rest
    of its text is dropped, and the command runs to its end, writes its files and exits with its
    own code (a pass is still 0; a write that raised there once made it an internal error, 3).
    The stream's descriptor then points at /dev/null for the rest of the process: a command run
    inside another process (``main([...])``) leaves that process's stream so too, as its reader
    has gone for it as well.
    """

    def __init__(self, raw: TextIO, redactor: Redactor):
        super().__init__()
        self.raw = raw
        self.redactor = redactor
        self._pending: list[str] = []
        self._size = 0
        self._line_start = True
        self.reader_gone = False

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.raw.encoding

    def write(self, text: str) -> int:
        self._pending.append(text)
        self._size += len(text)
        if text.endswith(("\n", "\r")) or self._size > FLUSH_AT:
            self._emit(whole_lines=True)
        return len(text)

    def flush(self) -> None:
        self._emit(whole_lines=not self.raw.isatty())
        self._out("", flush=True)

    def drain(self) -> None:
        """Writes out everything held back (at exit)."""
        self._emit(whole_lines=False)
        self._out("", flush=True)

    def protect(self, names: Iterable[str]) -> None:
        """From now on also redact the values of the variables ``names`` (e.g. ``agent_auth_env``)."""
        self._emit(whole_lines=True)
        self.redactor = Redactor.from_env(os.environ, [*names])

    def command(self, line: str, *, redact: bool = True) -> None:
        """Writes our own workflow command, at the start of a line, unneutralized."""
        self._emit(whole_lines=False)
        self._out(("" if self._line_start else "\n") + show_controls(self.redactor.text(line) if redact else line) + "\n", flush=True)
        self._line_start = True

    def _emit(self, *, whole_lines: bool) -> None:
        text = "".join(self._pending)
        keep = ""
        if whole_lines:
            cut = max(text.rfind("\n"), text.rfind("\r")) + 1
            text, keep = text[:cut], text[cut:]
        self._pending = [keep] if keep else []
        self._size = len(keep)
        if not text:
            return
        parts = _LINE_END.split(show_controls(self.redactor.text(text)))
        out = []
        for i, part in enumerate(parts):
            if i % 2:  # a line end
                out.append(part)
                self._line_start = True
            elif part:
                out.append(neutralize(part) if self._line_start else part.replace("##[", "##" + ZERO_WIDTH + "["))
                self._line_start = False
        self._out("".join(out))

    def _out(self, text: str, *, flush: bool = False) -> None:
        """``text`` to the stream, unless its reader has gone: then the stream's descriptor is
        pointed at /dev/null (what the stream still holds, and any later write to it, this
        process's exit included, goes nowhere instead of raising) and the text is dropped."""
        if self.reader_gone:
            return
        try:
            if text:
                self.raw.write(text)
            if flush:
                self.raw.flush()
        except BrokenPipeError:
            self.reader_gone = True
            _to_devnull(self.raw)


def _to_devnull(stream: TextIO) -> None:
    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # no descriptor (a StringIO): nothing more is written to it here
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def in_actions(env: Mapping[str, str]) -> bool:
    """Whether this process runs as a step of a GitHub Actions workflow: the one place that
    decides whether workflow commands are written."""
    return env.get("GITHUB_ACTIONS") == "true"


ANNOTATIONS = ("error", "warning", "notice")


@dataclass(frozen=True)
class Command:
    """One of our own workflow commands: an annotation (``error``, ``warning``, ``notice``, at a
    file's line), ``group`` / ``endgroup``, or ``add-mask``."""

    name: str
    message: str = ""
    file: str | None = None
    line: int | None = None
    title: str | None = None

    def workflow(self) -> str:
        props = []
        if self.file:
            props.append(f"file={escape_property(self.file)}")
        if self.line:
            props.append(f"line={self.line}")
        if self.title:
            props.append(f"title={escape_property(self.title)}")
        head = f"{self.name} {','.join(props)}" if props else self.name
        return f"::{head}::{escape_data(self.message)}"

    def plain(self) -> str | None:
        """The line a terminal shows instead (None: nothing, as for a mask or a group's end)."""
        if self.name in ANNOTATIONS:
            where = f"{self.file}:{self.line}: " if self.file and self.line else f"{self.file}: " if self.file else ""
            return f"{self.name}: {where}{self.message}"
        return f"== {self.message}" if self.name == "group" else None


def command(out: TextIO, cmd: Command, *, actions: bool, redactor: Redactor | None = None) -> None:
    """Prints one of our own commands: as a workflow command when ``actions`` (see
    :func:`in_actions`), else as its plain line. Secrets are redacted (by ``redactor``, and by a
    :class:`LogStream`), except from ``add-mask``, which must name the secret. Through a
    :class:`LogStream` a workflow command bypasses the neutralizing; a plain line does not."""
    masking = cmd.name == "add-mask"
    if not actions:
        text = cmd.plain()
        if text is not None:
            print(redactor.text(text) if redactor is not None else text, file=out, flush=True)
        return
    line = cmd.workflow()
    if redactor is not None and not masking:
        line = redactor.text(line)
    if isinstance(out, LogStream):
        out.command(line, redact=not masking)
    else:
        print(line, file=out, flush=True)


@contextmanager
def group(out: TextIO, title: str, *, actions: bool) -> Iterator[None]:
    """A foldable group of the log around what the block prints (a title line on a terminal)."""
    command(out, Command("group", title), actions=actions)
    try:
        yield
    finally:
        command(out, Command("endgroup"), actions=actions)


def redactor_for(names: Iterable[str], *streams: TextIO) -> Redactor:
    """The secrets of this process's environment plus the variables ``names`` (a config's
    ``agent_auth_env``); those of the given streams that are log streams redact them too."""
    for stream in streams:
        if isinstance(stream, LogStream):
            stream.protect(names)
    return Redactor.from_env(os.environ, [*names])


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, *, file: str | None = None, line: int | None = None, title: str | None = None) -> Command:
    return Command(level, message, file=file, line=line, title=title)


def mask(secret: str, out: TextIO = sys.stdout, *, actions: bool) -> None:
    """Asks the runner to hide ``secret`` in the log (a terminal has no log to hide it in)."""
    if secret:
        command(out, Command("add-mask", secret), actions=actions)


def set_outputs(path: str | None, values: dict[str, str], redactor: Redactor | None = None) -> None:
    """Appends outputs with the ``name<<DELIMITER`` syntax, a random delimiter per value, secrets
    redacted (``redactor`` defaults to this process's environment)."""
    if not path:
        return
    import secrets  # here, not above: every command line imports this module, and secrets costs 4 ms of its start

    redactor = redactor if redactor is not None else Redactor.from_env(os.environ)
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            value = redactor.text(value)
            delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
            while delimiter in value:
                delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def append_summary(path: str | None, text: str, redactor: Redactor | None = None) -> None:
    if path:
        text = (redactor if redactor is not None else Redactor.from_env(os.environ)).text(text)
        with open(Path(path), "a", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")
