"""Spreading a suite over an Actions matrix: ``--shard i/n`` takes a deterministic slice of the
questions; ``merge`` joins the shards' results into one, refusing runs that don't belong together."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from agent_eval_action.config import Config
from agent_eval_action.datasets import LoadedDataset, Record
from agent_eval_action.metrics import MetricContext
from agent_eval_action.models.results import DatasetResult, QuestionResult, Results
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.system.errors import ConfigError, DatasetError


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> (2, 4); 1-based, as matrix values usually are."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ConfigError("shard", f"{text!r} is not i/n (e.g. 2/4)") from None
    if not 1 <= index <= count:
        raise ConfigError("shard", f"{text!r}: i must be between 1 and n")
    return index, count


def in_shard(dataset: str, question_id: str, index: int, count: int) -> bool:
    """Stable across machines and Python runs (no salted hash): sha256 of dataset and question id."""
    digest = hashlib.sha256(f"{dataset}\x1f{question_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count == index - 1


def keep_shard(dataset: LoadedDataset, shard: str) -> None:
    """Narrows ``dataset`` to the questions of ``shard`` (``"i/n"``), record by record; once read
    through, ``dataset.whole`` says how many questions the whole dataset holds."""
    index, count = parse_shard(shard)
    source = dataset.records
    dataset.batches = None  # the slice is taken record by record

    def sliced() -> Iterator[Record | DatasetError]:
        ids: set[str] = set()
        for item in source:
            if isinstance(item, DatasetError):
                # File problems are reported by the first shard only, so a merge lists them once.
                if index == 1:
                    yield item
                continue
            ids.add(item.question.id)
            if in_shard(dataset.name, item.question.id, index, count):
                yield item
        dataset.whole = len(ids)

    dataset.records = sliced()


def merge_results(parts: list[tuple[str, Results]], scorer: Scorer) -> Results:
    """One results object from every shard of a run; summaries recomputed from the questions."""
    if not parts:
        raise ConfigError("merge", "no results files to merge")
    shards = []
    for path, results in parts:
        if results.shard is None:
            raise DatasetError(path, "is not a shard's results (it has no `shard`): merge only joins shards of one run")
        shards.append((parse_shard(results.shard), path))
    counts = {count for (_, count), _ in shards}
    if len(counts) != 1:
        raise DatasetError(parts[0][0], f"shards of different splits: {sorted(r.shard or '' for _, r in parts)}")
    count = counts.pop()
    seen: dict[int, str] = {}
    for (index, _), path in shards:
        if index in seen:
            raise DatasetError(path, f"shard {index}/{count} also comes from {seen[index]}")
        seen[index] = path
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise DatasetError(parts[0][0], f"missing shard(s) {', '.join(f'{i}/{count}' for i in missing)}")
    versions = {r.tool_version for _, r in parts}
    if len(versions) != 1:
        raise DatasetError(parts[0][0], f"shards made by different versions: {sorted(versions)}")
    selections = {r.selection.model_dump_json() if r.selection else "" for _, r in parts}
    if len(selections) != 1:
        raise DatasetError(parts[0][0], "shards selected different datasets: were they run on the same commit?")
    # By repository path, as baselines are: a/cs.csv and b/cs.csv are two datasets with one name.
    by_path: dict[str, list[DatasetResult]] = {}
    for _, results in parts:
        for dataset in results.datasets:
            by_path.setdefault(dataset.path, []).append(dataset)
    merged = Results(tool_version=versions.pop(), selection=parts[0][1].selection)
    for pieces in by_path.values():
        questions: list[QuestionResult] = []
        keys: set[tuple[str, int]] = set()
        for piece in pieces:
            for question in piece.questions:
                if (question.id, question.run) in keys:
                    raise DatasetError(piece.path, f"question {question.id!r} run {question.run} is in more than one shard")
                keys.add((question.id, question.run))
                questions.append(question)
        whole = pieces[0].model_copy(update={"warnings": sorted({w for p in pieces for w in p.warnings})})
        merged.datasets.append(scorer.summarize(whole, questions))
    merged.problems = [p for _, r in parts for p in r.problems]
    return merged


def merge_scorer(config: Config) -> Scorer:
    """Summarizes merged shards as one run would: the same metrics (custom ones too), prices, seed, thresholds."""
    from agent_eval_action.metrics.custom import custom_metrics

    return Scorer.for_names(
        config.metrics,
        MetricContext(prices=config.price_table()),
        seed=config.seed,
        pass_thresholds=config.pass_thresholds(),
        custom=custom_metrics(config),
    )
