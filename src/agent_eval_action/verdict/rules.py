"""The gate's rules as the base branch has them.

A PR must not loosen the check that judges it: the settings that decide the verdict (the
``[gate]`` table, ``baselines-dir``, ``agent-paths`` and ``select``, which decide what is
compared at all, and the budgets, which decide how much may go unchecked), ``[agent-env]`` (which
of our secrets the agent reads) and the custom metrics (run with the base's code) are read from
the config as it is at the merge-base. The datasets (as files: ``service`` joins them) and metrics
the base checks are checked on the PR too: the PR may add to them, never take away.
What the PR changes in any of them is listed and applies after merge. The agent and everything
else come from HEAD.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_eval_action.config import Config, find_again, placed
from agent_eval_action.system.errors import ConfigError

# Settings that decide the verdict, taken from the base: what is gated, against what, what is
# compared at all, and how much of a check is allowed to be skipped (the budgets); and
# ``agent_env`` and ``agent_auth_env``, which decide which of our secrets the agent may read (a
# PR's ``allow = ["GITHUB_TOKEN"]``, or an ``agent_auth_env`` renamed away from the base's secret,
# must not hand its own code a secret).
FROM_BASE = ("gate", "baselines_dir", "agent_paths", "select", "max_model_calls", "max_cost_usd", "agent_env", "agent_auth_env")
# Of those, the ones a flag or action input given for this run may still set (listed as a change).
GIVEN_WINS = ("max_model_calls", "max_cost_usd")


@dataclass
class Rules:
    config: Config
    source: str
    changes: list[str] = field(default_factory=list)
    # The base's own config (its paths relative to the working directory), as the base found it:
    # the datasets it selects are evaluated whatever the PR's settings say.
    base: Config | None = None


def rules_at_base(head: Config, read: Callable[[str], str | None], prefix: str, short_rev: str) -> Rules:
    """``head`` with its verdict settings replaced by those of the base's config (read by ``read``
    from repository-relative paths; ``prefix`` is the working directory from the root), found by
    the base's own search (``find_config``: every candidate file, upward from the working
    directory; the file the user named, when named, first); its paths, like HEAD's, relative to
    the working directory. Moving the config (into ``[tool.agent-eval]`` or out) keeps the base's."""
    here = prefix.rstrip("/") or "."
    # The defaults' folder: the repository's top, from the working directory (a Config made in code: the working directory).
    top = posixpath.relpath(".", here) if head.origin.folder else "."
    base, source = placed(Config(), top), f"the defaults (no config at {short_rev})"
    try:
        found = find_again(head.origin, read, here)
    except ConfigError as error:
        found, base, source = None, placed(Config(), top), f"the defaults ({_at(str(error), here, short_rev)} could not be read)"
    if found is not None:
        shown = posixpath.relpath(found.path, here)
        table = found.config.origin.table
        config = found.config.with_origin(source=f"{shown} at {short_rev}" + (f" [{table}]" if table else ""))
        base, source = placed(config, posixpath.relpath(posixpath.dirname(found.path) or ".", here)), f"{shown} at {short_rev}"
    settings = {
        name: getattr(base, name) for name in FROM_BASE if name != "gate" and not (name in GIVEN_WINS and name in head.origin.given)
    }
    settings["metrics"] = _metrics(base, head)
    # The metrics that judge the PR are the base's: a PR's new or changed one applies after merge.
    settings["custom_metrics"] = base.custom_metrics
    merged = head.model_copy(update=settings).with_gate(base.gate)
    return Rules(
        config=merged, source=source, changes=differences(base, head) + custom_changes(base, head) + narrowed(base, head), base=base
    )


def _at(error: str, here: str, short_rev: str) -> str:
    """A config error's file named from the working directory, at the base's commit."""
    name, _, rest = error.partition(":")
    return f"{posixpath.relpath(name, here)} at {short_rev}:{rest}" if rest else error


def _metrics(base: Config, head: Config) -> list[str]:
    """The metrics computed on the PR: at least the base's. Empty means every metric, so either
    side's empty list wins. A custom metric the PR no longer defines cannot be computed: it is
    listed as narrowed, and its gate rule reports it missing."""
    if not base.metrics or not head.metrics:
        return []
    known = {*base.custom_metrics, *_registry()}
    return [*(m for m in head.metrics if m in known), *(m for m in base.metrics if m not in head.metrics and m in known)]


def custom_changes(base: Config, head: Config) -> list[str]:
    """``custom-metrics.NAME.function a:b -> c:d`` for every custom metric the PR adds, changes
    or removes (the base's still score this PR)."""
    before = {name: spec.function for name, spec in base.custom_metrics.items()}
    after = {name: spec.function for name, spec in head.custom_metrics.items()}
    return [
        f"custom-metrics.{name}.function {_show(before.get(name))} -> {_show(after.get(name))} (the base's custom metrics score this PR)"
        for name in sorted(before.keys() | after.keys())
        if before.get(name) != after.get(name)
    ]


def _registry() -> set[str]:
    from agent_eval_action.metrics import REGISTRY

    return set(REGISTRY)


def narrowed(base: Config, head: Config) -> list[str]:
    """What the PR stops checking, in the words of the other changes: the base's values still
    apply to this PR."""
    lines = []
    if "metrics" not in head.origin.given and head.metrics and (not base.metrics or any(m not in head.metrics for m in base.metrics)):
        before = _show(base.metrics) if base.metrics else "(every metric)"
        lines.append(f"metrics {before} -> {_show(head.metrics)} (the base's metrics are still computed)")
    return lines


def differences(base: Config, head: Config) -> list[str]:
    """``max-regression 0.05 -> 1.0`` for every verdict setting the PR changes."""
    before, after = _flat({n: base.model_dump()[n] for n in FROM_BASE}), _flat({n: head.model_dump()[n] for n in FROM_BASE})
    lines = []
    for key in sorted(before.keys() | after.keys()):
        setting = key.replace("-", "_")
        # A flag of this run (--all) is not the PR's config; a budget given for the run still
        # overrides the base's (GIVEN_WINS), so it is listed.
        if setting in head.origin.given and setting not in GIVEN_WINS:
            continue
        if before.get(key) != after.get(key):
            lines.append(f"{key} {_show(before.get(key))} -> {_show(after.get(key))}")
    return lines


def _flat(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = key.replace("_", "-") if not prefix.endswith("metrics.") else key
        if isinstance(value, dict) and value:
            out.update(_flat(value, f"{prefix}{name}."))
        elif value is not None and value != {}:
            out[prefix.removeprefix("gate.") + name] = value
    return out


def _show(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)
