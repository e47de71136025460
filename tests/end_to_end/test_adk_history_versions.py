"""ADK's eval history as every ADK major version writes it, through the CLI: a file ADK 1.21.0
wrote itself (a JSON string holding the result, ``judge_model_options`` in every metric result),
one the installed 2.x writes with its own ``LocalEvalSetResultsManager``, each read as it is,
double-encoded and as a plain object, under any name. Ours reproduce the scores ADK recorded,
for the case and for each invocation. Fields an older ADK wrote are accepted only where it
wrote them; anything else is refused with the file, the case and the JSON path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action.metrics.adk import AGREEMENT_TOLERANCE
from tests.helpers.adk_files import ADK_1_HISTORY, written_by_adk
from tests.helpers.commands import run_cli

ROOT = Path(__file__).resolve().parents[2]
CASE = "$.eval_case_results[0]"


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return run_cli(args, cwd=cwd, env=env)


def recorded(document: dict[str, Any]) -> dict[str, Any]:
    """What ADK recorded for the file's one case: case scores and per-invocation scores by metric."""
    (case,) = document["eval_case_results"]
    overall = {m["metric_name"]: m["score"] for m in case["overall_eval_metric_results"]}
    turns: dict[str, list[float]] = {}
    for item in case["eval_metric_result_per_invocation"]:
        for m in item["eval_metric_results"]:
            turns.setdefault(m["metric_name"], []).append(m["score"])
    return {"id": case["eval_id"], "overall": overall, "turns": turns}


def check_scores_equal_adks(out: Path, adk: dict[str, Any]) -> None:
    (dataset,) = json.loads((out / "results.json").read_text())["datasets"]
    (question,) = dataset["questions"]
    assert question["id"] == adk["id"]
    scores = question["scores"]
    for name in ("tool_trajectory_avg_score", "response_match_score"):
        assert abs(scores[name]["value"] - adk["overall"][name]) < AGREEMENT_TOLERANCE, name
        ours = scores[name]["details"]["per_turn"]
        assert len(ours) == len(adk["turns"][name]) and all(
            abs(o - a) < AGREEMENT_TOLERANCE for o, a in zip(ours, adk["turns"][name], strict=True)
        ), name
    agreement = scores["adk_agreement"]
    assert agreement["value"] == 1.0 and agreement["explanation"] == "2 of 2 recorded ADK score(s) reproduced"
    assert agreement["details"]["compared"]["response_match_score"]["adk_per_turn"] == adk["turns"]["response_match_score"]


def test_history_adk_1_21_wrote_is_read_double_encoded_under_any_name_and_its_scores_reproduced(tmp_path: Path) -> None:
    text = ADK_1_HISTORY.read_text()
    document = json.loads(json.loads(text))  # as ADK 1.x wrote it: a JSON string holding the result
    assert isinstance(json.loads(text), str)
    assert all("judge_model_options" in m for m in document["eval_case_results"][0]["overall_eval_metric_results"])
    shutil.copy(ADK_1_HISTORY, tmp_path / ADK_1_HISTORY.name)
    (tmp_path / "copied.json").write_text(text)  # renamed when it was brought along: the content decides
    (tmp_path / "decoded.evalset_result.json").write_text(json.dumps(document, indent=2))

    done = cli(tmp_path, "validate", ".")
    assert done.returncode == 0, done.stderr
    for name in (ADK_1_HISTORY.name, "copied.json", "decoded.evalset_result.json"):
        assert f"ok: ./{name} (adk_history, 1 valid question run)" in done.stdout, done.stdout

    adk = recorded(document)
    assert adk["overall"] == {"tool_trajectory_avg_score": 0.5, "response_match_score": pytest.approx(0.4636363636363636)}
    for name in (ADK_1_HISTORY.name, "decoded.evalset_result.json"):
        out = tmp_path / f"out-{name}"
        done = cli(tmp_path, "evaluate", name, "--output-dir", str(out))
        assert done.returncode == 0, done.stderr
        check_scores_equal_adks(out, adk)


def test_history_the_installed_adk_writes_is_read_plain_and_double_encoded(tmp_path: Path) -> None:
    path = written_by_adk(tmp_path / "agents")
    document = json.loads(path.read_text())
    assert isinstance(document, dict) and document["eval_set_result_name"].startswith("shop_shop_set_")
    shutil.copy(path, tmp_path / "plain.evalset_result.json")
    (tmp_path / "double.evalset_result.json").write_text(json.dumps(path.read_text()))  # as 1.x encoded it

    adk = recorded(document)
    for name in ("plain.evalset_result.json", "double.evalset_result.json"):
        out = tmp_path / f"out-{name}"
        done = cli(tmp_path, "evaluate", name, "--output-dir", str(out))
        assert done.returncode == 0, done.stderr
        check_scores_equal_adks(out, adk)


def edited(document: dict[str, Any], change: Any) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(document))
    change(copy["eval_case_results"][0])
    return copy


def with_cache_metadata(case: dict[str, Any], fields: dict[str, Any]) -> None:
    # ADK 1.15.0-1.16.0's CacheMetadata (context caching), on a model event of the session.
    event = next(e for e in case["session_details"]["events"] if e["author"] == "shop")
    event["cache_metadata"] = fields


OLD_CACHE = {"cache_name": "projects/p/cachedContents/1", "expire_time": 1.0, "fingerprint": "ab12", "invocations_used": 1, "cached_contents_count": 3, "created_at": 0.5}  # fmt: skip


def test_fields_an_older_adk_wrote_are_accepted_only_where_it_wrote_them(tmp_path: Path) -> None:
    document = json.loads(json.loads(ADK_1_HISTORY.read_text()))
    accepted = {
        "cache_1_16.evalset_result.json": edited(document, lambda c: with_cache_metadata(c, OLD_CACHE)),
        "camel.evalset_result.json": edited(
            document,
            lambda c: c["overall_eval_metric_results"][0].update(
                judgeModelOptions=c["overall_eval_metric_results"][0].pop("judge_model_options")
            ),
        ),
    }
    refused = {
        # judge_model_options was a metric's field, never an invocation's
        "misplaced.evalset_result.json": (
            edited(document, lambda c: c["eval_metric_result_per_invocation"][1]["actual_invocation"].update(judge_model_options=None)),
            f"{CASE}.eval_metric_result_per_invocation[1].actual_invocation.judge_model_options: not a field of ADK's schema",
        ),
        "unknown.evalset_result.json": (
            edited(document, lambda c: c["overall_eval_metric_results"][1].update(judge_model="gemini")),
            f"{CASE}.overall_eval_metric_results[1].judge_model: not a field of ADK's schema",
        ),
        # a renamed field is checked as its new name is, and named as the file spells it
        "cache_broken.evalset_result.json": (
            edited(document, lambda c: with_cache_metadata(c, {**OLD_CACHE, "cached_contents_count": "three"})),
            f"{CASE}.session_details.events[1].cache_metadata.cached_contents_count: input should be a valid integer",
        ),
        # the pinned name, written wrong in a file with historic fields elsewhere, is named as written
        "cache_new_broken.evalset_result.json": (
            edited(document, lambda c: with_cache_metadata(c, {"fingerprint": "ab12", "contents_count": "three"})),
            f"{CASE}.session_details.events[1].cache_metadata.contents_count: input should be a valid integer",
        ),
    }
    for name, data in accepted.items():
        (tmp_path / name).write_text(json.dumps(json.dumps(data)))
    for name, (data, _) in refused.items():
        (tmp_path / name).write_text(json.dumps(json.dumps(data)))

    done = cli(tmp_path, "validate", ".")
    assert done.returncode == 2, done.stderr
    for name in accepted:
        assert f"ok: ./{name} (adk_history, 1 valid question run)" in done.stdout, done.stdout + done.stderr
    for name, (_, where) in refused.items():
        assert f"./{name}, question 'refund_case', at {where}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr

    # The valid files are still evaluated and reported; the bad ones are named.
    done = cli(tmp_path, "evaluate", ".", "--output-dir", "out")
    assert done.returncode == 2, done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    read = {Path(d["path"]).name: d for d in results["datasets"]}
    assert all(read[name]["questions"][0]["scores"]["adk_agreement"]["value"] == 1.0 for name in accepted)


def test_a_look_alike_of_another_framework_stays_refused_double_encoded(tmp_path: Path) -> None:
    look_alike = {
        "eval_set_result_id": "calc_run",
        "eval_set_id": "calc",
        "eval_case_results": [
            {
                "eval_id": "add",
                "final_eval_status": "passed",
                "overall_eval_metric_results": [],
                "eval_metric_result_per_invocation": [],
                "session_id": "s",
            }
        ],
    }
    (tmp_path / "calc.json").write_text(json.dumps(json.dumps(look_alike)))
    done = cli(tmp_path, "validate", "calc.json")
    assert done.returncode == 2
    assert "calc.json, question 'add', at $.eval_case_results[0].final_eval_status: input should be 1, 2, 3 or 4" in done.stderr
    (tmp_path / "words.json").write_text(json.dumps("just a string"))
    done = cli(tmp_path, "validate", "words.json")
    assert done.returncode == 2 and "words.json: unrecognised dataset" in done.stderr
