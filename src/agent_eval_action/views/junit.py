"""junit.xml for test-report actions: one testcase per question run and thresholded metric,
plus the gate's failures."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from agent_eval_action.models.results import Results
from agent_eval_action.system.files import write_atomic
from agent_eval_action.text.markdown import cut
from agent_eval_action.views.page import Page, page_of


def write_junit(page: Page | Results, path: Path, thresholds: dict[str, float] | None = None) -> Path:
    """junit.xml of the page (given results, one is built from them and the ``thresholds``): each
    run's thresholded metrics pass or fail as the page says the run was judged."""
    shown = page_of(page, thresholds)
    root = ET.Element("testsuites", name="agent-eval")
    for view in shown.datasets:
        dataset = view.result
        suite = ET.SubElement(root, "testsuite", name=dataset.name, file=dataset.path)
        tests = failures = errors = skipped = 0
        for question, missed in zip(dataset.questions, view.missed, strict=True):
            label = question.id + (f" [run {question.run}]" if question.run else "")
            if question.status == "error":
                case = ET.SubElement(suite, "testcase", classname=dataset.name, name=label)
                ET.SubElement(case, "error", message=(question.error or "error")[:1000])
                tests, errors = tests + 1, errors + 1
                continue
            if question.status == "skipped":  # not run here (a scenario without the simulator's credentials)
                case = ET.SubElement(suite, "testcase", classname=dataset.name, name=label)
                ET.SubElement(case, "skipped", message=(question.skip_reason or "skipped")[:1000])
                tests, skipped = tests + 1, skipped + 1
                continue
            for metric, threshold in view.thresholds.items():
                score = question.scores.get(metric)
                if score is None or score.value is None:
                    continue
                case = ET.SubElement(suite, "testcase", classname=dataset.name, name=f"{label} {metric}")
                tests += 1
                if metric in missed:
                    failures += 1
                    ET.SubElement(
                        case, "failure", message=f"{metric} = {score.value:g} (threshold {threshold:g}): {score.explanation}"[:1000]
                    )
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        suite.set("skipped", str(skipped))
    gate = shown.gate
    if gate is not None:
        # The gate case tells the same outcome as the headline and the exit code: a failure when
        # the gate failed, an error when the check could not be made.
        # Inconclusive: skipped (neither pass nor failure), or a failure with on-inconclusive = "fail".
        failed, unchecked = gate.outcome == "failed", gate.outcome == "unchecked"
        inconclusive = gate.outcome == "inconclusive"
        counted = failed or (inconclusive and gate.on_inconclusive == "fail")
        suite = ET.SubElement(
            root,
            "testsuite",
            name="gate",
            tests="1",
            failures=str(int(counted)),
            errors=str(int(unchecked)),
            skipped=str(int(inconclusive and not counted)),
        )
        case = ET.SubElement(suite, "testcase", classname="gate", name="regression gate")
        if failed:
            # The verdict's reasons, as the headline tells them: one cause once, each question
            # named once (a failure a metric it fell on would name a question six times).
            told = [r.short + (f": {r.detail}" if r.detail else "") for r in shown.reasons]
            ET.SubElement(case, "failure", message=cut("; ".join(told or [f.message for f in gate.failures]), 4000))
        elif inconclusive:
            message = "inconclusive: " + "; ".join(gate.inconclusive)
            ET.SubElement(case, "failure" if counted else "skipped", message=message[:4000])
        elif unchecked:
            reasons = "; ".join([*gate.unchecked, *(f.message for f in gate.failures)])
            ET.SubElement(case, "error", message=f"could not be checked: {reasons}"[:4000])
    return write_atomic(path, ET.tostring(root, encoding="unicode", xml_declaration=True))
