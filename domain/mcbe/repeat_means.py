"""McBE's run protocol (PROTOCOLS §3, paper Appendix F): mean ± std over the runs of every score.

With ``run.repeats=N`` each score of the summary (each task × category cell, each
category's mean, each task, overall, and each further prompt set's SC/BS cells) gets
its mean and sample standard deviation (ddof 1, as ``domain.repeats``) over the N runs.
``metrics.categories``/``tasks``/``overall`` stay the first run's (the numbers a single
run with that seed gives); reports and ``compare`` read the means (``scores_of``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import Field

from culturebias.domain.repeats import RepeatStat, repeat_stat
from culturebias.domain.summary import Block, Count

if TYPE_CHECKING:
    from culturebias.domain.mcbe.summary import McBEMetrics


class McBERepeatMeans(Block):
    """Every McBE score over the runs (PROTOCOLS §3 run protocol)."""

    n: Count = Field(description="how many runs the means are over (run.repeats)")
    overall: RepeatStat = Field(description="the overall score's mean and sample std (ddof 1) over the runs")
    tasks: dict[str, RepeatStat] = Field(
        description="task → its score (mean over categories): mean and sample std over the runs",
    )
    categories: dict[str, dict[str, RepeatStat]] = Field(
        description='category → task, and "mean" (the category\'s mean over tasks) → mean and sample std over the runs',
    )
    prompt_variants: dict[str, dict[str, dict[str, RepeatStat]]] | None = Field(
        None,
        description=(
            "further prompt set → category → task (SC/BS) → mean and sample std over the runs; "
            "null when one prompt set ran"
        ),
    )


def _cells(metrics: "McBEMetrics") -> dict[str, dict[str, float | None]]:
    return {c: {**row.task_scores(), "mean": row.mean} for c, row in metrics.categories.items()}


def _stats(tables: Sequence[dict[str, dict[str, float | None]]]) -> dict[str, dict[str, RepeatStat]]:
    rows = list(dict.fromkeys(r for t in tables for r in t))
    return {
        r: {k: repeat_stat([t.get(r, {}).get(k) for t in tables]) for k in dict.fromkeys(k for t in tables for k in t.get(r, {}))}
        for r in rows
    }


def repeat_means(runs: Sequence["McBEMetrics"]) -> McBERepeatMeans:
    """The runs' metrics (first = the summary's) as mean ± std per score."""
    tasks = list(dict.fromkeys(t for m in runs for t in m.tasks.present()))
    variants = list(dict.fromkeys(v for m in runs for v in (m.prompt_variants or {})))
    return McBERepeatMeans(
        n=len(runs),
        overall=repeat_stat([m.overall for m in runs]),
        tasks={t: repeat_stat([m.tasks.present().get(t) for m in runs]) for t in tasks},
        categories=_stats([_cells(m) for m in runs]),
        prompt_variants={
            v: _stats([dict((m.prompt_variants or {})[v].categories) if v in (m.prompt_variants or {}) else {} for m in runs])
            for v in variants
        }
        or None,
    )


@dataclass(frozen=True)
class McBEScores:
    """The scores a comparison reads: the means over the runs where there are several, else the run's."""

    categories: dict[str, dict[str, float | None]]  # category → task → score
    category_means: dict[str, float | None]
    tasks: dict[str, float | None]
    overall: float | None
    runs: int
    variants: dict[str, dict[str, dict[str, float | None]]]  # further prompt set → category → task → score
    std: dict[str, float | None]  # "overall" and each task → std over the runs (empty: one run)


def scores_of(metrics: "McBEMetrics") -> McBEScores:
    means = metrics.repeat_means
    variants = {name: {c: dict(row) for c, row in v.categories.items()} for name, v in (metrics.prompt_variants or {}).items()}
    if means is None:
        return McBEScores(
            categories={c: row.task_scores() for c, row in metrics.categories.items()},
            category_means={c: row.mean for c, row in metrics.categories.items()},
            tasks=dict(metrics.tasks.present()),
            overall=metrics.overall,
            runs=1,
            variants=variants,
            std={},
        )
    for name, by_category in (means.prompt_variants or {}).items():
        variants[name] = {c: {t: s.mean for t, s in row.items()} for c, row in by_category.items()}
    return McBEScores(
        categories={c: {t: s.mean for t, s in row.items() if t != "mean"} for c, row in means.categories.items()},
        category_means={c: row["mean"].mean if "mean" in row else None for c, row in means.categories.items()},
        tasks={t: s.mean for t, s in means.tasks.items()},
        overall=means.overall.mean,
        runs=means.n,
        variants=variants,
        std={"overall": means.overall.std, **{t: s.std for t, s in means.tasks.items()}},
    )
