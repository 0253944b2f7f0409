"""``check --sequential``: run the policy's benchmarks in growing rounds and stop once every criterion is decided.

Rounds are nested stratified samples (``--sample N`` draws the first units of
one seeded order per stratum, ``domain/stratified.py``): round 1 holds one unit
of every stratum (``--sample 1``), round k+1 twice round k's items, until a
round holds all the data (then it is the full run). Each round is a run of its
own in ``OUT/round-<k>/<benchmark>``, stored in one result store whose runs
share their model answers (``application/shared_answers.py``): a round asks the
model only for what the previous round did not hold, and running the same
command again continues where a kill stopped it (every round is resumable as
any run is).

After each round every undecided criterion is decided on the anytime-valid
confidence sequence of its headline over the units drawn so far
(``domain/policy/sequential.py``); a benchmark whose criteria are all decided
runs no further round. Everything the input can be wrong in (a baseline
criterion, ``confidence = "point"``, a benchmark without per-unit values or
with an unbounded headline) is refused before the first round.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from culturebias.application.check import validate_policy
from culturebias.application.out_folder import write_text_atomically
from culturebias.domain.errors import PolicyError
from culturebias.domain.headlines import HeadlineMetric, value_of
from culturebias.domain.policy.decide import Decision, limitation
from culturebias.domain.policy.model import Criterion, Policy
from culturebias.domain.policy.paired import NoUnitValues
from culturebias.domain.policy.sequential import (
    decide_on_sequence,
    per_unit,
    reproduction_problem,
    stream_order,
)
from culturebias.domain.sequential_block import MIN_UNITS, SequentialBlock, SequentialCriterion, SequentialRound
from culturebias.domain.policy.verdict import CheckedRun, CriterionVerdict, PolicyVerdict, counts_of, overall
from culturebias.domain.runs import utc_now
from culturebias.domain.stratified import SampleOptions
from culturebias.domain.summary import RunSummary, run_limit
from culturebias.domain.uncertainty.confidence_sequence import confidence_sequence
from culturebias.ports.policy import BenchmarkCatalog
from culturebias.ports.sequential import RoundRunner

GROWTH = 2  # round k+1 asks for GROWTH x round k's items
FIRST_SAMPLE = 1  # --sample 1: one unit of every stratum


@dataclass(frozen=True)
class SequentialRequest:
    policy: Policy
    out: Path
    seed: int = 0
    version: str = "unknown"
    min_units: int = MIN_UNITS


@dataclass
class _State:
    """One benchmark's rounds so far."""

    benchmark: str
    criteria: list[Criterion]
    requested: int = FIRST_SAMPLE
    entered: dict[str, int] | None = None
    summary: RunSummary | None = None
    where: str = ""
    exhausted: bool = False
    answers: int = 0


def finished_round(folder: Path, sample: int, seed: int, load: Any) -> RunSummary | None:  # Any: summary.json -> RunSummary
    """The round's summary when its folder holds that round finished (same ``--sample N`` and seed), else None:
    a finished round is read back, never run again (its store runs and answers stay as they are)."""
    done = folder / "summary.json"
    if not done.is_file():
        return None
    summary: RunSummary = load(done)
    drawn = summary.sample
    return summary if drawn is not None and drawn.requested == sample and drawn.seed == seed else None


def refuse_undecidable(policy: Policy, catalog: BenchmarkCatalog) -> dict[str, HeadlineMetric]:
    """Each criterion's metric; a ``PolicyError`` (before any request) for a policy ``--sequential`` cannot decide."""
    metrics = validate_policy(policy, catalog)
    for c in policy.criteria:
        where = f"criterion {c.name!r}"
        if c.needs_baseline:
            raise PolicyError(f"--sequential decides threshold criteria only; {where} compares with a baseline "
                              "(check it on the finished runs: culturebias check POLICY --run DIR --baseline DIR)")
        if c.confidence == "point":
            raise PolicyError(f"--sequential decides on confidence sequences; {where} decides on the point estimate "
                              "(confidence = \"point\"), which no round can decide early: give it a level, or run without --sequential")
        if c.run is not None:
            raise PolicyError(f"{where} names its run ({c.run}); --sequential runs the model itself")
        if catalog.unit_values(c.benchmark) is None:
            raise PolicyError(f"{catalog.title(c.benchmark)} declares no per-unit values of its headlines, so it cannot "
                              f"run in rounds ({where}); run without --sequential")
        metric = metrics[c.name]
        if metric.low is None or metric.high is None:
            raise PolicyError(f"{metric.label} declares no range, and a confidence sequence needs a bounded metric ({where})")
    return metrics


def refuse_fixed_samples(policy: Policy, options_of: Callable[[str], object]) -> None:
    """A ``PolicyError`` where the run's options (``options_of(benchmark)``) fix a benchmark's sample already
    (``--limit``, ``protocol.sample``): the rounds draw their own."""
    for benchmark in policy.benchmarks():
        options = options_of(benchmark)
        if run_limit(options) is not None or (isinstance(options, SampleOptions) and options.sample is not None):
            raise PolicyError(f"--sequential draws its own samples of {benchmark}: drop --limit / protocol.sample")


def sequential_check(request: SequentialRequest, runner: RoundRunner, catalog: BenchmarkCatalog) -> PolicyVerdict:
    """The policy decided in rounds; a ``PolicyError`` for a policy it cannot decide, before any round runs."""
    policy = request.policy
    metrics = refuse_undecidable(policy, catalog)
    states = [_State(b, [c for c in policy.criteria if c.benchmark == b]) for b in policy.benchmarks()]
    decisions: dict[str, tuple[Decision, Any]] = {}  # Any: the ConfidenceSequence (or None) of the decision
    decided_in: dict[str, int] = {}
    rounds: list[SequentialRound] = []
    k = 0
    while True:
        active = [s for s in states if not s.exhausted and any(c.name not in decided_in for c in s.criteria)]
        if not active:
            break
        k += 1
        for state in active:
            rounds.append(_round(state, k, request, runner, catalog, metrics, decisions, decided_in))
    block = _block(request, states, rounds, decisions, decided_in, metrics)
    for state in states:
        if state.summary is not None:
            state.summary = state.summary.model_copy(update={"sequential": block})
            write_text_atomically(Path(state.where) / "summary.json", state.summary.to_json())
    verdicts = [_criterion_verdict(c, metrics[c.name], decisions[c.name], states) for c in policy.criteria]
    return PolicyVerdict(
        policy=policy.name,
        source=policy.source,
        checked_at=utc_now(),
        culturebias_version=request.version,
        outcome=overall([v.outcome for v in verdicts]),
        counts=counts_of(verdicts),
        runs=[_checked(s) for s in states if s.summary is not None],
        criteria=verdicts,
        sequential=block,
    )


def _round(
    state: _State, k: int, request: SequentialRequest, runner: RoundRunner, catalog: BenchmarkCatalog,
    metrics: dict[str, HeadlineMetric], decisions: dict[str, tuple[Decision, Any]], decided_in: dict[str, int],  # Any: a ConfidenceSequence
) -> SequentialRound:
    folder = request.out / f"round-{k}" / state.benchmark
    summary = runner.run_round(state.benchmark, state.requested, request.seed, folder)
    records = runner.records(summary)
    sample = summary.sample
    state.summary, state.where = summary, str(folder)
    state.exhausted = sample is None or sample.method == "all"
    state.answers = len(records) if records is not None else 0
    unit_values = catalog.unit_values(state.benchmark)
    decided: list[str] = []
    units = 0
    for c in state.criteria:
        if c.name in decided_in:
            continue
        decision, cs, seen = _decide(c, metrics[c.name], summary, records, unit_values, state, k, request)
        units = max(units, seen)
        decisions[c.name] = (decision, cs)
        if decision.outcome != "inconclusive":
            decided_in[c.name] = k
            decided.append(c.name)
    requested = state.requested
    state.requested = max(GROWTH * (sample.n if sample is not None else requested), requested + 1)
    if sample is not None:  # the last round asks for all items: a sample larger than the data is refused
        state.requested = min(state.requested, sample.population)
    return SequentialRound(
        round=k, benchmark=state.benchmark, requested=requested, items=sample.n if sample is not None else 0,
        units=sample.units if sample is not None else units, answers=state.answers, run_id=summary.run_id,
        where=str(folder), decided=decided,
    )


def _decide(
    c: Criterion, metric: HeadlineMetric, summary: RunSummary, records: Any, unit_values: Any, state: _State, k: int,  # Any: ItemRecords; the benchmark's unit-values function
    request: SequentialRequest,
) -> tuple[Decision, Any, int]:  # Any: the ConfidenceSequence, or None
    try:
        units = unit_values(summary, records, metric, c.breakdown)
    except NoUnitValues as missing:
        return Decision("inconclusive", f"{metric.label}: {missing.reason}"), None, 0
    if state.entered is None:
        state.entered = {}
    for unit in units.ids:
        state.entered.setdefault(unit, k)
    x, w = per_unit(units)
    problem = reproduction_problem(x, w, value_of(summary, metric), units.unit)
    if problem is not None:
        return Decision("inconclusive", f"{metric.label}: {problem}"), None, len(units.ids)
    order = stream_order(units.ids, request.seed, state.entered)
    assert metric.low is not None and metric.high is not None
    cs = confidence_sequence(x[order], w[order], metric.low, metric.high, alpha=1 - float(c.confidence))
    return decide_on_sequence(c, metric.label, cs, request.min_units), cs, len(units.ids)


def _block(
    request: SequentialRequest, states: list[_State], rounds: list[SequentialRound],
    decisions: dict[str, tuple[Decision, Any]], decided_in: dict[str, int], metrics: dict[str, HeadlineMetric],  # Any: a ConfidenceSequence
) -> SequentialBlock:
    items = sum(s.summary.sample.n if s.summary is not None and s.summary.sample is not None else 0 for s in states)
    population = sum(s.summary.sample.population if s.summary is not None and s.summary.sample is not None else 0
                     for s in states)
    answers = sum(s.answers for s in states)
    full = answers if all(s.exhausted for s in states) else (
        math.ceil(answers * population / items) if items else None)
    criteria = []
    for c in request.policy.criteria:
        decision, cs = decisions[c.name]
        criteria.append(SequentialCriterion(
            name=c.name, outcome=decision.outcome, decided_in_round=decided_in.get(c.name),
            low=cs.low if cs is not None else None, high=cs.high if cs is not None else None,
            estimate=cs.estimate if cs is not None else None, units=cs.n if cs is not None else 0,
        ))
    return SequentialBlock(
        alpha={c.name: round(1 - float(c.confidence), 12) for c in request.policy.criteria},
        min_units=request.min_units, seed=request.seed, rounds=rounds, criteria=criteria,
        stopped_early=not all(s.exhausted for s in states), items_used=items, items_in_data=population,
        answers_used=answers, answers_full_run=full,
    )


def _criterion_verdict(c: Criterion, metric: HeadlineMetric, decided: tuple[Decision, Any], states: list[_State]) -> CriterionVerdict:  # Any: a ConfidenceSequence
    decision, cs = decided
    state = next(s for s in states if s.benchmark == c.benchmark)
    return CriterionVerdict(
        name=c.name, outcome=decision.outcome, reason=decision.reason, criterion=c, metric_label=metric.label,
        estimate="value", value=cs.estimate if cs is not None else None, n=cs.n if cs is not None else None,
        unit=None, decided_on=decision.decided_on,
        run_id=state.summary.run_id if state.summary is not None else None,
    )


def _checked(state: _State) -> CheckedRun:
    s = state.summary
    assert s is not None
    return CheckedRun(
        role="run", benchmark=s.benchmark, run_id=s.run_id, where=state.where,
        models={role: f"{i.backend}:{i.model}" for role, i in s.model.roles().items()},
        data_fingerprint=s.data.fingerprint, config_fingerprint=s.config_fingerprint, limited=limitation(s),
    )
