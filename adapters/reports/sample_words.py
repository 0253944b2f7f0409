"""A sampled run (``--sample N``) in words: one sentence for the first screen, the strata as a table further down.

The sentence names what was evaluated and how it was drawn ("A sampled run: 232 of 2,280 items,
stratified by category × label type × context condition (seed 0); ..."); the strata, one per row
with what was drawn from it, go in a table of their own (report.md) or a disclosure (report.html),
never inline. A summary of a plugin's later schema may carry the block as a plain mapping: both read.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from culturebias.adapters.reports.words import prose


def _field(block: Any, name: str) -> Any:  # Any: a SampleBlock or its JSON (a plugin's schema)
    return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)


def _count(value: Any) -> str:  # Any: a JSON value
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "?" if value is None else str(value)


def _strata(sample: Any) -> list[Any]:  # Any: SampleStratum objects or their JSON
    strata = _field(sample, "strata")
    return [s for s in strata or () if not isinstance(s, str)]


def cells_of(sample: Any) -> list[str]:  # Any: a SampleBlock or its JSON
    """The design cells the strata cross (``category``, ``label type``, ...), in words."""
    cells = _field(sample, "cells")
    if not cells:  # an older or plugin block that names its cells in ``strata``
        cells = [s for s in _field(sample, "strata") or () if isinstance(s, str)]
    return [prose(str(c)) for c in cells]


def sample_sentence(sample: Any) -> str:  # Any: a SampleBlock or its JSON
    """The one sentence a report opens with; it points to the strata table where there is one."""
    n, population, seed = (_field(sample, k) for k in ("n", "population", "seed"))
    method = _field(sample, "method")
    if method == "all":
        return (
            f"A run on all {_count(population)} items: --sample {_count(_field(sample, 'requested'))} "
            "is not smaller than the data, so nothing was left out."
        )
    cells = cells_of(sample)
    if method == "simple random" or not cells:
        unit = _field(sample, "unit") or "item"
        how = f", a simple random sample of {unit}s (the benchmark declares no strata)"
    else:
        how = f", stratified by {' × '.join(cells)}"
    listed = "; the strata are listed below" if len(_strata(sample)) > 1 else ""
    units, of_units = _field(sample, "units"), _field(sample, "units_in_population")
    drawn = f" ({_count(units)} of {_count(of_units)} {_field(sample, 'unit')}s)" if units is not None and of_units is not None else ""
    return (
        f"A sampled run: {_count(n)} of {_count(population)} items{drawn}{how} (seed {seed if seed is not None else '–'}); "
        f"not the whole data set{listed}."
    )


def strata_rows(sample: Any) -> tuple[list[str], list[list[object]]]:  # Any: a SampleBlock or its JSON
    """(column headings, rows): one row per stratum, its cells in words, then what was drawn from it."""
    strata = _strata(sample)
    cells = cells_of(sample)
    unit = str(_field(sample, "unit") or "unit")
    labels = [str(_field(s, "stratum") or "") for s in strata]
    split = bool(cells) and all(len(label.split(" × ")) == len(cells) for label in labels)
    heads = (cells if split else ["stratum"]) + [f"{unit}s drawn", f"{unit}s in population", "items drawn", "items in population"]
    rows: list[list[object]] = []
    for label, stratum in zip(labels, strata):
        parts = label.split(" × ") if split else [label]
        named = [prose(p).replace("+", " + ") for p in parts]
        rows.append([*named, *(_field(stratum, k) for k in ("units", "units_in_population", "items", "items_in_population"))])
    width = len(heads) - 4
    same = [j for j in range(width) if width > 1 and len(rows) > 1 and len({row[j] for row in rows}) == 1]
    keep = [j for j in range(len(heads)) if j not in same]  # a cell every stratum shares is said once, in the caption
    return [heads[j] for j in keep], [[row[j] for j in keep] for row in rows]


def shared_cells(sample: Any) -> list[str]:  # Any: a SampleBlock or its JSON
    """"context condition ambiguous + disambiguated": the design cells every stratum has alike (left out of the table)."""
    heads, _ = strata_rows(sample)
    cells = cells_of(sample)
    strata = _strata(sample)
    if not strata or not cells:
        return []
    first = str(_field(strata[0], "stratum") or "").split(" × ")
    return [f"{cell} {prose(first[j]).replace('+', ' + ')}" for j, cell in enumerate(cells) if cell not in heads and j < len(first)]


STRATA_CAPTION = (
    "Each stratum is one combination of the benchmark's design cells; whole {unit}s were drawn from it in proportion "
    "to its share of the items (at least one). The intervals resample the drawn {unit}s and ignore the strata, "
    "which makes them conservative (wider) for the whole data set."
)


def strata_caption(sample: Any) -> str:  # Any: a SampleBlock or its JSON
    shared = shared_cells(sample)
    alike = f" Every stratum has {' and '.join(shared)}." if shared else ""
    return STRATA_CAPTION.format(unit=_field(sample, "unit") or "unit") + alike


def strata_markdown(summary: Any) -> str:  # Any: a run summary of any benchmark
    """report.md's "Sampled strata" section; '' for a run that was not sampled (or has one stratum)."""
    sample = getattr(summary, "sample", None)
    if sample is None or len(_strata(sample)) < 2:
        return ""
    heads, rows = strata_rows(sample)
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join("---" for _ in heads) + "|"]
    lines += ["| " + " | ".join(_count(c) if not isinstance(c, str) else c for c in row) + " |" for row in rows]
    return "## Sampled strata\n\n" + strata_caption(sample) + "\n\n" + "\n".join(lines)


def strata_table_html(sample: Any) -> str:  # Any: a SampleBlock or its JSON
    heads, rows = strata_rows(sample)
    head = "".join(f"<th>{escape(h)}</th>" for h in heads)
    body = "".join(
        "<tr>" + "".join(
            f"<td>{escape(c)}</td>" if isinstance(c, str) else f'<td class="num" data-v="{escape(str(c))}">{escape(_count(c))}</td>'
            for c in row
        ) + "</tr>"
        for row in rows
    )
    return f'<table class="sortable strata"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def has_strata(summary: Any) -> bool:  # Any: a run summary of any benchmark
    sample = getattr(summary, "sample", None)
    return sample is not None and len(_strata(sample)) > 1

