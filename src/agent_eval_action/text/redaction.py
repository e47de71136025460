"""Secret values replaced by ``***`` before anything is written or printed.

An agent's tool that fails can quote its environment in the error message; that message
travels into results.json, the PR comment, the step summary and the log. The runner masks
only the secrets it knows of, and files and comments are never masked, so every sink redacts.

A :class:`Redactor` is a value built from an environment mapping at the moment of use (no
module state): tests and callers hand in the environment they mean.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

MASK = "***"
# Variables that always hold a secret, whatever their value looks like.
SECRET_VARIABLES = ("GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "AGENT_EVAL_JUDGE_API_KEY", "AGENT_EVAL_AUTH_TOKEN")
# Any variable whose name contains one of these words (any case) holds a secret.
SECRET_NAME = re.compile(r"TOKEN|SECRET|KEY|PASSWORD|CREDENTIAL", re.IGNORECASE)
# Shorter values are left alone: masking "true" or "1" everywhere would garble every report,
# and so short a value is no credential worth the name.
MIN_LENGTH = 8


@dataclass(frozen=True)
class Redactor:
    """Replaces each secret value (and its JSON-escaped form) with ``***``, longest first."""

    secrets: tuple[str, ...] = ()
    _pattern: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        forms: set[str] = set()
        for value in self.secrets:
            if len(value) < MIN_LENGTH:
                continue
            forms.add(value)
            # The same value as it appears inside a JSON string (quotes, backslashes, control
            # characters escaped; non-ASCII kept or escaped, as different writers do).
            forms.add(json.dumps(value, ensure_ascii=False)[1:-1])
            forms.add(json.dumps(value)[1:-1])
        # Longest first: a secret that contains another is replaced whole, not around the shorter one.
        ordered = sorted(forms, key=lambda v: (-len(v), v))
        object.__setattr__(self, "_pattern", re.compile("|".join(map(re.escape, ordered))) if ordered else None)

    @classmethod
    def from_env(cls, env: Mapping[str, str], names: Iterable[str] = ()) -> Redactor:
        """The secrets of ``env``: the known variables, those named in ``names`` (e.g. the
        config's ``agent_auth_env``) and every variable whose name looks like a secret's."""
        wanted = {*SECRET_VARIABLES, *names}
        values = {value for name, value in env.items() if name in wanted or SECRET_NAME.search(name)}
        return cls(tuple(sorted(v for v in values if len(v) >= MIN_LENGTH)))

    @property
    def active(self) -> bool:
        return self._pattern is not None

    def text(self, value: str) -> str:
        """``value`` with every secret replaced; the very same string when none occurs."""
        if self._pattern is None:
            return value
        return self._pattern.sub(MASK, value)

    def found_in(self, value: str) -> bool:
        return self._pattern is not None and self._pattern.search(value) is not None
