"""KoBBQ metrics of a run's answers: per prompt, then mean ± std over prompts; overall, per label, per category."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence

from culturebias.domain.bbq.aggregate import ScoreFn, group_by, nan_mean, over_prompts, per_template, template_average
from culturebias.domain.kobbq.metrics import ALL_METRICS, KOBBQ_METRICS, bounds, count_answers, score_answers
from culturebias.domain.bbq.model import Answer
from culturebias.domain.bbq.fidelity_summary import AnovaBlock, KoBBQRunTests, LabelTypeScores
from culturebias.domain.kobbq.comparison import ALL_TEMPLATES
from culturebias.domain.kobbq.run_tests import RANK_SUM_LABEL_TYPES, run_tests
from culturebias.domain.bbq.statistics import one_way_anova, tukey_hsd
from culturebias.domain.bbq.fidelity_summary import TukeyPairBlock
from culturebias.domain.kobbq.summary import CategoryTest, KoBBQScoreBlock, TemplateScores

TESTED_METRICS = ("diff_bias_amb", "diff_bias_dis")
TESTED_TABLE_4 = ("acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis")  # Table 4's columns
STATISTICS_SAMPLE = "per-template scores (mean over prompts), grouped by category"


def scorer(aggregate: str, evaluator: str = "5_evaluation") -> ScoreFn:
    def score(answers: Sequence[Answer]) -> dict[str, float]:
        return score_answers(answers, evaluator)

    if aggregate == "per_template":
        return lambda answers: template_average(answers, score, ALL_METRICS)
    return score


def block(
    answers: Sequence[Answer], prompts: Sequence[str], aggregate: str, ddof: int, evaluator: str = "5_evaluation"
) -> KoBBQScoreBlock:
    """Every KoBBQ metric of a set of answers: per prompt, mean and std over prompts, bounds."""
    score = scorer(aggregate, evaluator)
    by_prompt = group_by(answers, lambda a: a.prompt_id)
    per_prompt = {p: score(by_prompt.get(p, [])) for p in prompts}
    return KoBBQScoreBlock(
        **over_prompts(per_prompt, ALL_METRICS, ddof),
        bounds={p: bounds(scores) for p, scores in per_prompt.items()},
        counts={p: count_answers(by_prompt.get(p, [])) for p in prompts},
    )


def breakdown(
    answers: Sequence[Answer],
    key: Callable[[Answer], Hashable],
    prompts: Sequence[str],
    aggregate: str,
    ddof: int,
    evaluator: str = "5_evaluation",
) -> dict[str, KoBBQScoreBlock]:
    groups = group_by(answers, key)
    return {str(name): block(groups[name], prompts, aggregate, ddof, evaluator) for name in sorted(groups, key=str)}


def template_scores(
    answers: Sequence[Answer], prompts: Sequence[str], evaluator: str = "5_evaluation"
) -> dict[str, dict[str, float]]:
    """Each template's scores, averaged over prompts (the sample for the statistics); NaN where undefined."""
    by_prompt = group_by(answers, lambda a: a.prompt_id)
    per_prompt = {p: per_template(by_prompt.get(p, []), scorer("pooled", evaluator)) for p in prompts}
    templates = sorted({t for scores in per_prompt.values() for t in scores})
    return {
        t: {m: nan_mean(per_prompt[p][t][m] for p in prompts if t in per_prompt[p]) for m in KOBBQ_METRICS}
        for t in templates
    }


def template_labels(answers: Sequence[Answer]) -> dict[str, str]:
    """Each template's label annotation, where all its samples carry the same one."""
    found: dict[str, set[str | None]] = {}
    for answer in answers:
        found.setdefault(answer.item.template_id, set()).add(answer.item.label_annotation)
    out: dict[str, str] = {}
    for template, labels in found.items():
        (label, *others) = labels
        if not others and label:
            out[template] = label
    return out


def category_statistics(scores: dict[str, dict[str, float]]) -> dict[str, CategoryTest]:
    """One-way ANOVA and Tukey HSD of per-template diff-bias across categories."""
    out = {}
    for metric in TESTED_METRICS:
        groups: dict[str, list[float]] = {}
        for template, values in scores.items():
            if not math.isnan(values[metric]):
                groups.setdefault(template.rsplit("-", 1)[0], []).append(values[metric])
        anova = one_way_anova(groups)
        tukey = tukey_hsd(groups)
        out[metric] = CategoryTest(
            sample=STATISTICS_SAMPLE,
            anova=AnovaBlock.of(anova) if anova else None,
            tukey_hsd=[TukeyPairBlock.of(pair) for pair in tukey] if tukey else None,
        )
    return out


def label_of(answer: Answer) -> str:
    """The label-type breakdown's key of an answer (its template's label annotation)."""
    return answer.item.label_annotation or "unlabelled"


def category_of(answer: Answer) -> str:
    return answer.item.category


def label_type_scores(
    sides: dict[str, Sequence[Answer]], prompts: Sequence[str], aggregate: str, ddof: int, evaluator: str
) -> list[LabelTypeScores]:
    """Paper Table 4's scores: each data set's accuracy and diff-bias (means over prompts), over all its
    templates and per label type the two share (ST, TM)."""
    rows = []
    for name, answers in sides.items():
        by_label = group_by(answers, label_of)
        for label_type in (ALL_TEMPLATES, *RANK_SUM_LABEL_TYPES):
            members = answers if label_type == ALL_TEMPLATES else by_label.get(label_type, [])
            scores = block(members, prompts, aggregate, ddof, evaluator)
            rows.append(
                LabelTypeScores(
                    data=name,
                    label_type=label_type,
                    answers=len(members),
                    **{m: getattr(scores, m).mean for m in TESTED_TABLE_4},
                )
            )
    return rows


@dataclass(frozen=True)
class KoBBQAggregate:
    """The score blocks of a KoBBQ run and the per-template scores behind its statistics."""

    overall: KoBBQScoreBlock
    by_label: dict[str, KoBBQScoreBlock]
    by_category: dict[str, KoBBQScoreBlock]
    statistics: dict[str, CategoryTest]  # empty when not computed
    template_scores: dict[str, TemplateScores]
    tests: KoBBQRunTests | None = None  # the paper's tests (None when not computed)


def aggregate_kobbq(
    answers: Sequence[Answer],
    prompts: Sequence[str],
    aggregate: str,
    ddof: int,
    statistics: bool = True,
    reference: Sequence[Answer] = (),
    reference_name: str | None = None,
    evaluator: str = "5_evaluation",
) -> KoBBQAggregate:
    """``reference``: answers to a second data set (the Table 4 tests and scores only; never in the run's scores)."""
    templates = template_scores(answers, prompts, evaluator)
    labels = template_labels(answers)
    tests = None
    if statistics:
        if reference:
            name = reference_name or "reference"
            sides = {"this data": answers, name: reference}
            tests = run_tests(
                templates, labels, template_scores(reference, prompts, evaluator), template_labels(reference), name,
                label_type_scores(sides, prompts, aggregate, ddof, evaluator),
            )
        else:
            tests = run_tests(templates, labels)
    return KoBBQAggregate(
        overall=block(answers, prompts, aggregate, ddof, evaluator),
        by_label=breakdown(answers, label_of, prompts, aggregate, ddof, evaluator),
        by_category=breakdown(answers, category_of, prompts, aggregate, ddof, evaluator),
        statistics=category_statistics(templates) if statistics else {},
        template_scores={t: TemplateScores(**scores, label=labels.get(t)) for t, scores in templates.items()},
        tests=tests,
    )
