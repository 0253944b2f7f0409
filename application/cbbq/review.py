"""The manual review of CBBQ's explanations (paper §5.7, Fig. 7): export the explained answers, import the verdicts.

``review_rows`` picks, from a run's item records, the answers of an explaining
condition (metadata ``explanation``; ``domain/cbbq/explanations.py``);
``export_review`` writes them through ``ReviewFiles`` with an empty
``verdict`` column. ``import_review`` reads the reviewers' file back, checks
every row against the run (unknown item, duplicate, verdict out of range:
``DataError`` naming file, row and field) and returns each verdict's share;
with ``out`` it also writes those shares as JSON, only once every row passed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from culturebias.domain.audit import ItemRecord
from culturebias.domain.cbbq.explanations import REVIEW_COLUMNS, VERDICTS, ReviewRow, VerdictShares, checked_verdicts, verdict_shares
from culturebias.domain.errors import ConfigError
from culturebias.ports.review_files import ReviewFiles


def review_rows(records: Sequence[ItemRecord]) -> list[ReviewRow]:
    """One row per explained answer of the run, in recorded order (a repeated run: its first repeat's)."""
    rows = []
    seen: set[str] = set()
    for record in records:
        explanation = record.metadata.get("explanation")
        if record.benchmark != "cbbq" or explanation is None or record.item_id in seen:
            continue
        seen.add(record.item_id)
        rows.append(
            ReviewRow(
                item_id=record.item_id,
                category=str(record.metadata.get("category") or ""),
                question=str(record.metadata.get("question") or ""),
                answer=record.parsed if record.parsed is not None else "(out of choice)",
                explanation=str(explanation),
            )
        )
    return rows


def _require_explained(rows: list[ReviewRow]) -> None:
    if not rows:
        raise ConfigError(
            "the run has no explained answers: run CBBQ with --set protocol.condition=q_explain "
            "(and protocol.mode=generate) to get answers with their explanations"
        )


def export_review(records: Sequence[ItemRecord], out: Path, files: ReviewFiles) -> int:
    """Write the review file (``REVIEW_COLUMNS``, ``verdict`` empty); returns the rows written."""
    rows = review_rows(records)
    _require_explained(rows)
    return files.write(out, REVIEW_COLUMNS, [r.cells() for r in rows])


def import_review(
    records: Sequence[ItemRecord],
    review: Path,
    files: ReviewFiles,
    out: Path | None = None,
    verdicts: Sequence[str] = VERDICTS,
) -> VerdictShares:
    """The verdicts' shares (Fig. 7) of the reviewers' file ``review``; nothing is written unless every row passed."""
    rows = review_rows(records)
    _require_explained(rows)
    known = {r.item_id: r.category for r in rows}
    shares = verdict_shares(checked_verdicts(files.read(review), known, str(review), verdicts), len(rows), verdicts)
    if out is not None:
        files.write_json(out, shares.as_dict())
    return shares


def shares_lines(shares: VerdictShares) -> list[str]:
    """The shares as text lines: overall, then per category."""
    lines = [f"reviewed {shares.reviewed} of {shares.explained} explained answer(s)"]
    lines.append("verdict".ljust(16) + "share".rjust(8) + "n".rjust(7))
    for name in shares.verdicts:
        share = shares.overall.get(name)
        lines.append(name.ljust(16) + ("-" if share is None else f"{share:.1%}").rjust(8) + str(shares.counts[name]).rjust(7))
    for category, by in shares.by_category.items():
        cells = ", ".join(f"{name} {by[name]:.1%}" for name in shares.verdicts)
        lines.append(f"{category} (n={shares.reviewed_by_category[category]}): {cells}")
    return lines
