"""Named exceptions. Only the CLI turns them into messages and exit codes."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The process exit codes of the CLI contract (DESIGN.md)."""

    PASSED = 0
    GATE_FAILED = 1
    BAD_INPUT = 2
    INFRASTRUCTURE = 3


class AgentEvalError(Exception):
    """Base class of every error this package raises on purpose."""

    exit_code = ExitCode.BAD_INPUT


class DatasetError(AgentEvalError):
    """A dataset file that cannot be read as one of the supported formats.

    ``pointer`` locates the problem inside the file: a JSON path such as
    ``$.golden_questions[3].user_inputs`` or ``row 12, column extracted_data``.
    """

    def __init__(self, path: str, reason: str, *, question_id: str | None = None, pointer: str | None = None):
        self.path = str(path)
        self.reason = reason
        self.question_id = question_id
        self.pointer = pointer
        super().__init__(self.message())

    def message(self) -> str:
        where = [self.path]
        if self.question_id is not None:
            where.append(f"question {self.question_id!r}")
        if self.pointer:
            where.append(f"at {self.pointer}")
        return f"{': '.join([', '.join(where), self.reason])}"


class ConfigError(AgentEvalError):
    """A configuration file, flag or variable with an invalid value."""

    def __init__(self, setting: str, reason: str):
        self.setting = setting
        self.reason = reason
        super().__init__(f"{setting}: {reason}")


class UsageError(AgentEvalError):
    """A command line that asks for something impossible (e.g. a golden dataset without an agent)."""


class AgentLoadError(UsageError):
    """The user's agent could not be loaded (its module raised, exited or is missing, or its
    Python could not start): bad input for the datasets that need it, the others still run."""

    def __init__(self, setting: str, reason: str):
        self.setting = setting
        self.reason = reason
        super().__init__(f"{setting}: {reason}")


class InfrastructureError(AgentEvalError):
    """Something outside the user's input failed and stopped the evaluation."""

    exit_code = ExitCode.INFRASTRUCTURE
