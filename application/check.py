"""Checking a policy on finished runs: which run each criterion reads, and its verdict.

Everything that can make the input unusable is found before a verdict is
built, so a caller writes nothing for bad input: a benchmark or metric the
catalog does not have (did-you-mean, the benchmark's headlines listed), a
breakdown the run does not keep (the run's breakdowns listed), a run of
another benchmark than its criterion's, two runs for one benchmark, a
baseline missing, of another benchmark or on other data (both fingerprints
named). What the run itself cannot decide (a limited run, an undefined value,
no per-unit values for the paired test) is an inconclusive verdict with that
reason, never an error and never a made-up number.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from culturebias.domain.caveats import run_caveats
from culturebias.domain.errors import PolicyError
from culturebias.domain.headlines import HeadlineMetric, interval_of, value_of
from culturebias.domain.policy.breakdown import available_breakdowns, breakdown_metric
from culturebias.domain.policy.decide import (
    Decision,
    decide_baseline,
    decide_baseline_point,
    decide_threshold,
    limitation,
)
from culturebias.domain.policy.model import Criterion, Policy
from culturebias.domain.policy.power import with_missing_units
from culturebias.domain.policy.paired import NoUnitValues, PairedDifference, edge_difference, paired_difference, reproduces
from culturebias.domain.policy.verdict import CheckedRun, CriterionVerdict, PolicyVerdict, counts_of, overall
from culturebias.domain.runs import utc_now
from culturebias.domain.summary import RunSummary
from culturebias.domain.uncertainty.interval import DEFAULT_RESAMPLES
from culturebias.domain.validity import failed_rules, rule_reason
from culturebias.ports.policy import BenchmarkCatalog, RunReader


@dataclass(frozen=True)
class CheckRequest:
    policy: Policy
    runs: Sequence[str] = ()  # run references for the policy's benchmarks (--run), one per benchmark
    baselines: Sequence[str] = ()  # baseline run references (--baseline), one per benchmark
    version: str = "unknown"  # the culturebias deciding, recorded in the verdict
    seed: int = 0  # of the paired bootstrap
    resamples: int = DEFAULT_RESAMPLES


@dataclass
class _Run:
    ref: str
    summary: RunSummary
    where: str
    role: str
    items: Any = field(default=None)  # Any: ItemRecords or their JSON
    items_read: bool = False


def _err(c: Criterion, message: str) -> PolicyError:
    file, _, line = (c.source or "").rpartition(":")
    return PolicyError(message, file=file or None, line=int(line) if line.isdigit() else None, criterion=c.name)


def _close(name: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.5)
    return f"; did you mean {close[0]!r}?" if close else ""


def resolve_metric(c: Criterion, catalog: BenchmarkCatalog) -> HeadlineMetric:
    """The criterion's headline metric (moved into its breakdown), or a PolicyError listing what there is."""
    names = catalog.names()
    if c.benchmark not in names:
        raise _err(c, f"unknown benchmark {c.benchmark!r}{_close(c.benchmark, names)} (registered: {', '.join(names)})")
    headlines = catalog.headline_metrics(c.benchmark)
    by_name = {m.name: m for m in headlines}
    if c.metric not in by_name:
        raise _err(
            c,
            f"{c.benchmark} has no headline metric {c.metric!r}{_close(c.metric, list(by_name))} "
            f"(its headline metrics: {', '.join(by_name)})",
        )
    metric = by_name[c.metric]
    if c.breakdown is None:
        return metric
    moved = breakdown_metric(metric, c.breakdown)
    if moved is None:
        raise _err(c, f"{c.benchmark}'s {c.metric} has no breakdowns (its summary keeps it outside an 'overall' block)")
    return moved


def validate_policy(policy: Policy, catalog: BenchmarkCatalog) -> dict[str, HeadlineMetric]:
    """Each criterion's metric by criterion name; raises before any run is read."""
    return {c.name: resolve_metric(c, catalog) for c in policy.criteria}


class _Runs:
    """The runs of one check, read once each, matched to criteria by benchmark."""

    def __init__(self, request: CheckRequest, reader: RunReader):
        self.reader = reader
        self.loaded: dict[tuple[str, str], _Run] = {}
        self.given = self._by_benchmark(request.runs, "run")
        self.baselines = self._by_benchmark(request.baselines, "baseline")

    def load(self, ref: str, role: str) -> _Run:
        key = (role, ref)
        if key not in self.loaded:
            self.loaded[key] = _Run(ref, self.reader.summary(ref), self.reader.where(ref), role)
        return self.loaded[key]

    def _by_benchmark(self, refs: Sequence[str], role: str) -> dict[str, _Run]:
        out: dict[str, _Run] = {}
        for ref in refs:
            run = self.load(ref, role)
            other = out.get(run.summary.benchmark)
            if other is not None:
                raise PolicyError(
                    f"two {run.summary.benchmark} {role}s given ({other.where}, {run.where}): give one {role} per benchmark"
                )
            out[run.summary.benchmark] = run
        return out

    def items(self, run: _Run) -> Any:  # Any: ItemRecords or their JSON
        if not run.items_read:
            run.items, run.items_read = self.reader.items(run.ref), True
        return run.items

    def run_of(self, c: Criterion) -> _Run:
        if c.run is not None:
            run = self.load(c.run, "run")
        elif c.benchmark in self.given:
            return self.given[c.benchmark]
        else:
            given = ", ".join(f"{r.summary.benchmark} ({r.where})" for r in self.given.values()) or "none"
            raise _err(c, f"needs a {c.benchmark} run; the runs given are: {given} (add --run DIR)")
        if run.summary.benchmark != c.benchmark:
            raise _err(c, f"reads a {c.benchmark} run; {run.where} is a {run.summary.benchmark} run")
        return run

    def baseline_of(self, c: Criterion, run: _Run) -> _Run:
        if c.baseline is not None:
            baseline = self.load(c.baseline, "baseline")
        elif c.benchmark in self.baselines:
            baseline = self.baselines[c.benchmark]
        elif self.baselines:  # a baseline of another benchmark
            baseline = next(iter(self.baselines.values()))
        else:
            raise _err(c, f"compares with a baseline: give the baseline {c.benchmark} run (--baseline DIR)")
        ours, theirs = run.summary, baseline.summary
        if theirs.benchmark != ours.benchmark:
            raise _err(
                c,
                f"baseline refused: {baseline.where} is a {theirs.benchmark} run (data {theirs.data.fingerprint}), "
                f"{run.where} a {ours.benchmark} run (data {ours.data.fingerprint})",
            )
        if theirs.data.fingerprint != ours.data.fingerprint:
            raise _err(
                c,
                f"baseline refused: the runs read different data: {run.where} has data fingerprint "
                f"{ours.data.fingerprint}, the baseline {baseline.where} {theirs.data.fingerprint}",
            )
        if theirs.run_id == ours.run_id:
            raise _err(c, f"the baseline {baseline.where} is the checked run itself ({ours.run_id})")
        return baseline

    def unused(self, read: set[str]) -> list[_Run]:
        return [r for r in self.given.values() if r.ref not in read]


def check_policy(request: CheckRequest, reader: RunReader, catalog: BenchmarkCatalog) -> PolicyVerdict:
    """The policy's verdict on the runs; a ``PolicyError`` for bad input, before anything is decided."""
    metrics = validate_policy(request.policy, catalog)
    runs = _Runs(request, reader)
    plan: list[tuple[Criterion, HeadlineMetric, _Run, _Run | None]] = []
    for c in request.policy.criteria:
        run = runs.run_of(c)
        metric = metrics[c.name]
        if c.breakdown is not None:
            _check_breakdown(c, catalog.headline_metrics(c.benchmark), run)
        plan.append((c, metric, run, runs.baseline_of(c, run) if c.needs_baseline else None))
    stray = runs.unused({run.ref for _, _, run, _ in plan})
    if stray:
        wanted = ", ".join(request.policy.benchmarks())
        raise PolicyError(
            f"{stray[0].where} is a {stray[0].summary.benchmark} run, and no criterion of the policy reads "
            f"{stray[0].summary.benchmark} (it reads {wanted})"
        )
    verdicts = [_verdict(c, metric, run, baseline, runs, request, catalog) for c, metric, run, baseline in plan]
    return PolicyVerdict(
        policy=request.policy.name,
        source=request.policy.source,
        checked_at=utc_now(),
        culturebias_version=request.version,
        outcome=overall([v.outcome for v in verdicts]),
        counts=counts_of(verdicts),
        runs=[_checked(r, catalog.headline_metrics(r.summary.benchmark)) for r in runs.loaded.values()],
        criteria=verdicts,
    )


def _check_breakdown(c: Criterion, headlines: Sequence[HeadlineMetric], run: _Run) -> None:
    metric = next(m for m in headlines if m.name == c.metric)
    available = available_breakdowns(run.summary, metric)
    if c.breakdown not in available:
        listed = ", ".join(available) if available else "none"
        raise _err(c, f"{run.where} keeps no breakdown {c.breakdown!r} of {c.metric}{_close(c.breakdown or '', available)} "
                      f"(its breakdowns: {listed})")


def _checked(run: _Run, headlines: Sequence[HeadlineMetric]) -> CheckedRun:
    s = run.summary
    return CheckedRun(
        role="baseline" if run.role == "baseline" else "run",
        benchmark=s.benchmark,
        run_id=s.run_id,
        where=run.where,
        models={role: f"{i.backend}:{i.model}" for role, i in s.model.roles().items()},
        data_fingerprint=s.data.fingerprint,
        config_fingerprint=s.config_fingerprint,
        limited=limitation(s),
        caveats=run_caveats(s, headlines),
    )


def _verdict(
    c: Criterion, metric: HeadlineMetric, run: _Run, baseline: _Run | None, runs: _Runs, request: CheckRequest,
    catalog: BenchmarkCatalog,
) -> CriterionVerdict:
    base = {
        "name": c.name,
        "criterion": c,
        "metric_label": metric.label,
        "run_id": run.summary.run_id,
        "baseline_run_id": baseline.summary.run_id if baseline is not None else None,
        "estimate": "difference" if baseline is not None else "value",
    }
    allowed = []
    for checked in (run, baseline):
        limited = limitation(checked.summary) if checked is not None else None
        if checked is None or not limited:
            continue
        which = "the baseline" if checked is baseline else "the run"
        if not c.allow_limited:
            reason = (f"{which} {checked.where} is {limited}: its numbers are not the benchmark's "
                      "(set allow_limited = true to decide on it anyway)")
            return CriterionVerdict(outcome="inconclusive", reason=reason, **base)
        allowed.append(f"{which} is {limited}")
    base["allowed_limited"] = "; ".join(allowed) or None
    invalid = _not_valid(c, run, baseline)
    if invalid is not None:
        return CriterionVerdict(outcome="inconclusive", reason=invalid, **base)
    value = value_of(run.summary, metric)
    if baseline is None:
        interval = interval_of(run.summary, metric)
        decision = with_missing_units(decide_threshold(c, metric.label, value, interval), c, metric, interval)
        return _with(decision, base, value, interval if decision.decided_on != "point" else None)
    baseline_value = value_of(baseline.summary, metric)
    if c.confidence == "point":
        decision = decide_baseline_point(c, metric.label, metric.direction_words(), value, baseline_value, metric.badness)
        point = None if value is None or baseline_value is None else metric.badness(value) - metric.badness(baseline_value)
        return _with(decision, base, point, None)
    difference = _paired(c, metric, run, baseline, runs, request, catalog, value, baseline_value)
    if isinstance(difference, str):
        return CriterionVerdict(outcome="inconclusive", reason=difference, **base)
    if difference.shared < 2:
        reason = f"{metric.label}: the runs share {difference.shared} {difference.interval.unit}(s): no paired test possible"
        return CriterionVerdict(outcome="inconclusive", reason=reason, **base)
    decision = with_missing_units(decide_baseline(c, metric.label, metric.direction_words(), difference), c, metric,
                                  difference.interval)
    return _with(decision, base, difference.point, difference.interval)


def _not_valid(c: Criterion, run: _Run, baseline: _Run | None) -> str | None:
    """Why the criterion's headline is not measured on the run or its baseline: a failed validity rule guarding it
    (PROTOCOLS §6), with the rule's name and numbers; None when every rule guarding it passed (or none was assessed)."""
    for checked in (run, baseline):
        if checked is None:
            continue
        failed = failed_rules(checked.summary, c.metric)
        if failed:
            which = "the baseline" if checked is baseline else "the run"
            return (f"{c.metric} not measured on {which} {checked.where}: " + "; ".join(rule_reason(r) for r in failed)
                    + " (protocol.validity=off records the rules without blocking)")
    return None


def _with(decision: Decision, base: dict[str, Any], value: float | None, interval: Any) -> CriterionVerdict:  # Any: a verdict's JSON fields and the metric's interval
    return CriterionVerdict(
        outcome=decision.outcome,
        reason=decision.reason,
        value=value,
        interval=interval,
        n=interval.n if interval is not None else None,
        unit=interval.unit if interval is not None else None,
        decided_on=decision.decided_on,
        **base,
    )


def _paired(
    c: Criterion, metric: HeadlineMetric, run: _Run, baseline: _Run, runs: _Runs, request: CheckRequest,
    catalog: BenchmarkCatalog, value: float | None, baseline_value: float | None,
) -> PairedDifference | str:
    """The paired difference, or why there is none (the inconclusive reason)."""
    unit_values = catalog.unit_values(c.benchmark)
    if unit_values is None:
        return (f"{catalog.title(c.benchmark)} declares no per-unit values of its headlines, so no paired test can run "
                "(decide on the point estimates with confidence = \"point\")")
    units = []
    for checked, reported, which in ((run, value, "the run"), (baseline, baseline_value, "the baseline")):
        try:
            found = unit_values(checked.summary, runs.items(checked), metric, c.breakdown)
        except NoUnitValues as missing:
            return f"no paired test: {which} {checked.where}: {missing.reason}"
        mismatch = reproduces(found, reported)
        if mismatch is not None:
            return f"no paired test: {which} {checked.where}: {mismatch} of {metric.label}"
        units.append(found)
    found = paired_difference(metric, units[0], units[1], level=float(c.confidence), seed=request.seed,
                              resamples=request.resamples)
    return edge_difference(metric, found, interval_of(run.summary, metric), interval_of(baseline.summary, metric),
                           value, baseline_value)  # zero width: the runs' own (score) intervals, issue 33.2
