"""Wiring of ``culturebias check POLICY --sequential --model MODEL --out DIR``: the configured model, run in rounds.

Each round is ``run_evaluation`` on ``protocol.<benchmark>.sample = N`` with the
sequence's seed (``run.seed``), resumed where it stopped, in ``DIR/round-<k>/<benchmark>``
(``adapters/policy/model_rounds.py``: one SQLite store, ``DIR/results.sqlite``, answers
shared across rounds, one model load). Bad input (a policy ``--sequential`` cannot decide, bad settings)
raises ``PolicyError`` before the store or any folder is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from culturebias.adapters.policy.model_rounds import ModelRounds
from culturebias.application.sequential_check import (
    SequentialRequest,
    refuse_fixed_samples,
    refuse_undecidable,
    sequential_check,
)
from culturebias.application.out_folder import write_text_atomically
from culturebias.bootstrap.check import PolicyRef, RegistryCatalog, load_policy, write_verdict
from culturebias.domain.errors import ConfigError, PolicyError
from culturebias.domain.policy.verdict import InconclusiveAs, PolicyVerdict

VERDICT_FILE = "verdict.json"


def model_rounds(out: Path, config: str | None, assignments: Sequence[str]) -> ModelRounds:
    """The rounds on the model ``config`` and ``assignments`` (``--set KEY=VALUE``) configure."""
    from culturebias.bootstrap.api import load_summary, run_evaluation
    from culturebias.bootstrap.container import SharedModel
    from culturebias.bootstrap.settings import load_settings

    given = list(assignments)
    return ModelRounds(out, lambda extra: load_settings(config, [*given, *extra]), run_evaluation, load_summary, SharedModel())


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
    rounds = model_rounds(folder, config, assignments)
    try:
        settings = rounds.settings()
        refuse_fixed_samples(checked, lambda benchmark: settings.for_benchmark(benchmark).protocol_options(benchmark))
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
