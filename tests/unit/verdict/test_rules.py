"""The gate's rules come from the base branch: a PR that loosens the gate, narrows the datasets or
the metrics, or moves the baselines is still judged by the base's settings, and what it changes
is listed."""

from __future__ import annotations

from agent_eval_action.config import Config, config_from_text, placed
from agent_eval_action.verdict.rules import Rules, differences, narrowed, rules_at_base

BASE = """datasets = ["evaluation/datasets/*.json", "evaluation/more/*.csv"]
metrics = ["tool_usage_accuracy", "latency"]
baselines-dir = "evaluation/baselines"
select = "changed"
agent = "base_agent"

[gate]
max-regression = 0.05
fail-on-new-errors = true
"""


def head_config(text: str, name: str = "agent-eval.toml") -> Config:
    found = config_from_text(text, name, None)
    assert found is not None
    return placed(found, ".")


def rules(head_text: str, base_files: dict[str, str]) -> Rules:
    return rules_at_base(head_config(head_text), base_files.get, "", "abc1234")


def test_unchanged_settings_give_heads_config_and_no_changes() -> None:
    found = rules(BASE, {"agent-eval.toml": BASE})
    assert found.source == "agent-eval.toml at abc1234"
    assert found.changes == []
    assert found.config.datasets == ["evaluation/datasets/*.json", "evaluation/more/*.csv"]
    assert found.config.gate.max_regression == 0.05


def test_a_pr_that_loosens_the_gate_is_judged_by_the_bases_gate() -> None:
    head = BASE.replace("max-regression = 0.05", "max-regression = 1.0").replace("fail-on-new-errors = true", "fail-on-new-errors = false")
    found = rules(head, {"agent-eval.toml": BASE})
    assert found.config.gate.max_regression == 0.05
    assert found.config.gate.fail_on_new_errors is True
    assert found.changes == ["fail-on-new-errors true -> false", "max-regression 0.05 -> 1.0"]


def test_the_verdict_settings_come_from_the_base_and_the_agent_from_head() -> None:
    head = BASE.replace('select = "changed"', 'select = "all"').replace(
        'baselines-dir = "evaluation/baselines"', 'baselines-dir = "elsewhere"'
    )
    head = head.replace('agent = "base_agent"', 'agent = "head_agent"\nagent-paths = ["app/**"]')
    found = rules(head, {"agent-eval.toml": BASE})
    assert found.config.select == "changed"
    assert found.config.baselines_dir == "evaluation/baselines"
    assert found.config.agent_paths is None
    assert found.config.agent == "head_agent"
    assert "select changed -> all" in found.changes
    assert "baselines-dir evaluation/baselines -> elsewhere" in found.changes
    assert "agent-paths (unset) -> ['app/**']" in found.changes


def test_a_pr_that_narrows_the_datasets_keeps_the_bases_selection_apart() -> None:
    """The datasets are joined as files by the service (``steps.base_datasets``): the rules hand
    the base's own config forward, whatever patterns the PR writes."""
    head = BASE.replace(', "evaluation/more/*.csv"', ', "evaluation/new/*.json", "!evaluation/more/x.csv"')
    found = rules(head, {"agent-eval.toml": BASE})
    assert found.config.datasets == ["evaluation/datasets/*.json", "evaluation/new/*.json", "!evaluation/more/x.csv"]
    assert found.base is not None and found.base.datasets == ["evaluation/datasets/*.json", "evaluation/more/*.csv"]
    assert found.changes == []  # listed by file, where the files are known


def test_a_config_moved_into_pyproject_keeps_the_bases_rules() -> None:
    """The PR moves agent-eval.toml into pyproject's [tool.agent-eval] with a looser gate: the
    base's own search still finds its agent-eval.toml."""
    loose = BASE.replace("max-regression = 0.05", "max-regression = 1.0").replace(
        'baselines-dir = "evaluation/baselines"', 'baselines-dir = "x"'
    )
    head = config_from_text("[tool.agent-eval]\n" + loose.replace("[gate]", "[tool.agent-eval.gate]"), "pyproject.toml", "tool.agent-eval")
    assert head is not None
    found = rules_at_base(placed(head, "."), {"agent-eval.toml": BASE, "pyproject.toml": '[project]\nname = "x"\n'}.get, "", "abc1234")
    assert found.source == "agent-eval.toml at abc1234"
    assert found.config.gate.max_regression == 0.05 and found.config.baselines_dir == "evaluation/baselines"
    # And the other way: the base kept it in pyproject, the PR adds an agent-eval.toml.
    pyproject = "[tool.agent-eval]\n" + BASE.replace("[gate]", "[tool.agent-eval.gate]")
    found = rules(loose, {"pyproject.toml": pyproject})
    assert found.source == "pyproject.toml at abc1234" and found.config.gate.max_regression == 0.05


def test_a_budget_comes_from_the_base_unless_given_for_the_run() -> None:
    found = rules(BASE + "", {"agent-eval.toml": BASE.replace('select = "changed"', 'select = "changed"\nmax-model-calls = 50')})
    assert found.config.max_model_calls == 50
    tight = BASE.replace('select = "changed"', 'select = "changed"\nmax-model-calls = 2')
    found = rules(tight, {"agent-eval.toml": BASE})
    assert found.config.max_model_calls is None and "max-model-calls (unset) -> 2" in found.changes
    flagged = head_config(BASE).with_overrides(max_model_calls=7)
    found = rules_at_base(flagged, {"agent-eval.toml": BASE}.get, "", "abc1234")
    assert found.config.max_model_calls == 7 and "max-model-calls (unset) -> 7" in found.changes


def test_what_the_command_line_names_is_no_change_of_the_prs() -> None:
    """`--datasets evaluation/datasets/*.json`, `--all`, `--metrics latency` typed for one run: the base's
    datasets and metrics are still checked, and nothing is listed as "this PR changes the gate"."""
    head = head_config(BASE).with_overrides(datasets=["evaluation/datasets/*.json"], select="all", metrics=["latency"])
    found = rules_at_base(head, {"agent-eval.toml": BASE}.get, "", "abc1234")
    assert found.changes == []
    # The base's datasets are joined with these as files, not patterns (service.api.run_check).
    assert found.config.datasets == ["evaluation/datasets/*.json"]
    assert found.config.metrics == ["latency", "tool_usage_accuracy"] and found.config.select == "changed"


def test_a_pr_that_only_adds_a_dataset_narrows_nothing() -> None:
    head = BASE.replace(', "evaluation/more/*.csv"]', ', "evaluation/more/*.csv", "evaluation/new/*.json"]')
    assert rules(head, {"agent-eval.toml": BASE}).changes == []


def test_a_pr_that_drops_a_metric_still_computes_it() -> None:
    head = BASE.replace('metrics = ["tool_usage_accuracy", "latency"]', 'metrics = ["latency"]')
    found = rules(head, {"agent-eval.toml": BASE})
    assert found.config.metrics == ["latency", "tool_usage_accuracy"]
    assert found.changes == ["metrics ['tool_usage_accuracy', 'latency'] -> ['latency'] (the base's metrics are still computed)"]


def test_every_metric_on_either_side_means_every_metric() -> None:
    head = BASE.replace('metrics = ["tool_usage_accuracy", "latency"]\n', "")
    assert rules(head, {"agent-eval.toml": BASE}).config.metrics == []
    narrowing = BASE.replace('metrics = ["tool_usage_accuracy", "latency"]\n', "")
    found = rules(BASE, {"agent-eval.toml": narrowing})
    assert found.config.metrics == []
    assert found.changes == ["metrics (every metric) -> ['tool_usage_accuracy', 'latency'] (the base's metrics are still computed)"]


def test_no_config_at_the_base_means_the_defaults() -> None:
    found = rules(BASE.replace("max-regression = 0.05", "max-regression = 0.5"), {})
    assert found.source == "the defaults (no config at abc1234)"
    assert found.config.gate.max_regression == Config().gate.max_regression
    assert "max-regression 0.05 -> 0.5" in found.changes


def test_an_unreadable_base_config_means_the_defaults_and_says_why() -> None:
    found = rules(BASE, {"agent-eval.toml": "gate = [unclosed"})
    assert found.source.startswith("the defaults (") and found.source.endswith(" could not be read)")
    assert "agent-eval.toml at abc1234" in found.source
    assert found.config.gate == Config().gate


def test_a_pyproject_without_the_table_is_passed_over_for_the_next_candidate() -> None:
    base_files = {"pyproject.toml": '[project]\nname = "x"\n'}
    found = rules_at_base(head_config(BASE, "agent-eval.toml"), base_files.get, "", "abc1234")
    assert found.source == "the defaults (no config at abc1234)"


def test_in_a_subfolder_the_nearest_base_config_is_found_and_its_paths_made_relative() -> None:
    """Working in ``svc/``: the base's config sits at the top, so its datasets are ``../...`` from here."""
    head = Config(datasets=["evaluation/*.json"])
    head = placed(head, ".")
    found = rules_at_base(
        head, {"agent-eval.toml": 'datasets = ["evaluation/*.json"]\n[gate]\nmax-regression = 0.2\n'}.get, "svc", "abc1234"
    )
    assert found.source == "../agent-eval.toml at abc1234"
    assert found.config.gate.max_regression == 0.2
    assert found.config.datasets == ["evaluation/*.json"]
    assert found.base is not None and found.base.datasets == ["../evaluation/*.json"]


def test_differences_and_narrowed_directly() -> None:
    base, head = Config(), Config(select="all", metrics=["latency"])
    assert differences(base, head) == ["select changed -> all"]
    assert narrowed(base, head) == ["metrics (every metric) -> ['latency'] (the base's metrics are still computed)"]
    assert differences(head, head) == [] and narrowed(head, head) == []
