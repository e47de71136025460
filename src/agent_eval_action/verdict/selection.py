"""Which datasets a PR run evaluates: those it changed, and those whose agent inputs changed.

A dataset whose baseline recorded what the agent read (its observed inputs and environment,
``repo/observed.py``) re-runs when one of them changed (``observed``); one whose baseline did
not (an older file) re-runs on any change that is neither a dataset nor a baseline (``unobserved``);
one without a baseline, on a change to the agent's code as ``PathRoles`` tells it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agent_eval_action.models.results import SelectedDataset, Selection
from agent_eval_action.repo.git import Change
from agent_eval_action.repo.globs import matches

MAX_LISTED = 5


@dataclass(frozen=True)
class PathRoles:
    """What a repository path is to the check: a dataset, a baseline, agent code, or none of them.
    Globs and paths are repository-relative."""

    dataset_globs: list[str]
    baselines_dir: str
    agent_paths: list[str] | None
    datasets: frozenset[str] = frozenset()

    def is_dataset(self, path: str) -> bool:
        return path in self.datasets or matches(path, self.dataset_globs)

    def is_baseline(self, path: str) -> bool:
        return matches(path, [self.baselines_dir.rstrip("/") + "/**"])

    def is_agent(self, path: str) -> bool:
        """Agent code: ``agent_paths``, else every path that is neither a dataset nor a baseline."""
        if self.is_dataset(path) or self.is_baseline(path):
            return False
        return self.agent_paths is None or matches(path, self.agent_paths)


@dataclass(frozen=True)
class Observations:
    """What the base's baselines know of the agent's inputs: ``changed``, dataset -> the inputs
    its runs observed that changed (empty: none did); ``environment``, dataset -> the parts of
    the agent's environment that are not its baseline's, named ("distribution helper 1.0 → 2.0",
    "requirements.txt"; run/agent/fingerprint.py); ``unobserved``: datasets whose baseline recorded
    none (older files)."""

    changed: Mapping[str, list[str]] = field(default_factory=dict)
    environment: Mapping[str, list[str]] = field(default_factory=dict)
    unobserved: frozenset[str] = frozenset()
    # The config names the agent's paths (agent-paths): a change to them re-runs every dataset still.
    agent_paths_given: bool = False
    # Dataset -> the files its baseline's runs read as they were not at the merge-base: the base
    # changed them after its last `baseline update`, so that record is not the base's.
    not_base: Mapping[str, list[str]] = field(default_factory=dict)


def select(all_datasets: list[str], changes: list[Change], roles: PathRoles, observations: Observations | None = None) -> Selection:
    """``all_datasets`` and change paths are repository-relative POSIX paths."""
    seen = observations or Observations()
    selection = Selection(mode="changed")
    roles = PathRoles(roles.dataset_globs, roles.baselines_dir, roles.agent_paths, roles.datasets | frozenset(all_datasets))
    chosen: list[tuple[str, str]]
    agent: list[str] = []
    changed: dict[str, str] = {}
    for change in changes:
        paths = [change.path] + ([change.old_path] if change.old_path else [])
        if change.status == "D" and roles.is_dataset(change.path):
            selection.deleted.append(change.path)
            continue
        if roles.is_dataset(change.path):
            changed[change.path] = (
                f"renamed from {change.old_path} in this PR"
                if change.status == "R"
                else ("added in this PR" if change.status == "A" else "changed in this PR")
            )
            continue
        if any(roles.is_baseline(p) for p in paths):
            continue
        if any(roles.is_agent(p) for p in paths):
            agent.append(change.path)
    others = [c.path for c in changes if not roles.is_dataset(c.path) and not any(roles.is_baseline(p) for p in [c.path, c.old_path] if p)]
    inputs = [i for p in all_datasets for i in seen.changed.get(p, [])]
    selection.agent_changes = list(dict.fromkeys([*agent, *(i for i in inputs if not i.startswith("("))]))
    moved = renames(changes)
    chosen = []
    for p in all_datasets:
        if p in changed:
            chosen.append((p, changed[p]))
        elif p in seen.environment:
            chosen.append((p, f"the agent's environment changed: {_listed(list(seen.environment[p]))}"))
        elif p in seen.changed:
            if seen.changed[p]:
                chosen.append((p, f"inputs the agent read changed: {_listed(seen.changed[p])}"))
            elif agent and seen.agent_paths_given:
                chosen.append((p, f"agent code changed: {_listed(agent)}"))
        elif p in seen.unobserved and others:
            chosen.append((p, f"its baseline did not record what the agent read, and this PR changed {_listed(others)}"))
        elif agent:
            chosen.append((p, f"agent code changed: {_listed(agent)}"))
    selection.selected = [SelectedDataset(path=p, reason=why, renamed_from=moved.get(p)) for p, why in chosen]
    return selection


def _listed(items: list[str]) -> str:
    return ", ".join(items[:MAX_LISTED]) + (f" (+{len(items) - MAX_LISTED} more)" if len(items) > MAX_LISTED else "")


def renames(changes: list[Change]) -> dict[str, str]:
    """New path -> old path, for every file git saw renamed."""
    return {c.path: c.old_path for c in changes if c.status == "R" and c.old_path}


def select_all(all_datasets: list[str], reason: str, changes: list[Change] | None = None) -> Selection:
    moved = renames(changes or [])
    return Selection(mode="all", selected=[SelectedDataset(path=p, reason=reason, renamed_from=moved.get(p)) for p in all_datasets])
