"""Baseline file names: one per dataset path, never shared, never too long for a filesystem."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from agent_eval_action.models.results import DatasetResult, QuestionResult, Results
from agent_eval_action.models.scores import MetricSummary, Score
from agent_eval_action.repo.baseline import MAX_NAME_BYTES, baseline_path, find_baseline, read_once, working_tree_reader, write_baseline
from agent_eval_action.repo.results_io import dumps
from agent_eval_action.system.errors import DatasetError

B = "evaluation/baselines"


def test_names_keep_the_dataset_name_and_never_collide() -> None:
    # The dataset's path mirrored once: from the folder holding the baselines folder.
    assert baseline_path(B, "evaluation/datasets/cs.json") == f"{B}/datasets/cs.json"
    assert baseline_path(B, "./evaluation/datasets/cs.evalset.json") == f"{B}/datasets/cs.evalset.json"
    assert baseline_path(B, "evaluation/datasets/cs.jsonl") == f"{B}/datasets/cs.jsonl.json"
    assert baseline_path(B, "evaluation/datasets/cs.csv") == f"{B}/datasets/cs.csv.json"
    assert baseline_path("baselines", "evaluation/datasets/cs.json") == "baselines/evaluation/datasets/cs.json"  # a root folder: whole
    # Outside that folder (or inside the baselines folder): the whole path, under a folder no mirrored path starts with.
    assert baseline_path(B, "datasets/cs.json") == f"{B}/baselines/datasets/cs.json"
    assert baseline_path(B, f"{B}/cs.json") == f"{B}/baselines/{B}/cs.json"
    stems = ["a", "a.json", "a.jsonl", "a.csv", "a.ndjson", "a.JSON", "a.test", "a.jsonl.json", "a.json.json"]
    folders = ["d", "evaluation/d", "evaluation", "baselines", "evaluation/baselines", "evaluation/baselines/baselines", "x/evaluation/d"]
    suffixes = [".json", ".jsonl", ".csv", ".ndjson", ".JSON"]
    paths = {f"{folder}/{stem}{ext}" for folder, stem, ext in itertools.product(folders, stems, suffixes)}
    names = {baseline_path(B, p) for p in paths}
    assert len(names) == len(paths)


def test_a_long_name_is_cut_with_a_hash_of_the_path() -> None:
    first, second = "evaluation/d/" + "x" * 250 + "1.csv", "evaluation/d/" + "x" * 250 + "2.csv"
    a, b = baseline_path(B, first), baseline_path(B, second)
    assert a != b and a.startswith(f"{B}/d/xxx") and a.endswith(".json")
    assert all(len(Path(n).name.encode()) <= MAX_NAME_BYTES for n in (a, b))
    wide = baseline_path(B, "evaluation/d/" + "é" * 200 + ".json")  # cut on a character, not inside one
    assert len(Path(wide).name.encode()) <= MAX_NAME_BYTES and "\ufffd" not in wide


def test_a_root_dataset_file_is_not_taken_for_the_stem_keyed_file_of_another(tmp_path: Path) -> None:
    # datasets/cs.json's older flat file would be <dir>/cs.json: that is the root cs.json's whole-path file.
    root_dataset = DatasetResult(name="cs", path="cs.json", format="golden", questions=[QuestionResult(id="q")])
    (tmp_path / B).mkdir(parents=True)
    (tmp_path / B / "cs.json").write_text(dumps(Results(datasets=[root_dataset])))
    assert find_baseline(working_tree_reader(tmp_path), "", B, ["datasets/cs.json"], "cs") is None
    nested = DatasetResult(name="cs", path="datasets/cs.json", format="golden")
    written = write_baseline(tmp_path, B, nested, "1")
    assert written.moved_from is None and (tmp_path / B / "cs.json").is_file()  # the root dataset's file stays
    found = find_baseline(working_tree_reader(tmp_path), "", B, ["cs.json"], "cs")
    assert found is not None and found.path == f"{B}/cs.json" and found.legacy  # read where the older layout put it


def test_a_file_of_the_older_layout_where_another_datasets_file_is_now_is_never_taken_for_it(tmp_path: Path) -> None:
    """data/cs.json's whole-path file (<dir>/data/cs.json) is where evaluation/data/cs.json's
    mirrored file is now: read for evaluation/data/cs.json it is no baseline of it, whatever
    their names; read for data/cs.json it is, and `baseline update` moves it."""
    other = DatasetResult(name="cs", path="data/cs.json", format="golden", questions=[QuestionResult(id="q")])
    (tmp_path / B / "data").mkdir(parents=True)
    (tmp_path / B / "data" / "cs.json").write_text(dumps(Results(datasets=[other])))
    read = working_tree_reader(tmp_path)
    assert find_baseline(read, "", B, ["evaluation/data/cs.json"], "cs") is None
    found = find_baseline(read, "", B, ["data/cs.json"], "cs")
    assert found is not None and found.legacy and found.dataset.path == "data/cs.json"
    written = write_baseline(tmp_path, B, other, "1")
    assert written.path == f"{B}/baselines/data/cs.json" and written.moved_from == f"{B}/data/cs.json"
    assert not (tmp_path / B / "data" / "cs.json").exists()


def test_a_baseline_read_again_in_a_check_is_validated_once_and_each_reader_gets_its_own_copy(tmp_path: Path) -> None:
    """A check reads its merge-base's baseline four times (what the base observed, reuse, the
    trend, the comparison): within ``read_once`` the same text is validated once, and what one
    reader changes on its copy (its questions, their scores, the summary's figures) is not what
    the next reads. A corrupt text still fails each time, naming where; outside ``read_once``
    every read validates anew."""
    question = QuestionResult(id="q", scores={"m": Score(value=0.5, explanation="half")})
    summary = {"m": MetricSummary(mean=0.5, n=1, unscored=0)}
    dataset = DatasetResult(name="cs", path="datasets/cs.json", format="golden", questions=[question], summary=summary)
    (tmp_path / B / "datasets").mkdir(parents=True)
    (tmp_path / B / "datasets" / "cs.json").write_text(dumps(Results(datasets=[dataset])))
    read = working_tree_reader(tmp_path)
    with read_once():
        first = find_baseline(read, "", B, ["datasets/cs.json"], "cs")
        assert first is not None
        first.dataset.questions[0].failed_thresholds = ["m"]
        first.dataset.questions[0].scores["added"] = Score(value=1.0)
        first.dataset.questions.append(QuestionResult(id="added"))
        first.dataset.summary["m"].n = 7
        again = find_baseline(read, "at abc", B, ["datasets/cs.json"], "cs")
        assert again is not None and [q.id for q in again.dataset.questions] == ["q"]
        assert again.dataset.questions[0].failed_thresholds == [] and set(again.dataset.questions[0].scores) == {"m"}
        assert again.dataset.summary["m"].n == 1
        # Validated once: the second read's score is the object the first read made.
        assert again.dataset.questions[0].scores["m"] is first.dataset.questions[0].scores["m"]
    after = find_baseline(read, "", B, ["datasets/cs.json"], "cs")
    assert after is not None and after.dataset.questions[0].scores["m"] is not first.dataset.questions[0].scores["m"]
    (tmp_path / B / "datasets" / "cs.json").write_text('{"schema_version": 2, "datasets": [')
    with read_once():
        for where in ("", "at abc"):
            with pytest.raises(DatasetError, match=f"{B}/datasets/cs.json {where}".strip() + ".*not valid JSON"):
                find_baseline(read, where, B, ["datasets/cs.json"], "cs")
