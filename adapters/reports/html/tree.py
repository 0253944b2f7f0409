"""A typed block (its JSON) as HTML: key/value tables, one sortable table per breakdown, nested sections.

The shapes are read from the data, so every benchmark's summary and comparison renders without a
template of its own, and every number shown is one of the typed model's numbers:
- scalars of a block → one key/value table;
- a mapping or list of flat records (``by_category: {age: {...}, ...}``) → one table, a row per
  record; a mapping of such mappings is flattened to rows keyed ``outer / inner``;
- anything else → a subsection, recursively.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from culturebias.adapters.reports.html.drilldown import Drill, drill_cells, row_cap
from culturebias.adapters.reports.html.measures import Measure, measure_cell
from culturebias.adapters.reports.html.page import cell, text
from culturebias.adapters.reports.words import prose, title_words, words

ROW_CAP = 2000  # rows of one table; a longer one says how many it left out
MAX_COLUMNS = 40  # a wider record is shown as its own section


def is_scalar(value: object) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def is_inline(value: object) -> bool:
    """A value that fits in one cell: a scalar, a value with its interval, or a short list of scalars."""
    return is_scalar(value) or isinstance(value, Measure) or (isinstance(value, list) and len(value) <= 12 and all(is_scalar(v) for v in value))


def flat(value: Any) -> Mapping[str, Any] | None:  # Any: a block's JSON
    """A record with its small sub-records spread into ``outer.inner`` columns (``per_prompt.1``); None if not one."""
    if not isinstance(value, Mapping) or not value:
        return None
    out: dict[str, Any] = {}  # Any: JSON values
    for key, inner in value.items():
        if is_inline(inner):
            out[str(key)] = inner
        elif isinstance(inner, Mapping) and all(is_inline(v) for v in inner.values()):
            out.update({f"{key}.{k}": v for k, v in inner.items()})
        else:
            return None
    return out if 0 < len(out) <= MAX_COLUMNS else None


def records_of(value: Any) -> list[tuple[str, Mapping[str, Any]]] | None:  # Any: a block's JSON
    """``(row key, record)`` pairs when ``value`` is a breakdown table, else None."""
    if isinstance(value, Mapping) and value:
        rows = [(str(k), flat(v)) for k, v in value.items()]
        if all(r is not None for _, r in rows):
            return [(k, r) for k, r in rows if r is not None]
        if all(isinstance(v, Mapping) and v for v in value.values()):
            nested = [(f"{k} / {j}", flat(w)) for k, v in value.items() for j, w in v.items()]
            if all(r is not None for _, r in nested):
                return [(k, r) for k, r in nested if r is not None]
    if isinstance(value, list) and value:
        flats = [flat(v) for v in value]
        if all(r is not None for r in flats):
            return [(_row_name(r, i), r) for i, r in enumerate(flats) if r is not None]
    return None


def _row_name(record: Mapping[str, Any], index: int) -> str:  # Any: a JSON record
    for key in ("name", "label", "category", "group", "model", "key", "id"):
        if isinstance(record.get(key), str):
            return record[key]
    return str(index + 1)


def title_of(name: str) -> str:
    return title_words(name)


def shown(value: Any) -> Any:  # Any: JSON values
    """A value as the page shows it: an enum-like key (``out_of_choice``) in words, anything else as it is."""
    if isinstance(value, str):
        return prose(value)
    if isinstance(value, list):
        return [shown(v) for v in value]
    return value


def value_cell(value: Any) -> str:  # Any: JSON values, or a Measure
    return measure_cell(value) if isinstance(value, Measure) else cell(shown(value))


def kv_table(pairs: Sequence[tuple[str, Any]]) -> str:  # Any: JSON values
    rows = "".join(f"<tr><th>{text(title_of(k))}</th>{value_cell(v)}</tr>" for k, v in pairs)
    return f'<table class="kv"><tbody>{rows}</tbody></table>'


def measures_table(pairs: Sequence[tuple[str, Measure]]) -> str:
    """A block's metrics, a row each, value and interval in one cell (sortable by the value)."""
    prompts = [dict(v.extra).get("n_prompts") for _, v in pairs]
    counted = any(n is not None for n in prompts)  # a mean over prompts: over how many
    rows = "".join(
        f'<tr><th scope="row">{text(title_of(k))}</th>{measure_cell(v)}{cell(n) if counted else ""}</tr>'
        for (k, v), n in zip(pairs, prompts)
    )
    head = "<th>metric</th><th>value [interval]</th>" + ("<th>prompts</th>" if counted else "")
    return f'<table class="sortable metrics"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def records_table(field: str, rows: list[tuple[str, Mapping[str, Any]]], drill: Drill | None) -> str:  # Any: JSON records
    columns: list[str] = []
    for _, record in rows:
        for key in record:
            if key not in columns:
                columns.append(key)
    head = "".join(f"<th>{text(words(c))}</th>" for c in ["", *columns])
    items_head = "<th>items</th>" if drill else ""
    body = []
    cap = row_cap(drill, len(rows)) if drill else None
    for key, record in rows[:ROW_CAP]:
        items_cell, drill_row = drill_cells(drill, key, field, len(columns) + 1, cap)
        cells = "".join(value_cell(record.get(c)) for c in columns)
        body.append(f'<tr><th scope="row">{text(prose(key))}</th>{cells}{items_cell}</tr>{drill_row}')
    more = f'<p class="muted">{len(rows)} rows; the first {ROW_CAP} are shown.</p>' if len(rows) > ROW_CAP else ""
    return (
        f'<table class="sortable" data-field="{text(field)}"><thead><tr>{head}{items_head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>{more}"
    )


def homogeneous(value: object) -> bool:
    """A breakdown whose rows are deep blocks of one shape (``by_label: {ST: {acc_amb: {...}, counts: {...}}}``)."""
    if not isinstance(value, Mapping) or len(value) == 0:
        return False
    if not all(isinstance(v, Mapping) and v for v in value.values()):
        return False
    shapes = {tuple(v) for v in value.values()}
    return len(shapes) == 1


def pivot(name: str, value: Mapping[str, Mapping[str, Any]], drill: Drill | None, level: int, field: str) -> list[str]:  # Any: a block's JSON
    """One table per part of the rows' blocks, each row still keyed (and drilled) by the breakdown's key."""
    keys = list(next(iter(value.values())))
    inline = [k for k in keys if all(is_inline(v[k]) for v in value.values())]
    parts = []
    if inline:
        parts.append(records_table(field, [(str(r), {k: v[k] for k in inline}) for r, v in value.items()], drill))
    for key in keys:
        if key not in inline:
            parts.append(render_block(f"{name}: {key}", {r: v[key] for r, v in value.items()}, drill, level + 1, field))
    return parts


def render_block(name: str, value: Any, drill: Drill | None = None, level: int = 2, field: str | None = None) -> str:  # Any: a block's JSON
    """One section for ``value`` under the heading ``name``; empty for an empty value.

    ``field``: the summary field the rows break down (``by_category``), kept through nested sections
    so that their rows drill down along the same dimension.
    """
    field = field or name
    tag = f"h{min(level, 6)}"
    heading = f"<{tag}>{text(title_of(name))}</{tag}>" if name else ""
    if value is None or value == {} or value == []:
        return ""
    rows = records_of(value)
    if rows is not None:
        return f"<section>{heading}{records_table(field, rows, drill)}</section>"
    if homogeneous(value):
        return f"<section>{heading}{''.join(pivot(name, value, drill, level, field))}</section>"
    if isinstance(value, Mapping):
        scalars = [(str(k), v) for k, v in value.items() if is_inline(v) and not isinstance(v, Measure)]
        measures = [(str(k), v) for k, v in value.items() if isinstance(v, Measure)]
        tables = [(str(k), r) for k, v in value.items() if not is_inline(v) and (r := flat(v)) is not None]
        flat_keys = {k for k, _ in tables}
        parts = [kv_table(scalars)] if scalars else []
        parts += [measures_table(measures)] if measures else []
        if len(tables) > 1:  # sibling blocks of numbers (acc_amb, acc_dis, ...) read best as one table
            parts.append(records_table(name, tables, drill))
        else:
            flat_keys = set()
        parts += [
            render_block(str(k), v, drill, level + 1)
            for k, v in value.items()
            if not is_inline(v) and str(k) not in flat_keys
        ]
        return f"<section>{heading}{''.join(parts)}</section>"
    if isinstance(value, list):
        if all(is_scalar(v) for v in value):
            return f"<section>{heading}<p>{text(', '.join('–' if v is None else str(shown(v)) for v in value))}</p></section>"
        parts = [render_block(f"{name} {i + 1}", v, drill, level + 1) for i, v in enumerate(value[:ROW_CAP])]
        return f"<section>{heading}{''.join(parts)}</section>"
    return f"<section>{heading}{kv_table([(name, value)])}</section>"
