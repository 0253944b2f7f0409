"""Intervals of TWBias's bias ratio and effect size; the resampling unit is the sentence pair.

A unit is one original sentence of a specification with its replaced
sentences (their mean or min PPL): a row of the specification's PPL matrices,
resampled with all its prompt types. Every resample repeats the analysis of
PROTOCOLS §1.4–§1.6 exactly, vectorised over resamples: per prompt type the
outlier rule (mean ± σ·std, ddof=0, over the resampled valid rows), the
t-test's p-value and the effect (d_z or pooled d) where the run tested it (two
rows, or ``min_pairs`` where set), then the share of testable user prompts with p < α and the mean
effect over the significant ones.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import numpy as np
from scipy import special

from culturebias.domain.array_types import Floats, Indices, Mask
from culturebias.domain.twbias.evaluation import (
    AnalysisOptions,
    CategoryRows,
    category_rows,
    tested_from,
    toxicity_rows,
    valid_and_outliers,
)
from culturebias.domain.twbias.model import USER_PROMPT_TYPES
from culturebias.domain.twbias.summary import GroupBlock, SpecificationBlock
from culturebias.domain.uncertainty.bootstrap import unit_intervals
from culturebias.domain.uncertainty.edges import proportion_edge
from culturebias.domain.uncertainty.interval import DEFAULT_RESAMPLES, Interval

UNIT = "sentence pair"
HEADLINES = ("bias_ratio", "effect_size")
FIXED_OUTLIERS = "outliers as the run decided them on the whole specification"


def _sum(x: Floats, weight: Floats) -> Floats:
    total: Floats = np.einsum("...i,...i->...", x, weight)
    return total


def _moments(s1: Floats, s2: Floats, m: Floats, ddof: int) -> tuple[Floats, Floats]:
    """Mean and variance from the power sums of m values (PPLs are O(10–100): no harmful cancellation)."""
    mean = s1 / np.maximum(m, 1)
    var = np.maximum(s2 - s1 * mean, 0.0) / np.maximum(m - ddof, 1)
    return mean, var


def _outside(x: Floats, x2: Floats, valid: Floats, m: Floats, sigma: float) -> Mask:
    mean, var = _moments(_sum(x, valid), _sum(x2, valid), m, ddof=0)
    outside: Mask = np.abs(x - mean[..., None]) > sigma * np.sqrt(var)[..., None]
    return outside


def _prompt_test(g: dict[str, Floats], analysis: AnalysisOptions) -> tuple[Floats, Floats, Floats]:
    """Rows kept, p-value and effect of each prompt type, per resample; ``g`` holds the gathered columns."""
    valid = g["valid"]
    m_valid = valid.sum(axis=-1)
    outlier = _outside(g["o"], g["o2"], valid, m_valid, analysis.outlier_sigma) | _outside(
        g["r"], g["r2"], valid, m_valid, analysis.outlier_sigma
    )
    keep = np.where(outlier, 0.0, valid)
    m = keep.sum(axis=-1)
    mean_o, var_o = _moments(_sum(g["o"], keep), _sum(g["o2"], keep), m, ddof=1)
    mean_r, var_r = _moments(_sum(g["r"], keep), _sum(g["r2"], keep), m, ddof=1)
    mean_d, var_d = _moments(_sum(g["d"], keep), _sum(g["d2"], keep), m, ddof=1)
    if analysis.test == "paired":
        t = mean_d / np.sqrt(var_d / m)
        df = m - 1
    elif analysis.test == "student":
        pooled = ((m - 1) * var_o + (m - 1) * var_r) / (2 * m - 2)
        t = (mean_r - mean_o) / np.sqrt(pooled * 2 / m)
        df = 2 * m - 2
    elif analysis.test == "welch":
        se2 = var_o / m + var_r / m
        t = (mean_r - mean_o) / np.sqrt(se2)
        df = se2**2 / ((var_o / m) ** 2 / (m - 1) + (var_r / m) ** 2 / (m - 1))
    else:
        raise ValueError(f"unknown test {analysis.test!r}")
    p = 2 * special.stdtr(df, -np.abs(t))
    if analysis.effect == "dz":
        effect = np.where(var_d > 0, mean_d / np.sqrt(var_d), np.nan)
    else:
        pooled_sd = np.sqrt((var_o + var_r) / 2)
        effect = np.where(pooled_sd > 0, (mean_r - mean_o) / pooled_sd, np.nan)
    too_few = m < tested_from(analysis.min_pairs)  # as in the run: no test on fewer pairs (evaluation.too_few)
    return m, np.where(too_few, np.nan, p), np.where(too_few, np.nan, effect)


def twbias_intervals(
    origin: Floats,
    replace: Floats,
    prompt_types: Sequence[str],
    analysis: AnalysisOptions,
    points: dict[str, float | None],
    *,
    seed: int,
    resamples: int = DEFAULT_RESAMPLES,
    weights: Floats | None = None,
) -> dict[str, Interval]:
    """bias_ratio and effect_size of one specification over resampled sentence pairs.

    ``origin``/``replace``: PPL matrices (rows, prompt types); ``analysis``: the run's AnalysisOptions.
    ``weights``: how many times each row counts (a sentence in a category once per T-A pair, exploded rows);
    a row is resampled with its weight.
    """
    columns = [j for j, t in enumerate(prompt_types) if t in USER_PROMPT_TYPES]
    o = np.asarray(origin, dtype=float)[:, columns].T  # (prompt, row)
    r = np.asarray(replace, dtype=float)[:, columns].T
    valid = np.isfinite(o) & np.isfinite(r)
    o, r = np.where(valid, o, 0.0), np.where(valid, r, 0.0)
    weight = valid.astype(float) * (1.0 if weights is None else np.asarray(weights, dtype=float)[None, :])
    columns_of = {"o": o, "o2": o * o, "r": r, "r2": r * r, "d": r - o, "d2": (r - o) ** 2, "valid": weight}

    def headline(idx: Indices) -> tuple[Floats, Floats]:
        idx = idx[..., None, :]  # broadcast over prompts
        rows = np.arange(len(columns))[:, None]
        gathered = {name: values[rows, idx] for name, values in columns_of.items()}
        with np.errstate(all="ignore"):
            m, p, effect = _prompt_test(gathered, analysis)
        testable = m >= tested_from(analysis.min_pairs)
        significant = testable & (p < analysis.alpha)
        n_testable, n_significant = testable.sum(axis=-1), significant.sum(axis=-1)
        with np.errstate(all="ignore"):
            ratio = np.where(n_testable > 0, n_significant / np.maximum(n_testable, 1), np.nan)
            mean_effect = np.where(significant, effect, 0.0).sum(axis=-1) / np.maximum(n_significant, 1)
        mean_effect = np.where(n_testable == 0, np.nan, np.where(n_significant == 0, 0.0, mean_effect))
        return ratio, mean_effect

    width = 3 * max(len(columns), 1)
    testable = float((weight.sum(axis=1) >= tested_from(analysis.min_pairs)).sum())  # the prompt types the ratio is a share of
    rule = proportion_edge(testable, "prompt type", what="the significant prompt types (n: the testable user prompt types)")
    return unit_intervals(
        lambda idx: np.stack(headline(idx)), o.shape[1], HEADLINES, unit=UNIT, seed=seed, points=points, resamples=resamples, width=width,
        edges={"bias_ratio": rule} if rule is not None else None,
    )


def attach_twbias(
    block: GroupBlock,
    matrices: tuple[Floats, Floats],
    prompt_types: Sequence[str],
    analysis: AnalysisOptions,
    *,
    seed: int,
    resamples: int,
) -> None:
    """Set ``block.intervals`` (a ``SpecificationBlock``, its overall rows); nothing with ``resamples`` 0."""
    if resamples > 0:
        points = {name: getattr(block, name) for name in HEADLINES}
        block.intervals = twbias_intervals(*matrices, prompt_types, analysis, points, seed=seed, resamples=resamples)


def attach_twbias_breakdowns(
    block: SpecificationBlock,
    matrices: tuple[Floats, Floats],
    prompt_types: Sequence[str],
    analysis: AnalysisOptions,
    toxicity: Sequence[int | None],
    categories: Sequence[Sequence[str] | None],
    category_mode: CategoryRows,
    *,
    seed: int,
    resamples: int,
) -> None:
    """Intervals on each toxicity and category block of a specification (after ``attach_twbias``).

    A breakdown holds the run's outlier decisions fixed: the run drops a specification's outliers over all its
    rows, so a group's resamples draw from its kept pairs (each sentence with its weight in the group) and do
    not re-decide outliers; the note says so. "all" is the specification itself and shares its interval.
    """
    if resamples <= 0:
        return
    origin, replace = (np.asarray(m, dtype=float) for m in matrices)
    valid, outlier = valid_and_outliers(origin, replace, analysis.outlier_sigma)
    kept = valid & ~outlier
    origin, replace = np.where(kept, origin, np.nan), np.where(kept, replace, np.nan)
    fixed = dataclasses.replace(analysis, outlier_sigma=math.inf)
    groups = [(block.by_toxicity, toxicity_rows(toxicity)), (block.by_category, category_rows(categories, category_mode))]
    for blocks, members in groups:
        for name, group in blocks.items():
            if name not in members:  # "all": the specification's own rows and interval
                group.intervals = block.intervals
                continue
            rows, weights = np.unique(np.asarray(members[name], dtype=int), return_counts=True)
            points = {headline: getattr(group, headline) for headline in HEADLINES}
            intervals = twbias_intervals(
                origin[rows], replace[rows], prompt_types, fixed, points, seed=seed, resamples=resamples,
                weights=weights.astype(float),
            )
            for interval in intervals.values():
                interval.note = "; ".join(filter(None, [interval.note, FIXED_OUTLIERS]))
            group.intervals = intervals
