"""LIBRA across models: the paper's Table 1 columns (LMS, SS, local iCAT, JSD, BBS, EiCAT) per model, overall and per category."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.libra.summary import LibraScoresBlock, LibraSummary, ModelType
from culturebias.domain.summary import Block

COLUMNS = ("lms", "ss", "icat_local", "jsd", "bbs", "eicat")


class LibraComparisonBody(Block):
    columns: list[str]
    model_type: dict[str, ModelType]  # model → causal or masked
    overall: dict[str, LibraScoresBlock]  # model → scores
    categories: list[str]
    by_category: dict[str, dict[str, LibraScoresBlock]]  # category → model → scores (absent: the run had none)


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
    )
    return body, notes
