"""LIBRA across models: the paper's Table 1 columns (LMS, SS, local iCAT, StereoSet iCAT, JSD, BBS, EiCAT) per model,
overall and per category, with Table 1's theoretical LMs beside them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from culturebias.domain.comparison.envelope import Comparison
from pydantic import Field

from culturebias.domain.libra.summary import LibraScoresBlock, LibraSummary, ModelType, TheoreticalRow, theoretical_rows
from culturebias.domain.summary import Block, Number

COLUMNS = ("lms", "ss", "icat_local", "stereoset_icat", "jsd", "bbs", "eicat")


class LibraComparisonBody(Block):
    columns: list[str]
    model_type: dict[str, ModelType]  # model → causal or masked
    overall: dict[str, LibraScoresBlock]  # model → scores
    categories: list[str]
    by_category: dict[str, dict[str, LibraScoresBlock]]  # category → model → scores (absent: the run had none)
    # model → StereoSet's iCAT (the paper's iCAT column: metrics.stereoset.overall.icat); null: the run had no StereoSet
    stereoset_icat: dict[str, Number] = Field(default_factory=dict)
    # Table 1's theoretical LMs, read from the first run's summary (the same four in every summary)
    reference_rows: list[TheoreticalRow] = Field(default_factory=theoretical_rows)


class LibraComparison(Comparison[LibraComparisonBody]):
    benchmark: Literal["libra"] = "libra"


def compare_libra(labels: Sequence[str], summaries: Sequence[LibraSummary]) -> tuple[LibraComparisonBody, list[str]]:
    notes = []
    if len({s.metrics.model_type for s in summaries}) > 1:
        notes.append("masked and causal models are compared: their JSD (and so EiCAT) are not comparable (PROTOCOLS §4)")
    categories = sorted({c for s in summaries for c in s.metrics.by_category})
    body = LibraComparisonBody(
        columns=list(COLUMNS),
        model_type={name: s.metrics.model_type for name, s in zip(labels, summaries)},
        overall={name: s.metrics.overall for name, s in zip(labels, summaries)},
        categories=categories,
        by_category={
            c: {name: s.metrics.by_category[c] for name, s in zip(labels, summaries) if c in s.metrics.by_category}
            for c in categories
        },
        stereoset_icat={
            name: s.metrics.stereoset.overall.icat if s.metrics.stereoset is not None else None
            for name, s in zip(labels, summaries)
        },
        reference_rows=list(summaries[0].metrics.reference_rows) if summaries else theoretical_rows(),
    )
    return body, notes
