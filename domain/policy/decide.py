"""The decision rule and its sentence: pass, fail or inconclusive, on the interval or on the point.

On the interval: pass when the whole interval satisfies the criterion, fail
when the whole interval violates it, inconclusive when it straddles the
threshold. On the point (``confidence = "point"``): the estimate alone decides.
A baseline criterion decides the same way on the paired difference of
distances from ideal against the margin (non-inferiority).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from culturebias.domain.policy.model import Criterion
from culturebias.domain.policy.paired import PairedDifference
from culturebias.domain.policy.verdict import Outcome
from culturebias.domain.uncertainty.interval import Interval


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    reason: str
    decided_on: Literal["interval", "point"] | None = None


def number(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.4g}"


def limitation(summary: Any) -> str | None:  # Any: the benchmark's own RunSummary subclass
    """Why a run covered only part of its data (a limited, --sample or category-sampled run); None for a full run."""
    if summary.limit is not None:
        meaning = summary.limit.meaning.replace(" N ", f" {summary.limit.n} ", 1)
        return f"a limited run (--limit {summary.limit.n}: {meaning})"
    sample = getattr(summary, "sample", None)
    if sample is not None and sample.method != "all":
        return f"a run on {sample.sentence()} (--sample {sample.requested})"
    protocol = summary.config.get("protocol") if isinstance(summary.config, dict) else None
    categories = protocol.get("categories") if isinstance(protocol, dict) else None
    if categories:
        chosen = categories if isinstance(categories, str) else ",".join(map(str, categories))
        return f"a run on a sample of the categories (protocol.categories={chosen})"
    return None


def _words(c: Criterion) -> tuple[str, str, str]:
    """(satisfied, violated, threshold) in words."""
    if c.at_most is not None:
        return f"at most {c.at_most:g}", f"above {c.at_most:g}", f"{c.at_most:g}"
    if c.at_least is not None:
        return f"at least {c.at_least:g}", f"below {c.at_least:g}", f"{c.at_least:g}"
    assert c.between is not None
    low, high = c.between
    return f"within [{low:g}, {high:g}]", f"outside [{low:g}, {high:g}]", f"a bound of [{low:g}, {high:g}]"


def _judge(c: Criterion, low: float, high: float) -> Outcome:
    if c.at_most is not None:
        return "pass" if high <= c.at_most else "fail" if low > c.at_most else "inconclusive"
    if c.at_least is not None:
        return "pass" if low >= c.at_least else "fail" if high < c.at_least else "inconclusive"
    assert c.between is not None
    a, b = c.between
    if a <= low and high <= b:
        return "pass"
    return "fail" if high < a or low > b else "inconclusive"


def judge(c: Criterion, low: float, high: float) -> Outcome:
    """The rule ``check`` decides by, on any range of values: pass when all of it satisfies ``c``, fail when all
    of it violates ``c``, else inconclusive (``check --sequential`` applies it to a confidence sequence)."""
    return _judge(c, low, high)


def criterion_words(c: Criterion) -> tuple[str, str, str]:
    """(satisfied, violated, threshold) in words."""
    return _words(c)


def _interval_words(interval: Interval) -> str:
    method = interval.method if interval.method != "none" else (interval.note or "no resampling")
    return (
        f"{100 * interval.level:g}% interval {number(interval.low)} to {number(interval.high)}, "
        f"n = {interval.n} {interval.unit}s, {method}"
    )


def usable_interval(c: Criterion, interval: Interval | None, where: str) -> str | None:
    """None when ``interval`` can decide criterion ``c``; otherwise why it cannot."""
    if interval is None:
        return f"no interval is stored for {where}; decide on the estimate with confidence = \"point\""
    if not interval.defined:
        return f"the interval of {where} is undefined ({interval.note or 'no resampling was possible'})"
    if interval.n < 2:
        return f"the interval of {where} rests on {interval.n} {interval.unit}(s): {interval.note or 'nothing to resample'}"
    if interval.zero_width_resampling:
        return (
            f"the interval of {where} has zero width ({interval.note or 'every resample gives the same value'}): a "
            "resampling that does not vary is no evidence, and deciding on it would treat n as infinite (rerun with "
            "a culturebias that gives a score interval here, or decide on the estimate with confidence = \"point\")"
        )
    level = float(c.confidence)
    if abs(interval.level - level) > 1e-9:
        return (
            f"the run stored a {100 * interval.level:g}% interval of {where}; the criterion asks for "
            f"{100 * level:g}% (rerun with that level, or decide on the stored one)"
        )
    return None


def decide_threshold(c: Criterion, label: str, value: float | None, interval: Interval | None) -> Decision:
    """A threshold criterion (at_most, at_least, between) on the metric's value and stored interval."""
    satisfied, violated, threshold = _words(c)
    if value is None:
        return Decision("inconclusive", f"{label} is undefined for this run: nothing to decide on")
    if c.confidence == "point":
        outcome = _judge(c, value, value)
        return Decision(outcome, f"{label} is {number(value)} (decided on the point estimate): "
                        f"{satisfied if outcome == 'pass' else violated}.", "point")
    why_not = usable_interval(c, interval, label)
    if why_not is not None:
        return Decision("inconclusive", f"{label} is {number(value)}, but {why_not}")
    assert interval is not None and interval.low is not None and interval.high is not None
    outcome = _judge(c, interval.low, interval.high)
    head = f"{label} is {number(value)} ({_interval_words(interval)})"
    if outcome == "pass":
        return Decision("pass", f"{head}: the whole interval is {satisfied}.", "interval")
    if outcome == "fail":
        return Decision("fail", f"{head}: the whole interval is {violated}.", "interval")
    return Decision("inconclusive", f"{head}: the interval straddles {threshold}; more data would decide.", "interval")


def decide_baseline(c: Criterion, label: str, direction: str, difference: PairedDifference) -> Decision:
    """Non-inferiority: pass when the whole paired interval of (run - baseline distance from ideal) is within the margin."""
    margin = c.not_worse_than_baseline_by
    assert margin is not None
    point = difference.point
    worse = "worse" if point > 0 else "better" if point < 0 else "no different"
    amount = "" if point == 0 else f" by {number(abs(point))}"
    head = (
        f"{label} is {worse} than the baseline's{amount} ({direction}; paired over the {difference.shared} "
        f"{difference.interval.unit}s both runs share"
    )
    extra = []
    if difference.only_in_run or difference.only_in_baseline:
        extra.append(f"{difference.only_in_run} only in this run, {difference.only_in_baseline} only in the baseline")
    interval = difference.interval
    if not interval.defined:
        note = interval.note or "no resampling was possible"
        return Decision("inconclusive", f"{head}): the paired interval is undefined ({note})")
    if interval.zero_width_resampling:
        note = interval.note or "every resample gives the same value"
        return Decision("inconclusive", f"{head}): the paired interval has zero width ({note}): a resampling that "
                        "does not vary is no evidence")
    assert interval.low is not None and interval.high is not None
    head = f"{head}; {_interval_words(interval)} of the difference{'; ' + extra[0] if extra else ''})"
    if interval.high <= margin:
        return Decision("pass", f"{head}: the whole interval is within the margin {margin:g}.", "interval")
    if interval.low > margin:
        return Decision("fail", f"{head}: the whole interval is worse than the margin {margin:g}.", "interval")
    return Decision("inconclusive", f"{head}: the interval straddles the margin {margin:g}; more data would decide.", "interval")


def decide_baseline_point(c: Criterion, label: str, direction: str, run_value: float | None, baseline_value: float | None,
                          badness: Any) -> Decision:  # Any: a float or an array of resampled floats
    """Non-inferiority on the point estimates of both runs (``confidence = "point"``): no per-unit values needed."""
    margin = c.not_worse_than_baseline_by
    assert margin is not None
    if run_value is None or baseline_value is None:
        return Decision("inconclusive", f"{label} is {number(run_value)} in this run and {number(baseline_value)} in "
                        "the baseline: nothing to decide on")
    point = float(badness(run_value) - badness(baseline_value))
    outcome: Outcome = "pass" if point <= margin else "fail"
    return Decision(
        outcome,
        f"{label} is {number(run_value)}, the baseline's {number(baseline_value)} ({direction}; decided on the point "
        f"estimates): {'worse' if point > 0 else 'not worse'} by {number(abs(point))}, "
        f"{'within' if outcome == 'pass' else 'beyond'} the margin {margin:g}.",
        "point",
    )
