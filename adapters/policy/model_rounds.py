"""``ports.sequential.RoundRunner`` over the configured model: the rounds of ``check --sequential``.

Each round is an evaluation on ``protocol.<benchmark>.sample = N`` with the sequence's seed,
resumed where it stopped, in its own folder; every round's run is in one SQLite store,
``<out>/results.sqlite``, whose runs share their model answers (``application/shared_answers.py``),
and one model load (``shared_model``) serves every round. The settings, the evaluation and the
summary reader are given (``bootstrap/sequential.py`` composes them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from culturebias.application.audit import stored_items
from culturebias.application.sequential_check import finished_round
from culturebias.application.shared_answers import SharedAnswers
from culturebias.domain.summary import RunSummary

STORE_FILE = "results.sqlite"


class ModelRounds:
    """``ports.sequential.RoundRunner``: ``settings_for(extra)`` is the run's settings with ``extra`` ``--set``
    assignments laid over them; ``evaluate`` is the API's ``run_evaluation``."""

    def __init__(
        self,
        out: Path,
        settings_for: Callable[[list[str]], Any],  # Any: bootstrap's Settings
        evaluate: Callable[..., Any],  # Any: run_evaluation's keyword arguments and result
        load_summary: Callable[[Path], RunSummary],
        shared_model: object,
    ):
        self.out = out
        self._settings_for = settings_for
        self._evaluate = evaluate
        self._load_summary = load_summary
        self._store: Any = None  # Any: the SQLite result store, opened with the first round
        self.shared = shared_model

    def settings(self, benchmark: str | None = None, sample: int | None = None, seed: int | None = None) -> Any:  # Any: Settings
        extra = [] if benchmark is None else [f"protocol.{benchmark}.sample={sample}", f"protocol.{benchmark}.sample_seed={seed}"]
        return self._settings_for(extra)

    def store(self) -> Any:  # Any: the SQLite result store
        if self._store is None:
            from culturebias.adapters.stores.sqlite_store import SQLiteResultStore

            self.out.mkdir(parents=True, exist_ok=True)
            self._store = SQLiteResultStore(self.out / STORE_FILE)
        return self._store

    def run_round(self, benchmark: str, sample: int, seed: int, folder: Path) -> RunSummary:
        finished = finished_round(folder, sample, seed, self._load_summary)
        if finished is not None:
            return finished
        settings = self.settings(benchmark, sample, seed)
        # a folder a kill left behind resumes its own run
        result = self._evaluate(benchmark, settings, out=folder, resume=folder.exists(), progress_bar=True,
                                store=SharedAnswers(self.store()), shared_model=self.shared)
        return result.summary  # type: ignore[no-any-return]  # run_evaluation's RunResult

    def records(self, summary: RunSummary) -> Sequence[Any]:  # Any: ItemRecords
        return stored_items(self.store(), summary.run_id)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
