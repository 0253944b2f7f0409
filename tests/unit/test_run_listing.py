"""``application.run_listing`` over a store the caller owns and over one the archive opens (and so closes)."""

from __future__ import annotations

import pytest

from culturebias.adapters.stores.memory_store import MemoryResultStore
from culturebias.adapters.stores.summary_files import SummaryFiles
from culturebias.application import run_listing
from culturebias.domain.errors import ConfigError, DataError


class Closing(MemoryResultStore):
    closed = 0

    def close(self) -> None:
        Closing.closed += 1
        super().close()


def archive(stores: dict[str, MemoryResultStore]) -> SummaryFiles:
    def opener(store, must_exist):
        if isinstance(store, MemoryResultStore):
            return store
        if store not in stores:
            raise ConfigError(f"no result store at {store}")
        return stores[store]

    def model(benchmark):
        raise DataError(f"unknown benchmark {benchmark}")

    return SummaryFiles(model, opener)


def test_an_empty_store_lists_no_runs_and_a_store_it_opened_is_closed():
    named = Closing()
    found = archive({"runs.sqlite": named})
    Closing.closed = 0
    assert run_listing.list_runs(found, "runs.sqlite") == []
    assert run_listing.leaderboard(found, "runs.sqlite", lambda benchmark: ()) == []
    assert Closing.closed == 2


def test_a_store_the_caller_passed_stays_open():
    given = Closing()
    Closing.closed = 0
    assert run_listing.list_runs(archive({}), given) == []
    assert Closing.closed == 0


def test_a_store_that_is_not_there_is_an_error_not_an_empty_listing():
    with pytest.raises(ConfigError, match="no result store at missing"):
        run_listing.list_runs(archive({}), "missing")
