"""Caveats travel with the number (issue 33): every warning of a run reaches every output that shows its numbers."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest

import culturebias
from culturebias.adapters.stores.sqlite_store import SQLiteResultStore
from culturebias.bootstrap.governance import exported_run
from culturebias.domain import caveats as collect
from culturebias.domain.caveats import COLLECTORS, FEW_UNITS, Caveat, items_words, run_caveats
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.kobbq.headlines import HEADLINES
from culturebias.domain.policy.model import Criterion, Policy
from culturebias.domain.policy.verdict import PolicyVerdict
from culturebias.testing.kobbq_runs import kobbq_run

SAMPLE = 168  # about 168 of KoBBQ's 2,280 items, drawn by whole templates: 224 items of 27 templates
SAMPLED_ITEMS = "224 of 2,280 (stratified sample)"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """A sampled and a full KoBBQ run of scripted models, each in its folder and both in one store."""
    root = tmp_path_factory.mktemp("caveats")
    store = SQLiteResultStore(root / "results.sqlite")
    try:
        kobbq_run("biased", name="sampled", out_dir=root / "sampled", store=store, options={"sample": SAMPLE})
        kobbq_run("unknown", name="full", out_dir=root / "full", store=store)
    finally:
        store.close()
    return {"sampled": root / "sampled", "full": root / "full", "store": root / "results.sqlite"}


def kinds(found: list[Caveat]) -> list[str]:
    return [c.kind for c in found]


# -- one collector per kind ----------------------------------------------------------------------------
def test_a_limited_run_says_how_far_it_got_and_a_full_one_says_nothing():
    limited = kobbq_run("unknown", options={"limit": 120}).summary
    (caveat,) = collect.limited(limited)
    assert caveat.kind == "limited" and caveat.short == "--limit 120"
    assert caveat.text.startswith("A limited run (--limit 120): it evaluated only the first 120 items")
    assert collect.limited(limited.model_copy(update={"limit": None})) == []
    assert items_words(limited) == "first 120 (--limit)"


def test_a_sampled_run_says_how_many_of_how_many_and_how_it_was_drawn(runs):
    summary = culturebias.load_summary(runs["sampled"])
    (caveat,) = collect.sampled(summary)
    assert caveat.short == "224 of 2,280 items (stratified sample)"
    assert caveat.text.startswith(
        "A sampled run: 224 of 2,280 items (27 of 269 templates), stratified by category × label type × context condition "
        "(seed 0); not the whole data set"
    )
    assert items_words(summary) == SAMPLED_ITEMS
    # --sample N at or above the data's size evaluated everything: no caveat, "all"
    whole = summary.model_copy(update={"sample": summary.sample.model_copy(update={"method": "all"})})
    assert collect.sampled(whole) == [] and items_words(whole) == "all"


def test_a_run_on_some_categories_is_a_sampled_run():
    summary = SimpleNamespace(limit=None, sample=None, config={"protocol": {"categories": ["age", "gender"]}})
    (caveat,) = collect.sampled(summary)
    assert caveat.short == "categories age,gender only" and "protocol.categories=age,gender" in caveat.text
    assert items_words(summary) == "categories age,gender only"
    assert collect.sampled(SimpleNamespace(limit=None, sample=None, config={"protocol": {"categories": None}})) == []


def test_a_small_model_is_named_with_its_size_and_a_large_one_is_not():
    summary = kobbq_run("unknown", options={"limit": 40}).summary
    assert collect.small_model(summary) == []  # a scripted model declares no size
    small = summary.model.model_copy(update={"generator": ModelIdentity(backend="hf", model="smol", parameters=135_000_000)})
    (caveat,) = collect.small_model(summary.model_copy(update={"model": small}))
    assert caveat.short == "small model (smol)" and caveat.text.startswith("A small model (smol, 135M parameters)")
    large = summary.model.model_copy(update={"generator": ModelIdentity(backend="hf", model="big", parameters=7_000_000_000)})
    assert collect.small_model(summary.model_copy(update={"model": large})) == []


def test_a_judge_given_up_says_how_many_beis_lost_their_ba():
    (caveat,) = collect.judge_given_up(SimpleNamespace(counts={"ba_judge_stopped": 1234}))
    assert caveat.kind == "judge_given_up" and "1,234 BEIs were left without its verdict" in caveat.text
    assert collect.judge_given_up(SimpleNamespace(counts={"ba_judge_stopped": 0})) == []
    assert collect.judge_given_up(SimpleNamespace(counts={})) == []


def test_a_mode_other_than_the_papers_is_named():
    answering = {"mode": "likelihood", "papers_mode": "generate", "matches_papers": False}
    metrics = {"answering": answering, "reasoning": {"decoding": "greedy"}, "comparison": "embedding"}
    found = collect.not_paper_mode(SimpleNamespace(metrics=metrics))
    assert kinds(found) == ["not_paper_mode"] * 3
    assert found[0].text.startswith("Answers were read in likelihood mode, not the papers' generate mode")
    assert "greedily; the paper sampled it" in found[1].text and "embedding" in found[2].text
    as_paper = {"answering": {**answering, "mode": "generate", "matches_papers": True}, "reasoning": {"decoding": "sampled"},
                "comparison": "judge"}
    assert collect.not_paper_mode(SimpleNamespace(metrics=as_paper)) == []


def test_few_units_names_the_metrics_whose_interval_rests_on_them():
    summary = kobbq_run("unknown", options={"limit": 120}).summary  # 15 templates
    (caveat,) = collect.few_units(summary, HEADLINES)
    assert caveat.metric == "acc_amb, acc_dis, diff_bias_amb, diff_bias_dis" and caveat.short == "intervals on 15 templates"
    assert f"rests on 15 templates (fewer than {FEW_UNITS})" in caveat.text
    assert "accuracy in ambiguous contexts" in caveat.text and "acc_amb" not in caveat.text  # shown on pages: words
    assert collect.few_units(summary, ()) == []  # without the benchmark's headlines there is nothing to read


def test_a_run_not_measured_says_why():
    (caveat,) = collect.not_measured(SimpleNamespace(not_measured="no answer could be parsed"))
    assert caveat.text == "Not measured: no answer could be parsed."
    assert collect.not_measured(SimpleNamespace(not_measured=None)) == []


def test_headline_numbers_built_only_from_few_pairs_come_first(monkeypatch):
    assert collect.low_power(SimpleNamespace(not_measured=None)) == []  # a summary read as JSON: nothing to ask
    summary = kobbq_run("unknown", options={"limit": 120}).summary
    assert collect.low_power(summary) == []  # a benchmark without such cells says nothing here
    # TWBias says it (features/twbias.feature: a run whose every test rests on few pairs); any summary may.
    monkeypatch.setattr(type(summary), "headline_low_power", lambda self: "Every test of this run rests on few pairs.")
    first = run_caveats(summary, HEADLINES)[0]
    assert (first.kind, first.short, first.text) == ("few_units", "few pairs, low power", "Every test of this run rests on few pairs.")
    assert kinds(run_caveats(summary, HEADLINES)) == ["few_units", "limited", "few_units"]


def test_run_caveats_gathers_every_collector_in_order():
    assert len(COLLECTORS) == 9
    summary = kobbq_run("unknown", options={"limit": 120}).summary
    assert kinds(run_caveats(summary, HEADLINES)) == ["limited", "few_units"]
    assert kinds(run_caveats(summary)) == ["limited"]


# -- the comparison ------------------------------------------------------------------------------------
def test_a_sampled_run_is_never_all_items_in_the_comparison_json_markdown_and_html(runs, tmp_path):
    comparison = culturebias.compare([runs["sampled"], runs["full"]], out=tmp_path)
    sampled, full = comparison.runs
    assert (sampled.items, full.items) == (SAMPLED_ITEMS, "all")
    assert kinds(sampled.caveats) == ["sampled", "few_units"] and full.caveats == []
    payload = json.loads((tmp_path / "comparison.json").read_text(encoding="utf-8"))
    assert payload["schema_version"] == "1.3"
    assert payload["runs"][0]["caveats"][0]["kind"] == "sampled" and payload["runs"][0]["items"] == SAMPLED_ITEMS
    assert any(f"{sampled.run_id}: {SAMPLED_ITEMS}" in note and f"{full.run_id}: all" in note for note in comparison.notes)
    markdown = (tmp_path / "comparison.md").read_text(encoding="utf-8")
    row = next(line for line in markdown.splitlines() if line.startswith("| sampled |"))
    assert f"| {SAMPLED_ITEMS} |" in row and "| all |" not in row
    assert "### Caveats" in markdown and f"  - {sampled.caveats[0].text}" in markdown
    html = (tmp_path / "comparison.html").read_text(encoding="utf-8")
    assert f"<td>{SAMPLED_ITEMS}</td>" in html and 'id="caveats"' in html
    assert "A sampled run: 224 of 2,280 items" in html


def test_a_comparison_file_of_schema_1_2_still_loads_and_reads_items_from_its_limit(runs, tmp_path):
    comparison = culturebias.compare([runs["sampled"], runs["full"]])
    payload = json.loads(comparison.to_json())
    for run in payload["runs"]:
        del run["items"], run["caveats"]
    older = type(comparison).model_validate(payload | {"schema_version": "1.2"})
    assert [r.items_text() for r in older.runs] == ["all", "all"] and older.caveats() == {}


# -- the leaderboard -----------------------------------------------------------------------------------
def test_the_leaderboard_shows_a_sampled_runs_caveats(runs):
    rows = {row.model: row for row in culturebias.leaderboard(runs["store"])}
    assert kinds(rows["sampled"].caveats) == ["sampled", "few_units"] and rows["full"].caveats == []
    assert "caveats: 224 of 2,280 items (stratified sample); intervals on 27 templates" in rows["sampled"].text().split("\t")
    assert "caveats" not in rows["full"].text()
    assert rows["sampled"].model_dump(mode="json")["caveats"][0]["kind"] == "sampled"


# -- the policy verdict, its JUnit, the model card, MLflow and Every Eval Ever ---------------------------
def gate(allow_limited: bool) -> Policy:
    return Policy(name="gate", criteria=[
        # The sampled always-biased run's acc_dis is 0.5 (Wilson 0.32 to 0.68 on 27 templates): 0.3 is decidable.
        Criterion(name="accurate", benchmark="kobbq", metric="acc_dis", at_least=0.3, allow_limited=allow_limited)
    ])


def test_the_verdict_json_and_junit_carry_the_checked_runs_caveats_and_what_needed_allow_limited(runs, tmp_path):
    verdict = culturebias.check(gate(True), runs["sampled"], json=tmp_path / "v.json", junit=tmp_path / "v.xml")
    stored = PolicyVerdict.model_validate_json((tmp_path / "v.json").read_text(encoding="utf-8"))
    assert stored == verdict and stored.schema_version == "1.1"
    (checked,) = stored.runs
    assert kinds(checked.caveats) == ["sampled", "few_units"]
    (criterion,) = stored.criteria
    assert criterion.allowed_limited is not None and criterion.allowed_limited.startswith("the run is a run on a stratified sample")
    suite = ET.parse(tmp_path / "v.xml").getroot().find("testsuite")
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["caveat.run.kobbq.sampled"] == checked.caveats[0].text
    out = suite.find("testcase").find("system-out").text
    assert "decided only because allow_limited = true: the run is a run on a stratified sample" in out
    assert f"caveat (run {checked.run_id}): A sampled run: 224 of 2,280 items" in out
    # without allow_limited the criterion cannot decide, and nothing was allowed
    strict = culturebias.check(gate(False), runs["sampled"])
    assert strict.criteria[0].outcome == "inconclusive" and strict.criteria[0].allowed_limited is None
    assert kinds(strict.runs[0].caveats) == ["sampled", "few_units"]


def test_the_model_card_says_the_run_was_sampled_and_that_its_pass_needed_allow_limited(runs):
    pytest.importorskip("huggingface_hub", reason="the governance extra (huggingface_hub) is not installed")
    from culturebias.adapters.governance.model_card import bias_section, eval_results

    verdict = culturebias.check(gate(True), runs["sampled"])
    assert verdict.outcome == "pass"
    section = bias_section(exported_run(runs["sampled"], verdict=verdict))
    assert "**Caveats** (what limits these numbers):" in section and "- A sampled run: 224 of 2,280 items" in section
    assert "only because the policy set `allow_limited = true` (1 of 1 criteria)" in section
    assert "- PASS (only with allow_limited: the run is a run on a stratified sample" in section
    results = {r.metric_type: r for r in eval_results(exported_run(runs["sampled"]))}
    assert results["acc_dis"].metric_args["caveats"] == "224 of 2,280 items (stratified sample); intervals on 27 templates"
    assert results["acc_dis"].dataset_args["items"] == SAMPLED_ITEMS
    assert "Caveats" not in bias_section(exported_run(runs["full"]))


def test_the_mlflow_tags_and_the_every_eval_ever_record_carry_the_caveats(runs):
    from culturebias.adapters.governance.every_eval_ever import every_eval_ever

    tags = exported_run(runs["sampled"]).run_tags()
    assert tags["culturebias.items"] == SAMPLED_ITEMS
    assert tags["culturebias.caveats"] == "224 of 2,280 items (stratified sample); intervals on 27 templates"
    assert tags["culturebias.caveat.sampled"].startswith("A sampled run: 224 of 2,280 items")
    full_tags = exported_run(runs["full"]).run_tags()
    assert full_tags["culturebias.items"] == "all" and not any(k.startswith("culturebias.caveat") for k in full_tags)
    document = every_eval_ever(exported_run(runs["sampled"]))
    details = document["eval_library"]["additional_details"]
    assert details["items"] == SAMPLED_ITEMS and details["caveat_kinds"] == "sampled,few_units"
    assert details["caveats"].startswith("A sampled run: 224 of 2,280 items")
    result = document["evaluation_results"][0]["score_details"]
    assert result["details"]["caveat_kinds"] == "sampled,few_units"
    assert "details" not in every_eval_ever(exported_run(runs["full"]))["evaluation_results"][0]["score_details"]


# -- the run's own reports read the same list ----------------------------------------------------------
def test_the_run_reports_show_the_caveats_their_banners_do_not_already_say():
    from culturebias.adapters.reports.html.headline_card import warnings
    from culturebias.adapters.reports.markdown import header_section

    summary = kobbq_run("unknown", options={"limit": 120}).summary
    answering = summary.metrics.answering
    assert answering is not None and answering.matches_papers
    assert "Caveat." not in header_section(summary, "KoBBQ")
    other = summary.metrics.model_copy(update={"answering": answering.model_copy(update={"mode": "likelihood", "matches_papers": False})})
    likelihood = summary.model_copy(update={"metrics": other})
    header = header_section(likelihood, "KoBBQ")
    assert "> **Caveat.** Answers were read in likelihood mode, not the papers' generate mode" in header
    assert header.count("A limited run") == 1  # its own banner, not twice
    assert warnings(likelihood, HEADLINES) == [c.text for c in run_caveats(likelihood, HEADLINES)]
