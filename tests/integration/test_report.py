"""report.html opened from file:// in a real headless Chromium: what a reader sees and clicks."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_eval_action.metrics import default_pass_thresholds
from agent_eval_action.repo.results_io import write_results
from agent_eval_action.views.report import write_report
from tests.helpers.browser import Page, browser, chromium, require
from tests.helpers.commands import run_cli
from tests.helpers.publishing import DATASET, sample, sample_background

ROOT = Path(__file__).resolve().parents[2]
PWN = '<img src=x onerror="window.__pwned = 1"><script>window.__pwned = 2</script>'
REGRESSED = ["q00ok", "q02", "q04", "q06", "q08", "q10"]

ROWS = """(selector) => Array.from(document.querySelectorAll(selector)).map(
  tr => Array.from(tr.querySelectorAll('td')).map(td => td.textContent.trim()))"""


@pytest.fixture(scope="module")
def tab() -> Iterator[Page]:
    binary = require("chromium", chromium(), "opening report.html in a real browser")
    with browser(binary) as page:
        yield page


def written(tmp_path: Path, text: str = "ok") -> Path:
    results, before = sample(text)
    return write_report(
        results,
        tmp_path / "report.html",
        thresholds=default_pass_thresholds({}),
        background=sample_background(results, before),
        sha="0123456789",
    )


def rows(tab: Page, selector: str) -> list[list[str]]:
    return list(tab.evaluate(f"({ROWS})({json.dumps(selector)})"))


def visible_ids(tab: Page) -> list[str]:
    return list(tab.evaluate("Array.from(document.querySelectorAll('details.question:not([hidden]) .qid')).map(e => e.textContent)"))


def test_regressed_questions_first_with_the_base_run_beside_them(tab: Page, tmp_path: Path) -> None:
    report = written(tmp_path)
    tab.open(report.as_uri())
    assert tab.problems() == []  # no console errors, no refused script or resource
    assert tab.requests() == [report.as_uri()]  # nothing fetched but the page itself
    assert tab.evaluate("document.body.dataset.filter") == "regressed"
    assert visible_ids(tab) == REGRESSED
    assert tab.evaluate("document.querySelector('h1').textContent") == (
        "❌ Agent evaluation failed: 6 of 13 questions no longer make the expected tool calls (and 1 more reason)"
    )
    metrics = rows(tab, "table.metrics tbody tr")
    assert [r[:6] for r in metrics] == [
        ["🔴", "state_management_fidelity", "100%", "50%", "−50\u00a0pts", "[−75\u00a0pts, −25\u00a0pts]"],
        ["🔴", "tool_usage_accuracy", "100%", "50%", "−50\u00a0pts", "[−75\u00a0pts, −25\u00a0pts]"],
        ["", "latency", "1.55\u00a0s", "1.55\u00a0s", "±0", "[±0, ±0]"],
    ]
    # Trends: the baseline commits with a value, then this run's point, each with its tooltip.
    assert tab.evaluate(
        "Array.from(document.querySelectorAll('table.metrics svg.spark')).map(s => s.querySelectorAll('circle').length)"
    ) == [3, 4]
    assert tab.evaluate("document.querySelector('table.metrics svg.spark circle.now title').textContent") == "this run: 50%"
    assert tab.evaluate("document.querySelectorAll('figure.chart').length") == 2

    q02 = "details.question:not([hidden]):nth-of-type(2)"
    assert tab.evaluate(f"document.querySelector('{q02} .qid').textContent") == "q02"
    assert rows(tab, f"{q02} table.diff tbody tr") == [
        ["state_management_fidelity", "100%", "0%"],
        ["tool_usage_accuracy", "100%", "0%"],
        ["lookup arguments", "q: ok", "q: wrong"],
        ["lookup result", '{"found": true}', '{"found": false}'],
        ["state note", "ok", "wrong"],
        ["answer", "Found ok", "Sorry, no ok"],
    ]
    assert tab.evaluate(f"Array.from(document.querySelectorAll('{q02} .side-by-side .run h5')).map(h => h.textContent)") == [
        "Base run",
        "This run",
    ]
    base_calls, head_calls = (rows(tab, f"{q02} .side-by-side .run:nth-child({i}) table.calls tbody tr") for i in (1, 2))
    assert base_calls == [["1", "lookup", '{"q": "ok"}', '{"found": true}']]
    assert head_calls == [["1", "lookup", '{"q": "wrong"}', '{"found": false}']]
    assert tab.evaluate(
        f"Array.from(document.querySelectorAll('{q02} .side-by-side .run:nth-child(2) .turns p')).map(p => p.textContent)"
    ) == [
        "hi",
        "Sorry, no ok",
    ]
    assert rows(tab, f"{q02} .side-by-side .run:nth-child(2) table.state tbody tr") == [["note", "ok", "wrong", "✗"]]


def test_filters_show_failing_regressed_or_all(tab: Page, tmp_path: Path) -> None:
    tab.open(written(tmp_path).as_uri())
    counts = tab.evaluate("Array.from(document.querySelectorAll('.filters button[data-filter]')).map(b => b.textContent)")
    # Under a failed verdict the filter says what it counts: never a bare "Failing 0".
    assert counts == ["Got worse 6", "Below threshold or in error 7", "All 13"]
    tab.evaluate("document.querySelector('button[data-filter=all]').click()")
    assert len(visible_ids(tab)) == 13 and tab.evaluate("location.hash") == "#filter=all"
    tab.evaluate("document.querySelector('button[data-filter=failing]').click()")
    assert visible_ids(tab) == [*REGRESSED, "crash ok"]
    pressed = tab.evaluate("Array.from(document.querySelectorAll('.filters button[data-filter]')).map(b => b.getAttribute('aria-pressed'))")
    assert pressed == ["false", "true", "false"]
    crash = tab.evaluate(
        "Array.from(document.querySelectorAll('details.question:not([hidden])')).pop().querySelector('.run .error-line').textContent"
    )
    assert crash == "Error: RuntimeError: ok"
    tab.open(written(tmp_path).as_uri() + "#filter=all")  # a link to one view of the page
    assert len(visible_ids(tab)) == 13
    assert tab.problems() == []


def test_hostile_agent_and_dataset_text_stays_text(tab: Page, tmp_path: Path) -> None:
    tab.open(written(tmp_path, PWN).as_uri() + "#filter=all")
    assert tab.problems() == []
    assert tab.evaluate("document.querySelectorAll('img').length") == 0
    assert tab.evaluate("document.querySelectorAll('script').length") == 1  # the page's own
    assert tab.evaluate("typeof window.__pwned") == "undefined"
    assert tab.evaluate("document.querySelectorAll('[onerror]').length") == 0
    ids = visible_ids(tab)
    assert f"q00{PWN}" in ids and f"crash {PWN}" in ids  # the id reads exactly as written
    answers = tab.evaluate("Array.from(document.querySelectorAll('.run .answer')).map(p => p.textContent)")
    assert f"Sorry, no {PWN}" in answers
    assert tab.requests() == [(tmp_path / "report.html").as_uri()]


def test_report_command_writes_the_page_from_files(tab: Page, tmp_path: Path) -> None:
    results, before = sample()
    from agent_eval_action.models.results import Results

    write_results(results, tmp_path / "run" / "results.json")
    write_results(Results(tool_version="0.1.0", datasets=[before]), tmp_path / "base.json")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = run_cli(["report", str(tmp_path / "run" / "results.json"), "--baseline", str(tmp_path / "base.json")], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    target = tmp_path / "run" / "report.html"
    assert (
        done.stdout
        == f"wrote {target} (13 question runs, 6 got worse, 7 below threshold or in error; base runs from {tmp_path / 'base.json'})\n"
    )
    tab.open(target.as_uri())
    assert visible_ids(tab) == REGRESSED and tab.problems() == []
    assert rows(tab, "details.question:first-of-type table.diff tbody tr")[2] == ["lookup arguments", "q: ok", "q: wrong"]
    assert DATASET in tab.evaluate("document.querySelector('section.dataset h2').textContent")
    missing = run_cli(["report", "nope.json"], cwd=tmp_path, env=env)
    # The path said once, and why in words: not "cannot read results: [Errno 2] No such file or directory: 'nope.json'".
    assert missing.returncode == 2 and missing.stderr.startswith("error: nope.json: no such file\n"), missing.stderr
    assert missing.stderr.count("nope.json") == 1, missing.stderr


def test_what_the_page_says_of_an_errored_question_and_a_base_run_is_true(tab: Page, tmp_path: Path) -> None:
    """An errored question has no "All 0 scores" table but says it erred; compared with the base's
    agent run now, the page names it once ("(the base's agent run now at ...)" is not repeated);
    one question and one run read in the singular."""
    from agent_eval_action.models.results import BaseRun, Results

    results, before = sample()
    label = "the base's agent run now at 13726e1"
    results = results.model_copy(
        update={
            "base_run": BaseRun(commit="13726e1" + "0" * 33, datasets=[DATASET], questions=13),
            "comparison": [c.model_copy(update={"baseline_path": label}) for c in results.comparison or []],
        }
    )
    report = write_report(
        results, tmp_path / "report.html", thresholds=default_pass_thresholds({}), background=sample_background(results, before)
    )
    tab.open(report.as_uri() + "#filter=all")
    text = tab.evaluate("document.body.innerText")
    assert text.count("the base's agent run now") == text.count("compared with the base's agent run now (13726e1)") >= 1
    assert "(the base's agent run now at" not in text
    crash = "Array.from(document.querySelectorAll('details.question')).find(d => d.querySelector('.qid').textContent === 'crash ok')"
    assert tab.evaluate(f"({crash}).querySelector('details.all-scores')") is None
    assert (
        tab.evaluate(f"({crash}).querySelector('.body > p.muted').textContent")
        == "No scores: it ended in an error, so no metric scored it."
    )
    assert "All 0 scores" not in text

    _, one = sample(n=1)  # the base side: one question, one run
    single = write_report(Results(tool_version="0.1.0", datasets=[one]), tmp_path / "one.html", thresholds={})
    tab.open(single.as_uri())
    assert tab.evaluate("document.querySelector('section p.meta').textContent").startswith("1 question, 1 run, 0 ended in an error")


def test_the_ci_of_the_mean_is_shown_only_where_its_units_are_the_rows(tmp_path: Path) -> None:
    """The summary's interval is over runs, the "This run" column averages questions: with several
    runs of a question the interval could leave the figure beside it outside (85.6% shown, "95% CI
    of mean [35.8%, 84%]"), so the column is shown only where runs and questions are one."""
    results, before = sample()
    one = write_report(
        results, tmp_path / "one.html", thresholds=default_pass_thresholds({}), background=sample_background(results, before)
    )
    assert "95% CI of mean" in one.read_text()
    again = results.model_copy(deep=True)
    extra = again.datasets[0].questions[0].model_copy(update={"run": 1})
    again.datasets[0].questions.append(extra)
    two = write_report(again, tmp_path / "two.html", thresholds=default_pass_thresholds({}), background=sample_background(again, before))
    html = two.read_text()
    assert "95% CI of mean" not in html and "Unscored runs" in html
    # Every row still has as many cells as the header has columns.
    header = html.count("<th>", html.index('<table class="metrics">'), html.index("</thead>", html.index('<table class="metrics">')))
    row = html[html.index('<tr class="metric') : html.index("</tr>", html.index('<tr class="metric'))]
    assert row.count("<td") == header
