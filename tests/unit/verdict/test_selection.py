"""Which datasets a PR run evaluates, from the paths git says the PR changed: a dataset it added,
changed, renamed or deleted; a baseline; agent code; and everything else."""

from __future__ import annotations

from agent_eval_action.repo.git import Change
from agent_eval_action.verdict.selection import MAX_LISTED, Observations, PathRoles, renames, select, select_all

DATASETS = ["evaluation/datasets/a.json", "evaluation/datasets/b.json", "evaluation/datasets/c.csv"]
ROLES = PathRoles(
    dataset_globs=["evaluation/datasets/*.json", "evaluation/datasets/*.csv"], baselines_dir="evaluation/baselines", agent_paths=None
)


def chosen(changes: list[Change], roles: PathRoles = ROLES) -> dict[str, str]:
    return {s.path: s.reason for s in select(DATASETS, changes, roles).selected}


def test_nothing_changed_selects_nothing() -> None:
    selection = select(DATASETS, [], ROLES)
    assert selection.mode == "changed"
    assert selection.selected == [] and selection.deleted == [] and selection.agent_changes == []


def test_a_changed_and_an_added_dataset_are_selected_alone_with_their_reasons() -> None:
    changes = [Change("M", "evaluation/datasets/a.json"), Change("A", "evaluation/datasets/c.csv")]
    assert chosen(changes) == {"evaluation/datasets/a.json": "changed in this PR", "evaluation/datasets/c.csv": "added in this PR"}


def test_a_renamed_dataset_keeps_its_old_path_for_the_baseline_lookup() -> None:
    selection = select(DATASETS, [Change("R", "evaluation/datasets/b.json", old_path="evaluation/datasets/old.json")], ROLES)
    (only,) = selection.selected
    assert only.path == "evaluation/datasets/b.json"
    assert only.reason == "renamed from evaluation/datasets/old.json in this PR"
    assert only.renamed_from == "evaluation/datasets/old.json"
    assert selection.agent_changes == []  # a rename of a dataset is no agent change, though the old path matches no dataset


def test_a_deleted_dataset_is_reported_deleted_and_not_evaluated() -> None:
    selection = select(DATASETS, [Change("D", "evaluation/datasets/gone.json")], ROLES)
    assert selection.deleted == ["evaluation/datasets/gone.json"]
    assert selection.selected == [] and selection.agent_changes == []


def test_a_deleted_agent_file_is_an_agent_change() -> None:
    selection = select(DATASETS, [Change("D", "app/tools.py")], ROLES)
    assert selection.deleted == []
    assert selection.agent_changes == ["app/tools.py"]
    assert [s.path for s in selection.selected] == DATASETS


def test_a_baseline_change_selects_nothing() -> None:
    assert chosen([Change("M", "evaluation/baselines/evaluation/datasets/a.json.json")]) == {}


def test_agent_code_selects_every_dataset_and_a_changed_one_keeps_its_own_reason() -> None:
    changes = [Change("M", "app/agent.py"), Change("M", "evaluation/datasets/b.json")]
    reasons = chosen(changes)
    assert list(reasons) == DATASETS  # in the order of all_datasets
    assert reasons["evaluation/datasets/a.json"] == "agent code changed: app/agent.py"
    assert reasons["evaluation/datasets/b.json"] == "changed in this PR"


def test_a_long_list_of_agent_changes_is_cut_with_a_count() -> None:
    changes = [Change("M", f"app/m{i}.py") for i in range(MAX_LISTED + 3)]
    reason = chosen(changes)["evaluation/datasets/a.json"]
    assert reason == "agent code changed: " + ", ".join(f"app/m{i}.py" for i in range(MAX_LISTED)) + " (+3 more)"


def test_agent_paths_limit_what_counts_as_agent_code() -> None:
    roles = PathRoles(ROLES.dataset_globs, ROLES.baselines_dir, agent_paths=["app/**", "!app/docs/**"])
    assert chosen([Change("M", "README.md"), Change("M", "app/docs/guide.md")], roles) == {}
    assert set(chosen([Change("M", "app/agent.py")], roles)) == set(DATASETS)


def test_a_file_renamed_out_of_the_agent_paths_is_still_an_agent_change() -> None:
    roles = PathRoles(ROLES.dataset_globs, ROLES.baselines_dir, agent_paths=["app/**"])
    selection = select(DATASETS, [Change("R", "archive/tools.py", old_path="app/tools.py")], roles)
    assert selection.agent_changes == ["archive/tools.py"]


def test_a_dataset_outside_the_globs_is_known_by_its_path() -> None:
    """A dataset named on the command line (in all_datasets) is a dataset even if no glob matches it."""
    selection = select(["extra/set.json"], [Change("M", "extra/set.json")], ROLES)
    assert [(s.path, s.reason) for s in selection.selected] == [("extra/set.json", "changed in this PR")]
    assert selection.agent_changes == []


def test_a_dataset_added_outside_the_list_is_not_selected() -> None:
    """A changed dataset file that the run does not evaluate (not in all_datasets) is not selected."""
    assert chosen([Change("A", "evaluation/datasets/new.json")]) == {}


def test_renames_map_new_paths_to_old_ones_only_for_renames() -> None:
    changes = [Change("R", "new.json", old_path="old.json"), Change("M", "x.json"), Change("R", "odd.json")]
    assert renames(changes) == {"new.json": "old.json"}


def test_select_all_gives_every_dataset_the_reason_and_keeps_renames() -> None:
    selection = select_all(DATASETS, "select = all", [Change("R", "evaluation/datasets/a.json", old_path="evaluation/datasets/z.json")])
    assert selection.mode == "all"
    assert [(s.path, s.reason, s.renamed_from) for s in selection.selected] == [
        ("evaluation/datasets/a.json", "select = all", "evaluation/datasets/z.json"),
        ("evaluation/datasets/b.json", "select = all", None),
        ("evaluation/datasets/c.csv", "select = all", None),
    ]


def test_path_roles_say_what_a_path_is() -> None:
    assert ROLES.is_dataset("evaluation/datasets/a.json")
    assert not ROLES.is_dataset("evaluation/datasets/sub/a.json")  # * stays in one folder
    assert ROLES.is_baseline("evaluation/baselines/x/y.json")
    assert PathRoles([], "evaluation/baselines/", None).is_baseline("evaluation/baselines/y.json")  # a trailing slash is the same folder
    assert not ROLES.is_agent("evaluation/baselines/x/y.json") and not ROLES.is_agent("evaluation/datasets/a.json")
    assert ROLES.is_agent("anything/else.txt")


def test_observed_inputs_decide_where_the_baseline_recorded_them() -> None:
    """a.json's baseline saw its agent read prompts/x.md (changed), b.json's saw nothing change;
    c.csv's baseline recorded nothing (older): any change that is no dataset re-runs it."""
    guessed = PathRoles(ROLES.dataset_globs, ROLES.baselines_dir, agent_paths=["app/**"])
    seen = Observations(
        changed={"evaluation/datasets/a.json": ["prompts/x.md"], "evaluation/datasets/b.json": []},
        unobserved=frozenset({"evaluation/datasets/c.csv"}),
    )
    changes = [Change("M", "prompts/x.md"), Change("M", "app/unused.py")]
    selection = select(DATASETS, changes, guessed, seen)
    reasons = {s.path: s.reason for s in selection.selected}
    assert reasons == {
        "evaluation/datasets/a.json": "inputs the agent read changed: prompts/x.md",
        "evaluation/datasets/c.csv": "its baseline did not record what the agent read, and this PR changed prompts/x.md, app/unused.py",
    }
    assert selection.agent_changes == ["app/unused.py", "prompts/x.md"]
    unchanged = Observations(changed={p: [] for p in DATASETS[:2]}, unobserved=seen.unobserved)
    readme = select(DATASETS, [Change("M", "README.md")], guessed, unchanged)
    assert [s.path for s in readme.selected] == ["evaluation/datasets/c.csv"]
    assert select(DATASETS, [Change("M", "app/unused.py")], guessed, Observations(changed={p: [] for p in DATASETS})).selected == []
