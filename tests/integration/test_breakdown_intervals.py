"""Every breakdown block (KoBBQ label type and category, CBBQ category, TWBias toxicity and category, McBE
category, LIBRA category and group) carries bootstrap intervals of its own units around its own values
(issue 27 point 6, issue 25 point 5)."""

from __future__ import annotations

import pytest

from culturebias.adapters.kobbq.files import KoBBQFiles
from culturebias.testing.context import run_with_fakes
from culturebias.testing.scripted import ScriptedGenerator

from tests.integration.test_uncertainty_runs import libra_summary, mcbe_summary, mixed_letters, twbias_summary


def assert_own_intervals(block, points: dict, unit: str, n: int | None = None) -> None:
    """Each named value has an interval over ``unit``s that holds it, computed by a statistic that reproduces it."""
    assert block.intervals is not None, block
    for name, point in points.items():
        interval = block.intervals[name]
        assert interval.unit == unit and interval.level == 0.95
        assert "statistic gives" not in (interval.note or ""), interval.note
        if n is not None:
            assert interval.n == n, (name, interval.n, n)
        if point is None:
            assert not interval.defined
        else:
            assert interval.contains(point), (name, point, interval)


def test_kobbq_label_and_category_blocks_resample_their_own_templates():
    dataset = KoBBQFiles(None).load()
    chosen = ("sexual_orientation", "political_orientation")
    items = [i for i in dataset.items if i.category in chosen]
    summary = run_with_fakes(
        "kobbq",
        options={"mode": "generate", "prompts": "1,2", "categories": ",".join(chosen), "statistics": False},
        dataset=dataset,
        report=False,
        generator=ScriptedGenerator(mixed_letters),
    ).summary
    metrics = summary.metrics
    assert len(metrics.by_category) >= 2 and len(metrics.by_label) >= 2
    for key, blocks in (("category", metrics.by_category), ("label", metrics.by_label)):
        for name, block in blocks.items():
            if key == "category":
                templates = {i.template_id for i in items if i.category == name}
            else:
                templates = {i.template_id for i in items if (i.label_annotation or "unlabelled") == name}
            points = {m: getattr(block, m).mean for m in ("acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis")}
            assert_own_intervals(block, points, "template", len(templates))
    widths = [i.high - i.low for b in metrics.by_category.values() for i in b.intervals.values() if i.defined]
    assert any(w > 0 for w in widths)
    # a category holds fewer templates than the whole run: its interval is the wider one
    overall = metrics.overall.intervals["diff_bias_amb"]
    widest = max(b.intervals["diff_bias_amb"].high - b.intervals["diff_bias_amb"].low for b in metrics.by_category.values())
    assert widest > overall.high - overall.low


def test_cbbq_category_blocks_carry_intervals_in_every_condition():
    summary = run_with_fakes(
        "cbbq",
        options={"mode": "generate", "limit": 6, "condition": "q,q_if"},
        report=False,
        generator=ScriptedGenerator(mixed_letters),
    ).summary
    metrics = summary.metrics
    assert len(metrics.by_category) >= 2
    for condition in metrics.by_condition.values():
        for block in condition.by_category.values():
            assert_own_intervals(block, {m: getattr(block, m) for m in ("s_amb", "s_dis", "s_total")}, "template")
    # each condition resamples its own answers: the two conditions' category intervals are not one computation
    first, second = (metrics.by_condition[c].by_category for c in ("q", "q_if"))
    assert any(first[c].intervals != second[c].intervals for c in first)


def test_twbias_toxicity_and_category_blocks_carry_intervals():
    summary = twbias_summary(min_pairs=3)
    for spec in summary.metrics.gender.values():
        assert spec.by_toxicity["all"].intervals == spec.intervals
        for name, group in [*spec.by_toxicity.items(), *spec.by_category.items()]:
            assert_own_intervals(group, {"bias_ratio": group.bias_ratio, "effect_size": group.effect_size}, "sentence pair")
            if name != "all":
                assert all("outliers as the run decided" in (i.note or "") for i in group.intervals.values())
                assert all(i.n <= group.n_rows for i in group.intervals.values())
    assert any(
        i.defined and i.high > i.low
        for spec in summary.metrics.gender.values() for g in spec.by_category.values() for i in g.intervals.values()
    )


def test_mcbe_category_cells_carry_intervals_of_each_task_and_their_mean():
    summary = mcbe_summary()
    for cell in summary.metrics.categories.values():
        assert_own_intervals(cell, {**cell.task_scores(), "mean": cell.mean}, "instance (BEI)", n=cell.n_beis)
    assert '"intervals"' in summary.metrics.categories["age"].model_dump_json()


def test_libra_category_and_group_blocks_carry_intervals():
    metrics = libra_summary().metrics
    assert metrics.by_group and metrics.by_category
    for block in [*metrics.by_group.values(), *metrics.by_category.values()]:
        points = {name: getattr(block, name) for name in ("lms", "ss", "icat_local", "jsd")}
        assert_own_intervals(block, points, "triplet", n=block.valid)
    assert sum(b.valid for b in metrics.by_group.values()) == metrics.overall.valid


def test_resamples_0_leaves_every_breakdown_without_intervals():
    from dataclasses import replace

    from culturebias.testing.context import fake_context

    def no_bootstrap(run_id, store):
        return replace(fake_context(store=store, run_id=run_id, generator=ScriptedGenerator(mixed_letters)), bootstrap_resamples=0)

    summary = run_with_fakes("kobbq", options={"mode": "generate", "prompts": "1", "limit": 30, "statistics": False}, context=no_bootstrap).summary
    assert all(b.intervals is None for b in [*summary.metrics.by_label.values(), *summary.metrics.by_category.values()])
