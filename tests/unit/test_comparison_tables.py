"""Pages a reader understands: comparison.html's detail views as tables of words, a sampled run in one sentence.

The detail views put a metric per row and a model per column, a value and its interval in one cell
("0.341 [0.279, 0.393]"); no row is named ``model / intervals``, no column ``accuracy ambiguous: low``,
no heading starts with ":". A sampled run's report says what it evaluated in one sentence and lists
its strata in a table behind a disclosure, never as raw ``stratum=... units_in_population=...`` text.
"""

from __future__ import annotations

import math
import re
from html import unescape

import pytest

from culturebias.adapters.reports.html.comparison_tables import Measure, comparison_view, fold
from culturebias.adapters.reports.html.run_report import run_page
from culturebias.bootstrap.registry import registry
from culturebias.testing.kobbq_runs import kobbq_run
from culturebias.testing.report_pages import PER_BENCHMARK, reference_summary, write_comparison

INTERNAL_KEY = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")
DOTTED_KEY = re.compile(r"\b[A-Za-z]\w*\.[A-Za-z]\w*_\w+")
INTERVAL_PART = re.compile(r": (low|high|level|n|unit|method|resamples|seed|note)$")
CELL = re.compile(r"^−?-?\d[\d,]*\.\d+ \[−?-?\d[\d,]*\.\d+, −?-?\d[\d,]*\.\d+\]")


def visible(html: str) -> str:
    html = re.sub(r"<script.*?</script>|<style.*?</style>|<code>.*?</code>", " ", html, flags=re.S)
    html = re.sub(r"</?(span|strong|em)\b[^>]*>", "", html)  # inline: no space of their own
    return unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<(br|/tr|/p|/h\d|/li|/small|/summary)\b[^>]*>", "\n", html)))


def texts(html: str, tag: str) -> list[str]:
    return [re.sub(r"\s+", " ", visible(m)).strip() for m in re.findall(rf"<{tag}\b[^>]*>(.*?)</{tag}>", html, re.S)]


def detail_views(html: str) -> str:
    """The comparison body's views: every disclosure from the first to the runs table."""
    start = html.index('<details class="more">')
    return html[start:html.index("<summary>Runs</summary>")]


INTERVAL = {"level": 0.95, "n": 27, "unit": "template", "method": "BCa", "resamples": 2000, "seed": 0, "note": None}
TABLE3 = {
    "alpha": {
        "acc_amb": {"mean": 0.341, "std": 0.03, "n_prompts": 2, "per_prompt": {"1": 0.362, "2": 0.319}},
        "ooc_ratio": {"mean": 0.0, "std": 0.0, "n_prompts": 2, "per_prompt": {"1": 0.0, "2": 0.0}},
        "intervals": {"acc_amb": {"low": 0.279, "high": 0.393, **INTERVAL}},
    },
    "beta": {
        "acc_amb": {"mean": 0.031, "std": 0.01, "n_prompts": 2, "per_prompt": {"1": 0.021, "2": 0.041}},
        "ooc_ratio": {"mean": 0.25, "std": 0.0, "n_prompts": 2, "per_prompt": {"1": 0.25, "2": 0.25}},
        "intervals": {"acc_amb": {"low": 0.012, "high": 0.05, **INTERVAL}},
    },
}


def test_an_interval_is_folded_into_the_value_it_bounds():
    folded = fold(TABLE3["beta"])
    assert set(folded) == {"acc_amb", "ooc_ratio"}, "the intervals block is no row of its own"
    measure = folded["acc_amb"]
    assert isinstance(measure, Measure) and (measure.value, measure.low, measure.high) == (0.031, 0.012, 0.05)
    assert folded["ooc_ratio"].value == 0.25 and folded["ooc_ratio"].low is None


def test_a_block_per_model_is_a_row_per_metric_and_a_column_per_model():
    html = comparison_view("table3", TABLE3, ["alpha", "beta"])
    assert texts(html, "th")[:3] == ["metric", "alpha", "beta"]
    rows = {r[0]: r[1:] for r in (texts(row, "t[hd]") for row in re.findall(r"<tr>(.*?)</tr>", html, re.S))}
    assert list(rows) == ["metric", "accuracy ambiguous", "out-of-choice ratio"]
    alpha, beta = rows["accuracy ambiguous"]
    assert beta.startswith("0.031 [0.012, 0.050]") and alpha.startswith("0.341 [0.279, 0.393]")
    assert "± 0.010 over prompts (1: 0.021, 2: 0.041); 95% BCa interval over 27 templates" in beta
    for number in (0.341, 0.279, 0.393, 0.95, 0.021, 0.05):
        assert f'data-v="{number!r}"' in html, "every number stays on the page"


def test_a_breakdown_of_blocks_per_model_is_one_table_named_by_its_dimension():
    by_label = {"NC": TABLE3, "ST": TABLE3}
    html = comparison_view("table3_by_label", by_label, ["alpha", "beta"])
    assert html.count("<table") == 1
    assert texts(html, "th")[:4] == ["label", "metric", "alpha", "beta"]
    turned = comparison_view("by_label", {"alpha": {"NC": TABLE3["alpha"]}, "beta": {"NC": TABLE3["beta"]}}, ["alpha", "beta"])
    assert texts(turned, "th")[:4] == ["label", "metric", "alpha", "beta"] and "0.031 [0.012, 0.050]" in visible(turned)


@pytest.mark.parametrize("benchmark", list(PER_BENCHMARK))
def test_every_benchmarks_comparison_details_read_as_words(benchmark, tmp_path):
    name = PER_BENCHMARK[benchmark]
    runs = [reference_summary(name, "run-a", "org/alpha-7b"), reference_summary(name, "run-b", "org/beta-7b")]
    html = write_comparison(runs, tmp_path).read_text(encoding="utf-8")
    views = detail_views(html)
    headings = [h for tag in ("h3", "h4", "h5", "h6", "th", "summary") for h in texts(views, tag)]
    assert headings
    assert [h for h in headings if h.startswith(":")] == []
    assert [h for h in headings if INTERVAL_PART.search(h) or h.endswith("/ intervals") or "|" in h] == []
    shown = visible(views)
    assert INTERNAL_KEY.findall(shown) == [] and DOTTED_KEY.findall(shown) == []
    cells = [visible(c).strip() for c in re.findall(r'<td class="num measure"[^>]*>(.*?)</td>', views, re.S)]
    assert [c for c in cells if "[" in c and not c.startswith("[") and not CELL.match(c)] == []
    if benchmark != "mcbe":  # McBE stores its intervals apart from its values: "[low, high]" cells
        assert any(CELL.match(c) for c in cells), "a value and its interval share one cell"


@pytest.fixture(scope="module")
def sampled():
    return kobbq_run("biased", name="stereotyper", options={"sample": 168}).summary


def test_a_sampled_run_says_so_in_one_sentence_and_lists_its_strata_in_a_captioned_table(sampled):
    descriptor = registry().benchmark("kobbq")
    html = run_page(sampled, headlines=descriptor.headline_metrics(), benchmark_title="KoBBQ")
    card = html[html.index('id="headline"'):html.index("</section>", html.index('id="headline"'))]
    sentence = [li for li in texts(card, "li") if li.startswith("A sampled run")]
    assert sentence == [
        f"A sampled run: {sampled.sample.n} of 2,280 items ({sampled.sample.units} of 269 templates), stratified by "
        "category × label type × context condition (seed 0); not the whole data set; the strata are listed below."
    ]
    assert "stratum=" not in html and "units_in_population" not in visible(html)
    strata = html[html.index("<summary>Sampled strata</summary>"):]
    strata = strata[:strata.index("</details>")]
    assert 'class="caption muted"' in strata and "in proportion to its share of the items" in strata
    assert texts(strata, "th") == [
        "category", "label type", "templates drawn", "templates in population", "items drawn", "items in population",
    ]
    assert "Every stratum has context condition ambiguous + disambiguated." in strata
    rows = [texts(r, "td") for r in re.findall(r"<tr>(.*?)</tr>", strata.split("<tbody>")[1], re.S)]
    assert len(rows) == len(sampled.sample.strata)
    assert sum(int(r[-2]) for r in rows) == sampled.sample.n
    assert sum(int(r[-1].replace(",", "")) for r in rows) == 2280
    assert all(not math.isnan(float(r[-1].replace(",", ""))) and INTERNAL_KEY.findall(" ".join(r)) == [] for r in rows)
    assert html.index("<summary>Sampled strata</summary>") < html.index("<h2>Results</h2>")


def test_a_models_items_open_under_a_row_of_their_own():
    from culturebias.adapters.reports.html.drilldown import Drill

    records = [{"run": "alpha", "item_id": f"q{n}", "metadata": {"label": "NC"}} for n in range(3)]
    html = comparison_view("table3_by_label", {"NC": TABLE3}, ["alpha", "beta"], Drill(records, known=["alpha", "beta"]))
    rows = re.findall(r"<tr[^>]*>.*?</tr>", html, re.S)
    buttons = [i for i, row in enumerate(rows) if 'class="dd"' in row]
    assert len(buttons) == 1, "beta kept no items: no button of its own"
    row = rows[buttons[0]]
    assert texts(row, "th") == ["NC", "items of alpha"] and ">3 items</button>" in row
    control = re.search(r'aria-controls="([^"]+)"', row).group(1)
    assert rows[buttons[0] + 1].startswith(f'<tr class="drill" id="{control}" hidden>')
