"""Report sections for the papers' settings and statistics a KoBBQ/CBBQ run reports (issue 17).

Every number comes from the typed summary (``domain/bbq/fidelity_summary.py``).
"""

from __future__ import annotations

from culturebias.adapters.reports.markdown import fmt, table
from culturebias.domain.bbq.fidelity_summary import TukeyTest
from culturebias.domain.kobbq.summary import KoBBQMetrics
from culturebias.domain.cbbq.summary import CBBQMetrics, CBBQSummary
from culturebias.domain.cbbq.table4 import TABLE4_SOURCE


def answering_line(metrics: KoBBQMetrics | CBBQMetrics) -> str:
    """The setup line naming the mode that ran; for likelihood, that the papers generated."""
    line = f"- answering mode: **{metrics.mode}**; chat template: {fmt(metrics.chat_template)}"
    answering = metrics.answering
    if answering is None:
        return line
    line += f" (requested: {answering.requested}; {answering.reason})"
    if not answering.matches_papers:
        line += (
            f"\n- **the papers generated their answers** (papers' mode: {answering.papers_mode}): this run scored the options "
            "instead, so its numbers are not the papers' method (set protocol.mode=generate to reproduce them)"
        )
    return line


def cbbq_setup_lines(metrics: CBBQMetrics) -> list[str]:
    """Setup lines of the papers' settings: where S_total's weights come from, how CoT reasoning was decoded."""
    lines = []
    if metrics.weights.source:
        lines.append(f"- weights' source: {metrics.weights.source}")
    reasoning = metrics.reasoning
    if reasoning is not None:
        seed = "" if reasoning.seed is None else f", seed {reasoning.seed}"
        lines.append(
            f"- Q+IF+CoT: first turn = {reasoning.first_turn}; reasoning **{reasoning.decoding}** "
            f"({reasoning.sampling}{seed}, at most {reasoning.max_new_tokens} tokens)"
            + ("; the paper sampled it" if reasoning.decoding == "greedy" else ", as in the paper")
        )
    if metrics.prompt_source:
        lines.append(f"- prompt set: **{metrics.prompt_set}**: {metrics.prompt_source}")
    wording = metrics.wording
    if wording is not None:
        for name, sentence in (("IF", wording.if_sentence), ("CoT", wording.cot_sentence)):
            lines.append(f"- {name} sentence: 「{sentence.text}」 ({sentence.source}; the paper: \"{sentence.paper_english}\")")
    return lines


def group_topic_section(metrics: CBBQMetrics) -> str:
    """The headline condition's scores per targeted group × stereotype topic (paper Fig. 6)."""
    block = metrics.by_condition.get(metrics.condition)
    rows = block.by_group_topic if block is not None else None
    if not rows:
        return ""
    body = [
        [r.category, r.targeted_group, r.topic, s.s_amb, s.s_dis, s.s_total, s.acc_amb, s.acc_dis, s.counts.n_amb, s.counts.n_dis_non_unknown]
        for r in rows
        for s in (r.scores,)
    ]
    return "\n".join(
        [
            f"## By targeted group × stereotype topic ({metrics.condition_name}; paper Fig. 6)",
            "",
            table(
                ["category", "targeted group", "topic", "S_amb", "S_dis", "S_total", "Acc (amb)", "Acc (dis)", "n amb", "n dis (not unknown)"],
                body,
            ),
        ]
    )


def _tukey_lines(name: str, test: TukeyTest | None, what: str) -> list[str]:
    if test is None:
        return [f"- {name}: fewer than two {what} with two or more templates; no test"]
    anova = test.anova
    significant = [p for p in test.pairs if p.significant]
    lines = [
        f"- {name}: one-way ANOVA F = {fmt(anova.f)}, p = {fmt(anova.p_value, 4)} over {len(anova.groups)} {what}; "
        f"Tukey HSD ({fmt(test.confidence * 100, 0)}%): {len(significant)} of {len(test.pairs)} pairs differ"
    ]
    if test.homogeneous_groups is not None:
        letters = "; ".join(f"{chr(97 + i) if i < 26 else i}: {', '.join(g)}" for i, g in enumerate(test.homogeneous_groups))
        lines.append(f"  - homogeneous groups (no two members differ): {letters}")
    for pair in significant[:10]:
        lines.append(
            f"  - {pair.a} − {pair.b}: {fmt(pair.mean_difference)} "
            f"({fmt(test.confidence * 100, 0)}% CI {fmt(pair.ci_low)} … {fmt(pair.ci_high)}, p = {fmt(pair.p_value, 4)})"
        )
    if anova.left_out:
        lines.append(f"  - left out (fewer than two templates): {', '.join(anova.left_out)}")
    return lines


TESTED_NAMES = {
    "acc_amb": "accuracy (ambiguous)",
    "acc_dis": "accuracy (disambiguated)",
    "diff_bias_amb": "normalised diff-bias (ambiguous)",
    "diff_bias_dis": "normalised diff-bias (disambiguated)",
}


def kobbq_tests_section(metrics: KoBBQMetrics) -> str:
    """The paper's tests in this run: Tukey HSD 99% on normalised diff-bias (Figs. 3–4) and, across label types,
    on accuracy (§4.3, Fig. 4); rank-sum against a reference data set (Table 4)."""
    tests = metrics.tests
    if tests is None:
        return ""
    names = TESTED_NAMES
    lines = [f"## The paper's tests (Figs. 3–4; Tukey HSD at {fmt(tests.confidence * 100, 0)}%)", "", "### Across categories", ""]
    for metric, test in tests.across_categories.items():
        lines += _tukey_lines(names.get(metric, metric), test, "categories")
    lines += ["", "### Across label types (accuracy and normalised diff-bias; §4.3, Fig. 4)", ""]
    for metric, test in tests.across_label_types.items():
        lines += _tukey_lines(names.get(metric, metric), test, "label types")
    if tests.rank_sum_reference is not None:
        rows = [[r.label_type, r.metric, r.n_a, r.n_b, r.statistic, r.p_value, r.mark] for r in tests.rank_sum_reference]
        lines += [
            "",
            f"### Wilcoxon rank-sum against {tests.reference} (Table 4)",
            "",
            table(["label type", "metric", "templates (this data)", "templates (reference)", "statistic", "p", "mark"], rows),
            "",
            f"Marks: {tests.marks}. Positive statistic: this data's per-template scores rank higher.",
        ]
    if tests.reference_scores:
        rows = [
            [r.data, r.label_type, r.answers, r.acc_amb, r.acc_dis, r.diff_bias_amb, r.diff_bias_dis]
            for r in tests.reference_scores
        ]
        lines += [
            "",
            "### Scores of both data sets (Table 4; means over prompts)",
            "",
            table(["data", "label type", "answers", "Acc (amb)", "Acc (dis)", "diff-bias (amb)", "diff-bias (dis)"], rows),
        ]
    lines += ["", f"Samples: {tests.sample}. Normalisation: {tests.normalisation}."]
    return "\n".join(lines)


EXTRA_NAMES = {
    "acc_overall": "overall accuracy",
    "bias_score_amb": "BBQ bias score S_AMB (ambiguous)",
    "bias_score_dis": "BBQ bias score S_DIS (disambiguated)",
    "inconsistency": "inconsistency (distinct answers per question over its option orders)",
}


def kobbq_extra_section(metrics: KoBBQMetrics) -> str:
    """KoBBQ_evaluation.py's extra metrics (reported under either evaluator): mean ± std over prompts."""
    overall = metrics.overall
    rows = [
        [label, stats.mean, stats.std, *[stats.per_prompt.get(p) for p in metrics.prompts]]
        for name, label in EXTRA_NAMES.items()
        for stats in (getattr(overall, name),)
        if stats is not None
    ]
    if not rows:
        return ""
    return "\n".join(
        [
            "## More metrics (the authors' KoBBQ_evaluation.py)",
            "",
            table(["metric", "mean", "std", *[f"prompt {p}" for p in metrics.prompts]], rows),
            "",
            f"Option orders per question: {len(metrics.permutations)} (inconsistency is 1 with one order).",
        ]
    )


def cbbq_table4_section(summary: CBBQSummary) -> str:
    """Every category's instances in the data beside the paper's Table 4 (a comparison, never a failure)."""
    rows = summary.counts.table4
    if not rows:
        return ""
    body = [[r.category, r.in_data, "–" if r.paper is None else r.paper,
             "–" if r.difference is None else f"{r.difference:+d}"] for r in rows]
    differ = [r.category for r in rows if r.difference]
    said = (f"The data differs from Table 4 in {', '.join(differ)}: the data as loaded is what runs."
            if differ else "The data matches Table 4 in every category it holds.")
    return "\n".join([
        "## Instances per category: the data against the paper's Table 4", "",
        table(["category", "in the data", "paper Table 4", "difference"], body), "",
        f"{said} Source of the paper's counts: {TABLE4_SOURCE}.",
    ])


def cbbq_review_line(summary: CBBQSummary) -> str:
    n = summary.counts.explained_answers
    if not n:
        return ""
    return (f"{n} answer(s) carry an explanation (Q+Explain): `culturebias cbbq review-export RUN --out review.csv` "
            "writes them for review; `culturebias cbbq review-import RUN review.csv` reports each verdict's share.")
