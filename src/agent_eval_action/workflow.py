"""GitHub Actions workflow commands and file commands ($GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import TextIO


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, *, file: str | None = None, line: int | None = None, title: str | None = None) -> str:
    props = []
    if file:
        props.append(f"file={escape_property(file)}")
    if line:
        props.append(f"line={line}")
    if title:
        props.append(f"title={escape_property(title)}")
    return f"::{level} {','.join(props)}::{escape_data(message)}" if props else f"::{level}::{escape_data(message)}"


def mask(secret: str, out: TextIO = sys.stdout) -> None:
    if secret:
        print(f"::add-mask::{secret}", file=out, flush=True)


def set_outputs(path: str | None, values: dict[str, str]) -> None:
    """Appends outputs with the ``name<<DELIMITER`` syntax, a random delimiter per value."""
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
            while delimiter in value:
                delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def append_summary(path: str | None, text: str) -> None:
    if path:
        with open(Path(path), "a", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")
