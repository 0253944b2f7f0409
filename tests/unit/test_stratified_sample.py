"""``--sample N``: a seeded sample stratified by the benchmark's design cells, whole units, recorded and honest."""

from __future__ import annotations

import random
from collections import Counter, defaultdict

import numpy as np
import pytest

from culturebias.bootstrap.settings import load_settings
from culturebias.domain.bbq.model import QAItem
from culturebias.domain.cbbq.strata import STRATA as CBBQ_STRATA
from culturebias.domain.errors import ConfigError
from culturebias.domain.kobbq.strata import STRATA as KOBBQ_STRATA
from culturebias.domain.stratified import draw_sample
from culturebias.domain.uncertainty.bootstrap import unit_interval
from culturebias.testing.kobbq_runs import bundled_kobbq, kobbq_run


def items() -> list[QAItem]:
    return list(bundled_kobbq().items)


def test_every_stratum_is_represented_in_proportion_with_whole_templates():
    population = items()
    drawn, block = draw_sample(population, 300, seed=3, strata=KOBBQ_STRATA)
    assert block.method == "stratified" and block.population == len(population) == 2280
    assert block.n == len(drawn) and abs(block.n - 300) <= 60
    assert block.cells == ["category", "label type", "context condition"] and block.unit == "template"
    by_template = Counter(i.template_id for i in population)
    drawn_templates = Counter(i.template_id for i in drawn)
    assert all(drawn_templates[t] == by_template[t] for t in drawn_templates)  # whole templates only
    cells = {(i.category, i.label_annotation) for i in population}
    assert {(i.category, i.label_annotation) for i in drawn} == cells  # every stratum, at least one template
    assert len(block.strata) == len(cells) and all(s.units >= 1 for s in block.strata)
    for stratum in block.strata:  # in proportion: the stratum's share of the items, in whole templates (at least one)
        share = 300 * stratum.items_in_population / len(population)
        mean_size = stratum.items_in_population / stratum.units_in_population
        assert stratum.units == max(1, round(share / mean_size)), stratum
    # both context conditions of a drawn template come along in equal measure
    assert Counter(i.context_condition for i in drawn) == {"ambiguous": block.n // 2, "disambiguated": block.n // 2}


def test_the_draw_is_seeded_and_another_seed_draws_other_templates():
    population = items()
    first, _ = draw_sample(population, 300, seed=1, strata=KOBBQ_STRATA)
    again, _ = draw_sample(population, 300, seed=1, strata=KOBBQ_STRATA)
    other, _ = draw_sample(population, 300, seed=2, strata=KOBBQ_STRATA)
    assert first == again and first != other


def test_cbbq_strata_cross_category_condition_and_polarity():
    population = [i for i in items()]
    _, block = draw_sample(population, 100, seed=0, strata=CBBQ_STRATA)
    assert block.cells == ["category", "context condition", "question polarity"]
    assert all("ambiguous" in s.stratum for s in block.strata)


def test_without_strata_a_simple_random_sample_of_units_said_so():
    population = items()
    drawn, block = draw_sample(population, 100, seed=0, strata=None, unit_of=lambda i: i.template_id)
    assert block.method == "simple random" and block.unit == "unit" and block.cells == []
    assert "simple random sample" in block.sentence()
    assert len({i.template_id for i in drawn}) == block.units


def test_a_sample_as_large_as_the_data_uses_all_and_says_so():
    population = items()
    drawn, block = draw_sample(population, len(population), seed=0, strata=KOBBQ_STRATA)
    assert drawn == population and block.method == "all" and block.n == block.population
    assert f"--sample {len(population)} is not smaller than the data" in block.sentence()


def test_a_sample_larger_than_the_data_is_refused_naming_the_setting_and_the_size():
    population = items()
    with pytest.raises(ConfigError, match=f"protocol.sample={len(population) + 1} is more than the {len(population):,} items"):
        draw_sample(population, len(population) + 1, seed=0, strata=KOBBQ_STRATA)


@pytest.mark.parametrize("n", [0, -3])
def test_zero_or_negative_sizes_are_refused_naming_the_setting(n):
    with pytest.raises(ConfigError, match="protocol.sample"):
        draw_sample(items(), n, seed=0, strata=KOBBQ_STRATA)
    with pytest.raises(ConfigError, match="protocol.sample"):
        load_settings(None, [f"protocol.sample={n}"]).protocol_options("kobbq")


def test_sample_with_limit_is_refused_pick_one():
    with pytest.raises(ConfigError, match="protocol.sample and protocol.limit.*pick one"):
        load_settings(None, [], limit=5, sample=100).protocol_options("cbbq")


def test_the_expanders_sample_values_are_refused_in_a_run_naming_the_expander():
    with pytest.raises(ConfigError, match="protocol.sample.*culturebias expand kobbq"):
        load_settings(None, ["protocol.sample=per_template"]).protocol_options("kobbq")


def test_a_sampled_run_records_its_sample_and_its_report_opens_with_it(tmp_path):
    result = kobbq_run("biased", options={"sample": 200}, out_dir=tmp_path)
    summary = result.summary
    assert summary.sample is not None and summary.limit is None
    assert summary.counts.items == summary.sample.n and summary.sample.population == 2280
    assert summary.sample.seed == 0  # run.seed without protocol.sample_seed
    assert summary.as_dict()["sample"]["strata"][0].keys() >= {"stratum", "units", "items"}
    assert summary.notes[0].startswith("evaluated a stratified sample of")
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    banner = f"> **A sampled run: {summary.sample.n} of 2,280 items ({summary.sample.units} of 269 templates), stratified by " \
        "category × label type × context condition (seed 0);"
    assert banner in report and report.index(banner) < report.index("## ")
    # one sentence on the first screen; the strata in a table further down, never inline
    first = next(line for line in report.splitlines() if line.startswith("> **A sampled run"))
    assert first.count(". ") == 0 and "stratum=" not in report and "units_in_population" not in report
    strata = report[report.index("## Sampled strata"):].split("\n## ")[0]
    head = "| category | label type | templates drawn | templates in population | items drawn | items in population |"
    assert head in strata and report.index(banner) < report.index("## Sampled strata")
    rows = [line for line in strata.splitlines() if line.startswith("| ") and line != head]
    assert len(rows) == len(summary.sample.strata)
    assert sum(int(r.split(" | ")[-2]) for r in rows) == summary.sample.n
    assert "| disability status | ST |" in strata
    assert "Every stratum has context condition ambiguous + disambiguated." in strata  # a template holds both
    reseeded = kobbq_run("biased", options={"sample": 200, "sample_seed": 9}).summary
    assert reseeded.sample.seed == 9 and reseeded.details.template_scores.keys() != summary.details.template_scores.keys()


def test_an_unsampled_run_has_no_sample_block():
    assert kobbq_run("biased", options={"limit": 2}).summary.sample is None


# -- the idea, on replayed answers -------------------------------------------------------------------------


def replayed_answers(population: list[QAItem], spread: float) -> dict[str, bool]:
    """One recorded reply per ambiguous item (True: the biased answer) of a model whose bias rate grows by
    ``spread`` from the first category to the last."""
    rng = random.Random(42)
    categories = sorted({i.category for i in population})
    rate = {c: 0.4 + spread * (k / (len(categories) - 1) - 0.5) for k, c in enumerate(categories)}
    return {i.sample_id: rng.random() < rate[i.category] for i in population if i.ambiguous}


def biased_share_interval(chosen: list[QAItem], replies: dict[str, bool], seed: int):
    """The pooled share of biased answers on ambiguous contexts, with its template-bootstrap 95 % interval."""
    tallies: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for item in chosen:
        if item.ambiguous:
            tallies[item.template_id][0] += replies[item.sample_id]
            tallies[item.template_id][1] += 1
    table = np.array(list(tallies.values()), dtype=float)
    point = table[:, 0].sum() / table[:, 1].sum()
    interval = unit_interval(
        lambda idx: table[idx, 0].sum(axis=-1) / table[idx, 1].sum(axis=-1), len(table), unit="template", seed=seed,
        point=point, resamples=400,
    )
    return point, interval


def coverage(replies: dict[str, bool], seeds: range) -> float:
    population = items()
    full, _ = biased_share_interval(population, replies, seed=0)
    covered = 0
    for seed in seeds:
        drawn, _ = draw_sample(population, 300, seed=seed, strata=KOBBQ_STRATA)
        covered += biased_share_interval(drawn, replies, seed=seed)[1].contains(full)
    return covered / len(seeds)


# (spread of the bias rate across categories, the band the coverage of 120 seeds must fall in). Without
# differences between strata the interval is the nominal 95 %; with large ones stratification makes the
# sample's real variance smaller than the bootstrap's (module doc of domain/stratified.py): conservative.
@pytest.mark.parametrize(("spread", "band"), [(0.0, (0.90, 0.99)), (0.6, (0.90, 1.0))])
def test_the_sampled_interval_covers_the_full_data_value_about_95_percent_of_the_time(spread, band):
    population = items()
    replies = replayed_answers(population, spread)
    found = coverage(replies, range(120))
    assert band[0] <= found <= band[1], found
    if spread:  # the band fails for the first-N sample --limit takes: one category, far from the full value
        full, _ = biased_share_interval(population, replies, seed=0)
        assert not biased_share_interval(population[:300], replies, seed=0)[1].contains(full)


@pytest.mark.parametrize("name", ["twbias", "kobbq", "cbbq", "mcbe", "libra"])
def test_every_builtin_declares_its_strata_on_its_descriptor_and_samples_by_them(name):
    import importlib

    from culturebias.bootstrap.registry import registry

    strata = registry().benchmark(name).sample_strata()
    assert strata is importlib.import_module(f"culturebias.domain.{name}.strata").STRATA
    assert registry().benchmark(name).options_model()(sample=5).sample == 5


@pytest.mark.parametrize(
    ("benchmark", "options", "cells"),
    [
        ("libra", {"knowledge_boundary": "off", "sample": 10}, ["group"]),
        ("mcbe", {"tasks": "pc", "sample": 8}, ["category"]),
    ],
)
def test_mcbe_and_libra_sample_their_units_by_their_cells(benchmark, options, cells):
    from culturebias.testing.context import run_with_fakes
    from culturebias.testing.scripted import ScriptedScorer

    summary = run_with_fakes(benchmark, options=options, scorer=ScriptedScorer(lambda c, x: -float(len(x)))).summary
    assert summary.sample is not None and summary.sample.cells == cells
    assert summary.sample.n < summary.sample.population and summary.sample.method == "stratified"
    assert summary.notes[0].startswith("evaluated a stratified sample of")


def test_a_policy_does_not_decide_on_a_sampled_run_unless_it_allows_limited_runs():
    from culturebias.domain.policy.decide import limitation

    sampled = kobbq_run("biased", options={"sample": 200}).summary
    assert limitation(sampled) == f"a run on {sampled.sample.sentence()} (--sample 200)"
    everything = kobbq_run("biased", options={"sample": 2280, "prompts": "1"}).summary  # all 2,280 items
    assert everything.sample.method == "all" and limitation(everything) is None
