"""The paper's Table 4 per-category counts of CBBQ, against the data as loaded (a table, never a failure).

``PAPER_TABLE4`` is Table 4's "#Generated instances" column (Huang & Xiong,
CBBQ, LREC-COLING 2024, Table 4; the same numbers are in the authors'
README.md at github.com/YFHuangxxxx/CBBQ @ 95eaf2e). The released files
differ from it (gender 3,372 rows vs 3,078; region 4,352 vs 3,660; disease
1,172 vs 1,216): the data is what runs, the difference is reported.
"""

from __future__ import annotations

from typing import Mapping

from pydantic import Field

from culturebias.domain.summary import Block, Count

TABLE4_SOURCE = "Huang & Xiong, CBBQ (LREC-COLING 2024), Table 4, #Generated instances"
# Category folder name (the authors' data layout) → Table 4's count.
PAPER_TABLE4: dict[str, int] = {
    "age": 14800,
    "disability": 3076,
    "disease": 1216,
    "educational_qualification": 2756,
    "ethnicity": 2468,
    "gender": 3078,
    "household_registration": 17400,
    "nationality": 24266,
    "physical_appearance": 4350,
    "race": 16494,
    "region": 3660,
    "religion": 3984,
    "SES": 7920,
    "sexual_orientation": 1120,
}
PAPER_TOTAL = 106588


class Table4Row(Block):
    """One category's instances: in the data as loaded, in the paper's Table 4, and the difference."""

    category: str = Field(description="the category (the data's folder name)")
    in_data: Count = Field(description="instances in the data (ambiguous + disambiguated rows, skipped rows included)")
    paper: int | None = Field(description="Table 4's #Generated instances; null for a category Table 4 does not list")
    difference: int | None = Field(description="in_data - paper; null where the paper has no count")


def table4_rows(in_data: Mapping[str, int]) -> list[Table4Row]:
    """Every category of the data, in order, beside Table 4's count."""
    rows = []
    for category in sorted(in_data):
        paper = PAPER_TABLE4.get(category)
        n = in_data[category]
        rows.append(Table4Row(category=category, in_data=n, paper=paper, difference=None if paper is None else n - paper))
    return rows


def table4_lines(rows: list[Table4Row]) -> list[str]:
    """The comparison as text lines (``culturebias cbbq counts``)."""
    lines = [f"{'category':<28}{'data':>8}{'Table 4':>9}{'diff':>8}"]
    for r in rows:
        paper = "-" if r.paper is None else str(r.paper)
        diff = "-" if r.difference is None else f"{r.difference:+d}"
        lines.append(f"{r.category:<28}{r.in_data:>8}{paper:>9}{diff:>8}")
    lines.append(f"source of Table 4: {TABLE4_SOURCE}")
    return lines
