"""LIBRA report: metric tables, the knowledge boundary, and the L(S) vs L(S_p) densities.

Everything shown is read from the typed summary (``metrics``, ``counts``,
``notes``, ``details``); the density plot is drawn from the per-triplet L values
stored in ``details.triplets``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from culturebias.adapters.reports.intervals import any_intervals, ci_cells, ci_headers, libra_uncertainty, table_legend
from culturebias.adapters.reports.markdown import (
    fmt,
    header_section,
    model_section,
    new_figure,
    notes_section,
    save_figure,
    table,
    write_markdown,
)
from culturebias.adapters.reports.sample_words import strata_markdown
from culturebias.adapters.libra.report_sections import LIKELIHOOD_AXIS, method_lines, stereoset_section
from culturebias.domain.libra.summary import (
    LibraDetails,
    LibraMetrics,
    LibraScoresBlock,
    LibraSummary,
    LocalWordBlock,
    TheoreticalRow,
)

HEADERS = ("lms", "ss", "local iCAT", "JSD", "bbs", "EiCAT", "valid", "invalid")
FIGURE = "libra_likelihoods.png"


def _row(name: str, block: LibraScoresBlock) -> list[object]:
    return [name, block.lms, block.ss, block.icat_local, block.jsd, block.bbs, block.eicat, block.valid, block.invalid]


def _theoretical(model: TheoreticalRow) -> list[object]:
    return [f"theoretical: {model.name}", model.lms, model.ss, model.icat, model.jsd, model.bbs, model.eicat, "–", "–"]


def theoretical_legend(metrics: LibraMetrics) -> str:
    """What each of Table 1's theoretical LMs does, under the table that shows them."""
    return "\n\nThe theoretical rows are the paper's Table 1 reference models, scored with the same formulas: " + "; ".join(
        f"{m.name} {m.behaviour}" for m in metrics.reference_rows) + "."


CI_METRICS = ("lms", "ss", "eicat")


def _breakdown(title: str, blocks: dict[str, LibraScoresBlock]) -> str:
    if not blocks:
        return ""
    ci = any_intervals([block.intervals for block in blocks.values()])  # bootstrap intervals over triplets
    headers = (title.split()[-1].capitalize(), *HEADERS, *(ci_headers(["LMS", "SS", "EiCAT"]) if ci else []))
    rows = [_row(name, block) + (ci_cells(block.intervals, CI_METRICS) if ci else []) for name, block in blocks.items()]
    return f"## {title}\n\n" + table(headers, rows, digits=2) + table_legend([b.intervals for b in blocks.values()])


def _nearest(word: LocalWordBlock) -> str:
    if word.nearest_term is None:
        return "–"
    mark = "" if word.nearest_term == word.term else " (another word)"
    return f"{word.nearest_term} {fmt(word.nearest_score, 3)}{mark}"


def _local_words(details: LibraDetails) -> str:
    words = details.local_words
    if words is None:
        return ""
    lines = ["## Knowledge boundary: local words", ""]
    if not words:
        return "\n".join(lines + ["No word of the triplets lies outside the general lexicon."])
    nearest = any(w.nearest_term is not None for w in words)  # an embedding comparison: the nearest glossary meaning
    rows = [
        [
            w.term,
            {True: "yes", False: "no", None: "not checked"}[w.understood],
            w.score,
            *([_nearest(w)] if nearest else []),
            w.triplets,
            (w.model_definition or "").replace("|", "\\|").replace("\n", " ")[:120],
        ]
        for w in words
    ]
    headers = ("word", "understood", "score", *(("nearest glossary definition",) if nearest else ()), "triplets", "model's definition")
    lines.append(table(headers, rows, digits=3))
    if nearest:
        lines += ["", "Nearest glossary definition: the glossary word whose definition the model's is most similar to "
                  "(cosine); another word there means the model described something else, whatever the score."]
    invalid = details.invalid_triplets
    if invalid:
        lines += ["", "Invalid triplets (a misunderstood local word): " + ", ".join(
            f"`{tid}` ({', '.join(terms)})" for tid, terms in invalid.items()
        )]
    return "\n".join(lines)


def _valid_values(values: Sequence[float | None], valid: Sequence[bool]) -> list[float]:
    return [v for v, ok in zip(values, valid) if ok and v is not None]


def _density(ax, values: list[float], grid, label: str, style: str) -> None:
    import numpy as np
    from scipy.stats import gaussian_kde

    if len(values) >= 2 and float(np.std(values)) > 0:
        density = gaussian_kde(values)(grid)
        ax.plot(grid, np.maximum(density, 1e-12), style, label=f"{label} (KDE, n={len(values)})")
    elif values:
        ax.axvline(values[0], linestyle=style, label=f"{label} (n={len(values)}, no spread)")


def likelihood_figure(summary: LibraSummary, out_dir: Path) -> Path | None:
    import numpy as np

    triplets = summary.details.triplets
    stereotyped = _valid_values(triplets.stereotyped, triplets.valid)
    anti = _valid_values(triplets.anti_stereotyped, triplets.valid)
    if not stereotyped or not anti:
        return None
    both = np.asarray(stereotyped + anti, dtype=float)
    span = float(both.max() - both.min()) or 1.0
    grid = np.linspace(both.min() - 0.2 * span, both.max() + 0.2 * span, 400)
    fig, ax = new_figure(6.5, 4.0)
    _density(ax, stereotyped, grid, "stereotyped L(S)", "-")
    _density(ax, anti, grid, "anti-stereotyped L(S_p)", "--")
    ax.set_yscale("log")
    metrics = summary.metrics
    ax.set_xlabel(f"L ({LIKELIHOOD_AXIS.get(metrics.likelihood or '', 'sum of log-probabilities')}, {metrics.model_type} LM)")
    ax.set_ylabel("density (log scale)")
    ax.set_title(f"Valid triplets: JSD = {fmt(metrics.overall.jsd, 2)}")
    ax.legend(fontsize=8)
    return save_figure(fig, Path(out_dir) / FIGURE)


class LibraReport:
    def write(self, summary: LibraSummary, out_dir: Path) -> list[Path]:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        metrics = summary.metrics
        figure = likelihood_figure(summary, out_dir)
        sections = [
            header_section(summary, "LIBRA: local bias with a knowledge boundary"),
            model_section(summary),
            "## Overall\n\n"
            + f"Model type: **{metrics.model_type}**. Scores on 0–100; EiCAT = lms · (α·(1 − JSD) + (1 − α)·bbs), α = bbs. "
            + "iCAT here is the local one (on the triplets); the paper's iCAT column is StereoSet's.\n\n"
            + method_lines(metrics)
            + table(("", *HEADERS), [_row("all triplets", metrics.overall), *map(_theoretical, metrics.reference_rows)],
                    digits=2)
            + theoretical_legend(metrics)
            + libra_uncertainty(metrics.overall),
            stereoset_section(metrics),
            _breakdown("By category", metrics.by_category),
            _breakdown("By group", metrics.by_group),
            f"## Likelihood distributions\n\n![L(S) and L(S_p) of the valid triplets]({FIGURE})" if figure else "",
            _local_words(summary.details),
            strata_markdown(summary),
            notes_section(summary),
        ]
        paths = [write_markdown(out_dir, sections)]
        if figure:
            paths.append(figure)
        return paths
