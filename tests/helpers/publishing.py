"""A scored and compared sample run, its background and view, as publishing and the views get
them; and the GitHub context of a pull request on the loopback fake GitHub."""

from __future__ import annotations

import re
from pathlib import Path

from agent_eval_action.config import GateConfig
from agent_eval_action.datasets import LoadedDataset, Record
from agent_eval_action.metrics import MetricContext, default_pass_thresholds
from agent_eval_action.models.questions import Question, ReferenceData, ReferenceToolCall, ToolInteraction, Turn
from agent_eval_action.models.results import DatasetResult, Results
from agent_eval_action.models.traces import Trace
from agent_eval_action.publish.publisher import GitHubContext
from agent_eval_action.repo.history import Point
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.verdict.comparison import compare_dataset
from agent_eval_action.verdict.gate import evaluate_gate, metric_kinds, rules_of
from agent_eval_action.views.background import Background
from agent_eval_action.views.render import view
from tests.fakes.github_server import FakeGitHub

TOKEN = "ghs_test_token"


def _records(n: int, broken: set[int], text: str = "ok", distinct: bool = False) -> list[Record]:
    out = []
    for i in range(n):
        question = Question(
            id=f"q{i:02d}{text if i == 0 else ''}",
            user_inputs=["hi"],
            agents_evaluated=["app"],
            reference_data=ReferenceData(
                reference_tool_interactions=[ReferenceToolCall(tool_name="lookup", input_arguments={"q": text})],
                reference_state_variables={"note": text},
            ),
        )
        arg = "wrong" if i in broken else text
        answer = (f"Question {i}: " if distinct else "") + (f"Sorry, no {text}" if i in broken else f"Found {text}")
        trace = Trace(
            turns=[Turn(user_input="hi", response=answer)],
            final_response=answer,
            tool_interactions=[ToolInteraction(tool_name="lookup", input_arguments={"q": arg}, output_result={"found": i not in broken})],
            final_state={"note": arg},
            latency_s=1.0 + i / 10,
            latency_source="measured",
        )
        out.append(Record(question=question, trace=trace))
    out.append(Record(question=Question(id=f"crash {text}", user_inputs=["x"]), trace=Trace(error=f"RuntimeError: {text}")))
    return out


DATASET = "evaluation/datasets/cs_golden.json"


def sample(text: str = "ok", n: int = 12, distinct: bool = False) -> tuple[Results, DatasetResult]:
    """A failing run (every other question calls its tool with the wrong argument, one more
    crashes) and the base run it was compared with; ``distinct``: every answer differs."""
    scorer = Scorer.for_names(
        ["tool_usage_accuracy", "state_management_fidelity", "latency"], MetricContext(), pass_thresholds=default_pass_thresholds({})
    )
    dataset = LoadedDataset(path=DATASET, name="cs_golden", format="golden", records=iter(()))
    before = scorer.score_dataset(dataset, _records(n, set(), text, distinct)[:-1])
    after = scorer.score_dataset(dataset, _records(n, set(range(0, n, 2)), text, distinct))
    comparison = compare_dataset(after, before, baseline_path="evaluation/baselines/cs_golden.json")
    gate = evaluate_gate([after], [comparison], GateConfig(), metric_kinds())
    return Results(tool_version="0.1.0", datasets=[after], comparison=[comparison], gate=gate), before


def sample_results(text: str = "ok", n: int = 12) -> Results:
    return sample(text, n)[0]


def sample_background(results: Results, before: DatasetResult) -> Background:
    """The base run, and a history of three baseline commits for the two gated metrics."""
    series: dict[str, list[float | None]] = {"tool_usage_accuracy": [0.9, 1.0, 1.0], "state_management_fidelity": [1.0, None, 1.0]}
    history = {
        metric: [Point(commit=f"{i}" * 40, date=f"2026-11-0{i}", subject=f"baseline {i}", value=value) for i, value in enumerate(values, 1)]
        for metric, values in series.items()
    }
    return Background(
        base_label="merge-base 1a2b3c4",
        base_runs={DATASET: before},
        history={DATASET: history},
        rules=rules_of(results, GateConfig(), metric_kinds()),
    )


def sample_view(text: str = "ok", n: int = 12, distinct: bool = False) -> dict[str, object]:
    results, before = sample(text, n, distinct)
    return view(
        results,
        thresholds=default_pass_thresholds({}),
        sha="0123456789abcdef",
        run_url="https://github.com/o/r/actions/runs/42",
        background=sample_background(results, before),
    )


def context(server: FakeGitHub, tmp_path: Path, token: str | None = TOKEN) -> GitHubContext:
    return GitHubContext(
        in_actions=True, api_url=server.url, repository="o/r", event_name="pull_request", pr_number=7, sha="0123456789abcdef",
        run_url="https://github.com/o/r/actions/runs/42", token=token,
        output_path=str(tmp_path / "github_output"), summary_path=str(tmp_path / "step_summary"),
    )  # fmt: skip


def outputs(tmp_path: Path) -> dict[str, str]:
    text = (tmp_path / "github_output").read_text()
    found = dict(re.findall(r"^([a-z-]+)<<(ghadelimiter_[0-9a-f]+)\n", text, re.M))
    values = {}
    for name, delimiter in found.items():
        values[name] = text.split(f"{name}<<{delimiter}\n", 1)[1].split(f"\n{delimiter}\n", 1)[0]
    return values
