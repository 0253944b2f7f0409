"""The detail views of comparison.html as tables a reader reads: a metric per row, a model per column.

A comparison's body holds each model's blocks side by side (``table3: {model: {acc_amb: {mean, std,
...}, intervals: {acc_amb: {low, high, level, ...}}}}``). Shown as they are stored, they become
rows named ``model / intervals`` and columns ``accuracy ambiguous: low``. Here instead:

- a value and its interval are one ``Measure``, shown in one cell, "0.341 [0.279, 0.393]", with what
  else the block holds (the spread over prompts, the interval's method and n) in small print under it;
- a block keyed by model becomes one table, a row per metric (in words) and a column per model;
- a breakdown of such blocks (``table3_by_label: {NC: {model: ...}}``, or ``{model: {age: ...}}``,
  turned round) becomes one table whose first column names the breakdown's row;
- anything else is shown as the run pages show it (``tree.render_block``).

Every number of the body stays on the page, each carried in a ``data-v`` attribute.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from culturebias.adapters.reports.html.drilldown import Drill, dimension_of, drill_cells
from culturebias.adapters.reports.html.measures import Measure, fold, measure_cell, num, plain
from culturebias.adapters.reports.html.page import cell, text
from culturebias.adapters.reports.html.tree import is_inline, render_block
from culturebias.adapters.reports.words import prose, title_words, words

def is_cell(value: object) -> bool:
    return isinstance(value, Measure) or is_inline(value)


def value_cell(value: Any) -> str:  # Any: a folded JSON value
    if isinstance(value, Measure):
        return measure_cell(value)
    if isinstance(value, str):
        return cell(prose(value))
    if isinstance(value, list):
        return cell([prose(v) if isinstance(v, str) else v for v in value])
    if isinstance(value, float) and math.isfinite(value):
        return f'<td class="num" data-v="{text(repr(value))}">{text(num(value, False))}</td>'
    return cell(value)


def leaves(value: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:  # Any: a folded block
    """(path, value) of every cell of a block, nested blocks' paths included."""
    if is_cell(value) or not isinstance(value, Mapping):
        return [(path or ("value",), value)]
    found: list[tuple[tuple[str, ...], Any]] = []  # Any: folded values
    for key, inner in value.items():
        found += leaves(inner, (*path, str(key)))
    return found


def tabular(value: Any) -> bool:  # Any: a folded block
    """Every value of the block fits in one cell (no list of records inside)."""
    return all(is_cell(v) for _, v in leaves(value))


def path_words(path: tuple[str, ...]) -> str:
    return ": ".join(words(p) for p in path)


def model_keyed(value: object, labels: Sequence[str]) -> bool:
    return isinstance(value, Mapping) and bool(value) and all(k in labels for k in value)


def turned(by_model: Mapping[str, Any], labels: Sequence[str]) -> Mapping[str, Mapping[str, Any]] | None:  # Any: folded blocks
    """``{model: {age: block}}`` as ``{age: {model: block}}`` where every model's value is a breakdown; else None."""
    inner = list(by_model.values())
    if not all(isinstance(v, Mapping) and v and all(isinstance(b, Mapping) for b in v.values()) for v in inner):
        return None
    out: dict[str, dict[str, Any]] = {}  # Any: folded blocks
    for model in labels:
        for key, block in by_model.get(model, {}).items():
            out.setdefault(str(key), {})[model] = block
    return out


def dimension(field_name: str) -> str:
    """``table3_by_label`` → "label", ``prompts`` → "prompt": what a breakdown's first column names."""
    for marker in ("by_", "per_"):
        if marker in field_name:
            return words(field_name.rsplit(marker, 1)[1])
    return words(dimension_of(field_name) or "breakdown")


def _items_row(drill: Drill | None, keys: Sequence[str], field_name: str, lead: list[str], width: int) -> str:
    """A row per model whose items are at hand: a button in that model's column opening its items (of the
    breakdown's row), the items' row right under it (so sorting keeps them together)."""
    if not drill:
        return ""
    rows = []
    for index, key in enumerate(keys):
        button, drilled = drill_cells(drill, key, field_name, width)
        if not drilled:
            continue
        cells = "".join(button if j == index else '<td data-v=""></td>' for j in range(len(keys)))
        head = "".join(f'<th scope="row">{text(c)}</th>' for c in lead[:-1])
        model = key.split(" / ")[0]
        rows.append(f'<tr class="items-row">{head}<th scope="row">{text(f"{lead[-1]} of {model}")}</th>{cells}</tr>{drilled}')
    return "".join(rows)


def metric_table(by_model: Mapping[str, Any], labels: Sequence[str], name: str, drill: Drill | None, field_name: str) -> str:  # Any: folded blocks
    """A row per metric, a column per model; '' where the blocks are not tables of metrics."""
    models = [m for m in labels if m in by_model]
    rows = _rows({m: by_model[m] for m in models}, name)
    head = "".join(f"<th>{text(h)}</th>" for h in ["metric", *models])
    body = "".join(
        f'<tr><th scope="row">{text(path_words(path))}</th>{"".join(value_cell(per.get(m)) for m in models)}</tr>'
        for path, per in rows
    )
    body += _items_row(drill, models, field_name, ["items"], len(models))
    return f'<table class="sortable metrics"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _rows(blocks: Mapping[str, Any], name: str) -> list[tuple[tuple[str, ...], dict[str, Any]]]:  # Any: folded blocks
    """(metric path, {model: value}) in the order the blocks name them."""
    rows: dict[tuple[str, ...], dict[str, Any]] = {}  # Any: folded values
    for model, block in blocks.items():
        for path, value in leaves(block):
            path = (name,) if path == ("value",) and name else path
            rows.setdefault(path, {})[model] = value
    return list(rows.items())


def breakdown_table(breakdown: Mapping[str, Mapping[str, Any]], labels: Sequence[str], drill: Drill | None, field_name: str) -> str:  # Any: folded blocks
    """One table for a breakdown of per-model blocks: its row, the metric, then a column per model."""
    models = [m for m in labels if any(m in per for per in breakdown.values())]
    head = "".join(f"<th>{text(h)}</th>" for h in [dimension(field_name), "metric", *models])
    body = []
    for key, per in breakdown.items():
        shown = prose(key)
        for path, values in _rows(per, ""):
            cells = "".join(value_cell(values.get(m)) for m in models)
            body.append(f'<tr><th scope="row">{text(shown)}</th><th scope="row">{text(path_words(path))}</th>{cells}</tr>')
        body.append(_items_row(drill, [f"{m} / {key}" for m in models], field_name, [shown, "items"], len(models) + 1))
    return f'<table class="sortable metrics"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def comparison_view(
    name: str,
    value: Any,  # Any: a view of a comparison's body (JSON)
    labels: Sequence[str],
    drill: Drill | None = None,
    level: int = 3,
    field_name: str | None = None,
) -> str:
    """One view of the comparison body as tables of metrics; the other shapes as the run pages show them."""
    return _view(name, fold(value), list(labels), drill, level, field_name or name, top=True)


def _view(name: str, value: Any, labels: list[str], drill: Drill | None, level: int, field_name: str, top: bool = False) -> str:  # Any: folded JSON
    if value is None or value == {} or value == []:
        return ""
    heading = "" if top or not name else f"<h{min(level, 6)}>{text(title_words(name))}</h{min(level, 6)}>"
    if model_keyed(value, labels) and not tabular(value):  # lists of records inside: a section per model
        parts = [_view(model, value[model], labels, drill, level + 1, field_name) for model in labels if model in value]
        return f"<section>{heading}{''.join(parts)}</section>"
    if model_keyed(value, labels):
        flipped = turned(value, labels)
        table = breakdown_table(flipped, labels, drill, field_name) if flipped else metric_table(value, labels, name, drill, field_name)
        return f"<section>{heading}{table}</section>"
    if isinstance(value, Mapping) and all(model_keyed(v, labels) for v in value.values()) and tabular(value):
        return f"<section>{heading}{breakdown_table(value, labels, drill, field_name)}</section>"
    if isinstance(value, Mapping) and any(isinstance(v, Mapping) for v in value.values()):
        cells = [(k, v) for k, v in value.items() if is_cell(v)]
        scalars = "".join(f'<tr><th scope="row">{text(words(k))}</th>{value_cell(v)}</tr>' for k, v in cells)
        parts = [f'<table class="kv"><tbody>{scalars}</tbody></table>'] if scalars else []
        parts += [_view(str(k), v, labels, drill, level + 1, _field(field_name, str(k))) for k, v in value.items() if not is_cell(v)]
        return f"<section>{heading}{''.join(parts)}</section>"
    if isinstance(value, str):
        return f"<section>{heading}<p>{text(prose(value))}</p></section>"
    return render_block("" if top else name, plain(value), drill, level, field_name)


def _field(outer: str, key: str) -> str:
    """The field whose rows a nested view breaks down: its own where it names one (``by_category``, ``prompts``),
    its parent's where that is a breakdown (``by_category`` → ``age``)."""
    return outer if outer.startswith(("by_", "per_")) and not key.startswith(("by_", "per_")) else key
