"""The stored item records of a BBQ-style run (KoBBQ, CBBQ) that its per-template values are rebuilt from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from culturebias.domain.policy.paired import NoUnitValues

NO_RECORDS = "the run's item records are not at hand (no result store beside its summary.json)"


def bbq_records(records: Sequence[Any] | None, breakdown: str | None, fields: dict[str, str]) -> list[Any]:  # Any: ItemRecords or their JSON
    """The first repeat's records of a BBQ-style run, those of one breakdown only where one is named."""
    if records is None:
        raise NoUnitValues(NO_RECORDS)
    kind, _, key = (breakdown or "").partition(":")
    if breakdown is not None and kind not in fields:
        raise NoUnitValues(f"per-template values are kept by {', '.join(fields)}, not by {kind!r}")
    chosen = []
    for record in records:
        meta = record.metadata
        if meta.get("repeat", 0) not in (0, None) or record.outcome is None:
            continue
        if breakdown is not None and str(meta.get(fields[kind])) != key:
            continue
        chosen.append(record)
    if not chosen:
        raise NoUnitValues(f"the run's item records hold no answer{' of ' + breakdown if breakdown else ''}")
    return chosen
