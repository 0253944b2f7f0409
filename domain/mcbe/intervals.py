"""Intervals of McBE's overall score, task scores and category cells; the resampling unit is the instance (BEI).

A BEI carries its score in every task that scored it (NaN where a task did not,
e.g. worldview in PC and SS). A resample recomputes the aggregate exactly:
a category's task score is the mean over its resampled BEIs, a task's the mean
over categories, the overall the mean over tasks (undefined when a task is); a category a resample leaves
without a scored BEI drops out of that resample's task mean, as an unscored
category does in the run.
"""

from __future__ import annotations

from typing import Mapping, Protocol, Sequence

import numpy as np

from culturebias.domain.array_types import Floats, Indices
from culturebias.domain.mcbe.instances import BEI
from culturebias.domain.mcbe.summary import CategoryScores, McBEMetrics
from culturebias.domain.uncertainty.arrays import nan_mean as _nan_mean
from culturebias.domain.uncertainty.bootstrap import EdgeRule, unit_intervals
from culturebias.domain.uncertainty.edges import proportion_edge
from culturebias.domain.uncertainty.interval import DEFAULT_RESAMPLES, Interval

UNIT = "instance (BEI)"


class ScoredTask(Protocol):
    """A task's outcome as the intervals read it (the application's ``TaskOutcome``)."""

    @property
    def item_scores(self) -> Mapping[str, float]: ...  # BEI id → score


def mcbe_intervals(
    item_scores: Mapping[str, Mapping[str, float]],
    item_categories: Mapping[str, str],
    tasks: Sequence[str],
    points: Mapping[str, float | None],
    *,
    seed: int,
    resamples: int = DEFAULT_RESAMPLES,
) -> dict[str, Interval]:
    """``overall`` and each task's interval; ``item_scores`` is task → BEI id → score."""
    ids = sorted(i for i in item_categories if any(i in item_scores.get(t, {}) for t in tasks))
    scores = np.array([[item_scores.get(t, {}).get(i, np.nan) for t in tasks] for i in ids], dtype=float).reshape(len(ids), len(tasks))
    names = sorted({item_categories[i] for i in ids})
    codes = np.array([names.index(item_categories[i]) for i in ids], dtype=np.intp)
    onehot = np.eye(max(len(names), 1))[codes]  # (BEI, category); (0, 1) when no BEI was scored
    valid = np.isfinite(scores)
    filled = np.where(valid, scores, 0.0)

    def task_scores(idx: Indices) -> Floats:
        member = onehot[idx]  # (..., k, category)
        sums = np.einsum("...kt,...kc->...tc", filled[idx], member)
        counts = np.einsum("...kt,...kc->...tc", valid[idx].astype(float), member)
        with np.errstate(all="ignore"):
            cells = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        return _nan_mean(cells, axis=-1)  # (..., task)

    def statistic(idx: Indices) -> Floats:
        per_task = task_scores(idx)
        overall = per_task.mean(axis=-1)  # NaN when a task has no score: as in the run (metrics.aggregate)
        return np.concatenate([overall[None], np.moveaxis(per_task, -1, 0)])

    width = len(tasks) + onehot.shape[1]
    return unit_intervals(statistic, len(ids), ("overall", *tasks), unit=UNIT, seed=seed, points=points, resamples=resamples, width=width,
                          edges=_edges(valid, tasks, "overall"))


def _edges(valid: np.ndarray, tasks: Sequence[str], mean_name: str) -> dict[str, EdgeRule]:
    """Where every resample agrees, each 0-100 score is a bounded mean: Wilson over the BEIs it scored (the mean
    over tasks over the fewest)."""
    counts = valid.sum(axis=0) if valid.size else np.zeros(len(tasks))
    rules = {t: proportion_edge(float(c), UNIT, scale=100.0, what=f"the {t} score (a mean of 0-100 scores)")
             for t, c in zip(tasks, counts)}
    rules[mean_name] = proportion_edge(float(counts.min()) if len(counts) else 0.0, UNIT, scale=100.0,
                                       what="the mean of the task scores (0-100), n the task with the fewest BEIs")
    return {name: rule for name, rule in rules.items() if rule is not None}


def attach_mcbe(metrics: McBEMetrics, outcomes: Mapping[str, ScoredTask], beis: Sequence[BEI], *, seed: int, resamples: int) -> None:
    """Set ``metrics.intervals`` (``McBEMetrics``) and each category's from the tasks' per-BEI scores;
    nothing with ``resamples`` 0."""
    if resamples <= 0:
        return
    tasks = list(outcomes)
    points = {"overall": metrics.overall, **{t: getattr(metrics.tasks, t, None) for t in tasks}}
    item_scores = {t: o.item_scores for t, o in outcomes.items()}
    metrics.intervals = mcbe_intervals(
        item_scores,
        {b.item_id: b.category for b in beis},
        tasks,
        points,
        seed=seed,
        resamples=resamples,
    )
    for category, cell in metrics.categories.items():
        ids = [b.item_id for b in beis if b.category == category]
        cell.intervals = category_intervals(item_scores, ids, tasks, cell, seed=seed, resamples=resamples)


def category_intervals(
    item_scores: Mapping[str, Mapping[str, float]],
    ids: Sequence[str],
    tasks: Sequence[str],
    cell: CategoryScores,
    *,
    seed: int,
    resamples: int = DEFAULT_RESAMPLES,
) -> dict[str, Interval]:
    """One category's task scores (each the mean over its scored BEIs) and their mean over the tasks that have
    one, over the category's resampled BEIs."""
    scored = [i for i in ids if any(i in item_scores.get(t, {}) for t in tasks)]
    scores = np.array([[item_scores.get(t, {}).get(i, np.nan) for t in tasks] for i in scored], dtype=float).reshape(len(scored), len(tasks))
    valid = np.isfinite(scores)
    filled = np.where(valid, scores, 0.0)

    def statistic(idx: Indices) -> Floats:
        sums, counts = filled[idx].sum(axis=-2), valid[idx].sum(axis=-2)
        with np.errstate(all="ignore"):
            cells = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)  # (..., task)
        return np.concatenate([np.moveaxis(cells, -1, 0), _nan_mean(cells, axis=-1)[None]])

    points = {**{t: getattr(cell, t, None) for t in tasks}, "mean": cell.mean}
    return unit_intervals(statistic, len(scored), (*tasks, "mean"), unit=UNIT, seed=seed, points=points, resamples=resamples, width=len(tasks),
                          edges=_edges(valid, tasks, "mean"))
