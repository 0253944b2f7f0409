"""The LIBRA build replaces people's names only (issue 36 point 6): places in te reo Māori and English, next to
people's names, stay, by the gazetteer shipped as data and by the model's place and organisation labels; each
replacement and each place kept is counted by its rule in build_report.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from culturebias.adapters.libra_build.corpus.steps import NZ_PLACES, place_gazetteer
from culturebias.bootstrap.libra_build_wiring import build_libra
from culturebias.domain.errors import ConfigError
from culturebias.domain.libra_build.build_steps import REPLACED_BY, anonymise_by_rule
from culturebias.domain.libra_build.places import PlaceGazetteer

SEEDS = Path(__file__).parents[1] / "fixtures" / "libra_corpus" / "seeds.json"


def test_the_shipped_gazetteer_cites_its_source_and_holds_te_reo_and_english_places():
    text = NZ_PLACES.read_text(encoding="utf-8")
    assert "LINZ" in text.split("\n# Regions", 1)[0]
    places = place_gazetteer("nz")
    assert places is not None and len(places) >= 300
    for name in ("Ōpōtiki", "Whakatāne", "Ōtautahi", "Tāmaki Makaurau", "Levin", "Gore", "Hawke's Bay",
                 "Palmerston North", "Te Awamutu", "Bay of Plenty", "Waikato River", "Aoraki"):
        assert places.knows(name), name


@pytest.mark.parametrize("text, found", [
    ("Aroha moved to Ōpōtiki.", ["Ōpōtiki"]),
    ("Aroha moved to Opotiki.", ["Opotiki"]),  # without macrons
    ("Aroha moved to O\u0304po\u0304tiki.", ["O\u0304po\u0304tiki"]),  # combining macrons
    ("Rents in Hawke’s Bay rose.", ["Hawke’s Bay"]),  # the typographic apostrophe
    ("Rents in the Bay of Plenty and Palmerston North rose.", ["Bay of Plenty", "Palmerston North"]),
    ("Mike lives near Levin.", ["Levin"]),  # a place that is also a name: after a place word
    ("Levin said the rent rose.", []),  # ... and a person's name elsewhere
    ("Nelson Mandela visited.", []),
    ("the gore of it", []),  # a place is capitalised
])
def test_the_gazetteer_finds_places_as_texts_write_them(text, found):
    places = place_gazetteer("nz")
    assert [text[s:e] for s, e in places.spans(text)] == found


def test_a_gazetteer_file_of_ones_own_and_a_missing_one(tmp_path):
    mine = tmp_path / "places.txt"
    mine.write_text("# mine\nKaramea\nWestport *\n", encoding="utf-8")
    places = place_gazetteer(str(mine))
    assert places.knows("Karamea") and places.spans("Westport said") == [] and places.spans("in Westport") == [(3, 11)]
    assert place_gazetteer("none") is None
    with pytest.raises(ConfigError, match="no such gazetteer file"):
        place_gazetteer(str(tmp_path / "absent.txt"))


# The rule-based path (names=list): names of the list, places next to them.
RULE_CASES = [
    ("Aroha moved to Ōpōtiki last year.", "[NAME] moved to Ōpōtiki last year."),
    ("Hemi lives near Levin with his whānau.", "[NAME] lives near Levin with his whānau."),
    ("Sione from Whakatāne said Tauranga was too dear.", "[NAME] from Whakatāne said Tauranga was too dear."),
    ("Wiremu Kingi said rents in Hawke's Bay rose.", "[NAME] said rents in Hawke's Bay rose."),
]


@pytest.mark.parametrize("text, expected", RULE_CASES)
def test_the_rule_path_replaces_people_and_keeps_places(text, expected):
    out, counts = anonymise_by_rule(text, frozenset({"whānau"}), place_gazetteer("nz"))
    assert out == expected
    assert sum(counts[r] for r in REPLACED_BY) == expected.count("[NAME]")


def test_without_the_gazetteer_the_rule_path_takes_a_town_for_a_name():
    text = "Sione from Whakatāne said Tauranga was too dear."
    out, counts = anonymise_by_rule(text, frozenset(), None)
    assert out == "[NAME] from Whakatāne said [NAME] was too dear." and counts["pattern"] == 1
    kept, kept_counts = anonymise_by_rule(text, frozenset(), place_gazetteer("nz"))
    assert "Tauranga" in kept and kept_counts["kept_gazetteer"] == 1 and kept_counts["pattern"] == 0


def test_build_report_counts_names_by_rule_and_places_kept(tmp_path):
    corpus = tmp_path / "c.jsonl"
    docs = ["Aroha moved to Ōpōtiki and said rangatahi are troublemakers at the mall.",
            "Sione from Whakatāne said Tauranga rangatahi are troublemakers."]
    corpus.write_text("".join(json.dumps({"text": d}, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    settings = {"expander": "none", "clusterer": "none", "names": "list"}
    report = build_libra(corpus, SEEDS, tmp_path / "out", steps="clean", settings=settings)
    assert report.names_by_rule == {"given_name": 2, "kept_gazetteer": 1}
    assert report.names_replaced == 2
    written = json.loads((tmp_path / "out" / "build_report.json").read_text(encoding="utf-8"))
    assert written["names_by_rule"] == {"given_name": 2, "kept_gazetteer": 1}
    sentences = (tmp_path / "out" / "steps").glob("clean*.json")
    text = " ".join(p.read_text(encoding="utf-8") for p in sentences)
    assert "Ōpōtiki" in text and "Whakatāne" in text and "Tauranga" in text and "Aroha" not in text
    without = build_libra(corpus, SEEDS, tmp_path / "bare", steps="clean", settings={**settings, "places": "none"})
    assert without.names_by_rule == {"given_name": 2, "pattern": 1}


# The named-entity path (names=ner, the default) with the real en_core_web_sm.
NER_CASES = [
    ("Aroha moved to Ōpōtiki last year.", ("Aroha",), ("Ōpōtiki",)),
    ("Mike lives near Levin with his whānau.", ("Mike",), ("Levin",)),
    ("Families in Hawke's Bay said the rent was too high.", (), ("Hawke's Bay",)),
    ("Tāmati from Whakatāne said the school was full.", ("Tāmati",), ("Whakatāne",)),
    ("Older people around Gore struggle to see a doctor.", (), ("Gore",)),
    ("Hemi Walker said Tauranga was too expensive.", ("Hemi", "Walker"), ("Tauranga",)),
    ("Sione moved from Porirua to Levin.", ("Sione",), ("Porirua", "Levin")),
    ("Young people in Palmerston North and Te Awamutu are moving away.", (), ("Palmerston North", "Te Awamutu")),
]


def test_the_ner_path_replaces_people_and_keeps_places_in_te_reo_and_english():
    pytest.importorskip("spacy")
    spacy_names = pytest.importorskip("culturebias.adapters.libra_build.spacy_ner.names")
    pytest.importorskip(spacy_names.PACKAGE)
    names = spacy_names.SpacyNames(places=place_gazetteer("nz"))
    cleaned = names.anonymise_all([text for text, _, _ in NER_CASES], frozenset({"whānau"}))
    kept = 0
    for (text, people, places), (clean, counts) in zip(NER_CASES, cleaned):
        assert not any(person in clean for person in people), clean
        assert all(place in clean for place in places), clean
        assert clean.count("[NAME]") == len({p for p in people if p != "Walker"}), clean  # "Hemi Walker": one name
        kept += counts["kept_gazetteer"] + counts["kept_ner_place"]
    assert kept >= 4  # Levin, Hawke, Gore, Levin: the model's PERSON, kept as places
    bare = spacy_names.SpacyNames(places=None).anonymise_all(["Mike lives near Levin with his whānau."], frozenset())
    assert bare[0][0] == "[NAME] lives near [NAME] with his whānau."  # what the gazetteer prevents
