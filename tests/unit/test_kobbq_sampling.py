"""One item per template, as KoBBQ's released test split was drawn (PROTOCOLS §2; issue 17 point 3)."""

from __future__ import annotations

import csv
from collections import Counter

import pytest

from culturebias.adapters.kobbq.files import read_templates
from culturebias.bootstrap.cli import main
from culturebias.domain.kobbq.sampling import draw_numbers, numbers_of, pair_key, sample_per_template
from culturebias.domain.kobbq.templates import expand_templates


def fixture_samples() -> list[dict]:
    """Two templates: one with versions a/b (3 combinations), one with a/b/c/d (a/b 2, c/d 4 combinations)."""
    rows = []
    for template, counts in (("age-001", {"a": 3, "b": 3}), ("race-002", {"a": 2, "b": 2, "c": 4, "d": 4})):
        for version, n in counts.items():
            for number in range(1, n + 1):
                for context in ("amb", "dis"):
                    for question in ("bsd", "cnt"):
                        rows.append({"sample_id": f"{template}{version}-{number:03d}-{context}-{question}"})
    return rows


def test_one_combination_per_template_and_version_pair_with_all_four_variants():
    samples = fixture_samples()
    drawn = sample_per_template(samples, seed=3)
    assert len(drawn) == 6 * 4  # six versions, four samples each
    per_pair = Counter(pair_key(row["sample_id"])[0] for row in drawn)
    assert per_pair == {"age-001ab": 8, "race-002ab": 8, "race-002cd": 8}
    assert len({pair_key(row["sample_id"]) for row in drawn}) == 3  # a and b share their number, c and d theirs
    assert sample_per_template(samples, seed=3) == drawn  # seeded
    draws = {tuple(sorted(draw_numbers(samples, seed).items())) for seed in range(40)}
    assert len(draws) > 1
    assert {dict(d)["race-002cd"] for d in draws} == {1, 2, 3, 4}  # every combination can be drawn


def test_pinned_numbers_and_a_split_that_is_not_one_per_template():
    samples = fixture_samples()
    pinned = sample_per_template(samples, numbers={"age-001ab": 2, "race-002ab": 1, "race-002cd": 4})
    assert {pair_key(r["sample_id"]) for r in pinned} == {("age-001ab", 2), ("race-002ab", 1), ("race-002cd", 4)}
    with pytest.raises(ValueError, match="not one item per template"):
        numbers_of(["age-001a-001-amb-bsd", "age-001b-002-amb-bsd"])


@pytest.mark.shared_data
def test_the_released_test_split_is_one_draw_of_the_sampler(kobbq_data):
    samples = list(expand_templates(read_templates(kobbq_data / "KoBBQ_templates.tsv")))
    with (kobbq_data / "KoBBQ_test_samples.tsv").open(encoding="utf-8") as handle:
        released = list(csv.DictReader(handle, delimiter="\t"))
    assert len(released) == 2280
    # pinned to the numbers in the released ids, the sampler returns exactly the released rows
    reproduced = {row["sample_id"]: row for row in sample_per_template(samples, numbers=numbers_of(r["sample_id"] for r in released))}
    assert set(reproduced) == {row["sample_id"] for row in released}
    for row in released:
        ours = reproduced[row["sample_id"]]
        assert (ours["context"], ours["question"], ours["answer"], ours["biased_answer"]) == (
            row["context"], row["question"], row["answer"], row["biased_answer"]
        )
    # a seeded draw has the released split's shape: the same templates, versions, contexts and questions
    shape = lambda rows: Counter((pair_key(r["sample_id"])[0], *r["sample_id"].split("-")[1][-1:], *r["sample_id"].split("-")[3:]) for r in rows)
    assert shape(sample_per_template(samples, seed=11)) == shape(released)


def test_expand_per_template_on_the_bundled_templates(tmp_path, capsys):
    out = tmp_path / "sampled.jsonl"
    assert main(["expand", "kobbq", "--out", str(out), "--set", "protocol.sample=per_template", "--set", "protocol.seed=5"]) == 0
    assert "2280 items written" in capsys.readouterr().out
    assert main(["expand", "kobbq", "--out", str(out), "--set", "protocol.sample=some"]) != 0
