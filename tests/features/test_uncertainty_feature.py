"""Step definitions of features/uncertainty.feature: the bootstrap of domain/uncertainty and KoBBQ runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from culturebias.adapters.reports.intervals import bounds
from culturebias.domain.kobbq.summary import KoBBQSummary
from culturebias.domain.uncertainty import Interval, mean_interval
from culturebias.domain.bbq.intervals import KOBBQ_HEADLINES
from culturebias.testing.kobbq_runs import bundled_kobbq, kobbq_run

scenarios("uncertainty.feature")


class World:
    def __init__(self) -> None:
        self.values: np.ndarray = np.zeros(0)
        self.intervals: list[Interval] = []
        self.summary: KoBBQSummary | None = None
        self.out_dir: Path | None = None

    @property
    def interval(self) -> Interval:
        return self.intervals[-1]


@pytest.fixture
def world() -> World:
    return World()


@given(parsers.parse("{n:d} items that all score {value:f}"))
def constant_items(world: World, n: int, value: float):
    world.values = np.full(n, value)


@given(parsers.parse("{n:d} items drawn from a normal distribution with mean {mean:g} and standard deviation {sd:g}"))
def normal_items(world: World, n: int, mean: float, sd: float):
    world.values = np.random.default_rng(1).normal(mean, sd, size=n)


@given("no items")
def no_items(world: World):
    world.values = np.zeros(0)


@when(parsers.parse("the 95% bootstrap interval of their mean is computed with seed {seed:d}"))
@when(parsers.parse("the 95% bootstrap interval of their mean is computed again with seed {seed:d}"))
def compute(world: World, seed: int):
    world.intervals.append(mean_interval(world.values, unit="item", seed=seed, resamples=999))


@then(parsers.parse("the interval is [{low:f}, {high:f}]"))
def interval_is(world: World, low: float, high: float):
    assert (world.interval.low, world.interval.high) == (low, high)


@then(parsers.parse('the interval says its width is zero, over {n:d} "{unit}"s'))
def zero_width(world: World, n: int, unit: str):
    assert "zero width" in (world.interval.note or "")
    assert world.interval.n == n and world.interval.unit == unit and world.interval.level == 0.95


@then("both intervals are the same")
def same(world: World):
    first, second = world.intervals
    assert first == second and first.seed == 7


@then("the interval contains the sample mean")
def contains_mean(world: World):
    assert world.interval.low < world.values.mean() < world.interval.high


@then("the interval has no bounds and a note")
def no_bounds(world: World):
    assert world.interval.low is None and world.interval.high is None and world.interval.note


@given(parsers.parse("a KoBBQ run of a model that always answers with the {policy} option, on the first {n:d} items"))
def kobbq(world: World, tmp_path: Path, policy: str, n: int):
    world.out_dir = tmp_path / "out"
    result = kobbq_run(policy, options={"limit": n}, out_dir=world.out_dir)
    assert isinstance(result.summary, KoBBQSummary)
    world.summary = result.summary


def _templates(world: World) -> int:
    assert world.summary is not None
    n = world.summary.counts.items
    return len({item.template_id for item in bundled_kobbq().items[:n]})


@then(parsers.parse('the interval of "{metric}" is [{low:g}, {high:g}] over the run\'s templates'))
def kobbq_interval(world: World, metric: str, low: float, high: float):
    assert world.summary is not None and world.summary.metrics.overall.intervals is not None
    interval = world.summary.metrics.overall.intervals[metric]
    assert (interval.low, interval.high) == (low, high)
    assert interval.unit == "template" and interval.n == _templates(world)


@then(parsers.parse('the interval of "{metric}" is a {method} interval {side} {bound:g} over the run\'s templates'))
def kobbq_edge_interval(world: World, metric: str, method: str, side: str, bound: float):
    assert world.summary is not None and world.summary.metrics.overall.intervals is not None
    interval = world.summary.metrics.overall.intervals[metric]
    assert interval.method == method and interval.low is not None and interval.high is not None
    assert (interval.low if side == "from" else interval.high) == bound and interval.high - interval.low > 0.01
    assert interval.unit == "template" and interval.n == _templates(world)
    assert f"n = {_templates(world)} templates" in (interval.note or "") or f"{_templates(world)} templates" in (interval.note or "")


@then("every headline interval contains its metric and has a positive width")
def around(world: World):
    assert world.summary is not None
    overall = world.summary.metrics.overall
    for metric in KOBBQ_HEADLINES:
        interval: Any = overall.intervals[metric]
        point = getattr(overall, metric).mean
        assert interval.contains(point) and interval.high > interval.low, (metric, point, interval)


@then("the report shows every headline interval and its n")
def report(world: World):
    assert world.summary is not None and world.out_dir is not None
    text = (world.out_dir / "report.md").read_text(encoding="utf-8")
    overall = world.summary.metrics.overall
    for metric in KOBBQ_HEADLINES:
        assert bounds(overall.intervals[metric]) in text
    assert f"{_templates(world)} templates" in text and "bootstrap confidence interval over templates" in text
