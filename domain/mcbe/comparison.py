"""McBE across models (PROTOCOLS §3): category × task per model (paper Figs. 6–8), Friedman, Spearman and Pearson.

The blocks are the category × task cells of the runs' summaries: their means over
the runs where a run was repeated (``run.repeats``, the paper's four runs;
``repeat_means.scores_of``). The Friedman test ranks the models within every cell
all of them scored (it needs three models); Spearman and Pearson compare two
models' score vectors over the cells both scored. Prompt robustness (the paper's
Table 12) correlates SC and BS under the first prompt set with a further set's over
the model × category cells of all compared runs that ran both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.comparison.significance import model_pairs
from culturebias.domain.mcbe.metrics import friedman_test, prompt_robustness
from culturebias.domain.mcbe.taxonomy import legacy_label
from culturebias.domain.mcbe.options import TASKS
from culturebias.domain.mcbe.prompts import VARIANT_TASKS
from culturebias.domain.mcbe.repeat_means import McBEScores, scores_of
from culturebias.domain.mcbe.robustness import RobustnessCell, robustness
from culturebias.domain.mcbe.summary import McBESummary
from culturebias.domain.summary import Block, Count, Number
from culturebias.domain.uncertainty.interval import Interval


class FriedmanBlock(Block):
    statistic: Number
    p_value: Number
    n_blocks: Count
    n_models: Count
    blocks: list[str]  # the "category/task" cells every model scored


class CorrelationRow(Block):
    a: str
    b: str
    spearman: Number
    spearman_p: Number
    pearson: Number
    pearson_p: Number
    n: Count
    blocks: list[str]


class PromptRobustnessRow(Block):
    """One further prompt set and task: scores under ``against`` vs under ``prompt_set`` over model × category cells."""

    prompt_set: str
    against: str
    task: str
    correlation: RobustnessCell  # its ``categories`` are the "model/category" cells correlated
    models: list[str]


class McBEComparisonBody(Block):
    tasks: list[str]  # tasks any run scored, in protocol order
    categories: list[str]
    cells: dict[str, dict[str, dict[str, Number]]]  # model → category → task → score (0–100, higher = less bias)
    category_means: dict[str, dict[str, Number]]  # model → category → mean over its tasks
    task_means: dict[str, dict[str, Number]]  # model → task → mean over categories
    overall: dict[str, Number]
    # model → "overall" and each task → the run's bootstrap interval over BEIs; None: no run has them
    intervals: dict[str, dict[str, Interval]] | None = None
    friedman: FriedmanBlock | None
    friedman_note: str | None  # why there is no Friedman test
    correlations: list[CorrelationRow]
    # model → runs averaged (run.repeats); None: every compared run is a single run
    runs: dict[str, int] | None = None
    # model → "overall" and each task → std over its runs; None: every compared run is a single run
    std: dict[str, dict[str, Number]] | None = None
    # the paper's Table 12 over the compared runs; None: no run ran a further prompt set
    prompt_robustness: list[PromptRobustnessRow] | None = None


class McBEComparison(Comparison[McBEComparisonBody]):
    benchmark: Literal["mcbe"] = "mcbe"


def cells(summary: McBESummary) -> dict[str, float | None]:
    """``category/task`` → score, for every cell of one McBE summary (None: the task ran, no BEI scored).

    A repeated run's cells are its means over the runs. A summary written before the paper's
    categories were restored names ``race`` data ``ethnicity`` (and LGBTQ+ ``sexual_orientation``):
    its cells are read under the paper's keys.
    """
    return {
        f"{legacy_label(category) or category}/{task}": value
        for category, scores in scores_of(summary.metrics).categories.items()
        for task, value in scores.items()
    }


def prompt_robustness_rows(labels: Sequence[str], summaries: Sequence[McBESummary]) -> list[PromptRobustnessRow]:
    """Per further prompt set and task (SC, BS): the correlation over every compared run's categories."""
    rows = []
    sets = [s.metrics.prompt_set or [] for s in summaries]
    variants = list(dict.fromkeys(v for names in sets for v in names[1:]))
    for variant in variants:
        ran = [(label, s, names[0]) for label, s, names in zip(labels, summaries, sets) if variant in names[1:]]
        for against in dict.fromkeys(first for _, _, first in ran):
            runs = [(label, scores_of(s.metrics)) for label, s, first in ran if first == against]
            for task in VARIANT_TASKS:
                first_cells, variant_cells = _task_cells(runs, task, None), _task_cells(runs, task, variant)
                if not any(v is not None for v in variant_cells.values()):
                    continue
                rows.append(
                    PromptRobustnessRow(
                        prompt_set=variant, against=against, task=task,
                        correlation=robustness(first_cells, variant_cells), models=[label for label, _ in runs],
                    )
                )
    return rows


def _task_cells(runs: Sequence[tuple[str, McBEScores]], task: str, variant: str | None) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for label, scores in runs:
        table = scores.categories if variant is None else scores.variants.get(variant, {})
        for category, row in table.items():
            out[f"{label}/{legacy_label(category) or category}"] = row.get(task)
    return out


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def complete_blocks(tables: Sequence[dict[str, float | None]]) -> list[str]:
    """The cells every table scored with a finite number, sorted."""
    shared = set.intersection(*(set(t) for t in tables)) if tables else set()
    return sorted(k for k in shared if all(_finite(t[k]) for t in tables))


def _scores(table: dict[str, float | None], keys: Sequence[str]) -> list[float]:
    """The table's scores of ``keys``, cells that ``complete_blocks`` found scored."""
    return [value for k in keys if (value := table[k]) is not None]


def friedman(labels: Sequence[str], tables: Sequence[dict[str, float | None]]) -> tuple[FriedmanBlock | None, str | None]:
    if len(labels) < 3:
        return None, f"the Friedman test needs at least three models ({len(labels)} compared)"
    keys = complete_blocks(tables)
    if len(keys) < 2:
        return None, f"the Friedman test needs at least two cells every model scored ({len(keys)} found)"
    result = friedman_test({name: [table[k] for k in keys] for name, table in zip(labels, tables)})
    return FriedmanBlock(
        statistic=result.statistic, p_value=result.p_value, n_blocks=result.n_blocks, n_models=result.n_models, blocks=keys
    ), None


def correlation(a: str, b: str, first: dict[str, float | None], second: dict[str, float | None]) -> CorrelationRow:
    keys = complete_blocks([first, second])
    result = prompt_robustness(_scores(first, keys), _scores(second, keys))
    return CorrelationRow(
        a=a, b=b, spearman=result.spearman, spearman_p=result.spearman_p, pearson=result.pearson,
        pearson_p=result.pearson_p, n=result.n, blocks=keys,
    )


def compare_mcbe(labels: Sequence[str], summaries: Sequence[McBESummary]) -> tuple[McBEComparisonBody, list[str]]:
    tables = [cells(s) for s in summaries]
    by_name = dict(zip(labels, tables))
    scores = [scores_of(s.metrics) for s in summaries]
    ran = {task for s in summaries for task in s.metrics.tasks.present()}
    tasks = [t for t in TASKS if t in ran]
    categories = sorted({c for s in summaries for c in s.metrics.categories})
    test, why_not = friedman(labels, tables)
    notes = []
    if any({t for t in s.metrics.tasks.present()} != ran for s in summaries):
        notes.append("the runs scored different tasks: the tests use the cells every compared run scored")
    repeated = any(sc.runs > 1 for sc in scores)
    if repeated and any(sc.runs == 1 for sc in scores):
        notes.append("some runs are single runs and others means over several: compare like with like")
    robustness_rows = prompt_robustness_rows(labels, summaries)
    body = McBEComparisonBody(
        tasks=tasks,
        categories=categories,
        cells={name: {c: dict(row) for c, row in sc.categories.items()} for name, sc in zip(labels, scores)},
        category_means={name: dict(sc.category_means) for name, sc in zip(labels, scores)},
        task_means={name: dict(sc.tasks) for name, sc in zip(labels, scores)},
        overall={name: sc.overall for name, sc in zip(labels, scores)},
        intervals={name: s.metrics.intervals for name, s in zip(labels, summaries) if s.metrics.intervals} or None,
        friedman=test,
        friedman_note=why_not,
        correlations=[correlation(a, b, by_name[a], by_name[b]) for a, b in model_pairs(labels)],
        runs={name: sc.runs for name, sc in zip(labels, scores)} if repeated else None,
        std={name: dict(sc.std) for name, sc in zip(labels, scores) if sc.std} or None,
        prompt_robustness=robustness_rows or None,
    )
    return body, notes
