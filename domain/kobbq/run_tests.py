"""The KoBBQ paper's tests within one run (PROTOCOLS §2, KoBBQ statistics; paper Table 4, Figs. 3–4).

Samples are the run's per-template scores (each template's mean over prompts):
- one-way ANOVA and Tukey HSD at a 99% family-wise level on **normalised**
  diff-bias (diff-bias over its bound, per template) across categories and
  across label types (the same code as the cross-model comparison,
  ``domain/kobbq/comparison.py``); across label types also on each template's
  raw accuracy (Acc_a, Acc_d; paper §4.3, Fig. 4);
- the two-sided Wilcoxon rank-sum between this data set and a reference data
  set asked in the same run (e.g. a machine-translated BBQ), over all
  templates and per label type (ST, TM), marked at .01/.05/.1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from culturebias.domain.bbq.fidelity_summary import KoBBQRunTests, LabelTypeScores, RankSumRow
from culturebias.domain.kobbq.comparison import (
    ALL_TEMPLATES,
    NORMALISATION,
    NORMALISED_METRICS,
    LABEL_TYPE_METRICS,
    TESTED_METRICS,
    TUKEY_CONFIDENCE,
    accuracy_of,
    normalised,
    rank_sum_row,
    tukey_test,
)
from culturebias.domain.comparison.significance import LEGEND

Templates = Mapping[str, Mapping[str, float]]  # template → metric → value (NaN: undefined)
SAMPLE = "per-template scores of this run (each template's mean over prompts)"
RANK_SUM_LABEL_TYPES = ("ST", "TM")  # the label types a translated BBQ shares with KoBBQ (paper Table 4)


def category_of(template: str) -> str:
    return template.rsplit("-", 1)[0]


def normalised_by(templates: Templates, metric: str, key: Mapping[str, str]) -> dict[str, list[float]]:
    """Normalised ``metric`` of each template with a key, grouped by that key (in sorted key order);
    an accuracy is taken as it is (it needs no normalisation)."""
    groups: dict[str, list[float]] = {}
    for template in sorted(templates, key=lambda t: (key.get(t, ""), t)):
        if template not in key:
            continue
        values = templates[template]
        if metric in NORMALISED_METRICS:
            value = normalised(_defined(values[metric]), _defined(values[accuracy_of(metric)]), metric)
        else:
            value = _defined(values[metric])
        groups.setdefault(key[template], [])
        if value is not None and math.isfinite(value):
            groups[key[template]].append(value)
    return groups


def _defined(value: float) -> float | None:
    return None if value is None or math.isnan(value) else value


def _sample(templates: Templates, metric: str, wanted: set[str] | None) -> list[float]:
    return [v[metric] for t, v in templates.items() if (wanted is None or t in wanted) and not math.isnan(v[metric])]


def reference_rank_sums(
    templates: Templates, labels: Mapping[str, str], reference: Templates, reference_labels: Mapping[str, str], name: str
) -> list[RankSumRow]:
    """Rank-sum of this run's per-template scores against the reference's, over all templates and per ST/TM."""
    rows = []
    for label_type in (ALL_TEMPLATES, *RANK_SUM_LABEL_TYPES):
        mine = None if label_type == ALL_TEMPLATES else {t for t, lt in labels.items() if lt == label_type}
        theirs = None if label_type == ALL_TEMPLATES else {t for t, lt in reference_labels.items() if lt == label_type}
        for metric in TESTED_METRICS:
            rows.append(
                rank_sum_row(metric, label_type, "this data", name, _sample(templates, metric, mine), _sample(reference, metric, theirs))
            )
    return rows


def run_tests(
    templates: Templates,
    labels: Mapping[str, str],
    reference: Templates | None = None,
    reference_labels: Mapping[str, str] | None = None,
    reference_name: str | None = None,
    reference_scores: list[LabelTypeScores] | None = None,
) -> KoBBQRunTests:
    categories = {t: category_of(t) for t in templates}
    return KoBBQRunTests(
        confidence=TUKEY_CONFIDENCE,
        normalisation=NORMALISATION,
        sample=SAMPLE,
        across_categories={m: tukey_test(m, normalised_by(templates, m, categories)) for m in NORMALISED_METRICS},
        across_label_types={m: tukey_test(m, normalised_by(templates, m, labels)) for m in LABEL_TYPE_METRICS},
        marks=LEGEND,
        reference=reference_name if reference is not None else None,
        rank_sum_reference=(
            reference_rank_sums(templates, labels, reference, reference_labels or {}, reference_name or "reference")
            if reference is not None
            else None
        ),
        reference_scores=reference_scores,
    )
