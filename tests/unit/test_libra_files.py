"""The LIBRA triplet and glossary files: both line forms, typed errors, the embedded fixture."""

from __future__ import annotations

import json

import pytest

from culturebias.adapters.libra.files import LibraFiles, parse_glossary, parse_triplets
from culturebias.domain.errors import DataError, MissingDataError


def jsonl(*rows) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + "\n"


BASE = {"category": "race/ethnicity", "group": "Māori", "anti_stereotype": "Pākehā", "unrelated": "teaspoon"}


def test_sentence_form_splits_around_the_target():
    [t] = parse_triplets("t.jsonl", jsonl({**BASE, "id": "x", "sentence": "The Māori boys play rugby.", "target": "Māori"}))
    assert (t.left, t.target, t.right) == ("The ", "Māori", " boys play rugby.")
    assert t.sentence("anti_stereotyped") == "The Pākehā boys play rugby."
    assert t.sentence("unrelated") == "The teaspoon boys play rugby."


def test_target_start_picks_a_later_occurrence():
    row = {**BASE, "sentence": "Men say men cry.", "target": "men", "target_start": 8}
    [t] = parse_triplets("t.jsonl", jsonl(row))
    assert (t.left, t.right) == ("Men say ", " cry.")
    assert t.id == "line-1"


def test_left_right_form_and_blank_lines():
    text = jsonl("", {**BASE, "id": 7, "left": "", "target": "Māori", "right": " kids."})
    [t] = parse_triplets("t.jsonl", text)
    assert t.id == "7" and t.sentence("stereotyped") == "Māori kids."


@pytest.mark.parametrize(
    "row,field",
    [
        ({**BASE, "sentence": "The boys.", "target": "girls"}, "target"),
        ({**BASE, "sentence": "The boys.", "target": "boys", "target_start": 0}, "target_start"),
        ({**BASE, "target": "boys"}, "sentence"),
        ({**{k: v for k, v in BASE.items() if k != "group"}, "sentence": "The boys.", "target": "boys"}, "group"),
        ({**BASE, "unrelated": "", "sentence": "The boys.", "target": "boys"}, "unrelated"),
        ({**BASE, "anti_stereotype": 3, "sentence": "The boys.", "target": "boys"}, "anti_stereotype"),
    ],
)
def test_bad_rows_name_file_row_and_field(row, field):
    with pytest.raises(DataError) as error:
        parse_triplets("t.jsonl", jsonl({**BASE, "sentence": "Fine boys.", "target": "boys"}, row))
    assert (error.value.file, error.value.row, error.value.field) == ("t.jsonl", 2, field)


def test_invalid_json_and_duplicate_ids():
    with pytest.raises(DataError) as error:
        parse_triplets("t.jsonl", "{not json\n")
    assert error.value.row == 1
    row = {**BASE, "id": "a", "sentence": "The boys.", "target": "boys"}
    with pytest.raises(DataError) as error:
        parse_triplets("t.jsonl", jsonl(row, row))
    assert (error.value.row, error.value.field) == (2, "id")
    with pytest.raises(DataError):
        parse_triplets("t.jsonl", "\n\n")


def test_glossary_lines():
    entries = parse_glossary("g.jsonl", jsonl({"term": "whānau", "definition": "family", "variants": ["whanau"]}))
    assert entries[0].spellings() == ("whānau", "whanau")
    with pytest.raises(DataError) as error:
        parse_glossary("g.jsonl", jsonl({"term": "kai", "definition": "food"}, {"term": "Kai", "definition": "x"}))
    assert (error.value.row, error.value.field) == (2, "term")
    with pytest.raises(DataError) as error:
        parse_glossary("g.jsonl", jsonl({"term": "kai", "definition": "food", "variants": "kais"}))
    assert error.value.field == "variants"


def test_the_embedded_fixture_loads():
    source = LibraFiles(None)
    dataset = source.load()
    assert len(dataset.triplets) >= 20
    assert {"whānau", "kai", "mana", "tangata whenua", "marae", "jandals", "chilly bin", "dairy", "bach"} <= {
        e.term for e in dataset.glossary
    }
    for triplet in dataset.triplets:
        assert triplet.sentence("stereotyped") != triplet.sentence("anti_stereotyped")
    assert "embedded" in source.describe()
    assert source.fingerprint() == LibraFiles(None).fingerprint()


def test_a_folder_or_a_file_with_a_glossary_beside_it(tmp_path):
    (tmp_path / "triplets.jsonl").write_text(
        "\ufeff" + jsonl({**BASE, "sentence": "The boys.", "target": "boys"}), encoding="utf-8"
    )
    without = LibraFiles(str(tmp_path)).load()
    assert without.glossary == () and len(without.triplets) == 1
    before = LibraFiles(str(tmp_path)).fingerprint()
    (tmp_path / "glossary.jsonl").write_text(jsonl({"term": "kai", "definition": "food"}), encoding="utf-8")
    with_glossary = LibraFiles(str(tmp_path / "triplets.jsonl")).load()
    assert [e.term for e in with_glossary.glossary] == ["kai"]
    assert LibraFiles(str(tmp_path)).fingerprint() != before


def test_missing_paths_say_so(tmp_path):
    with pytest.raises(MissingDataError):
        LibraFiles(str(tmp_path / "nowhere")).load()
    with pytest.raises(MissingDataError):
        LibraFiles(str(tmp_path)).load()
