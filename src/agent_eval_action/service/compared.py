"""The comparison the service makes: each dataset's baseline looked up (stored on the base
branch, in a results file, or the base's run made now), compared, and gated once
(:func:`compare_and_gate`, whose final outcome ``verdict/outcome.py`` sets); the drift of the
base's fresh run; and what the views show beside the outcome."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_eval_action.config import Config
from agent_eval_action.models.plan import CheckPlan, timings_gated
from agent_eval_action.models.results import DatasetResult, Problem, Results, Selection
from agent_eval_action.models.verdicts import DatasetComparison
from agent_eval_action.repo.baseline import find_baseline, match, working_tree_reader
from agent_eval_action.repo.git import Git, Snapshot
from agent_eval_action.repo.history import BaseState, read_base_runs
from agent_eval_action.run.budget import SKIPPED as BUDGET
from agent_eval_action.scoring.reuse import pair_by_content, renamed
from agent_eval_action.service.steps import DatasetFile, Observed
from agent_eval_action.system import interrupt
from agent_eval_action.system.errors import DatasetError, InfrastructureError
from agent_eval_action.verdict.comparison import compare_dataset
from agent_eval_action.verdict.drift import drift_failures, drift_lines, finished
from agent_eval_action.verdict.gate import evaluate_gate, gated_metrics, metric_kinds, rules_of, unchecked_datasets
from agent_eval_action.verdict.noise import fewest_runs, gate_settings
from agent_eval_action.verdict.outages import uncomputed_criteria
from agent_eval_action.verdict.outcome import interrupted_reason, settle
from agent_eval_action.verdict.outcome import partial_reason as verdict_partial
from agent_eval_action.verdict.rules import Rules
from agent_eval_action.views.background import Background


@dataclass
class Outcome:
    """Compared and gated results, with the config the verdict was made with (the gate's rules
    from the merge-base): the views read their thresholds from it."""

    results: Results
    config: Config
    # The results files it was joined from (``merge``).
    sources: list[str] = field(default_factory=list)
    # What was read of the merge-base before the agent ran: the views' base runs and trends.
    base: BaseState | None = None
    # compare-with = "base": the base's agent's runs made now, which the views show beside this
    # run's (in place of the stored baselines' runs).
    base_runs: list[DatasetResult] = field(default_factory=list)
    # Dataset path -> the run the comparison compared it with (a stored baseline's or the
    # base's): the views show these beside this run without reading the files again. None: the
    # outcome was not compared in this process.
    compared: dict[str, DatasetResult] | None = None


@dataclass(frozen=True)
class Baseline:
    """A dataset's baseline run, where it was read, and the dataset's path there when the PR renamed it."""

    dataset: DatasetResult
    path: str | None
    renamed_from: str | None = None


BaselineLookup = Callable[[DatasetResult], "Baseline | None"]


def reusable_baselines(
    git: Git, selection: Selection, config: Config, fingerprint: str | None, base: Snapshot, observed: Observed | None = None
) -> Callable[[DatasetFile], DatasetResult | None]:
    """A dataset's baseline at the merge-base (as ``base`` read it) whose unchanged questions need
    not run again (``reuse.py`` says which): one that observed what the agent read, made in the
    same environment (``observed``); an older one only when no agent path changed and it was
    made with the same agent code (``fingerprint``)."""
    stored = stored_baselines(git, selection, config, base.read)

    def baseline(item: DatasetFile) -> DatasetResult | None:
        found = stored(item)
        if found is None:
            return None
        if found.environment is not None:
            # The config's agent-paths are agent code whatever the agent read: a change to them re-runs all.
            declared = config.agent_paths is not None and bool(selection.agent_changes)
            same = observed is not None and observed.environment is not None and found.environment == observed.environment.fingerprint
            return found if same and not declared else None
        same_code = fingerprint is not None and not selection.agent_changes and found.agent_fingerprint == fingerprint
        return found if same_code else None

    return baseline


def stored_baselines(
    git: Git, selection: Selection | None, config: Config, read: Callable[[str], str | None]
) -> Callable[[DatasetFile], DatasetResult | None]:
    """A dataset file's stored baseline as ``read`` finds it (at the merge-base, or in the working
    tree), under its path or the path the PR renamed it from; None when it has none or it is unreadable
    (reported when the comparison reads it)."""
    baselines_dir = git.workspace().rel(config.baselines_dir)
    renamed = {s.path: s.renamed_from for s in selection.selected if s.renamed_from} if selection is not None else {}

    def baseline(item: DatasetFile) -> DatasetResult | None:
        path = item.path or item.file
        old = renamed.get(path)
        try:
            found = find_baseline(read, "", baselines_dir, [path, *([old] if old else [])], Path(path).stem)
        except DatasetError:
            return None
        return found.dataset if found is not None else None

    return baseline


def baselines_in_repository(git: Git, selection: Selection, config: Config, base: Snapshot | None = None) -> BaselineLookup:
    """Each dataset's baseline file at the selection's merge-base (as ``base`` read it before the
    agent ran, else read now; without a merge-base: in the working tree), under its path now
    or, when the PR renamed it, its path before."""
    merge_base = selection.merge_base
    workspace = git.workspace()
    read = (
        base.read if base is not None else (lambda path: git.show(merge_base, path)) if merge_base else working_tree_reader(workspace.root)
    )
    where = f"at {merge_base[:12]}" if merge_base else "in the working tree"
    baselines_dir = workspace.rel(config.baselines_dir)
    renamed = {s.path: s.renamed_from for s in selection.selected if s.renamed_from}

    def lookup(dataset: DatasetResult) -> Baseline | None:
        old = renamed.get(dataset.path)
        found = find_baseline(read, where, baselines_dir, [dataset.path, *([old] if old else [])], dataset.name)
        if found is None:
            return None
        return Baseline(found.dataset, found.path, renamed_from=old if old and found.dataset.path != dataset.path else None)

    return lookup


def baselines_in(before: Results, where: str | None, *, pair: bool = False) -> BaselineLookup:
    """Each dataset's run in the results ``before`` (read from the file ``where``), matched by
    path, else by name; with ``pair`` (one dataset compared) and one dataset in ``before``, that one."""

    def lookup(dataset: DatasetResult) -> Baseline | None:
        found = match(before.datasets, dataset.path, dataset.name, path_of=lambda d: d.path, name_of=lambda d: d.name, only=pair)
        return Baseline(found, where) if found is not None else None

    return lookup


def compare(
    results: Results,
    config: Config,
    lookup: BaselineLookup,
    found: dict[str, DatasetResult] | None = None,
    beside: bool = False,
) -> list[DatasetComparison]:
    """Each dataset against its baseline (an unreadable one is a problem in ``results``), and the
    datasets the PR deleted as removed; ``found`` gets each dataset's baseline run. ``beside``: the
    baselines are the base's runs made in this job (compare-with = "base"), which grew with the
    PR's re-runs. No verdict: :func:`compare_and_gate` makes it."""
    comparisons = []
    for dataset in results.datasets:
        try:
            baseline = lookup(dataset)
        except DatasetError as error:
            results.problems.append(Problem(path=error.path, message=error.message()))
            baseline = None
        before = baseline.dataset if baseline is not None else None
        # A question the PR gave a new id, its content unchanged, is compared with its own baseline runs.
        pairs = pair_by_content(dataset, before) if before is not None else {}
        if before is not None and pairs:
            before = renamed(before, pairs)
        comparison = compare_dataset(
            dataset,
            before,
            baseline_path=baseline.path if baseline else None,
            seed=config.seed,
            max_question_drop=config.gate.max_question_drop,
            settings=gate_settings(
                config,
                len({q.id for q in dataset.questions}),
                # Against a stored baseline, its own record decides the cap (beside the base's
                # agent, the base's runs grow with the PR's: the setting's).
                record=fewest_runs(before.questions) if before is not None and not beside else None,
            ),
        )
        comparison.paired_by_content = pairs
        if baseline is not None and baseline.renamed_from:
            comparison.renamed_from = baseline.renamed_from
        if before is not None and found is not None:
            found[dataset.path] = before
        comparisons.append(comparison)
    for deleted in results.selection.deleted if results.selection else []:
        comparisons.append(DatasetComparison(dataset=Path(deleted).stem, path=deleted, status="removed"))
    return comparisons


def interrupted_runs(results: Results) -> int:
    """How many question runs Ctrl-C or SIGTERM kept from finishing."""
    return sum(1 for d in results.datasets for q in d.questions if q.status == "skipped" and q.skip_reason == interrupt.REASON)


def budget_skipped(results: Results) -> int:
    """How many question runs a spending limit kept from running (``max-model-calls``, ``max-cost-usd``)."""
    return sum(1 for d in results.datasets for q in d.questions if q.status == "skipped" and (q.skip_reason or "").startswith(BUDGET))


def partial_reason(results: Results, skipped: int, config: Config, *, base: bool = False) -> str:
    """Why a check that skipped questions it needed decided nothing (``base``: the base's runs)."""
    total = sum(len(d.questions) for d in results.datasets)
    return verdict_partial(skipped, total, config.max_model_calls, config.max_cost_usd, base=base)


def compare_and_gate(
    results: Results,
    rules: Rules,
    lookup: BaselineLookup,
    *,
    plan: CheckPlan | None = None,
    unsound: Sequence[str] = (),
    notes: Sequence[str] = (),
) -> Outcome:
    """The one compare-and-gate: ``results`` compared with the baselines ``lookup`` finds, then the
    verdict under ``rules``: passed, failed, or unchecked when an input problem (a bad dataset,
    an unreadable baseline, a dataset of which nothing could be scored) kept part of the check
    from happening. ``plan``: the check's (None: two runs the caller compares); its timings are
    information unless both sides were timed in this job. ``unsound``: why
    what was compared cannot be trusted (the base's side disturbed while it ran): unchecked, for
    no input's fault. With compare-with = "base" (the plan says so), ``lookup`` finds the base's
    runs made in this job, its re-runs included: never the stored baseline's, which are the
    drift. ``results.drift`` (the base's fresh run against its stored
    baseline) fails the check under fail-on-drift; ``notes``: the gate's notes the check adds. Every view of the run (headline, exit code, outputs, JUnit)
    reads it."""
    config = rules.config
    compared: dict[str, DatasetResult] = {}
    results.comparison = compare(results, config, lookup, compared, beside=plan is not None and plan.base_beside)
    kinds = metric_kinds(config, results)
    gate = evaluate_gate(results.datasets, results.comparison, config.gate, kinds, timings=timings_gated(plan))
    stopped = interrupted_runs(results)
    # An interrupted run decides nothing: no "failed" from the part that ran, and no advice to
    # add reference data to a dataset whose questions simply did not get to run; nor one whose
    # comparison is unsound (its scores were not all made as they should have been). A shard's
    # slice of a dataset may hold no question at all: a shard with nothing to do (merged as
    # nothing), not a dataset of which nothing could be checked.
    sliced = results.shard is not None
    shown = [d for d in results.datasets if d.questions or not sliced]
    for dataset in [] if stopped or unsound else unchecked_datasets(shown, config.gate, kinds):
        results.problems.append(
            Problem(
                path=dataset.path,
                message=f"{dataset.path}: no question has a score on any gated metric, so nothing was checked: "
                "add reference data (tool calls, trajectory, state, response) to its questions, or gate a metric it has "
                "with [gate.metrics.NAME] min / max / max-regression",
            )
        )
    why = list(unsound)
    notes = list(notes)
    for dataset in results.datasets:
        # A metric some runs could not be computed for (ADK's judged criteria without a judge,
        # an unreachable judge, a Vertex-backed criterion): no pass on what was not seen.
        gated = {*gated_metrics(dataset, config.gate, kinds), *(n for n, s in dataset.summary.items() if s.pass_threshold is not None)}
        unseen, noted = uncomputed_criteria(dataset, gated)
        why += unseen
        notes += noted
    if stopped:
        why.append(interrupted_reason(stopped, sum(len(d.questions) for d in results.datasets)))
    elif (partial := budget_skipped(results)) and not config.gate.allow_partial:
        why.append(partial_reason(results, partial, config))
    drifted = drift_failures(results.drift or [], config.gate.fail_on_drift)
    problems = [p.message for p in results.problems]
    final = settle(gate, why=why, problems=problems, interrupted=bool(stopped), drift=drifted, notes=notes)
    results.gate = final.model_copy(update={"rules_from": rules.source, "config_changes": rules.changes})
    return Outcome(results=results, config=config, compared=compared)


def background(outcome: Outcome, cwd: Path) -> Background:
    """What the views show beside the outcome: the runs it was compared with (handed forward,
    not read again), the metrics' histories (read before the agent ran) and the gate's rules.
    Git failing here costs the views their history, never the run its results."""
    results, config = outcome.results, outcome.config
    rules = rules_of(results, config.gate, metric_kinds(config, results))
    try:
        shown = Background.of(read_base_runs(results, Git(cwd), compared=outcome.compared, base=outcome.base), rules)
    except InfrastructureError:
        shown = Background(rules=rules)
    # compare-with = "base": the runs beside this one are the base's, made now.
    shown.base_runs.update({run.path: run for run in outcome.base_runs})
    shown.ignore_state = frozenset(config.ignore_state)
    return shown


def background_of_files(results: Results, config: Config, baseline: Results | None, label: str | None, cwd: Path) -> Background:
    """For ``report RESULTS [--baseline B]``: the base runs from the file ``baseline`` (matched as
    a comparison matches them), else from the repository at ``cwd``."""
    rules = rules_of(results, config.gate, metric_kinds(config, results))
    if baseline is None:
        try:
            return Background.of(read_base_runs(results, Git(cwd)), rules)
        except InfrastructureError:
            return Background(rules=rules)
    lookup = baselines_in(baseline, label, pair=len(results.datasets) == 1)
    runs = {d.path: found.dataset for d in results.datasets if (found := lookup(d)) is not None}
    return Background(base_label=label, base_runs=runs, rules=rules)


def drift(base_datasets: list[DatasetResult], config: Config, stored: BaselineLookup) -> tuple[list[DatasetComparison], list[str]]:
    """The base's fresh run compared with its stored baseline: the same code at another time, so
    what moved is the model (or the world), not the PR. Returns the comparisons and a line for
    each dataset that moved (``verdict/drift.py`` words them). Only the base's runs that finished count."""
    ran = [done for d in base_datasets if (done := finished(d)) is not None]
    scratch = Results(datasets=ran)
    comparisons = compare(scratch, config, stored)
    lines = [f"{p.message} (drift not measured)" for p in scratch.problems]
    return comparisons, lines + drift_lines(
        ran, comparisons, stored_runs(stored), gate_settings(config, max((len({q.id for q in d.questions}) for d in ran), default=1))
    )


def stored_runs(lookup: BaselineLookup) -> Callable[[DatasetResult], DatasetResult | None]:
    """The baseline run a lookup finds, without where it was found."""

    def run(dataset: DatasetResult) -> DatasetResult | None:
        found = lookup(dataset)
        return found.dataset if found is not None else None

    return run
