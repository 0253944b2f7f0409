"""The report's lines on a repeated run (``run.repeats``): mean ± std of each headline metric, and every repeat."""

from __future__ import annotations

from culturebias.domain.summary import RunSummary


def _number(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def repeats_lines(summary: RunSummary) -> list[str]:
    block = summary.repeats
    if block is None:
        return []
    names = list(block.headline)
    lines = [
        "",
        f"> **{block.n} repeats** ({block.sampling}; repeat i samples with seed + i). The tables below are "
        f"repeat {block.metrics_from + 1}'s; the headline metrics over all repeats are mean ± std (ddof {block.std_ddof}):",
        "",
        "| metric | mean ± std | repeats defined |",
        "|---|---|---|",
    ]
    for name in names:
        stat = block.headline[name]
        lines.append(f"| {name} | {_number(stat.mean)} ± {_number(stat.std)} | {stat.n} |")
    lines += ["", "| repeat | seed | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 2)]
    for run in block.runs:
        lines.append(f"| {run.index + 1} | {run.seed} | " + " | ".join(_number(run.headline.get(n)) for n in names) + " |")
    return lines
