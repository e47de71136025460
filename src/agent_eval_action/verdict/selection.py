"""Which datasets a PR run evaluates: those it changed, or all of them when agent code changed."""

from __future__ import annotations

from dataclasses import dataclass

from agent_eval_action.core.models import SelectedDataset, Selection
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


def select(all_datasets: list[str], changes: list[Change], roles: PathRoles) -> Selection:
    """``all_datasets`` and change paths are repository-relative POSIX paths."""
    selection = Selection(mode="changed")
    roles = PathRoles(roles.dataset_globs, roles.baselines_dir, roles.agent_paths, roles.datasets | frozenset(all_datasets))
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
    selection.agent_changes = agent
    moved = renames(changes)
    if agent:
        listed = ", ".join(agent[:MAX_LISTED]) + (f" (+{len(agent) - MAX_LISTED} more)" if len(agent) > MAX_LISTED else "")
        reason = f"agent code changed: {listed}"
        chosen = [(p, changed.get(p, reason)) for p in all_datasets]
    else:
        chosen = [(p, changed[p]) for p in all_datasets if p in changed]
    selection.selected = [SelectedDataset(path=p, reason=why, renamed_from=moved.get(p)) for p, why in chosen]
    return selection


def renames(changes: list[Change]) -> dict[str, str]:
    """New path -> old path, for every file git saw renamed."""
    return {c.path: c.old_path for c in changes if c.status == "R" and c.old_path}


def select_all(all_datasets: list[str], reason: str, changes: list[Change] | None = None) -> Selection:
    moved = renames(changes or [])
    return Selection(mode="all", selected=[SelectedDataset(path=p, reason=reason, renamed_from=moved.get(p)) for p in all_datasets])
