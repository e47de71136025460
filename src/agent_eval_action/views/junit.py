"""junit.xml for test-report actions: one testcase per question run and thresholded metric,
plus the gate's failures."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from agent_eval_action.core.files import write_atomic
from agent_eval_action.core.models import Results
from agent_eval_action.scoring.aggregate import passes
from agent_eval_action.views.page import threshold_for


def write_junit(results: Results, path: Path, thresholds: dict[str, float]) -> Path:
    root = ET.Element("testsuites", name="agent-eval")
    for dataset in results.datasets:
        suite = ET.SubElement(root, "testsuite", name=dataset.name, file=dataset.path)
        tests = failures = errors = skipped = 0
        for question in dataset.questions:
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
            for metric in sorted({*thresholds, *(m for m, s in dataset.summary.items() if s.pass_threshold is not None)}):
                threshold = threshold_for(metric, thresholds, dataset.summary)
                score = question.scores.get(metric)
                if threshold is None or score is None or score.value is None:
                    continue
                direction = dataset.summary[metric].direction if metric in dataset.summary else "higher"
                passed = passes(score.value, threshold, direction)
                case = ET.SubElement(suite, "testcase", classname=dataset.name, name=f"{label} {metric}")
                tests += 1
                if not passed:
                    failures += 1
                    ET.SubElement(
                        case, "failure", message=f"{metric} = {score.value:g} (threshold {threshold:g}): {score.explanation}"[:1000]
                    )
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        suite.set("skipped", str(skipped))
    gate = results.gate
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
            ET.SubElement(case, "failure", message="; ".join(f.message for f in gate.failures)[:4000])
        elif inconclusive:
            message = "inconclusive: " + "; ".join(gate.inconclusive)
            ET.SubElement(case, "failure" if counted else "skipped", message=message[:4000])
        elif unchecked:
            reasons = "; ".join([*gate.unchecked, *(f.message for f in gate.failures)])
            ET.SubElement(case, "error", message=f"could not be checked: {reasons}"[:4000])
    return write_atomic(path, ET.tostring(root, encoding="unicode", xml_declaration=True))
