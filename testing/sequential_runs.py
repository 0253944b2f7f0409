"""Sequential checks (``check --sequential``) of scripted KoBBQ models: the use case with a scripted generator.

``ScriptedRounds(out, "biased")`` is the ``RoundRunner`` port over the bundled KoBBQ
test split (prompts 1,2, one order, as ``kobbq_runs.kobbq_run``): each round is a
real orchestrator run on ``--sample N`` in its folder, all rounds in one SQLite
store under ``out`` whose runs share their answers. ``asked`` counts the requests
the scripted model was really asked (answers reused from earlier rounds are not).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.application.audit import stored_items
from culturebias.application.sequential_check import finished_round
from culturebias.application.shared_answers import SharedAnswers
from culturebias.bootstrap.api import load_summary
from culturebias.domain.audit import ItemRecord
from culturebias.domain.requests import GenerationRequest, GenerationResult
from culturebias.domain.summary import RunSummary
from culturebias.testing.context import run_with_fakes
from culturebias.testing.kobbq_runs import Policy, policy_generator

OPTIONS = {"mode": "generate", "prompts": "1,2", "permutations": "0", "statistics": False}
STORE_FILE = "results.sqlite"


class CountingGenerator:
    """A generator that counts the requests it answers (``fail_after``: raises once it has answered that many)."""

    def __init__(self, inner: Any, fail_after: int | None = None):  # Any: a ScriptedGenerator
        self.inner = inner
        self.asked = 0
        self.fail_after = fail_after

    @property
    def identity(self):
        return self.inner.identity

    def generate(self, requests: Sequence[GenerationRequest], progress: Any = None) -> list[GenerationResult]:  # Any: a ProgressTask
        if self.fail_after is not None and self.asked + len(requests) > self.fail_after:
            raise KeyboardInterrupt("killed by the test")
        self.asked += len(requests)
        return self.inner.generate(requests, progress)


class ScriptedRounds:
    """``ports.sequential.RoundRunner`` over a scripted KoBBQ model."""

    def __init__(self, out: Path, policy: str | Policy, *, name: str | None = None, seed: int = 0,
                 options: Mapping[str, Any] | None = None, fail_after: int | None = None):  # Any: protocol values
        label = name or (policy if isinstance(policy, str) else "scripted-policy")
        self.generator = CountingGenerator(policy_generator(policy, label, seed), fail_after)
        self.options = {**OPTIONS, **dict(options or {})}
        out.mkdir(parents=True, exist_ok=True)
        self.raw = SQLiteResultStore(out / STORE_FILE)
        self.store = SharedAnswers(self.raw)
        self.rounds: list[int] = []

    @property
    def asked(self) -> int:
        return self.generator.asked

    def run_round(self, benchmark: str, sample: int, seed: int, folder: Path) -> RunSummary:
        self.rounds.append(sample)
        finished = finished_round(folder, sample, seed, load_summary)
        if finished is not None:
            return finished
        result = run_with_fakes(  # a folder a kill left behind resumes its own run
            benchmark, options={**self.options, "sample": sample, "sample_seed": seed}, out_dir=folder,
            store=self.store, resume=folder.exists(), generator=self.generator,
        )
        return result.summary

    def records(self, summary: RunSummary) -> list[ItemRecord]:
        return stored_items(self.raw, summary.run_id)

    def close(self) -> None:
        self.raw.close()


def mostly_unknown(item: Any) -> int:  # Any: a QAItem
    """A clearly unbiased model that is not content-blind: the right person where the context says, and in ambiguous
    contexts "unknown" 96 % of the time, either person 2 % each (seeded by the item: diff-bias near 0, nonzero spread)."""
    import random

    if item.context_condition != "ambiguous":
        return int(item.answer_index)
    draw = random.Random(f"mostly-unknown:{item.sample_id}").random()
    if draw < 0.02 and item.biased_index is not None:
        return int(item.biased_index)
    if draw < 0.04:
        return next(i for i in range(3) if i not in (item.biased_index, item.unknown_index))
    return int(item.unknown_index)
