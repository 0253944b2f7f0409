"""Item drill-down: which audit records lie behind a table row, and how a page embeds them.

A row is keyed like ``age``, or ``age / acc_amb`` and ``model / age`` for nested breakdowns. Each
part of the key that is one of the items' values (a metadata value, an item id, the run an item
came from) narrows the items; a part no item has (a metric name) is skipped. Where the table names
its dimension (``by_category`` → ``category``) and the items carry that metadata key, the part is
matched on that key only, so a category named like a prompt id does not pick up the prompt's items.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from culturebias.adapters.reports.html.page import text

CAP = 50  # items embedded per row; the row says how many there are
# A table of many rows (KoBBQ's hundreds of templates) embeds fewer per row, so a page stays a few MB.
TABLE_BUDGET = 2500
MIN_CAP = 10
TEXT_CAP = 2000  # characters of one text field shown in full
HIDDEN_FIELDS = ("benchmark", "metadata")


def as_record(item: Any) -> dict[str, Any]:  # Any: an ItemRecord or its JSON
    """An audit record (pydantic model or mapping) as its JSON object."""
    if hasattr(item, "model_dump"):
        return item.model_dump(mode="json")
    return dict(item)


def _values(value: object) -> Iterable[str]:
    if isinstance(value, (list, tuple)):
        for element in value:
            yield from _values(element)
    elif value is not None and not isinstance(value, (dict, bool)):
        yield str(value)


def dimension_of(field: str) -> str | None:
    """``by_category`` → ``category``, ``per_group`` → ``group``, ``categories`` → ``category``."""
    name = field
    for prefix in ("by_", "per_"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    if name.endswith("ies"):
        return name[:-3] + "y"
    if name.endswith("s") and not name.endswith("ss"):
        return name[:-1]
    return name or None


class Drill:
    """The items of a run (or of the runs of a comparison) and the rows they belong to."""

    def __init__(self, items: Sequence[Any], cap: int = CAP, known: Iterable[str] = ()):  # Any: ItemRecords or their JSON
        """``known``: values that name a dimension even where no item has them (a run that kept no items)."""
        self.records = [as_record(item) for item in items]
        self.cap = cap
        self._any: dict[str, set[int]] = defaultdict(set)
        self._keyed: dict[tuple[str, str], set[int]] = defaultdict(set)
        self._keys: set[str] = set()
        for index, record in enumerate(self.records):
            for value in _values(record.get("item_id")):
                self._any[value].add(index)
            if record.get("run") is not None:
                self._any[str(record["run"])].add(index)
            metadata = record.get("metadata") or {}
            for key, value in metadata.items():
                self._keys.add(key)
                for part in _values(value):
                    self._any[part].add(index)
                    self._keyed[(key, part)].add(index)
        for value in known:
            self._any.setdefault(str(value), set())
        self._counter = 0
        self.embedded: list[dict[str, Any]] = []  # the records rows name, each once; Any: JSON records
        self._position: dict[int, int] = {}

    def __bool__(self) -> bool:
        return bool(self.records)

    def matching(self, row_key: str, field: str | None = None) -> list[dict[str, Any]]:  # Any: JSON records
        return [self.records[i] for i in self.matching_indices(row_key, field)]

    def matching_indices(self, row_key: str, field: str | None = None) -> list[int]:
        """The items behind a row: each part of its key that names a value narrows them; a part no item
        has (a metric name such as ``acc_amb`` in ``age / acc_amb``) is not a dimension and is skipped."""
        dimension = dimension_of(field) if field else None
        sets = []
        for part in (p for p in str(row_key).split(" / ") if p):
            if dimension in self._keys and (dimension, part) in self._keyed:
                sets.append(self._keyed[(dimension, part)])
            elif part in self._any:
                sets.append(self._any[part])
        return sorted(set.intersection(*sets)) if sets else []

    def embed(self, index: int) -> int:
        """The record's place in the page's item data, adding it there on first use."""
        if index not in self._position:
            self._position[index] = len(self.embedded)
            self.embedded.append(self.records[index])
        return self._position[index]

    def next_id(self) -> str:
        self._counter += 1
        return f"drill-{self._counter}"


def _shown(value: object) -> str:
    if isinstance(value, (dict, list)) and not value:
        return "–"
    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False)
    value = "–" if value is None else str(value)
    if len(value) > TEXT_CAP:
        return f"{value[:TEXT_CAP]}… ({len(value)} characters)"
    return value


def items_table(records: Sequence[Mapping[str, Any]], total: int) -> str:  # Any: JSON records
    """The first records as a sortable table; says how many there are in all."""
    columns: list[str] = []
    for record in records:
        for key in record:
            if key not in HIDDEN_FIELDS and key not in columns:
                columns.append(key)
    head = "".join(f"<th>{text(c)}</th>" for c in [*columns, "metadata"])
    rows = []
    for record in records:
        cells = "".join(f"<td>{text(_shown(record.get(c)))}</td>" for c in columns)
        metadata = "\n".join(f"{k}: {_shown(v)}" for k, v in (record.get("metadata") or {}).items())
        rows.append(f"<tr>{cells}<td>{text(metadata or '–')}</td></tr>")
    shown = f"showing the first {len(records)} of {total} items" if total > len(records) else f"all {total} items"
    return (
        f'<p class="muted">{shown}</p>'
        f'<table class="sortable items"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def row_cap(drill: Drill, rows: int) -> int:
    """Items embedded per row of a table of ``rows`` rows: ``cap``, less in a long table (at least ``MIN_CAP``)."""
    return max(MIN_CAP, min(drill.cap, TABLE_BUDGET // max(1, rows)))


def drill_cells(drill: Drill | None, row_key: str, field: str | None, width: int, cap: int | None = None) -> tuple[str, str]:
    """The row's "items" cell (a toggle button) and the hidden row it opens; empty without items.

    The row names its first ``cap`` items by their place in the page's item data; the page's script
    builds their table when the row is first opened, so an item shared by many rows is embedded once.
    """
    if not drill:
        return "", ""
    found = drill.matching_indices(row_key, field)
    if not found:
        return '<td data-v="0">–</td>', ""
    ident = drill.next_id()
    shown = [drill.embed(i) for i in found[: cap or drill.cap]]
    note = f"showing the first {len(shown)} of {len(found)} items" if len(found) > len(shown) else f"all {len(found)} items"
    button = (
        f'<td data-v="{len(found)}"><button class="dd" type="button" aria-expanded="false" '
        f'aria-controls="{ident}">{len(found)} items</button></td>'
    )
    row = (
        f'<tr class="drill" id="{ident}" hidden><td colspan="{width + 1}">'
        f'<p class="muted">{note}</p><div class="items-slot" data-items="{text(json.dumps(shown))}"></div></td></tr>'
    )
    return button, row


def items_data(drill: Drill | None) -> str:
    """The embedded records the drill-down rows name, as JSON that cannot close its script element."""
    if not drill:
        return ""
    payload = json.dumps(drill.embedded, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="items-data">{payload}</script>'
