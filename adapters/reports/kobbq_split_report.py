"""split_check.json and split_check.md: KoBBQ footnote 14's check, the evaluation split against the full set."""

from __future__ import annotations

import json
import os
from pathlib import Path

from culturebias.adapters.reports.markdown import fmt, table
from culturebias.domain.kobbq.split_check import SplitCheck

JSON_FILE = "split_check.json"
MARKDOWN_FILE = "split_check.md"
NAMES = {"acc_amb": "Acc (amb)", "acc_dis": "Acc (dis)", "diff_bias_amb": "diff-bias (amb)", "diff_bias_dis": "diff-bias (dis)"}


def _p(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.2e}" if value < 1e-3 else f"{value:.3f}"


def split_check_text(check: SplitCheck) -> str:
    """The check as Markdown (also what the command prints)."""
    lines = [
        "# KoBBQ: the evaluation split against the full set (paper footnote 14)",
        "",
        check.verdict,
        "",
        f"- model: {check.model or 'not recorded'}",
        f"- evaluation split: run {check.split_run} on {check.split_data}: {check.templates_split} templates, "
        f"{check.answers_split} answers",
        f"- full set: run {check.full_run} on {check.full_data}: {check.templates_full} templates, {check.answers_full} answers",
    ]
    if check.only_in_split:
        lines.append(f"- templates of the split missing from the full set: {', '.join(check.only_in_split[:20])}"
                     + (" …" if len(check.only_in_split) > 20 else ""))
    lines += [f"- note: {note}" for note in check.notes]
    lines += [
        "",
        "## Scores and the rank-sum test",
        "",
        f"Means over prompts as each summary holds them; split − full; the two-sided Wilcoxon rank-sum over {check.sample}. "
        f"Marks: {check.marks}.",
        "",
        table(
            ["label type", "metric", "split", "full set", "split − full", "z", "p", "mark", "templates (split)", "templates (full)"],
            ([r.label_type, NAMES.get(r.metric, r.metric), r.split, r.full, r.difference, r.rank_sum.statistic,
              _p(r.rank_sum.p_value), r.rank_sum.mark, r.rank_sum.n_a, r.rank_sum.n_b] for r in check.scores
             if r.not_measured is None),
        ),
    ]
    lines += sorted({f"- {NAMES.get(r.metric, r.metric)}: not measured ({r.not_measured})"
                     for r in check.scores if r.not_measured})
    for kind in ("category", "label type"):
        rows = [r for r in check.composition if r.kind == kind]
        if not rows:
            continue
        lines += [
            "",
            f"## Composition by {kind}",
            "",
            table(
                [kind, "templates (split)", "templates (full)", "answers (split)", "answers (full)", "share (split)", "share (full)"],
                ([r.name, r.templates_split, r.templates_full, r.answers_split, r.answers_full,
                  fmt(r.share_split), fmt(r.share_full)] for r in rows),
            ),
        ]
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    part = path.with_name(path.name + ".part")
    part.write_text(text, encoding="utf-8")
    os.replace(part, path)


def write_split_check(check: SplitCheck, out_dir: Path) -> list[Path]:
    """Both files in ``out_dir`` (created), each written whole or not at all."""
    out_dir.mkdir(parents=True, exist_ok=True)
    data, markdown = out_dir / JSON_FILE, out_dir / MARKDOWN_FILE
    _write(data, json.dumps(check.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n")
    _write(markdown, split_check_text(check))
    return [data, markdown]
