"""The headline card, the comparison card and what they read: sentences, paired differences, ranking, words, fonts."""

from __future__ import annotations

import re
import warnings
from html import unescape

import numpy as np
import pytest

from culturebias.adapters.reports.fonts import embedded_font_css, font_path, page_characters, use_script_fonts
from culturebias.adapters.reports.comparison_words import pair_sentence
from culturebias.adapters.reports.html.headline_card import headline_card
from culturebias.adapters.reports.words import prose, title_words, words
from culturebias.bootstrap.registry import registry
from culturebias.domain.comparison.headline_pairs import HeadlinePair, paired_pair, ranking
from culturebias.domain.kobbq.headlines import HEADLINES as KOBBQ
from culturebias.domain.policy.paired import UnitValues
from culturebias.domain.uncertainty.interval import Interval
from culturebias.testing.report_pages import PER_BENCHMARK, reference_summary

DIFF_BIAS_AMB = next(m for m in KOBBQ if m.name == "diff_bias_amb")


def visible(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", html))


@pytest.mark.parametrize("benchmark", list(PER_BENCHMARK))
def test_every_benchmark_opens_with_a_card_of_its_declared_headlines(benchmark):
    descriptor = registry().benchmark(benchmark)
    summary = reference_summary(PER_BENCHMARK[benchmark])
    card = visible(headline_card(summary, descriptor.headline_metrics(), descriptor.title))
    assert f"{descriptor.title}: the answer" in card and "example-org/model-7b" in card
    for metric in descriptor.headline_metrics():
        assert metric.label in card and metric.direction_words() in card
    assert "95% CI" in card
    if summary.limit is not None:
        assert f"A limited run (--limit {summary.limit.n})" in card and "not representative" in card


def test_a_sentence_reads_the_value_in_plain_words_with_its_interval_and_n():
    interval = Interval(low=0.08, high=0.16, n=2280, unit="template", method="BCa", resamples=2000, seed=0)
    assert DIFF_BIAS_AMB.reading(0.12, interval) == (
        "In ambiguous contexts the model chose the stereotyped answer 12 points more often than the "
        "counter-stereotyped one (95% CI 8 to 16, 2,280 templates)."
    )
    assert DIFF_BIAS_AMB.reading(-0.05, None).endswith("5 points less often than the counter-stereotyped one.")
    plain = next(m for m in registry().benchmark("libra").headline_metrics() if m.name == "eicat")
    assert plain.reading(61.25, None) == f"EiCAT is 61.2: {plain.meaning}."


def test_a_summary_without_an_interval_or_a_value_says_not_computed_and_why():
    summary = reference_summary("kobbq_replay")
    summary.metrics.overall.intervals.pop("diff_bias_amb")
    summary.metrics.overall.acc_dis.mean = float("nan")
    card = visible(headline_card(summary, KOBBQ, "KoBBQ"))
    assert "not computed: this run's summary holds no interval for it" in card
    assert "Not measured: it is undefined on this run's data." in card
    assert "None" not in card and "nan" not in card


def test_the_card_reads_the_summarys_own_not_measured_reason_and_sample_where_the_schema_has_them():
    model = type(reference_summary("kobbq_replay"))

    class Later(model):  # a later schema: the envelope carries not_measured and sample
        not_measured: str | None = None
        sample: dict | None = None

    summary = Later.model_validate(
        reference_summary("kobbq_replay").model_dump(mode="json")
        | {"not_measured": "no answer could be parsed", "sample": {"n": 50, "population": 4000, "strata": ["category"], "seed": 3}}
    )
    summary.metrics.overall.acc_amb.mean = None
    card = visible(headline_card(summary, KOBBQ, "KoBBQ"))
    assert "Not measured: no answer could be parsed." in card
    assert "A sampled run: 50 of 4,000 items, stratified by category (seed 3); not the whole data set" in card


def test_a_repeated_run_says_whose_numbers_the_card_shows_and_the_mean_over_the_runs():
    from culturebias.domain.mcbe.headlines import HEADLINES as MCBE
    from culturebias.domain.repeats import repeats_block

    summary = reference_summary("mcbe_tiny")
    summary.repeats = repeats_block("sample (temperature=0.7)", [0, 1, 2, 3], [{"overall": v} for v in (40.0, 44.0, 42.0, 46.0)])
    card = visible(headline_card(summary, MCBE, "McBE"))
    assert "Run 4 times (sample (temperature=0.7)): the values and intervals above are those of run 1" in card
    assert "overall McBE score 43.0 ± 2.6 (4 runs)" in card
    single = visible(headline_card(reference_summary("mcbe_tiny"), MCBE, "McBE"))
    assert "times (" not in single and "runs)" not in single


def _units(values: np.ndarray) -> UnitValues:
    return UnitValues("template", tuple(f"t{i}" for i in range(len(values))), values, lambda chosen: chosen.mean(axis=-1))


def test_a_paired_difference_is_significant_only_when_the_shift_is_real():
    rng = np.random.default_rng(1)
    base = rng.normal(0.2, 0.05, 200)
    shifted = paired_pair(DIFF_BIAS_AMB, ("A", "B"), (_units(base), _units(base + 0.05 + rng.normal(0, 0.02, 200))))
    assert shifted.significant and shifted.p_value < 0.001 and shifted.n == 200
    assert shifted.low < shifted.difference < shifted.high and shifted.difference == pytest.approx(0.05, abs=0.01)
    same = paired_pair(DIFF_BIAS_AMB, ("A", "B"), (_units(base), _units(base + rng.normal(0, 0.05, 200))))
    assert not same.significant and same.low < 0 < same.high
    sentence = pair_sentence(DIFF_BIAS_AMB, shifted)
    assert sentence.startswith("B does worse than A on diff-bias in ambiguous contexts (closer to 0 is better): +0.0")
    assert "p < 0.001, paired over 200 templates" in sentence


def test_the_ranking_ties_runs_whose_difference_is_not_significant():
    def pair(a: str, b: str, p: float | None) -> HeadlinePair:
        return HeadlinePair(metric="diff_bias_amb", a=a, b=b, difference=0.1, p_value=p)

    values = {"A": 0.30, "B": 0.02, "C": 0.05, "D": None}
    pairs = [pair("A", "B", 0.001), pair("A", "C", 0.01), pair("B", "C", 0.4)]
    assert ranking(DIFF_BIAS_AMB, values, pairs) == [["B", "C"], ["A"], ["D"]]
    assert ranking(DIFF_BIAS_AMB, values, [pair("B", "C", 0.4)]) == [["B", "C", "A"], ["D"]]  # untested: a tie


def test_keys_of_the_summary_read_as_words():
    assert title_words("diff_bias_amb.tukey_hsd") == "diff-bias ambiguous: Tukey HSD"
    assert title_words("table3 by label: biased40.jsonl: acc_amb") == "Table 3 by label: biased40.jsonl: accuracy ambiguous"
    assert words("unknown_wording") == "wording of the 'unknown' option" and words("statistics") == "statistical tests"
    assert prose("1 - acc_amb") == "1 - accuracy ambiguous" and prose("Qwen2.5-7B") == "Qwen2.5-7B"
    assert words("Māori.icat_local") == "Māori: iCAT (local triplets)"


needs_font = pytest.mark.skipif(font_path() is None, reason="noto-cjk-sans-otc is not installed")


@needs_font
def test_figures_draw_chinese_korean_and_macrons_without_a_missing_glyph(tmp_path):
    from culturebias.adapters.reports.markdown import new_figure, save_figure

    fig, ax = new_figure()
    ax.set_title("台女 台男 女性 한국어 모름 Māori")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font(s)" on tofu
        save_figure(fig, tmp_path / "script.png")
    use_script_fonts()  # idempotent


@needs_font
def test_a_page_embeds_a_font_subset_of_exactly_the_glyphs_it_uses():
    import base64
    import io

    from fontTools.ttLib import TTFont

    page = "<p>台女 한국어 Māori</p><script>[\"\\u6a21\"]</script>"
    css = embedded_font_css(page, "Traditional Chinese")
    font = TTFont(io.BytesIO(base64.b64decode(re.search(r"base64,([^)]+)\)", css).group(1))))
    assert set(map(chr, font.getBestCmap())) == {c for c in page_characters(page) if ord(c) > 0x7F}
    assert "模" in page_characters(page)
    assert embedded_font_css("<p>ascii only</p>") == ""


def test_a_figure_with_nothing_to_show_says_why_instead_of_drawing_empty_axes(tmp_path):
    from culturebias.adapters.reports import figure_marks
    from culturebias.adapters.reports.comparison_figures import grouped_bars

    said = []
    original = figure_marks.nothing_to_show
    try:
        import culturebias.adapters.reports.comparison_figures as figures

        figures.nothing_to_show = lambda ax, why: (said.append(why), original(ax, why))
        grouped_bars(tmp_path / "empty.png", ["a", "b"], {"m1": [None, None], "m2": [None, None]}, "t", "y")
        grouped_bars(tmp_path / "full.png", ["a", "b"], {"m1": [0.1, None]}, "t", "y")
    finally:
        figures.nothing_to_show = original
    assert said == ["no model has a value of these metrics (every one is undefined)"]
    assert (tmp_path / "empty.png").is_file() and (tmp_path / "full.png").is_file()


def test_every_bar_of_a_category_figure_states_its_n(tmp_path, monkeypatch):
    from culturebias.adapters.reports import bbq_report

    written = []
    monkeypatch.setattr(bbq_report, "label_bar_n", lambda ax, bars, values, ns, highs=(): written.append(list(ns)))
    summary = reference_summary("cbbq_replay")
    bbq_report.cbbq_figure(summary.metrics, tmp_path)
    counts = {name: block.counts for name, block in summary.metrics.by_category.items()}
    assert written[0] == [c.n_amb for c in counts.values()]
    assert written[1] == [c.n_dis - c.n_dis_unknown for c in counts.values()]
    assert len(written) == 3 and all(n > 0 for ns in written for n in ns)


def test_a_sentence_names_its_units_in_the_plural():
    def interval(unit: str) -> Interval:
        return Interval(low=0.0, high=60.0, n=20, unit=unit, method="BCa", resamples=2000, seed=0)

    mcbe = registry().benchmark("mcbe").headline_metrics()[0]
    assert "(95% CI 0.0 to 60.0, 20 instances (BEI))" in mcbe.reading(51.0, interval("instance (BEI)"))
    assert "20 sentence pairs)" in mcbe.reading(51.0, interval("sentence pair"))


def test_the_pages_results_are_the_benchmarks_own_tables_from_its_report_md():
    from culturebias.adapters.reports.html.markdown_sections import paper_sections

    markdown = (
        "# KoBBQ\n\n> **A limited run.**\n\n## Model\n\n- **generator**: `m`\n\n## Headline (all items)\n\n"
        "| metric | mean |\n|---|---|\n| Acc (ambiguous) | 0.406 |\n\n- aggregation: pooled; `outlier_sigma` 3\n"
        "- items_in_data: 4\n\n![figure](x.png)\n\n## Counts\n\n- answers: 72\n\n## How to read this report\n\n"
        "- **S_amb** = biased answers\n  over all answers\n"
    )
    shown, reading = paper_sections(markdown)
    assert "<h3>Headline (all items)</h3>" in shown and '<td class="num">0.406</td>' in shown
    assert "<code>outlier_sigma</code>" in shown and "items in data: 4" in shown  # a setting stays code, a key reads as words
    assert "generator" not in shown and "answers: 72" not in shown and "x.png" not in shown  # in the card and details
    assert "<summary>How to read this report</summary>" in reading
    assert "<li><strong>bias score, ambiguous</strong> = biased answers over all answers</li>" in reading
    assert paper_sections("no sections") == ("", "")


def test_a_model_keeps_its_colour_in_every_bar_figure_of_a_comparison(tmp_path, monkeypatch):
    import matplotlib.colors

    from culturebias.adapters.reports import comparison_figures

    drawn = []
    original = comparison_figures.save_figure
    monkeypatch.setattr(comparison_figures, "save_figure", lambda fig, path: (drawn.append(fig), original(fig, path))[1])
    series = {"alpha": [0.1, 0.2], "beta": [0.3, None], "gamma": [0.2, 0.1]}
    comparison_figures.grouped_bars(tmp_path / "a.png", ["x", "y"], series, "t", "v")
    comparison_figures.grouped_bars(tmp_path / "b.png", ["z"], {k: v[:1] for k, v in series.items()}, "t", "v")
    for fig in drawn:
        legend = fig.axes[0].get_legend_handles_labels()
        colours = {label: matplotlib.colors.to_hex(handle.patches[0].get_facecolor()) for handle, label in zip(*legend)}
        assert colours == {name: comparison_figures.model_colour(i).lower() for i, name in enumerate(series)}
