"""``run.repeats=N``: one run executes its service N times, repeat i sampling with seed + i.

Every repeat runs in the same run id and store, through the same recorded ports:
a reply is stored under a key holding its sampling seed, so each repeat's
replies are kept apart and ``--resume`` regenerates none that is stored, in any
repeat. A greedy reply's key holds no seed, so greedy repeats reuse the first
repeat's replies (and their headline std is 0). Scores (log-likelihoods) do not
depend on the seed and are computed once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TypeVar

from culturebias.application.benchmark import BenchmarkService, CombinesRepeats
from culturebias.application.context import RunContext
from culturebias.domain.headlines import HeadlineMetric
from culturebias.domain.leaderboard import headline
from culturebias.domain.repeats import RepeatsBlock, repeats_block
from culturebias.domain.summary import ProtocolOutcome, RunSummary
from culturebias.logs import get_logger

log = get_logger("culturebias.run")

DatasetT = TypeVar("DatasetT")
PlanT = TypeVar("PlanT")
Outcome = ProtocolOutcome[Any, Any, Any]  # Any: the benchmark's own metrics, counts and details


def run_repeats(
    service: BenchmarkService[DatasetT, PlanT],
    ctx: RunContext,
    dataset: DatasetT,
    plan: PlanT,
    repeats: int,
    benchmark: str,
    summary_model: type[RunSummary],
    headlines: Sequence[HeadlineMetric],
) -> tuple[Outcome, RepeatsBlock | None]:
    """The first repeat's outcome (the summary's metrics; a service's ``combine_repeats(outcomes)`` may add
    every score's mean ± std over the repeats to it), and the repeats block (None for a single run)."""
    if repeats <= 1:
        return service.run(ctx, dataset, plan), None
    outcomes: list[Outcome] = []
    seeds: list[int] = []
    for index in range(repeats):
        seed = ctx.sampling.seed_for(ctx.seed, index)  # also a greedy run's, for a protocol that samples anyway
        log.info("repeat", repeat=index + 1, of=repeats, seed=seed)
        outcomes.append(service.run(replace(ctx, repeat=index), dataset, plan))
        seeds.append(seed)
    values = [_headline(benchmark, summary_model, headlines, outcome) for outcome in outcomes]
    # A service whose protocol reports every score over the runs (McBE) combines them into the first's metrics.
    first = service.combine_repeats(outcomes) if isinstance(service, CombinesRepeats) else outcomes[0]
    return first, repeats_block(ctx.sampling.describe(), seeds, values)


def _headline(
    benchmark: str, summary_model: type[RunSummary], headlines: Sequence[HeadlineMetric], outcome: Outcome
) -> dict[str, float | None]:
    # The headline reads the typed metrics alone; the envelope's other fields are not needed for it.
    partial = summary_model.model_construct(benchmark=benchmark, metrics=outcome.metrics)  # type: ignore[call-arg]  # the other envelope fields are left out on purpose
    return headline(partial, headlines)
