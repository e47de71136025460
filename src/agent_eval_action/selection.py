"""Which datasets a PR run evaluates: those it changed, or all of them when agent code changed."""

from __future__ import annotations

from agent_eval_action.git_ops import Change
from agent_eval_action.globs import matches
from agent_eval_action.models import SelectedDataset, Selection

MAX_LISTED = 5


def select(
    all_datasets: list[str],
    changes: list[Change],
    *,
    dataset_globs: list[str],
    baselines_dir: str,
    agent_paths: list[str] | None,
) -> Selection:
    """``all_datasets`` and change paths are repository-relative POSIX paths."""
    selection = Selection(mode="changed")
    baseline_glob = [baselines_dir.rstrip("/") + "/**"]

    def is_dataset(path: str) -> bool:
        return matches(path, dataset_globs) or path in all_datasets

    agent: list[str] = []
    changed: dict[str, str] = {}
    for change in changes:
        paths = [change.path] + ([change.old_path] if change.old_path else [])
        if change.status == "D" and is_dataset(change.path):
            selection.deleted.append(change.path)
            continue
        if is_dataset(change.path):
            changed[change.path] = (
                f"renamed from {change.old_path} in this PR"
                if change.status == "R"
                else ("added in this PR" if change.status == "A" else "changed in this PR")
            )
            continue
        if any(matches(p, baseline_glob) for p in paths):
            continue
        if agent_paths is None or any(matches(p, agent_paths) for p in paths):
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
