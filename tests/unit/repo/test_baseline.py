"""Baseline file names: one per dataset path, never shared, never too long for a filesystem."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from agent_eval_action.core.results import DatasetResult
from agent_eval_action.repo.baseline import MAX_NAME_BYTES, baseline_path, find_baseline, working_tree_reader, write_baseline

B = "evaluation/baselines"


def test_names_keep_the_dataset_name_and_never_collide() -> None:
    assert baseline_path(B, "evaluation/datasets/cs.json") == f"{B}/evaluation/datasets/cs.json"
    assert baseline_path(B, "./evaluation/datasets/cs.evalset.json") == f"{B}/evaluation/datasets/cs.evalset.json"
    assert baseline_path(B, "evaluation/datasets/cs.jsonl") == f"{B}/evaluation/datasets/cs.jsonl.json"
    assert baseline_path(B, "evaluation/datasets/cs.csv") == f"{B}/evaluation/datasets/cs.csv.json"
    stems = ["a", "a.json", "a.jsonl", "a.csv", "a.ndjson", "a.JSON", "a.test", "a.jsonl.json", "a.json.json"]
    paths = {f"d/{stem}{ext}" for stem, ext in itertools.product(stems, [".json", ".jsonl", ".csv", ".ndjson", ".JSON"])}
    names = {baseline_path(B, p) for p in paths}
    assert len(names) == len(paths)


def test_a_long_name_is_cut_with_a_hash_of_the_path() -> None:
    first, second = "d/" + "x" * 250 + "1.csv", "d/" + "x" * 250 + "2.csv"
    a, b = baseline_path(B, first), baseline_path(B, second)
    assert a != b and a.startswith(f"{B}/d/xxx") and a.endswith(".json")
    assert all(len(Path(n).name.encode()) <= MAX_NAME_BYTES for n in (a, b))
    wide = baseline_path(B, "d/" + "é" * 200 + ".json")  # cut on a character, not inside one
    assert len(Path(wide).name.encode()) <= MAX_NAME_BYTES and "\ufffd" not in wide


def test_a_root_dataset_file_is_not_taken_for_the_stem_keyed_file_of_another(tmp_path: Path) -> None:
    # datasets/cs.json's older flat file would be <dir>/cs.json: that is the root cs.json's file now.
    root_dataset = DatasetResult(name="cs", path="cs.json", format="golden")
    write_baseline(tmp_path, B, root_dataset, "1")
    assert json.loads((tmp_path / B / "cs.json").read_text())["datasets"][0]["path"] == "cs.json"
    assert find_baseline(working_tree_reader(tmp_path), "", B, ["datasets/cs.json"], "cs") is None
    nested = DatasetResult(name="cs", path="datasets/cs.json", format="golden")
    written = write_baseline(tmp_path, B, nested, "1")
    assert written.moved_from is None and (tmp_path / B / "cs.json").is_file()  # the root dataset's file stays
