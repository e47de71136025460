"""Your own metrics: ``[custom-metrics.NAME] function = "module:function"``.

The function gets the question and its trace and returns a float, None (unscored) or a score;
the metric is then scored, summarized, compared, gated and shown like a built-in one.

The function is code we did not write (in a PR, the PR's): it never runs in our process. When
the config is loaded only its spelling is checked (:func:`check_spec`); it is imported and called
in a process of its own under the agent's Python (``run/metric_worker.py``), which a run hands
here as the :class:`CustomRunner`, and an import error from there names the setting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from agent_eval_action.metrics.registry import Metric, MetricContext, declare_unit, unscored
from agent_eval_action.models.questions import Question
from agent_eval_action.models.scores import Score
from agent_eval_action.models.traces import Trace
from agent_eval_action.system.errors import ConfigError

if TYPE_CHECKING:
    from agent_eval_action.config import Config

_SPEC = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")


def check_spec(spec: str, setting: str) -> None:
    """``module:function`` spelled as Python names (nothing is imported: see the module's docstring)."""
    if not _SPEC.fullmatch(spec):
        raise ConfigError(setting, f"{spec!r} is not module:function (e.g. my_metrics:words)")


class CustomRunner(Protocol):
    """Scores one custom metric on one question's run, somewhere other than our process."""

    def score(self, name: str, question: Question, trace: Trace) -> Score: ...


@dataclass(frozen=True)
class CustomScore:
    """The metric's score function: asks the run's :class:`CustomRunner` (None: a command that
    only summarizes scores already made, such as ``merge``)."""

    name: str
    spec: str
    runner: CustomRunner | None = None

    def __call__(self, question: Question, trace: Trace, context: MetricContext) -> Score:
        if self.runner is None:
            return unscored(f"{self.spec} is not scored by this command")
        return self.runner.score(self.name, question, trace)


def custom_metrics(config: Config, runner: CustomRunner | None = None) -> list[Metric]:
    """The config's custom metrics, each spelling checked (ConfigError naming the setting),
    scored by ``runner``."""
    out = []
    for name, spec in config.custom_metrics.items():
        check_spec(spec.function, f"custom-metrics.{name}.function")
        declare_unit(name, spec.unit)
        out.append(
            Metric(
                name=name,
                direction=spec.direction,
                description=spec.description or f"custom metric {spec.function}",
                score=CustomScore(name, spec.function, runner),
                kind=spec.kind,
                unit=spec.unit,
            )
        )
    return out
