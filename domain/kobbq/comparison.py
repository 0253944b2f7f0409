"""KoBBQ across models (PROTOCOLS §2, KoBBQ statistics): Table 3, Wilcoxon rank-sum between models, Tukey HSD (Figs. 3–4).

Every number comes from the runs' typed summaries: Table 3 from the mean ± std
over prompts the summaries hold, the tests from ``details.template_scores``
(each template's scores, mean over prompts).

- Wilcoxon rank-sum (two-sided) between every two models' per-template
  scores, over all templates and per label type, marked at .01/.05/.1.
- One-way ANOVA and Tukey HSD at a 99% family-wise level on **normalised**
  diff-bias: a template's diff-bias divided by its bound computed from the
  same template's accuracy (``1 - Acc_a``; ``1 - |2·Acc_d - 1|``). A zero
  bound forces a zero diff-bias, so its normalised value is 0.
  Across models (all templates) and, per model, across label types.
- Across label types, accuracy too (paper §4.3, Fig. 4): the same ANOVA and
  Tukey HSD on each template's raw Acc_a and Acc_d (accuracy needs no
  normalisation: it is in [0, 1] whatever the bias).

Label types need each template's label; a summary whose template scores do not
carry one gets the "all" rows only (the comparison notes it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from culturebias.domain.kobbq.metrics import KOBBQ_METRICS
from culturebias.domain.bbq.statistics import one_way_anova, rank_sum
from culturebias.domain.bbq.tukey_groups import homogeneous_groups
from culturebias.domain.bbq.fidelity_summary import AnovaBlock, RankSumRow, TukeyRow, TukeyTest
from culturebias.domain.bbq.summary import PromptStats
from culturebias.domain.kobbq.summary import KoBBQScoreBlock, KoBBQSummary
from culturebias.domain.comparison.envelope import Comparison
from culturebias.domain.comparison.significance import LEGEND, mark, model_pairs
from culturebias.domain.comparison.tukey import tukey_pairs
from culturebias.domain.errors import ConfigError
from culturebias.domain.summary import Block
from culturebias.domain.uncertainty.interval import Interval

TESTED_METRICS = ("acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis")
NORMALISED_METRICS = ("diff_bias_amb", "diff_bias_dis")
ACCURACY_METRICS = ("acc_amb", "acc_dis")
LABEL_TYPE_METRICS = (*ACCURACY_METRICS, *NORMALISED_METRICS)  # tested across label types (Fig. 4)
ALL_TEMPLATES = "all"
TUKEY_CONFIDENCE = 0.99
WILCOXON_SAMPLE = "per-template scores (details.template_scores: each template's mean over prompts)"
NORMALISATION = (
    "diff-bias / its bound per template (1 - acc_amb; 1 - |2·acc_dis - 1|, from the template's accuracy); "
    "a zero bound forces a zero diff-bias, normalised to 0"
)


class KoBBQRow(Block):
    """One model's Table 3 row: each metric's mean ± std over prompts, as its summary holds them."""

    acc_amb: PromptStats
    acc_dis: PromptStats
    diff_bias_amb: PromptStats
    diff_bias_dis: PromptStats
    ooc_ratio: PromptStats
    intervals: dict[str, Interval] | None = None  # the run's bootstrap intervals of the headline means


class KoBBQComparisonBody(Block):
    metrics: list[str]
    table3: dict[str, KoBBQRow]  # model → mean ± std over prompts (overall)
    table3_by_label: dict[str, dict[str, KoBBQRow]]  # label type → model → row
    label_types: list[str]  # label types with per-template labels in every run ([] when the summaries carry none)
    wilcoxon_sample: str
    marks: str
    wilcoxon: list[RankSumRow]
    normalisation: str
    tukey_across_models: dict[str, TukeyTest | None]  # metric → test (None: fewer than two usable models)
    tukey_across_labels: dict[str, dict[str, TukeyTest | None]]  # model → metric → test (accuracy and normalised diff-bias)


class KoBBQComparison(Comparison[KoBBQComparisonBody]):
    benchmark: Literal["kobbq"] = "kobbq"


# -- samples ------------------------------------------------------------------------------
def template_labels(summary: KoBBQSummary) -> dict[str, str]:
    """Template → label annotation, where the summary's template scores carry one."""
    labels = {}
    for template, scores in summary.details.template_scores.items():
        label = getattr(scores, "label", None)
        if isinstance(label, str) and label:
            labels[template] = label
    return labels


def template_sample(summary: KoBBQSummary, metric: str, templates: set[str] | None = None) -> list[float]:
    """One metric's defined per-template values (optionally of some templates only)."""
    if metric not in KOBBQ_METRICS:
        raise ConfigError(f"metric must be one of {list(KOBBQ_METRICS)}, got {metric!r}")
    scores = summary.details.template_scores
    if not scores:
        raise ConfigError(f"summary of run {summary.run_id} holds no details.template_scores")
    return [
        value
        for template, values in scores.items()
        if (templates is None or template in templates) and (value := getattr(values, metric)) is not None
    ]


def accuracy_of(metric: str) -> str:
    """The accuracy that bounds a diff-bias (KoBBQ's normalisation)."""
    return "acc_amb" if metric == "diff_bias_amb" else "acc_dis"


def normalised(diff_bias: float | None, accuracy: float | None, metric: str) -> float | None:
    if diff_bias is None or accuracy is None:
        return None
    bound = 1 - accuracy if metric == "diff_bias_amb" else 1 - abs(2 * accuracy - 1)
    if bound <= 1e-12:
        return 0.0
    return diff_bias / bound


def normalised_sample(summary: KoBBQSummary, metric: str, templates: set[str] | None = None) -> list[float]:
    accuracy = accuracy_of(metric)
    values = []
    for template, scores in summary.details.template_scores.items():
        if templates is not None and template not in templates:
            continue
        value = normalised(getattr(scores, metric), getattr(scores, accuracy), metric)
        if value is not None and math.isfinite(value):
            values.append(value)
    return values


def label_type_sample(summary: KoBBQSummary, metric: str, templates: set[str]) -> list[float]:
    """What the label-type tests compare: raw accuracy, or normalised diff-bias, of some templates."""
    if metric in NORMALISED_METRICS:
        return normalised_sample(summary, metric, templates)
    return [v for v in template_sample(summary, metric, templates) if math.isfinite(v)]


# -- tests --------------------------------------------------------------------------------
def rank_sum_row(metric: str, label_type: str, a: str, b: str, sample_a: Sequence[float], sample_b: Sequence[float]) -> RankSumRow:
    result = rank_sum(sample_a, sample_b)
    if result is None:
        return RankSumRow(metric=metric, label_type=label_type, a=a, b=b, statistic=None, p_value=None,
                          n_a=len(sample_a), n_b=len(sample_b), mark="")
    return RankSumRow(
        metric=metric, label_type=label_type, a=a, b=b, statistic=result.statistic, p_value=result.p_value,
        n_a=result.n_a, n_b=result.n_b, mark=mark(_finite(result.p_value)),
    )


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def tukey_test(metric: str, groups: Mapping[str, Sequence[float]]) -> TukeyTest | None:
    anova = one_way_anova(groups)
    pairs = tukey_pairs(groups, confidence=TUKEY_CONFIDENCE)
    if anova is None or pairs is None:
        return None
    alpha = 1 - TUKEY_CONFIDENCE
    rows = [TukeyRow.judged(pair, alpha) for pair in pairs]
    return TukeyTest(
        metric=metric,
        confidence=TUKEY_CONFIDENCE,
        n={name: len(values) for name, values in groups.items()},
        means={name: (sum(values) / len(values) if values else None) for name, values in groups.items()},
        anova=AnovaBlock.of(anova),
        pairs=rows,
        homogeneous_groups=homogeneous_groups(list(anova.groups), [(r.a, r.b) for r in rows if r.significant]),
    )


def rank_sums(labels: Sequence[str], summaries: Sequence[KoBBQSummary], label_types: Sequence[str]) -> list[RankSumRow]:
    by_label = dict(zip(labels, summaries))
    grouping = [(ALL_TEMPLATES, None)] + [(lt, lt) for lt in label_types]
    labelled = {name: template_labels(s) for name, s in by_label.items()}
    rows = []
    for label_type, wanted in grouping:
        for metric in TESTED_METRICS:
            for a, b in model_pairs(labels):
                templates_a = None if wanted is None else {t for t, lt in labelled[a].items() if lt == wanted}
                templates_b = None if wanted is None else {t for t, lt in labelled[b].items() if lt == wanted}
                rows.append(
                    rank_sum_row(
                        metric, label_type, a, b,
                        template_sample(by_label[a], metric, templates_a),
                        template_sample(by_label[b], metric, templates_b),
                    )
                )
    return rows


def row_of(block: KoBBQScoreBlock) -> KoBBQRow:
    return KoBBQRow(**{metric: getattr(block, metric) for metric in KoBBQRow.model_fields})


def shared_label_types(summaries: Sequence[KoBBQSummary]) -> list[str]:
    found = [set(template_labels(s).values()) for s in summaries]
    return sorted(set.intersection(*found)) if found else []


def compare_kobbq(labels: Sequence[str], summaries: Sequence[KoBBQSummary]) -> tuple[KoBBQComparisonBody, list[str]]:
    """The cross-model views of KoBBQ runs (labels name the models in run order); with the notes they need."""
    notes = []
    for summary in summaries:
        if not summary.details.template_scores:
            raise ConfigError(f"summary of run {summary.run_id} holds no details.template_scores: the tests need them")
    label_types = shared_label_types(summaries)
    if not label_types:
        notes.append(
            "the summaries' template scores carry no label annotation: Wilcoxon rank-sum and Tukey HSD "
            "per label type are left out (the 'all' rows use every template)"
        )
    by_label_types = sorted(set.intersection(*(set(s.metrics.by_label) for s in summaries)))
    table3_by_label = {
        lt: {name: row_of(s.metrics.by_label[lt]) for name, s in zip(labels, summaries)} for lt in by_label_types
    }
    prompts = {tuple(s.metrics.prompts) for s in summaries}
    if len(prompts) > 1:
        notes.append("the runs asked different prompts: " + "; ".join(f"{n}: {', '.join(s.metrics.prompts)}" for n, s in zip(labels, summaries)))
    modes = {s.metrics.mode for s in summaries}
    if len(modes) > 1:
        notes.append("the runs answered in different modes: " + ", ".join(f"{n}: {s.metrics.mode}" for n, s in zip(labels, summaries)))
    if len({s.metrics.evaluator for s in summaries}) > 1:
        notes.append(
            "the runs scored DiffBias_d with different evaluators: "
            + ", ".join(f"{n}: {s.metrics.evaluator}" for n, s in zip(labels, summaries))
        )
    across_models = {
        metric: tukey_test(metric, {name: normalised_sample(s, metric) for name, s in zip(labels, summaries)})
        for metric in NORMALISED_METRICS
    }
    across_labels: dict[str, dict[str, TukeyTest | None]] = {}
    if label_types:
        for name, summary in zip(labels, summaries):
            labelled = template_labels(summary)
            across_labels[name] = {
                metric: tukey_test(
                    metric,
                    {lt: label_type_sample(summary, metric, {t for t, x in labelled.items() if x == lt}) for lt in label_types},
                )
                for metric in LABEL_TYPE_METRICS
            }
    body = KoBBQComparisonBody(
        metrics=list(KoBBQRow.model_fields),
        table3={name: row_of(s.metrics.overall) for name, s in zip(labels, summaries)},
        table3_by_label=table3_by_label,
        label_types=label_types,
        wilcoxon_sample=WILCOXON_SAMPLE,
        marks=LEGEND,
        wilcoxon=rank_sums(labels, summaries, label_types),
        normalisation=NORMALISATION,
        tukey_across_models=across_models,
        tukey_across_labels=across_labels,
    )
    return body, notes
