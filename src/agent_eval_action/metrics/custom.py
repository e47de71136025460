"""Your own metrics: ``[custom-metrics.NAME] function = "module:function"``.

The function gets the question and its trace and returns a float, None (unscored) or a
``Score``; the metric is then scored, summarized, compared, gated and shown like a built-in one.
Functions are imported from the project's folder (the config file's) when the config is loaded, so a typo is bad
input naming the setting before anything runs.
"""

from __future__ import annotations

import importlib
import math
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_eval_action.core.errors import ConfigError
from agent_eval_action.core.models import Question, Score, Trace
from agent_eval_action.metrics.registry import Metric, MetricContext, declare_unit, unscored

if TYPE_CHECKING:
    from agent_eval_action.config import Config


def import_function(spec: str, setting: str, cwd: Path | None = None) -> Any:
    """``module:function``, imported with ``cwd`` (the project's folder; default: the working
    directory) on ``sys.path`` for the import only (the caller's ``sys.path`` is left as found)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(setting, f"{spec!r} is not module:function")
    root = str((cwd or Path.cwd()).resolve())
    added = root not in sys.path
    if added:
        sys.path.insert(0, root)
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # noqa: BLE001 - the user's module failed: say where, not a traceback of ours
        frames = traceback.extract_tb(error.__traceback__)
        place = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
        raise ConfigError(setting, f"importing {module_name!r} raised {type(error).__name__}: {error}{place}") from None
    finally:
        if added and root in sys.path:
            sys.path.remove(root)
    function = getattr(module, attr, None)
    if not callable(function):
        raise ConfigError(setting, f"module {module_name!r} has no function {attr!r}")
    return function


@dataclass(frozen=True)
class CustomScore:
    """The metric's score function; picklable (by its spec), so worker processes can score too."""

    name: str
    spec: str
    # The folder its module is imported from (the project's); None: the working directory.
    root: str | None = None

    def __call__(self, question: Question, trace: Trace, context: MetricContext) -> Score:
        function = import_function(self.spec, f"custom-metrics.{self.name}.function", Path(self.root) if self.root else None)
        value = function(question, trace)
        if value is None:
            return unscored(f"{self.spec} returned None")
        if isinstance(value, Score):
            return value
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return unscored(f"{self.spec} returned {type(value).__name__} {value!r}, not a finite number, None or a Score")
        return Score(value=float(value), explanation=f"{self.spec}", details={"source": "custom"})


def custom_metrics(config: Config) -> list[Metric]:
    """The config's custom metrics, each function imported (ConfigError naming the setting)."""
    out = []
    for name, spec in config.custom_metrics.items():
        import_function(spec.function, f"custom-metrics.{name}.function", config.import_root())
        declare_unit(name, spec.unit)
        out.append(
            Metric(
                name=name,
                direction=spec.direction,
                description=spec.description or f"custom metric {spec.function}",
                score=CustomScore(name, spec.function, str(config.import_root())),
                kind=spec.kind,
                unit=spec.unit,
            )
        )
    return out
