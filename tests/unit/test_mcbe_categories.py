"""McBE's categories are the paper's twelve; culturebias's earlier labels are still read, and said so."""

from __future__ import annotations

from culturebias.adapters.mcbe.files import parse_files
from culturebias.domain.mcbe.taxonomy import CATEGORIES, PAPER_CATEGORIES, canonical_category, category_name_zh, legacy_label
from culturebias.testing.xlsx import write_xlsx

HEADER = ["context", "sentence", "words", "subtype", "explanation", "score"]
ROW = ["上下文。", "[PLH]很能干。", "甲，乙", "能力", "解释。", 5]


def test_the_twelve_categories_are_the_papers():
    assert PAPER_CATEGORIES == (
        "gender", "religion", "nationality", "socioeconomic_status", "age", "appearance",
        "health", "region", "lgbtq", "worldview", "subculture", "race",
    )
    assert len({c.name_zh for c in CATEGORIES}) == 12
    assert category_name_zh("race") == "种族" and category_name_zh("lgbtq") == "LGBTQ+"
    assert category_name_zh("subculture") == "亚文化"
    for retired in ("occupation", "ethnicity", "sexual_orientation"):
        assert retired not in PAPER_CATEGORIES
    # race is its own category again, no longer relabelled
    assert canonical_category("race") == "race" and legacy_label("race") is None


def test_old_labels_are_read_as_the_papers_and_noted():
    dataset = parse_files(
        [
            ("ethnicity.xlsx", write_xlsx([HEADER, ROW])),
            ("性取向.xlsx", write_xlsx([HEADER, ROW])),
        ]
    )
    assert dataset.categories == ["race", "lgbtq"]
    assert len(dataset.notes) == 1
    note = dataset.notes[0]
    assert "ethnicity → race (file ethnicity.xlsx)" in note and "性取向 → lgbtq (file 性取向.xlsx)" in note


def test_an_old_label_in_the_category_column_is_read_and_noted_with_its_row():
    data = write_xlsx([[*HEADER, "category"], [*ROW, "sexual_orientation"]])
    dataset = parse_files([("mine.xlsx", data)])
    assert dataset.categories == ["lgbtq"]
    assert "sexual_orientation → lgbtq (file mine.xlsx, column category, first at row 2)" in dataset.notes[0]


def test_a_category_outside_the_twelve_is_kept_under_its_name_and_named():
    dataset = parse_files([("occupation.xlsx", write_xlsx([HEADER, ROW])), ("gender.xlsx", write_xlsx([HEADER, ROW]))])
    assert dataset.categories == ["occupation", "gender"]
    assert dataset.notes == (
        "categories outside the paper's twelve, read under their own names: occupation "
        f"(the twelve: {', '.join(PAPER_CATEGORIES)})",
    )


def test_a_summary_with_earlier_labels_compares_under_the_papers_keys():
    from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
    from culturebias.domain.mcbe.comparison import cells
    from culturebias.domain.mcbe.instances import BEI, McBEDataset
    from culturebias.testing.context import run_with_fakes

    # a summary as earlier versions wrote it: race data under the key "ethnicity"
    bei = BEI("ethnicity", "", "[PLH]很能干。", ("甲", "乙"), "能力", "解释。", 5.0, "ethnicity.xlsx", 2)
    summary = run_with_fakes(
        "mcbe",
        options={"tasks": "bs"},
        dataset=McBEDataset((bei,)),
        generator=ScriptedGenerator(lambda request, prompt: "5", name="model"),
        scorer=ScriptedScorer(lambda context, text: -1.0),
    ).summary
    assert list(summary.metrics.categories) == ["ethnicity"]
    assert cells(summary) == {"race/bs": 100.0}
