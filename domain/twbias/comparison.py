"""TWBias across models (PROTOCOLS §1): the paper's Table 4 and its breakdowns, model beside model.

Specifications are keyed ``<axis>/<spec>`` (``gender/female``,
``ethnicity/T1_hoklo->T3_han``). For each: bias ratio and effect size per
model (Table 4), each prompt type's test per model (the p-value figure,
Fig. 2/7), the attribute-category and toxicity rows (Fig. 3/6), and each
model's ethnicity origin × reference matrices (Figs. 4/5).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.summary import Block, Count, Number
from culturebias.domain.uncertainty.interval import Interval
from culturebias.domain.twbias.summary import (
    AnalysisBlock,
    EthnicityMatrixBlock,
    GroupBlock,
    PromptStatsBlock,
    SpecificationBlock,
    TWBiasSummary,
)

AXES = ("gender", "ethnicity")


class HeadlineCell(Block):
    """A set of rows' headline: bias ratio over the user prompts and effect size over the significant ones."""

    n_rows: Count
    bias_ratio: Number
    effect_size: Number
    n_prompts: Count
    n_significant: Count
    intervals: dict[str, Interval] | None = None  # bootstrap intervals of bias_ratio and effect_size, where the run has them


class SpecificationView(Block):
    axis: str
    origin_label: str
    reference_label: str
    headline: dict[str, HeadlineCell]  # model → Table 4 cell
    prompts: dict[str, dict[str, PromptStatsBlock]]  # prompt type → model → its test
    by_category: dict[str, dict[str, HeadlineCell]]  # attribute category → model → cell
    by_toxicity: dict[str, dict[str, HeadlineCell]]  # "0", "1", "all" → model → cell


class TWBiasComparisonBody(Block):
    prompt_types: list[str]  # every prompt type of any run, in report order
    analysis: dict[str, AnalysisBlock]  # model → test, effect, alpha, outlier rule
    specifications: dict[str, SpecificationView]  # "<axis>/<spec>" → the models side by side
    ethnicity_matrices: dict[str, EthnicityMatrixBlock]  # model → origin × reference tables


class TWBiasComparison(Comparison[TWBiasComparisonBody]):
    benchmark: Literal["twbias"] = "twbias"


def headline(group: GroupBlock) -> HeadlineCell:
    return HeadlineCell(
        n_rows=group.n_rows, bias_ratio=group.bias_ratio, effect_size=group.effect_size,
        n_prompts=group.n_prompts, n_significant=group.n_significant,
        intervals=getattr(group, "intervals", None),  # a specification's overall rows carry them
    )


def _side_by_side(models: dict[str, dict[str, GroupBlock]]) -> dict[str, dict[str, HeadlineCell]]:
    """model → key → block, turned into key → model → headline (keys in first-seen order)."""
    keys = list(dict.fromkeys(k for blocks in models.values() for k in blocks))
    return {k: {name: headline(blocks[k]) for name, blocks in models.items() if k in blocks} for k in keys}


def specification_view(axis: str, specs: dict[str, SpecificationBlock], prompt_types: Sequence[str]) -> SpecificationView:
    first = next(iter(specs.values()))
    prompts = {
        p: {name: spec.prompts[p] for name, spec in specs.items() if p in spec.prompts}
        for p in prompt_types
        if any(p in spec.prompts for spec in specs.values())
    }
    return SpecificationView(
        axis=axis,
        origin_label=first.origin_label,
        reference_label=first.reference_label,
        headline={name: headline(spec) for name, spec in specs.items()},
        prompts=prompts,
        by_category=_side_by_side({name: spec.by_category for name, spec in specs.items()}),
        by_toxicity=_side_by_side({name: spec.by_toxicity for name, spec in specs.items()}),
    )


def compare_twbias(labels: Sequence[str], summaries: Sequence[TWBiasSummary]) -> tuple[TWBiasComparisonBody, list[str]]:
    notes = []
    prompt_types = list(dict.fromkeys(p for s in summaries for p in s.metrics.prompt_types))
    specifications: dict[str, SpecificationView] = {}
    for axis in AXES:
        blocks = [getattr(s.metrics, axis) or {} for s in summaries]
        for key in dict.fromkeys(k for b in blocks for k in b):
            specs = {name: b[key] for name, b in zip(labels, blocks) if key in b}
            if len(specs) < len(labels):
                missing = [name for name, b in zip(labels, blocks) if key not in b]
                notes.append(f"{axis}/{key} was not evaluated by {', '.join(missing)}")
            specifications[f"{axis}/{key}"] = specification_view(axis, specs, prompt_types)
    settings = {
        (a.test, a.effect, a.alpha, a.outlier_sigma, a.category_rows, a.boundary_rule)
        for a in (s.metrics.analysis for s in summaries)
    }
    if len(settings) > 1:
        notes.append(
            "the runs' analyses differ (test, effect, alpha, outlier rule, category rows or boundary rule): "
            + "; ".join(
                f"{name}: {s.metrics.analysis.test} test, effect {s.metrics.analysis.effect}, alpha {s.metrics.analysis.alpha}, "
                f"boundary {s.metrics.analysis.boundary_rule}"
                for name, s in zip(labels, summaries)
            )
        )
    body = TWBiasComparisonBody(
        prompt_types=prompt_types,
        analysis={name: s.metrics.analysis for name, s in zip(labels, summaries)},
        specifications=specifications,
        ethnicity_matrices={
            name: s.metrics.ethnicity_matrix for name, s in zip(labels, summaries) if s.metrics.ethnicity_matrix is not None
        },
    )
    return body, notes
