"""KoBBQ footnote 14: is the evaluation split a fair stand-in for the full set?

The paper evaluates on the released test split (one sampled combination per
template, ``KoBBQ_test_samples.tsv``) and checks in its footnote 14 that the
split gives what the full set (every combination, ``culturebias expand kobbq``)
gives. Given one model's run on each, this compares:

- **composition**: templates, and the share of answers per category and per
  label type, in each data set (the full set's pooled scores weigh its large
  categories more: Race/Ethnicity/Nationality holds two thirds of its samples);
- **scores**: Acc_a, Acc_d, DiffBias_a, DiffBias_d (means over prompts) over
  all templates and per label type, side by side with their difference;
- **the test**: the two-sided Wilcoxon rank-sum of the per-template scores
  (``details.template_scores``) of the split against the full set, per metric
  and label type, marked at .01/.05/.1 as the paper's other data-set test.

No marked row reads "the split gives what the full set gives (no rank-sum
differs at p < .1)"; each marked row names where it does not. The footnote's
own wording is in neither PROTOCOLS file: what is compared here is this
project's reading of it. Pure: typed summaries in, a typed block out.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from culturebias.domain.bbq.fidelity_summary import RankSumRow
from culturebias.domain.comparison.significance import LEGEND
from culturebias.domain.errors import ConfigError
from culturebias.domain.kobbq.comparison import ALL_TEMPLATES, TESTED_METRICS, rank_sum_row, template_labels, template_sample
from culturebias.domain.kobbq.run_tests import category_of
from culturebias.domain.kobbq.summary import KoBBQScoreBlock, KoBBQSummary
from culturebias.domain.summary import Block, Count, Number
from culturebias.domain.validity import headline_not_measured

SPLIT = "evaluation split"
FULL = "full set"
SPLIT_CHECK_SAMPLE = "per-template scores (details.template_scores: each template's mean over prompts)"


class CompositionRow(Block):
    """One category or label type: its templates and share of answers in each data set."""

    kind: str = Field(description='"category" or "label type"')
    name: str = Field(description="the category or label type")
    templates_split: Count = Field(description="templates of the evaluation split in it")
    templates_full: Count = Field(description="templates of the full set in it")
    answers_split: Count = Field(description="answers (items × prompts × option orders) of the split in it")
    answers_full: Count = Field(description="answers of the full set in it")
    share_split: Number = Field(description="its share of the split's answers")
    share_full: Number = Field(description="its share of the full set's answers")


class SplitScoreRow(Block):
    """One metric over all templates or one label type: both data sets' means over prompts and the rank-sum."""

    label_type: str = Field(description='"all" or a label type (ST, TM, ...)')
    metric: str = Field(description="acc_amb, acc_dis, diff_bias_amb or diff_bias_dis")
    split: Number = Field(description="the split's score (mean over prompts, as its summary holds it)")
    full: Number = Field(description="the full set's score")
    difference: Number = Field(description="split − full")
    rank_sum: RankSumRow = Field(description="Wilcoxon rank-sum of the split's per-template scores against the full set's")
    not_measured: str | None = Field(
        None, description="why the scores are null and the rank-sum not run: a run's headline is not measured "
        "(its not_measured, or a failed validity rule: a content-blind model's scores say nothing of the data)",
    )


class SplitCheck(Block):
    """Footnote 14: one model's run on the evaluation split against its run on the full set."""

    split_run: str = Field(description="the run on the evaluation split")
    full_run: str = Field(description="the run on the full set")
    model: str | None = Field(description="the model both runs asked")
    split_data: str = Field(description="the split run's data")
    full_data: str = Field(description="the full-set run's data")
    templates_split: Count = Field(description="templates with scores in the split run")
    templates_full: Count = Field(description="templates with scores in the full-set run")
    only_in_split: list[str] = Field(description="templates of the split the full set lacks (none when the split is drawn from it)")
    answers_split: Count = Field(description="answers of the split run")
    answers_full: Count = Field(description="answers of the full-set run")
    composition: list[CompositionRow] = Field(description="categories and label types: templates and answer shares")
    scores: list[SplitScoreRow] = Field(description="each metric, all templates and per label type")
    sample: str = Field(description="what one value of the rank-sum is")
    marks: str = Field(description="what the marks mean")
    differing: list[str] = Field(description='"metric (label type)" where the rank-sum marks a difference (p < .1)')
    verdict: str = Field(description="one sentence: does the split give what the full set gives")
    notes: list[str] = Field(description="what makes the two runs differ besides their data")


def _model(summary: KoBBQSummary) -> str | None:
    block = summary.model
    identity = block.generator or block.scorer or block.pseudo_scorer
    return identity.model if identity is not None else None


def _answers(block: KoBBQScoreBlock) -> int:
    return sum(counts.n_total for counts in block.counts.values())


def _mean(block: KoBBQScoreBlock | None, metric: str) -> float | None:
    return None if block is None else getattr(block, metric).mean


def _composition(kind: str, split: dict[str, KoBBQScoreBlock], full: dict[str, KoBBQScoreBlock],
                 templates_split: dict[str, int], templates_full: dict[str, int]) -> list[CompositionRow]:
    total_split = sum(_answers(b) for b in split.values()) or None
    total_full = sum(_answers(b) for b in full.values()) or None
    rows = []
    for name in sorted(set(split) | set(full)):
        a = _answers(split[name]) if name in split else 0
        b = _answers(full[name]) if name in full else 0
        rows.append(CompositionRow(
            kind=kind, name=name, templates_split=templates_split.get(name, 0), templates_full=templates_full.get(name, 0),
            answers_split=a, answers_full=b,
            share_split=a / total_split if total_split else None, share_full=b / total_full if total_full else None,
        ))
    return rows


def _tally(keys: Sequence[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    return counts


def _notes(split: KoBBQSummary, full: KoBBQSummary, only_in_split: list[str]) -> list[str]:
    notes = []
    a, b = split.metrics, full.metrics
    for what, x, y in (("prompts", ",".join(a.prompts), ",".join(b.prompts)), ("mode", a.mode, b.mode),
                       ("evaluator", a.evaluator, b.evaluator), ("option orders", str(a.permutations), str(b.permutations))):
        if x != y:
            notes.append(f"the runs differ in {what}: split {x}, full set {y}; a difference can come from that, not the data")
    if b.aggregate == "pooled":
        notes.append(
            "the full-set run pools answers (protocol.aggregate=pooled): its scores weigh each category by its samples, "
            "the split's (one sample per template) by its templates; protocol.aggregate=per_template (the paper's "
            "all-samples mode) weighs templates in both"
        )
    for name, summary in ((SPLIT, split), (FULL, full)):
        if summary.limit is not None:
            notes.append(f"the {name} run was limited (--limit {summary.limit.n}): it is not the whole {name}")
        if summary.sample is not None:
            notes.append(f"the {name} run asked a stratified sample (--sample): it is not the whole {name}")
    if only_in_split:
        notes.append(f"{len(only_in_split)} template(s) of the split are not in the full set: is it the same release?")
    if full.counts.items < split.counts.items:
        notes.append(f"the full set holds fewer items ({full.counts.items}) than the split ({split.counts.items}): "
                     "are the two runs given the other way round?")
    return notes


def _not_measured(split: KoBBQSummary, full: KoBBQSummary, metric: str) -> str | None:
    """Why ``metric`` cannot be compared: either run's headline is not measured (domain.validity); None if both are."""
    reasons = [f"the {name} run: {why}" for name, summary in ((SPLIT, split), (FULL, full))
               if (why := headline_not_measured(summary, metric)) is not None]
    return "; ".join(reasons) if reasons else None


def check_split(split: KoBBQSummary, full: KoBBQSummary) -> SplitCheck:
    """Footnote 14's check of one model's split run against its full-set run (typed summaries of both)."""
    for name, summary in ((SPLIT, split), (FULL, full)):
        if not summary.details.template_scores:
            raise ConfigError(f"the {name} run {summary.run_id} holds no details.template_scores: the rank-sum needs them")
    if split.run_id == full.run_id:
        raise ConfigError(f"the {SPLIT} and the {FULL} are one run ({split.run_id}): give the split's run and the full set's")
    model_split, model_full = _model(split), _model(full)
    if model_split and model_full and model_split != model_full:
        raise ConfigError(
            f"the two runs asked different models ({SPLIT}: {model_split}, {FULL}: {model_full}); "
            "footnote 14 compares one model's scores on the split and on the full set"
        )
    labels_split, labels_full = template_labels(split), template_labels(full)
    label_types = sorted(set(labels_split.values()) & set(labels_full.values()))
    rows = []
    for label_type in (ALL_TEMPLATES, *label_types):
        wanted_a = None if label_type == ALL_TEMPLATES else {t for t, lt in labels_split.items() if lt == label_type}
        wanted_b = None if label_type == ALL_TEMPLATES else {t for t, lt in labels_full.items() if lt == label_type}
        block_a = split.metrics.overall if wanted_a is None else split.metrics.by_label.get(label_type)
        block_b = full.metrics.overall if wanted_b is None else full.metrics.by_label.get(label_type)
        for metric in TESTED_METRICS:
            reason = _not_measured(split, full, metric)
            if reason is not None:
                rows.append(SplitScoreRow(
                    label_type=label_type, metric=metric, split=None, full=None, difference=None,
                    rank_sum=rank_sum_row(metric, label_type, SPLIT, FULL, [], []), not_measured=reason,
                ))
                continue
            a, b = _mean(block_a, metric), _mean(block_b, metric)
            rows.append(SplitScoreRow(
                label_type=label_type, metric=metric, split=a, full=b,
                difference=a - b if a is not None and b is not None else None,
                rank_sum=rank_sum_row(metric, label_type, SPLIT, FULL,
                                      template_sample(split, metric, wanted_a), template_sample(full, metric, wanted_b)),
            ))
    differing = [f"{r.metric} ({r.label_type})" for r in rows if r.rank_sum.mark]
    templates_split, templates_full = split.details.template_scores, full.details.template_scores
    only_in_split = sorted(set(templates_split) - set(templates_full))
    composition = _composition(
        "category", split.metrics.by_category, full.metrics.by_category,
        _tally([category_of(t) for t in templates_split]), _tally([category_of(t) for t in templates_full]),
    ) + _composition(
        "label type", split.metrics.by_label, full.metrics.by_label,
        _tally(list(labels_split.values())), _tally(list(labels_full.values())),
    )
    tested = sum(1 for r in rows if r.rank_sum.p_value is not None)
    unmeasured = sorted({r.metric for r in rows if r.not_measured})
    verdict = (
        f"Not measured ({', '.join(unmeasured)}: see each row's reason), and no other rank-sum could be computed: "
        "the split is not checked."
        if unmeasured and not tested
        else
        f"The evaluation split gives what the full set gives: no rank-sum of {tested} marks a difference at p < .1."
        if not differing and tested
        else "No rank-sum could be computed (each needs templates scored in both runs): the split is not checked."
        if not differing
        else f"The evaluation split differs from the full set in {len(differing)} of {tested} rank-sums (p < .1): "
        + ", ".join(differing) + "."
    )
    return SplitCheck(
        split_run=split.run_id, full_run=full.run_id, model=model_split or model_full,
        split_data=split.data.source, full_data=full.data.source,
        templates_split=len(templates_split), templates_full=len(templates_full), only_in_split=only_in_split,
        answers_split=_answers(split.metrics.overall), answers_full=_answers(full.metrics.overall),
        composition=composition, scores=rows, sample=SPLIT_CHECK_SAMPLE, marks=LEGEND, differing=differing,
        verdict=verdict,
        notes=_notes(split, full, only_in_split)
        + ([f"not compared, a run's headline not measured: {', '.join(unmeasured)}"] if unmeasured else []),
    )
