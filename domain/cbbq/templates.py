"""CBBQ template expansion: ``templates_generate_{neg,nonneg}.csv`` rows to instances.

A template's context has ``{{NAME1}}``/``{{NAME2}}`` slots and the columns
NAME1 and NAME2 hold bracketed name lists (``[男生]``, ``[北京人, 上海人]``).
Each pair of the Cartesian product NAME1 × NAME2 yields the instance with the
names in template order and, where the two names are people of the two groups,
the one with them mentioned the other way round. ``ans0``/``ans1`` always take
the NAME1/NAME2 name (or are fixed texts), whatever the order of mention, and
``label`` is copied.

How "the other way round" is written differs by context condition, as in the
released instance files:

- ambiguous contexts: both names are swapped everywhere (``full``);
- disambiguated contexts: only the first mention of each is swapped
  (``first_mention``), so the disambiguating sentence still points at the
  answer the label names (swapping it too would contradict the label);
- templates whose answers hold no name slot (disease: "传染病患者" against
  "非传染病患者", with NAME2 a companion such as 朋友) get one order only.

With these rules the expansion reproduces the four released categories'
instance files row for row (``example_id`` numbers neg templates first, then
non_neg, from 1).
"""

from __future__ import annotations

import re
from typing import Iterator, Literal, Mapping, Sequence

from culturebias.domain.errors import DataError

SwapRule = Literal["full", "first_mention", "none"]
NAME1, NAME2 = "{{NAME1}}", "{{NAME2}}"
INSTANCE_COLUMNS = (
    "example_id",
    "question_index",
    "question_polarity",
    "context_condition",
    "category",
    "subcategory",
    "bias_targeted_groups",
    "source",
    "context",
    "question",
    "ans0",
    "ans1",
    "ans2",
    "label",
)
TEMPLATE_COLUMNS = ("question_polarity", "context", "NAME1", "NAME2", "question", "ans0", "ans1", "ans2", "label")
_SEPARATORS = re.compile(r"[,，、]")


def parse_names(cell: str, row: int | None = None, column: str | None = None) -> tuple[str, ...]:
    """``[a, b]`` (ASCII or full-width commas, stray spaces) → ``("a", "b")``."""
    text = (cell or "").strip()
    if not (text.startswith("[") and text.endswith("]")):
        raise DataError(f"expected a bracketed name list, got {cell!r}", row=row, field=column)
    names = tuple(name.strip() for name in _SEPARATORS.split(text[1:-1]) if name.strip())
    if not names:
        raise DataError("empty name list", row=row, field=column)
    return names


def has_name_slots(row: Mapping[str, str]) -> bool:
    return NAME1 in row["ans0"] or NAME2 in row["ans1"]


def _fill(context: str, first: str, second: str) -> str:
    return context.replace(NAME1, first).replace(NAME2, second)


def _swap_first_mentions(context: str, name1: str, name2: str) -> str:
    marked = context.replace(NAME1, "\0", 1).replace(NAME2, "\1", 1)
    return _fill(marked, name1, name2).replace("\0", name2).replace("\1", name1)


def contexts(row: Mapping[str, str], name1: str, name2: str, swap: SwapRule) -> list[str]:
    """The instance contexts of one name pair (one or two, see the module doc)."""
    first = _fill(row["context"], name1, name2)
    if swap == "none" or not has_name_slots(row):
        return [first]
    if swap == "full":
        return [first, _fill(row["context"], name2, name1)]
    return [first, _swap_first_mentions(row["context"], name1, name2)]


def default_swap(condition: str) -> SwapRule:
    return "full" if condition == "ambiguous" else "first_mention"


def expand_template(row: Mapping[str, str], swap: SwapRule, row_number: int | None = None) -> Iterator[dict[str, str]]:
    missing = [c for c in TEMPLATE_COLUMNS if c not in row]
    if missing:
        raise DataError(f"missing template column(s) {missing}", row=row_number)
    names1 = parse_names(row["NAME1"], row_number, "NAME1")
    names2 = parse_names(row["NAME2"], row_number, "NAME2")
    for name1 in names1:
        for name2 in names2:
            ans0 = row["ans0"].replace(NAME1, name1)
            ans1 = row["ans1"].replace(NAME2, name2)
            for context in contexts(row, name1, name2, swap):
                yield {
                    "question_index": row.get("question_index", ""),
                    "question_polarity": row["question_polarity"],
                    "context_condition": row.get("context_condition", ""),
                    "category": row.get("category", ""),
                    "subcategory": row.get("subcategory", ""),
                    "bias_targeted_groups": row.get("bias_targeted_groups", ""),
                    "source": row.get("source", ""),
                    "context": context,
                    "question": row["question"],
                    "ans0": ans0,
                    "ans1": ans1,
                    "ans2": row["ans2"],
                    "label": row["label"],
                }


def expand_condition(
    neg_rows: Sequence[Mapping[str, str]],
    nonneg_rows: Sequence[Mapping[str, str]],
    condition: str,
    swap: SwapRule | None = None,
) -> list[dict[str, str]]:
    """Instances of one category and context condition, numbered like the released files."""
    rule = swap or default_swap(condition)
    out: list[dict[str, str]] = []
    for rows in (neg_rows, nonneg_rows):
        for index, row in enumerate(rows):
            out.extend(expand_template(row, rule, row_number=index + 2))
    for number, instance in enumerate(out, start=1):
        instance["example_id"] = str(number)
    return [{column: instance[column] for column in INSTANCE_COLUMNS} for instance in out]
