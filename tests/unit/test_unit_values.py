"""The descriptors' per-unit values of a headline (``unit_values``): they recompute the reported headline exactly."""

from __future__ import annotations

import math
import zlib

import pytest

from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
from culturebias.adapters.stores.memory_store import MemoryResultStore
from culturebias.application.audit import stored_items
from culturebias.application.check import CheckRequest, check_policy
from culturebias.bootstrap.check import RegistryCatalog, StoredRuns
from culturebias.bootstrap.registry import registry
from culturebias.domain.headlines import value_of
from culturebias.domain.policy.breakdown import breakdown_metric
from culturebias.domain.policy.model import Criterion, Policy
from culturebias.domain.policy.paired import NoUnitValues, reproduces
from culturebias.testing.context import run_with_fakes
from culturebias.testing.kobbq_runs import kobbq_run


def run_and_records(run):
    store = MemoryResultStore()
    summary = run(store).summary
    return summary, stored_items(store, summary.run_id)


def assert_reproduced(summary, records, breakdown=None):
    descriptor = registry().benchmark(summary.benchmark)
    unit_values = descriptor.unit_values_function()
    for metric in descriptor.headline_metrics():
        if breakdown is not None:
            metric = breakdown_metric(metric, breakdown)
        units = unit_values(summary, records, metric, breakdown)
        reported = value_of(summary, metric)
        if reported is None:  # undefined in the run (LIBRA's eicat without a knowledge boundary): undefined here too
            assert math.isnan(units.value()), metric.name
            continue
        assert reproduces(units, reported) is None, (metric.name, breakdown)
        assert len(units.ids) >= 2


def answer_by_item(request, rendered):  # a deterministic mix of letters, so that no score is trivial
    return "ABC"[zlib.crc32(rendered.encode("utf-8")) % 3]


@pytest.mark.parametrize("aggregate", ["pooled", "per_template"])
def test_kobbq_per_template_tallies_from_the_records_give_the_headlines(aggregate):
    summary, records = run_and_records(
        lambda store: kobbq_run("random", store=store, options={"limit": 400, "aggregate": aggregate, "prompts": "1,2,3"})
    )
    assert_reproduced(summary, records)
    assert_reproduced(summary, records, "category:age")


@pytest.mark.parametrize("overall", ["pooled", "category_mean"])
def test_cbbq_per_template_tallies_from_the_records_give_the_headlines(overall):
    summary, records = run_and_records(
        lambda store: run_with_fakes("cbbq", options={"mode": "generate", "overall": overall, "condition": "q_if,q", "limit": 80},
                                     store=store, generator=ScriptedGenerator(answer_by_item))
    )
    assert summary.metrics.condition == "q_if"  # the headline condition: its records only
    assert_reproduced(summary, records)
    assert_reproduced(summary, records, f"category:{summary.details.categories[0]}")


def by_length(context: str, continuation: str) -> float:
    return -float(len(continuation)) - (zlib.crc32(continuation.encode("utf-8")) % 7)


def test_libra_per_triplet_likelihoods_in_the_summary_give_the_headlines(costly):
    summary = run_with_fakes("libra", options={"knowledge_boundary": "off"}, scorer=ScriptedScorer(by_length)).summary
    assert_reproduced(summary, None)  # the summary keeps the triplets: no records needed
    assert_reproduced(summary, None, f"category:{next(iter(summary.metrics.by_category))}")


def test_records_that_are_not_at_hand_or_a_breakdown_not_kept_are_said():
    summary, records = run_and_records(lambda store: kobbq_run("random", store=store, options={"limit": 40}))
    unit_values = registry().benchmark("kobbq").unit_values_function()
    metric = registry().benchmark("kobbq").headline_metrics()[2]
    with pytest.raises(NoUnitValues, match="item records are not at hand"):
        unit_values(summary, None, metric, None)
    with pytest.raises(NoUnitValues, match="kept by category, label, not by 'group'"):
        unit_values(summary, records, metric, "group:x")


class NoUnits(RegistryCatalog):
    def unit_values(self, benchmark):
        return None


def test_a_benchmark_without_unit_values_leaves_the_baseline_criterion_inconclusive():
    reader = StoredRuns()
    ours = kobbq_run("unknown", options={"limit": 40}).summary
    theirs = kobbq_run("random", options={"limit": 40}).summary
    criterion = Criterion(name="c", benchmark="kobbq", metric="acc_amb", not_worse_than_baseline_by=0.1, allow_limited=True)
    request = CheckRequest(Policy(name="p", criteria=[criterion]), [reader.ref(ours)], [reader.ref(theirs)])
    verdict = check_policy(request, reader, NoUnits()).criteria[0]
    assert verdict.outcome == "inconclusive" and verdict.value is None
    assert verdict.reason.startswith("KoBBQ declares no per-unit values of its headlines, so no paired test can run")
