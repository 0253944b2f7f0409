"""``--limit N``: one documented meaning per benchmark, recorded in the summary, shouted in the report."""

from __future__ import annotations

import pytest

from culturebias.adapters.reports.markdown import header_section
from culturebias.testing.scripted import ScriptedScorer
from culturebias.bootstrap.registry import BenchmarkDescriptor, registry
from culturebias.domain.summary import RunLimit, run_limit
from culturebias.domain.twbias.options import TWBiasOptions
from culturebias.testing.context import run_with_fakes

BANNER = "A limited run: not comparable to a full one."


def by_length(context: str, continuation: str) -> float:
    return -float(len(continuation))


@pytest.mark.parametrize("descriptor", [d for d in registry().benchmarks.all() if isinstance(d, BenchmarkDescriptor)])
def test_every_benchmark_has_a_limit_with_its_meaning_written_down(descriptor):
    field = descriptor.options_model().model_fields.get("limit")
    assert field is not None, f"{descriptor.name} has no protocol.limit"
    assert field.description and field.description.startswith("the first N "), descriptor.name


def test_the_meanings_differ_where_the_benchmarks_differ():
    meanings = {
        d.name: d.options_model().model_fields["limit"].description
        for d in registry().benchmarks.all()
        if isinstance(d, BenchmarkDescriptor)
    }
    assert "origin group" in meanings["twbias"]
    assert "samples file" in meanings["kobbq"]
    assert "ambiguous file and of its disambiguated file" in meanings["cbbq"]
    assert "BEIs of each category" in meanings["mcbe"]
    assert "triplets" in meanings["libra"]


def test_run_limit_reads_the_options():
    assert run_limit(TWBiasOptions()) is None
    assert run_limit(TWBiasOptions(limit=3)) == RunLimit(n=3, meaning="the first N sentences of each origin group's file")
    assert run_limit(None) is None


def test_libra_limit_takes_the_first_triplets(tmp_path, costly):
    full = run_with_fakes("libra", options={"knowledge_boundary": "off"}, scorer=ScriptedScorer(by_length)).summary
    limited = run_with_fakes(
        "libra", options={"knowledge_boundary": "off", "limit": 5}, scorer=ScriptedScorer(by_length), out_dir=tmp_path
    ).summary
    assert full.limit is None and full.counts.triplets > 5
    assert limited.counts.triplets == 5
    assert limited.details.triplets.id == full.details.triplets.id[:5]
    assert limited.limit == RunLimit(n=5, meaning=limited.limit.meaning) and "triplets" in limited.limit.meaning
    assert "Only the first 5 triplets of the triplet file were evaluated." in limited.notes
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert BANNER in report and "`--limit 5` evaluated only the first 5 triplets" in report
    assert report.index(BANNER) < report.index("## ")  # before any number


@pytest.mark.parametrize(
    ("benchmark", "options", "items"),
    [
        ("kobbq", {"limit": 2, "prompts": "1", "permutations": "0", "statistics": "false"}, lambda s: s.counts.items),
        ("cbbq", {"limit": 1}, lambda s: s.counts.ambiguous_items),
    ],
)
def test_bbq_limits_are_recorded_in_the_summary_and_the_report(benchmark, options, items, tmp_path):
    result = run_with_fakes(benchmark, options=options, scorer=ScriptedScorer(by_length), out_dir=tmp_path)
    summary = result.summary
    assert summary.limit is not None and summary.limit.n == options["limit"]
    assert summary.limit.meaning == registry().benchmark(benchmark).options_model().model_fields["limit"].description
    assert summary.as_dict()["limit"] == {"n": options["limit"], "meaning": summary.limit.meaning}
    if benchmark == "kobbq":
        assert items(summary) == 2
    else:  # one ambiguous item per category file
        assert items(summary) == summary.counts.disambiguated_items == len(summary.metrics.by_category)
    assert BANNER in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_a_full_run_has_no_banner(tmp_path):
    result = run_with_fakes(
        "kobbq", options={"prompts": "1", "permutations": "0", "statistics": "false"}, scorer=ScriptedScorer(by_length),
        out_dir=tmp_path,
    )  # fmt: skip
    assert result.summary.limit is None and result.summary.as_dict()["limit"] is None
    assert BANNER not in (tmp_path / "report.md").read_text(encoding="utf-8")
    assert BANNER not in header_section(result.summary, "KoBBQ")


def test_the_docs_limit_table_says_what_the_options_models_say():
    """The site's --limit table (docs/running.md) is generated from each benchmark's ``limit`` description."""
    from pathlib import Path

    from culturebias.bootstrap.reference_pages import render

    page = (Path(__file__).resolve().parents[2] / "docs" / "running.md").read_text(encoding="utf-8")
    assert "<!-- generated:limits -->" in page
    table = render("<!-- generated:limits -->").replace("`", "")
    for descriptor in registry().benchmarks.all():
        meaning = descriptor.options_model().model_fields["limit"].description
        assert meaning and f"| {descriptor.name} | {meaning.replace('`', '')} |" in table, descriptor.name
