"""The steps the service composes: evaluate dataset files (:func:`evaluate_files`, which every
command that scores datasets goes through), select what a pull request changed, and what the
check reads of the merge-base and the agent before anything runs. Comparing and gating are in
``compared``. Collaborators (git, the config) come in as arguments; nothing here prints.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from agent_eval_action.config import Config
from agent_eval_action.models.plan import Runner, in_repository, runner_for
from agent_eval_action.models.results import BaseRun, DatasetResult, Problem, RunStats, Selection
from agent_eval_action.repo.agent_code import agent_paths
from agent_eval_action.repo.baseline import find_baseline
from agent_eval_action.repo.discovery import dataset_paths
from agent_eval_action.repo.git import Change, Git, Snapshot, Workspace
from agent_eval_action.repo.history import BaseState, read_base
from agent_eval_action.repo.observed import RepositoryInputs
from agent_eval_action.run.agent.fingerprint import Environment, environment_changes, environment_fingerprint
from agent_eval_action.run.agent.venvs import made_files
from agent_eval_action.service.evaluation import RECORDED_FORMATS, Evaluation, History
from agent_eval_action.system.collector import LIBRARY, Collector
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.verdict.rules import Rules, rules_at_base
from agent_eval_action.verdict.selection import Observations, PathRoles, renames, select, select_all


@dataclass(frozen=True)
class DatasetFile:
    """A dataset file to evaluate: ``file`` as this process opens it, ``path`` as the results
    name it (its path from the repository root) when that is not ``file``."""

    file: str
    path: str | None = None
    # Where it may resolve besides the repository: a file the user named (``inside.places``).
    also: tuple[str, ...] = ()


@dataclass
class Evaluated:
    """What the evaluate loop made: the datasets' results, the files that could not be
    evaluated, and how the agent was run over all of them (None when nothing ran it)."""

    datasets: list[DatasetResult]
    problems: list[Problem]
    run: RunStats | None = None
    # compare-with = "base": the base's agent's runs of the same questions, and what they cost.
    base: BaseRun | None = None
    base_datasets: list[DatasetResult] | None = None
    # What disturbed the base's side while it ran (its workers killed from outside): the check
    # then could not be made.
    base_disturbed: list[str] = field(default_factory=list)
    # `baseline update`: the questions an outage kept from being recorded, a line a dataset.
    unrecorded: list[str] = field(default_factory=list)


def runner_of(config: Config) -> Runner:
    """The runner of the agent ``config`` names (``models.plan.runner_for``: the one decision)."""
    return runner_for(config.agent, config.agent_url, config.in_process)


@dataclass(frozen=True)
class Observed:
    """What the agent's observed inputs are recorded and compared against: the repository as it
    is now, and the agent's environment (None: not taken, nothing is recorded)."""

    inputs: RepositoryInputs
    environment: Environment | None


def observed_now(config: Config, git: Git) -> Observed | None:
    """The repository and the agent's environment now, for an agent run here from a repository;
    None otherwise (a deployed agent, no agent, no repository)."""
    if not in_repository(runner_of(config)) or not git.is_repository():
        return None
    workspace = git.workspace()
    skip = [workspace.rel(config.output_dir)] + ([workspace.rel(config.model_cache)] if config.model_cache else [])
    made = made_files(config.agent_python)  # what the install command wrote that git ignores
    return Observed(RepositoryInputs(git, skip, made), environment_fingerprint(config, workspace))


def stale_inputs(baseline: DatasetResult, observed: Observed | None) -> tuple[list[str], list[str]] | None:
    """What changed since a baseline's runs: (the parts of the agent's environment, each named,
    run/agent/fingerprint.py; the inputs they observed, a question run with nothing observed as
    ``"(a question run whose reads were not observed)"``); None when the baseline observed
    nothing (older, or recorded)."""
    if baseline.environment is None or baseline.format in RECORDED_FORMATS:
        return None
    now = observed.environment if observed is not None else None
    if observed is None or now is None or now.fingerprint != baseline.environment:
        return environment_changes(baseline.environment_parts, now) or ["the agent's environment"], []
    changed: dict[str, None] = {}
    for question in baseline.questions:
        if question.status != "ok":
            continue
        if question.inputs is None:
            changed["(a question run whose reads were not observed)"] = None
            continue
        changed.update(dict.fromkeys(observed.inputs.changed(question.inputs, baseline.imports or ())))
    return [], list(changed)


def observations_at_base(
    git: Git, base: Snapshot, config: Config, paths: list[str], changes: list[Change], observed: Observed | None
) -> Observations:
    """What each dataset's baseline at the merge-base (as ``base`` read it) observed of the
    agent's inputs, and which of those changed since (``observed``: the repository now)."""
    baselines_dir = git.workspace().rel(config.baselines_dir)
    moved = renames(changes)
    changed: dict[str, list[str]] = {}
    environment: dict[str, list[str]] = {}
    unobserved: set[str] = set()
    not_base: dict[str, list[str]] = {}
    for path in paths:
        old = moved.get(path)
        try:
            found = find_baseline(base.read, "", baselines_dir, [path, *([old] if old else [])], Path(path).stem)
        except DatasetError:
            continue  # reported when the comparison reads it
        if found is None:
            continue
        stale = stale_inputs(found.dataset, observed)
        if stale is not None:
            changed[path] = stale[1]
            if stale[0]:
                environment[path] = stale[0]
            moved_on = files_the_base_changed(git, base.rev, found.dataset, stale[1])
            if moved_on:
                not_base[path] = moved_on
        elif found.dataset.format not in RECORDED_FORMATS and in_repository(runner_of(config)):
            unobserved.add(path)
    return Observations(
        changed=changed,
        environment=environment,
        unobserved=frozenset(unobserved),
        agent_paths_given=config.agent_paths is not None,
        not_base=not_base,
    )


def files_the_base_changed(git: Git, rev: str, baseline: DatasetResult, keys: list[str]) -> list[str]:
    """Of the files ``keys`` (the inputs that changed since the baseline was recorded), those whose
    recorded content is not their content at ``rev`` (the merge-base): the base changed them after
    its baseline was recorded, so the record is not the base's and the change not the PR's."""
    files = [k for k in keys if not k.endswith(("/", "/*")) and not k.startswith("(")]
    if not files:
        return []
    recorded: dict[str, set[str]] = {}
    for run in baseline.questions:
        for key, value in (run.inputs or {}).items():
            if key in files:
                recorded.setdefault(key, set()).add(value)
    at_base = git.blob_ids([f"{rev}:{key}" for key in recorded])
    # Only a file the base's tree holds tells: one it does not (ignored and made by the install,
    # inside a submodule, gone) may be what the record saw, and then the record may stand.
    return sorted(key for key, values in recorded.items() if (blob := at_base[f"{rev}:{key}"]) is not None and values != {blob})


# A dataset's baseline, None when it has none; raises DatasetError when its file is unreadable.


def base_ref(flag: str | None, config: Config, env: Mapping[str, str]) -> str | None:
    """--base (or the ``base-ref`` input), else the config's base, else the PR's base branch in GitHub Actions."""
    return flag or config.base or env.get("GITHUB_BASE_REF") or None


def evaluate_files(
    config: Config,
    files: Sequence[DatasetFile],
    *,
    progress: TextIO | None,
    fingerprint: str | None = None,
    reuse: Callable[[DatasetFile], DatasetResult | None] | None = None,
    beside: tuple[Config, Path, dict[str, str]] | None = None,
    collector: Collector = LIBRARY,
    observed: Observed | None = None,
    history: Callable[[DatasetFile], History | None] | None = None,
) -> Evaluated:
    """The evaluate loop: each file loaded, run through the agent where it holds no recorded runs,
    and scored; those that could not be are problems. ``progress``: where the progress line of
    long runs goes (None: nowhere). ``fingerprint``: the agent code's hash, recorded with the
    runs made now; ``reuse``: a dataset's baseline whose unchanged questions need not run again;
    ``beside``: the base's agent's config, checkout and variables, run beside ours (compare-with = "base");
    ``collector``: the garbage collector's policy while scoring (the process owner's);
    ``history``: a dataset's stored baseline, pooled with (`baseline update`) or re-run against
    (the questions in doubt of a check); ``observed``: the repository and environment the agent's
    reads are recorded against."""
    evaluation = Evaluation(
        config,
        err=progress or io.StringIO(),
        collector=collector,
        inputs=observed.inputs if observed is not None else None,
        environment=observed.environment if observed is not None else None,
    )
    if beside is not None:
        evaluation.beside(*beside)
    datasets: list[DatasetResult] = []
    problems: list[Problem] = []
    base = BaseRun(datasets=[], questions=0, runs=config.runs, model_calls=0)
    base_datasets: list[DatasetResult] = []
    unrecorded: list[str] = []
    try:
        for item in files:
            done = evaluation.evaluate(
                item.file,
                reuse=reuse(item) if reuse is not None else None,
                also=item.also,
                history=history(item) if history is not None else None,
            )
            problems.extend(done.problems)
            result = done.result
            if result is None:
                continue
            if item.path is not None:
                result.path = item.path
            if done.unrecorded:
                unrecorded.append(f"{result.path}: {done.unrecorded}")
            if done.base is not None:  # the base's run of this file
                done.base.path = result.path
                base_datasets.append(done.base)
                base.datasets.append(result.path)
                base.questions += done.base_questions
                base.reruns += done.base_reruns
                base.model_calls += done.base_calls
            if result.format not in RECORDED_FORMATS:
                result.agent_fingerprint = fingerprint
            datasets.append(result)
    finally:
        evaluation.close()
    evaluated = Evaluated(datasets=datasets, problems=problems, run=evaluation.stats(), unrecorded=unrecorded)
    if beside is not None:
        evaluated.base_datasets, evaluated.base = base_datasets, base
        evaluated.base_disturbed = [
            f"the base's agent could not run undisturbed: its worker process {reason} (nothing of ours sent that signal), "
            "so its runs are not the base's; run the check again"
            for reason in evaluation.base_killed
        ]
    return evaluated


def gate_rules(config: Config, git: Git, base: Snapshot | None) -> Rules:
    """The config the verdict is made with: the gate's rules (and the datasets and metrics checked
    at least) from the merge-base when there is one."""
    if base is None:
        return Rules(config=config, source=config.origin.source or "the defaults")
    return rules_at_base(config, base.read, git.workspace().prefix, base.rev[:7])


def base_datasets(git: Git, base: Snapshot | None, rules: Rules, workspace: Workspace) -> list[str]:
    """The dataset files (repository paths) the base's own settings select at the merge-base: a
    file set, not patterns, so no exclusion of the PR's (``!path`` in its config, the
    --datasets flag) removes one."""
    if base is None or rules.base is None:
        return []
    return dataset_paths(git.files(base.rev), [workspace.glob(g) for g in rules.base.datasets])


def tampered(changed: list[str], what: str = "the base's files") -> list[str]:
    """The problem a base side changed while it ran makes (``base_run.BaseTree.changed``, or
    ``metric_code.changed_since_written``: ``what`` names them)."""
    if not changed:
        return []
    shown = ", ".join(changed[:5]) + (f" (+{len(changed) - 5} more)" if len(changed) > 5 else "")
    return [
        f"{what} changed while its agent ran ({shown}): something in this job (the PR's agent?) wrote to "
        "the base's copy, so what stands for the base here is not the base's; the comparison could not be made"
    ]


def base_state(git: Git, base: Snapshot, selection: Selection, config: Config) -> BaseState:
    """Reads everything the verdict and its views need of the merge-base (each selected dataset's
    baseline files, their history), before any agent code runs; nothing is read there after."""
    baselines_dir = git.workspace().rel(config.baselines_dir)
    return read_base(base, baselines_dir, [(s.path, s.renamed_from) for s in selection.selected])


def path_roles(config: Config, workspace: Workspace, extra: frozenset[str] = frozenset()) -> PathRoles:
    """What each repository path is to the check: the one definition that selection (what a PR
    re-runs) and the agent's fingerprint (when a baseline is stale) both use. Agent code is
    ``agent_paths`` when set, else the agent's package, the modules it imports, its dependency
    files and the config (``agent_code``); without an agent in the repository, every path that
    is neither a dataset nor a baseline. ``extra``: dataset paths besides those the globs match
    (the base's)."""
    if config.agent_paths is not None:
        agent: list[str] | None = [workspace.glob(g) for g in config.agent_paths]
    elif config.agent and in_repository(runner_of(config)):
        roots = [config.import_root(), workspace.cwd]
        config_file = workspace.cwd / config.origin.file if config.origin.file else None
        agent = agent_paths(config.agent, top=workspace.root, import_roots=roots, config_file=config_file)
    else:
        agent = None
    return PathRoles(
        dataset_globs=[workspace.glob(g) for g in config.datasets],
        baselines_dir=workspace.rel(config.baselines_dir),
        agent_paths=agent,
        datasets=extra,
    )


def select_datasets(
    config: Config,
    paths: list[str],
    changes: list[Change],
    *,
    base: str | None,
    merge_base: str | None,
    evaluate_all: bool,
    roles: PathRoles,
    observations: Observations | None = None,
) -> Selection:
    """Which of the datasets (repository paths) a check evaluates: those the PR changed, all of
    them when an agent path changed, or all of them when asked or when there is no base to diff with."""
    if evaluate_all or config.select == "all" or merge_base is None:
        reason = "--all" if evaluate_all else "select = all" if config.select == "all" else "no base branch: everything"
        chosen = select_all(sorted(paths), reason, changes)
    else:
        chosen = select(sorted(paths), changes, roles, observations)
    chosen.base_ref, chosen.merge_base = base, merge_base
    return chosen


def agent_fingerprint(config: Config, git: Git, roles: PathRoles) -> str | None:
    """The hash of the agent's code (``roles``: :func:`path_roles`) at HEAD (None with uncommitted
    changes to it, without a repository, or for an agent that is not in the repository: --agent-url)."""
    if not config.agent:
        return None
    return git.fingerprint("HEAD", roles.is_agent, working_tree=True)
