from __future__ import annotations

import os
import sys
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from agent_eval_action.run.workers.template import ENV_TEMPLATE
from tests.helpers.zygotes import running_template

# pytest keeps its rewrite of each test module's asserts in the module's __pycache__ and reads it
# back on the next run, unless bytecode is not written (PYTHONDONTWRITEBYTECODE, set on the
# machines this suite runs on): then every test process rewrote every module again, 3.5 s of its
# 6 s of collection. Bytecode is written while a test process collects (so every module imported
# then writes its own too, beside its source: git ignores them), and in it only: the environment,
# which the agents' processes inherit, is left as it is.
_NO_BYTECODE = sys.dont_write_bytecode


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = _NO_BYTECODE


# "1": every zygote is started as a fresh interpreter, as a command outside the suite starts it.
FRESH_ZYGOTES = "AGENT_EVAL_TEST_FRESH_ZYGOTES"


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Work in ``tmp_path``, as a user whose files live there: inputs must lie inside the working
    directory's repository (the directory itself without one), and ``tmp_path`` is not in this checkout."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="session", autouse=True)
def zygote_template() -> Iterator[str | None]:
    """A template per test process that forks the zygotes of the commands the tests run
    (``run/workers/template.py``): the suite starts some 500, and each fresh one spent half a
    second to a second of CPU importing ADK. Yields its socket (None: the zygotes start fresh).
    Named to the commands at once, its imports not waited for: a zygote asked for before it
    answers (its socket not there yet) is started fresh, and every one after it is forked, in the
    same test too (named only once it answered, at a test's start, a long test that began before
    started every zygote of its commands fresh: one suite run started 84 agent processes fresh
    before, 81 after, 4 of them zygotes asked for before the template answered)."""
    if os.environ.get(FRESH_ZYGOTES) == "1" or not sys.platform.startswith("linux"):
        yield None
        return
    with running_template(os.environ, wait=False) as path:
        if path is not None:
            os.environ[ENV_TEMPLATE] = path
        try:
            yield path
        finally:
            os.environ.pop(ENV_TEMPLATE, None)


@pytest.fixture(autouse=True)
def _zygotes_of_this_test(zygote_template: str | None, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """No template for a test marked ``fresh_zygotes``, whose agents look at other processes
    through /proc (their environment, their command line), where a template's zygote shows the
    template's."""
    if request.node.get_closest_marker("fresh_zygotes") is not None:
        monkeypatch.delenv(ENV_TEMPLATE, raising=False)


# The modules with the longest tests (measured with --durations; most wait on agent timeouts,
# venvs or several CLI runs) go first, their longest test first, so that under xdist (make test's
# --dist worksteal: the first process starts with the first third, the others take from the end
# of its queue once theirs are done) the long tests start first and the processes end on short
# tests together rather than one waiting out a long test alone at the end. Order only: nothing
# is skipped or merged. Derived from `pytest -n 2 --durations=60` with the command line in-process
# (tests/helpers/commands.py): every module with a test of 9 s or more, by its longest test, and
# every test of 15 s or more; tests/unit/test_test_layout.py checks that each name still exists.
SLOW_MODULES = (
    "tests/integration/test_adk_judged.py",
    "tests/integration/test_budgets_and_concurrency.py",
    "tests/integration/test_observed_inputs.py",
    "tests/integration/test_subfolder_run.py",
    "tests/integration/test_compare_with_base.py",
    "tests/integration/test_agent_worker.py",
    "tests/integration/test_seed_pipeline.py",
    "tests/end_to_end/test_init.py",
    "tests/integration/test_quota_pacing.py",
    "tests/integration/test_reuse.py",
    "tests/integration/test_pr_flow.py",
    "tests/integration/test_interrupt.py",
    "tests/integration/test_agent_paths.py",
    "tests/integration/test_scenarios.py",
    "tests/end_to_end/test_action_entrypoint.py",
    "tests/integration/test_base_side.py",
    "tests/integration/test_example.py",
    "tests/integration/test_noisy_verdict.py",
    "tests/integration/test_convert.py",
    "tests/integration/test_shards.py",
    "tests/integration/test_api.py",
    "tests/integration/test_flaky_runs.py",
    "tests/integration/test_agent_references.py",  # each test loads the example's agent (10-15 s on a busy machine)
    "tests/integration/test_baseline_layout.py",
    # Not in that measure (they run no command line in-process), kept from the earlier lists.
    "tests/end_to_end/test_first_day.py",
    "tests/unit/run/test_environments.py",
)
SLOW_TESTS = (
    "tests/integration/test_adk_judged.py::test_every_case_scores_as_adks_agent_evaluator",
    "tests/integration/test_budgets_and_concurrency.py::test_auto_concurrency_settles_near_a_hidden_limit_with_no_question_failing",
    "tests/integration/test_observed_inputs.py::test_a_pin_bumped_in_a_requirements_file_included_by_r",
    "tests/integration/test_observed_inputs.py::test_a_vendored_wheel_swapped_under_the_same_name",
    "tests/integration/test_subfolder_run.py::test_a_run_from_a_subfolder_gives_the_same_verdict_in_the_same_place",
    "tests/integration/test_compare_with_base.py::test_a_slower_tool_is_caught_by_the_latency_rule_in_base_mode_only",
    "tests/integration/test_agent_worker.py::test_at_concurrency_each_hostile_question_costs_only_itself",
    "tests/integration/test_observed_inputs.py::test_baseline_update_and_evaluate_run_the_agent_in_the_venv_their_install_command_makes",
    "tests/integration/test_compare_with_base.py::test_each_side_runs_in_its_own_environment",
    "tests/integration/test_seed_pipeline.py::test_validate_accepts_the_pipelines_metric_definitions_and_lists_each_judge",
    "tests/end_to_end/test_init.py::test_the_pr_check_is_check_and_run_is_its_alias_with_a_note",
    "tests/integration/test_observed_inputs.py::test_a_model_setting_changed_is_never_replayed_from_the_cache",
    "tests/integration/test_observed_inputs.py::test_another_install_command_that_installs_the_same_reuses_and_a_pin_in_requirements_re_runs",
    "tests/integration/test_quota_pacing.py::test_the_judges_share_the_agents_quota",
    "tests/integration/test_observed_inputs.py::test_a_dot_env_file_in_the_agent_folder",
    "tests/integration/test_agent_worker.py::test_each_hostile_question_errors_alone_and_the_run_ends_within_its_timeouts",
    "tests/integration/test_compare_with_base.py::test_a_broken_tool_fails_in_both_modes",
    "tests/integration/test_observed_inputs.py::test_a_readme_only_pr_and_an_unchanged_rerun_cost_no_model_call",
    "tests/integration/test_observed_inputs.py::test_vendor_imported_after_a_sys_path_insert",
    "tests/integration/test_reuse.py::test_the_model_call_cache_replays_unchanged_calls_and_recalls_only_diverged_conversations",
    "tests/integration/test_compare_with_base.py::test_a_project_in_a_subfolder_runs_its_base_from_the_same_subfolder",
    "tests/integration/test_pr_flow.py::test_agent_driven_dataset_regression_is_caught",
    "tests/integration/test_compare_with_base.py::test_the_action_input_compares_with_the_base",
    "tests/integration/test_interrupt.py::test_a_second_run_on_the_same_output_dir_is_refused_and_the_first_is_unharmed",
    "tests/integration/test_agent_worker.py::test_the_example_on_google_adk_1_scores_as_on_2",
    "tests/integration/test_observed_inputs.py::test_the_agent_input_switched_to_another_agent_in_the_same_module",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> tuple[int, int]:
        module, _, _ = item.nodeid.partition("::")
        where = SLOW_MODULES.index(module) if module in SLOW_MODULES else len(SLOW_MODULES)
        test = item.nodeid.partition("[")[0]
        return where, SLOW_TESTS.index(test) if test in SLOW_TESTS else len(SLOW_TESTS)

    items.sort(key=rank)  # stable: everything else keeps the order pytest collected it in
