from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Work in ``tmp_path``, as a user whose files live there: inputs must lie inside the working
    directory's repository (the directory itself without one), and ``tmp_path`` is not in this checkout."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


# The modules with the longest tests (measured with --durations; most wait on agent timeouts,
# venvs or several CLI runs) go first, their longest test first, so that under xdist (make test's
# --dist worksteal: the first process starts with the first third, the others take from the end
# of its queue once theirs are done) the long tests start first and the processes end on short
# tests together rather than one waiting out a long test alone at the end. Order only: nothing
# is skipped or merged.
SLOW_MODULES = (
    "tests/integration/test_agent_worker.py",
    "tests/integration/test_compare_with_base.py",
    "tests/integration/test_properties.py",
    "tests/end_to_end/test_action_entrypoint.py",
    "tests/integration/test_reuse.py",
    "tests/integration/test_flaky_runs.py",
    "tests/integration/test_convert.py",
    "tests/integration/test_agent_paths.py",
    "tests/integration/test_judges.py",
    "tests/end_to_end/test_init.py",
    "tests/end_to_end/test_first_day.py",
    "tests/integration/test_budgets_and_concurrency.py",
    "tests/unit/run/test_environments.py",
)
SLOW_TESTS = (
    "tests/integration/test_agent_worker.py::test_at_concurrency_each_hostile_question_costs_only_itself",
    "tests/integration/test_agent_worker.py::test_each_hostile_question_errors_alone_and_the_run_ends_within_its_timeouts",
    "tests/integration/test_compare_with_base.py::test_each_side_runs_in_its_own_environment",
    "tests/integration/test_compare_with_base.py::test_a_slower_tool_is_caught_by_the_latency_rule_in_base_mode_only",
    "tests/integration/test_compare_with_base.py::test_the_base_checkout_is_removed_when_the_base_cannot_be_installed",
    "tests/integration/test_properties.py::test_the_cli_names_each_broken_file_and_the_place_and_scores_the_rest",
    "tests/end_to_end/test_action_entrypoint.py::test_install_command_working_directory_and_bad_inputs",
    "tests/end_to_end/test_action_entrypoint.py::test_install_makes_a_venv_for_the_agent_and_never_touches_ours",
    "tests/integration/test_agent_worker.py::test_the_example_on_google_adk_1_scores_as_on_2",
    "tests/integration/test_agent_worker.py::test_a_worker_that_cannot_even_say_it_is_stalled_is_killed_after_its_grace",
    "tests/end_to_end/test_init.py::test_the_pr_check_is_check_and_run_is_its_alias_with_a_note",
    "tests/integration/test_budgets_and_concurrency.py::test_auto_concurrency_settles_near_a_hidden_limit_with_no_question_failing",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> tuple[int, int]:
        module, _, _ = item.nodeid.partition("::")
        where = SLOW_MODULES.index(module) if module in SLOW_MODULES else len(SLOW_MODULES)
        test = item.nodeid.partition("[")[0]
        return where, SLOW_TESTS.index(test) if test in SLOW_TESTS else len(SLOW_TESTS)

    items.sort(key=rank)  # stable: everything else keeps the order pytest collected it in
