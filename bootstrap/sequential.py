"""Wiring of ``culturebias check POLICY --sequential --model MODEL --out DIR``: the configured model, run in rounds.

Each round is ``run_evaluation`` on ``protocol.<benchmark>.sample = N`` with the
sequence's seed (``run.seed``), resumed where it stopped, in ``DIR/round-<k>/<benchmark>``;
every round's run is in one SQLite store, ``DIR/results.sqlite``, whose runs share
their model answers (``application/shared_answers.py``), and one model load serves
every round. Bad input (a policy ``--sequential`` cannot decide, bad settings)
raises ``PolicyError`` before the store or any folder is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from culturebias.application.audit import stored_items
from culturebias.application.sequential_check import (
    SequentialRequest,
    finished_round,
    refuse_undecidable,
    sequential_check,
)
from culturebias.application.shared_answers import SharedAnswers
from culturebias.application.out_folder import write_text_atomically
from culturebias.bootstrap.check import PolicyRef, RegistryCatalog, load_policy, write_verdict
from culturebias.domain.errors import ConfigError, PolicyError
from culturebias.domain.policy.verdict import InconclusiveAs, PolicyVerdict
from culturebias.domain.stratified import SampleOptions
from culturebias.domain.summary import RunSummary, run_limit

STORE_FILE = "results.sqlite"
VERDICT_FILE = "verdict.json"


class ModelRounds:
    """``ports.sequential.RoundRunner`` over the configured model (settings from ``config`` and ``assignments``)."""

    def __init__(self, out: Path, config: str | None, assignments: Sequence[str]):
        self.out = out
        self.config = config
        self.assignments = list(assignments)
        self._store: Any = None  # Any: the SQLite result store, opened with the first round
        from culturebias.bootstrap.container import SharedModel

        self.shared = SharedModel()

    def settings(self, benchmark: str | None = None, sample: int | None = None, seed: int | None = None) -> Any:  # Any: Settings
        from culturebias.bootstrap.settings import load_settings

        extra = [] if benchmark is None else [f"protocol.{benchmark}.sample={sample}", f"protocol.{benchmark}.sample_seed={seed}"]
        return load_settings(self.config, [*self.assignments, *extra])

    def store(self) -> Any:  # Any: the SQLite result store
        if self._store is None:
            from culturebias.adapters.stores.sqlite_store import SQLiteResultStore

            self.out.mkdir(parents=True, exist_ok=True)
            self._store = SQLiteResultStore(self.out / STORE_FILE)
        return self._store

    def run_round(self, benchmark: str, sample: int, seed: int, folder: Path) -> RunSummary:
        from culturebias.bootstrap.api import load_summary, run_evaluation

        finished = finished_round(folder, sample, seed, load_summary)
        if finished is not None:
            return finished
        settings = self.settings(benchmark, sample, seed)
        # a folder a kill left behind resumes its own run
        result = run_evaluation(benchmark, settings, out=folder, resume=folder.exists(), progress_bar=True,
                                store=SharedAnswers(self.store()), shared_model=self.shared)
        return result.summary

    def records(self, summary: RunSummary) -> list[Any]:  # Any: ItemRecords
        return stored_items(self.store(), summary.run_id)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def check_sequential(
    policy: PolicyRef,
    *,
    out: str | Path,
    config: str | None = None,
    assignments: Sequence[str] = (),
    junit: str | Path | None = None,
    json: str | Path | None = None,
    inconclusive: InconclusiveAs = "inconclusive",
) -> PolicyVerdict:
    """Decide ``policy`` on the configured model in rounds, stopping once every criterion is decided.

    ``assignments`` are ``--set KEY=VALUE`` (``model.path=...`` among them). The verdict is written to
    ``out/verdict.json`` (and ``junit`` / ``json``); the last round's summary.json carries the ``sequential`` block.
    """
    from culturebias import __version__

    checked = load_policy(policy)
    refuse_undecidable(checked, RegistryCatalog())
    folder = Path(out).expanduser()
    rounds = ModelRounds(folder, config, assignments)
    try:
        settings = rounds.settings()
        for benchmark in checked.benchmarks():
            options = settings.for_benchmark(benchmark).protocol_options(benchmark)
            if run_limit(options) is not None or (isinstance(options, SampleOptions) and options.sample is not None):
                raise PolicyError(f"--sequential draws its own samples of {benchmark}: drop --limit / protocol.sample")
    except ConfigError as error:
        raise PolicyError(str(error)) from error
    if folder.exists() and not folder.is_dir():
        raise PolicyError(f"--out {folder} is a file, not a folder")
    request = SequentialRequest(policy=checked, out=folder, seed=settings.run.seed, version=__version__)
    try:
        verdict = sequential_check(request, rounds, RegistryCatalog())
    finally:
        rounds.close()
    write_text_atomically(folder / VERDICT_FILE, verdict.to_json() + "\n")
    write_verdict(verdict, junit=junit, json=json, inconclusive=inconclusive)
    return verdict
