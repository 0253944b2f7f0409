"""The runs a store holds: listed, one left ``running`` marked ``interrupted``, and as leaderboard rows.

Stores are opened through the ``RunArchive`` and only read (apart from marking a run); a store the
caller passed as an object stays open, one opened here is closed. Reading never creates a store.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from culturebias.application.run_lease import DEFAULT_LEASE_SECONDS, LeaseRule, mark_left_run_interrupted
from culturebias.domain.errors import CultureBiasError
from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.leaderboard import LeaderboardRow, leaderboard_row
from culturebias.domain.runs import RunManifest
from culturebias.domain.summary import RunSummary
from culturebias.ports.results import ResultStore
from culturebias.ports.run_archive import RunArchive, StoreRef

# A benchmark's declared headline metrics (none for a benchmark this installation does not know).
HeadlinesOf = Callable[[str], tuple[HeadlineMetric, ...]]


@contextlib.contextmanager
def _opened(archive: RunArchive, store: StoreRef) -> Iterator[ResultStore]:
    opened = archive.open_store(store, must_exist=True)
    try:
        yield opened
    finally:
        if opened is not store:
            opened.close()


def list_runs(archive: RunArchive, store: StoreRef, benchmark: str | None = None) -> list[RunManifest]:
    """Every run the store holds (oldest first), with status and, for a failed run, why it failed."""
    with _opened(archive, store) as opened:
        return opened.find_runs(benchmark)


def mark_interrupted(
    archive: RunArchive, store: StoreRef, run_id: str, lease_seconds: float = DEFAULT_LEASE_SECONDS
) -> RunManifest:
    """Mark a run that a process which is gone left ``running`` as ``interrupted`` (``RunInUseError`` while a live one writes it)."""
    with _opened(archive, store) as opened:
        return mark_left_run_interrupted(opened, run_id, LeaseRule(stale_seconds=lease_seconds))


def leaderboard(
    archive: RunArchive,
    store: StoreRef,
    headlines_of: HeadlinesOf,
    benchmark: str | None = None,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
) -> list[LeaderboardRow]:
    """The store's runs as leaderboard rows (oldest first): a finished run with its headline metrics,
    an unfinished one with the process writing it and whether it is alive (``lease_seconds``)."""
    rule = LeaseRule(stale_seconds=lease_seconds)
    with _opened(archive, store) as opened:
        rows = []
        headlines: dict[str, tuple[HeadlineMetric, ...]] = {}  # per benchmark, looked up once for all its runs
        for manifest in opened.find_runs(benchmark):
            if manifest.benchmark not in headlines:
                headlines[manifest.benchmark] = headlines_of(manifest.benchmark)
            payload = opened.load_summary(manifest.run_id) if manifest.status == "finished" else None
            summary: RunSummary | None
            try:
                summary = archive.summary_from_dict(payload, where=f"run {manifest.run_id}") if payload is not None else None
            except CultureBiasError:  # a summary this version cannot read: listed without its numbers
                summary = None
            rows.append(leaderboard_row(manifest, summary, headlines[manifest.benchmark], rule.is_live(manifest.lease)))
        return rows
