"""Odd values in data are data: JSON decoding with a stated depth and lone surrogates replaced,
statistics of values near the float limit without overflow, non-finite figures never stored."""

from __future__ import annotations

import json
import math
import sys

import pytest

from agent_eval_action.models.results import Results
from agent_eval_action.models.scores import MetricSummary, Score
from agent_eval_action.models.verdicts import MetricComparison
from agent_eval_action.repo.results_io import dumps, parse_results
from agent_eval_action.scoring.aggregate import bootstrap_mean_ci, mean_of, summarize_values
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.text.jsonish import MAX_DEPTH, NotFinite, TooDeep, deeper_than, loads, maybe_json, parse_cell, scrub
from agent_eval_action.verdict.comparison import compare_dataset
from tests.helpers.scored import dataset

BIG = 1e308
MAX = sys.float_info.max


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_nesting_up_to_the_stated_depth_is_read_and_past_it_is_refused() -> None:
    assert loads(nested(MAX_DEPTH)) == (loads(nested(MAX_DEPTH))[0], 0)
    with pytest.raises(TooDeep, match=f"nested more than {MAX_DEPTH} levels"):
        loads(nested(MAX_DEPTH + 1))
    with pytest.raises(TooDeep):  # where Python's own decoder would raise RecursionError
        loads(nested(1100))
    with pytest.raises(TooDeep):
        parse_cell('{"a": ' * 300 + "1" + "}" * 300)
    assert maybe_json(nested(1100)) == nested(1100)  # text that cannot be decoded stays text
    assert not deeper_than({"a": [{"b": []}]}, 4) and deeper_than({"a": [{"b": []}]}, 3)


def test_the_depth_is_judged_on_the_value_whatever_brackets_its_strings_hold() -> None:
    # Long texts with few brackets are not walked (a value cannot nest deeper than it has
    # brackets); brackets inside strings only make the value walked, never refused.
    padding = "x" * 10 * MAX_DEPTH
    assert loads(json.dumps({"prompt": padding, "spans": [[{"a": 1}]]}))[0]["spans"] == [[{"a": 1}]]
    brackets = json.dumps({"prompt": "[{" * MAX_DEPTH, "spans": [[]]})
    assert loads(brackets)[0]["spans"] == [[]]
    with pytest.raises(TooDeep):
        loads(json.dumps({"prompt": padding, "deep": json.loads(nested(MAX_DEPTH))}))


def test_lone_surrogates_are_replaced_and_counted_pairs_are_kept() -> None:
    value, replaced = loads('{"\\udc00key": ["half \\ud83d of", "whole \\ud83d\\ude00"], "n": 1}')
    assert replaced == 2
    assert value == {"\ufffdkey": ["half \ufffd of", "whole \U0001f600"], "n": 1}
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # writable as UTF-8 now
    assert loads('["an escaped backslash: \\\\ud83d"]') == (["an escaped backslash: \\ud83d"], 0)
    same = {"a": ["b"]}
    assert scrub(same) == (same, 0) and scrub(same)[0] is same


def test_stored_results_refuse_nan_infinity_and_overflowing_numerals() -> None:
    for text, shown in (('{"a": NaN}', "NaN"), ("[-Infinity]", "-Infinity"), ('{"a": 1e999}', "too large")):
        with pytest.raises(NotFinite, match=shown):
            loads(text, finite=True)
    assert loads('{"a": 1e308, "b": "1e999 in text"}', finite=True)[0]["a"] == BIG
    assert math.isnan(loads("[NaN]")[0][0])  # data may say NaN: unscored where it is used


def test_a_baseline_with_a_non_finite_number_is_a_corrupt_baseline() -> None:
    good = dumps(Results(datasets=[dataset({"q1": [1.0], "q2": [0.5]})]))
    for bad in ("NaN", "Infinity", "-Infinity", "1e999"):
        text = good.replace('"value":0.5', f'"value":{bad}')
        assert text != good
        with pytest.raises(DatasetError) as caught:
            parse_results(text, "b.json at abc123", what="baseline")
        assert "b.json at abc123" in caught.value.message() and "corrupt" in caught.value.message()
        assert "baseline update" in caught.value.message()


def test_the_mean_of_values_near_the_float_limit_does_not_overflow() -> None:
    assert mean_of([BIG, BIG]) == BIG
    assert mean_of([BIG, -BIG, 0.0]) == 0.0
    assert mean_of([0.1, 0.2, 0.3]) == math.fsum([0.1, 0.2, 0.3]) / 3  # ordinary values: unchanged


def test_a_summary_of_huge_values_is_finite_and_exact_where_it_can_be() -> None:
    from collections import Counter

    summary = summarize_values([BIG, BIG, BIG / 2, -BIG], Counter(), direction="higher", seed=1, percentiles=True)
    assert summary.mean == pytest.approx(mean_of([BIG, BIG, BIG / 2, -BIG]))
    assert summary.max == BIG and summary.p50 == pytest.approx(0.75 * BIG)
    assert summary.stdev is not None and math.isfinite(summary.stdev) and summary.stdev > BIG / 2
    assert summary.ci95 is not None and all(math.isfinite(v) for v in summary.ci95)
    # The spread of -max and +max is past the float range: kept at the largest float.
    spread = summarize_values([MAX, -MAX], Counter(), direction="higher", seed=1)
    assert spread.mean == 0.0 and spread.stdev == MAX
    ci = bootstrap_mean_ci([BIG] * 10 + [BIG / 2] * 10, seed=3)
    assert ci is not None and BIG / 2 <= ci[0] <= ci[1] <= BIG


def test_ordinary_summaries_are_what_they_were() -> None:
    from collections import Counter

    values = [0.25, 0.5, 1.0, 0.0, 0.75]
    summary = summarize_values(values, Counter(), direction="higher", seed=4, percentiles=True)
    assert summary.mean == 0.5 and summary.p50 == 0.5 and summary.max == 1.0
    assert summary.ci95 == bootstrap_mean_ci(values, seed=4) or summary.ci95 == tuple(round(v, 6) for v in bootstrap_mean_ci(values, 4))  # type: ignore[union-attr]


def test_comparing_with_a_baseline_near_the_float_limit_gives_finite_deltas() -> None:
    before = dataset({f"q{i}": [-BIG] for i in range(6)})
    now = dataset({f"q{i}": [BIG] for i in range(6)})
    metric = compare_dataset(now, before, baseline_path="b").metrics[0]
    assert metric.delta is not None and math.isfinite(metric.delta) and metric.delta > BIG
    assert metric.ci95 is not None and all(math.isfinite(v) for v in metric.ci95)
    assert metric.verdict == "improved"
    json.loads(dumps(Results(datasets=[now])), parse_constant=pytest.fail)  # strict JSON


def test_a_non_finite_figure_is_never_stored() -> None:
    assert Score(value=math.inf, explanation="custom").value is None
    assert "not a finite number (inf): custom" in Score(value=math.inf, explanation="custom").explanation
    assert Score(value=math.nan).value is None
    summary = MetricSummary(mean=math.inf, n=1, unscored=0, ci95=(0.0, math.nan))
    assert summary.mean is None and summary.ci95 is None
    assert MetricComparison(metric="m", direction="higher", baseline=1.0, current=math.inf, delta=-math.inf, verdict="new").delta is None


def test_a_trend_of_values_near_the_float_limit_is_drawn() -> None:
    from agent_eval_action.views.figures import fmt, spark

    assert spark([-BIG, BIG, 0.0, None], "latency") == "▁█▅·"
    assert spark([1.0, 2.0, 3.0], "latency") == "▃▆█"  # ordinary values: as before
    assert fmt(BIG, "latency") == "1e+308" and fmt(-BIG) == "-1e+308"  # not 309 digits


def test_a_results_file_with_a_lone_surrogate_is_read_with_it_replaced() -> None:
    text = dumps(Results(datasets=[dataset({"q1": [1.0]})])).replace('"id":"q1"', '"id":"q1\\ud83d"')
    assert "\\ud83d" in text
    (question,) = parse_results(text, "r.json").datasets[0].questions
    assert question.id == "q1\ufffd"
