"""The LIBRA build replaces people's names only (issue 36 point 6): iwi and hapū, marae and kura, and
organisations stay next to people's names, on the rule path and on the named-entity path, each counted by its
rule (kept_iwi, kept_marae_kura, kept_organisation) in build_report.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from culturebias.adapters.libra_build.corpus.steps import NZ_IWI, NZ_ORGANISATIONS, collectives, place_gazetteer
from culturebias.bootstrap.libra_build_wiring import build_libra
from culturebias.domain.errors import ConfigError
from culturebias.domain.libra_build.build_steps import KEPT_BY, REPLACED_BY, anonymise_by_rule
from culturebias.domain.libra_build.collectives import Collectives

SEEDS = Path(__file__).parents[1] / "fixtures" / "libra_corpus" / "seeds.json"


def test_the_shipped_lists_cite_their_source_and_hold_iwi_with_macrons():
    header = NZ_IWI.read_text(encoding="utf-8").split("\n# Waka", 1)[0]
    assert "Te Puni Kōkiri" in header and "Te Kāhui Māngai" in header
    kept = collectives("nz")
    assert kept is not None and len(kept.iwi) >= 100 and "Fonterra" in NZ_ORGANISATIONS.read_text(encoding="utf-8")
    for name in ("Ngāti Porou", "Ngati Porou", "Ngāi Tahu", "Te Āti Awa", "Tūhoe", "Tuhoe", "Waikato-Tainui",
                 "Ngāpuhi", "Ngapuhi", "Te Whānau-ā-Apanui"):
        assert kept.iwi.knows(name), name
    assert collectives("none") is None
    with pytest.raises(ConfigError, match="collectives=mine"):
        collectives("mine")


@pytest.mark.parametrize("text, rule, found", [
    ("Hemi from Ngāti Porou joined Fonterra in Gisborne.", "kept_iwi", ["Ngāti Porou"]),
    ("Whānau of Ngati Hine and Ngāi Te Rangi met.", "kept_iwi", ["Ngati Hine", "Ngāi Te Rangi"]),  # the pattern
    ("Te Rūnanga o Ngāi Tahu and Te Āti Awa agreed.", "kept_iwi", ["Te Rūnanga o Ngāi Tahu", "Te Āti Awa"]),
    ("Tūhoe, Ngāpuhi and Waikato-Tainui signed.", "kept_iwi", ["Tūhoe", "Ngāpuhi", "Waikato-Tainui"]),
    ("The hui at Ōrākei Marae and Te Tii marae.", "kept_marae_kura", ["Ōrākei Marae", "Te Tii marae"]),
    ("Te Kura Kaupapa Māori o Hoani Waititi and Te Kōhanga Reo o Mangere.", "kept_marae_kura",
     ["Te Kura Kaupapa Māori o Hoani Waititi", "Te Kōhanga Reo o Mangere"]),
    ("Aroha works for the Waikato District Council.", "kept_organisation", ["Waikato District Council"]),
    ("Sione studies at the University of Auckland.", "kept_organisation", ["University of Auckland"]),
    ("The ACC, Kiwibank and Air New Zealand paid.", "kept_organisation", ["ACC", "Kiwibank", "Air New Zealand"]),
    # people's names are none of these
    ("Kai Walker and Kura Tautahi said Maniapoto was right.", "kept_iwi", []),
    ("Kai Walker and Kura Tautahi said Maniapoto was right.", "kept_marae_kura", []),
    ("Aroha's School asked.", "kept_organisation", ["School"]),  # a possessive ends the run: Aroha is a person
    ("Ngāti Porou Hemi Walker and Ngāti Hine Aroha said.", "kept_iwi", ["Ngāti Porou", "Ngāti Hine"]),  # a given name ends it
])
def test_collectives_are_found_as_texts_write_them(text, rule, found):
    spans = collectives("nz").spans(text)[rule]
    assert sorted({text[s:e] for s, e in spans}, key=text.index) == found


@pytest.mark.parametrize("name, organisation", [
    ("Fonterra", True), ("Auckland Council", True), ("Massey University", True), ("ACC", True), ("Te Papa", True),
    ("Ngāti Porou", True), ("Fifita", False), ("Hemi Walker", False), ("Tavita Sapolu", False), ("", False),
])
def test_what_counts_as_an_organisation_for_the_models_org_labels(name, organisation):
    assert collectives("nz").an_organisation(name) is organisation


def test_a_list_line_marked_as_a_persons_name_counts_only_after_a_place_word():
    mine = Collectives.from_lines(["Maniapoto *"], [])
    assert mine.spans("Maniapoto said")["kept_iwi"] == [] and mine.spans("the people of Maniapoto")["kept_iwi"] == [(14, 23)]


# Sentences mixing people, iwi, organisations and places: (text, people, kept).
MIXED = [
    ("Hemi from Ngāti Porou joined Fonterra in Gisborne.", ("Hemi",), ("Ngāti Porou", "Fonterra", "Gisborne")),
    ("Aroha works for the Waikato District Council.", ("Aroha",), ("Waikato District Council",)),
    ("Tama's whānau belongs to Ngāi Tahu.", ("Tama",), ("Ngāi Tahu",)),
    ("Sione studies at the University of Auckland.", ("Sione",), ("University of Auckland",)),
    ("Rawiri Kingi said Te Rūnanga o Ngāi Tahu and Waikato-Tainui backed the plan.", ("Rawiri", "Kingi"),
     ("Te Rūnanga o Ngāi Tahu", "Waikato-Tainui")),
    ("Mere took her mokopuna to Te Kōhanga Reo o Mangere before the hui at Ōrākei Marae.", ("Mere",),
     ("Te Kōhanga Reo o Mangere", "Ōrākei Marae")),
    ("Ngāti Rangi and Te Āti Awa said the ACC and Kiwibank should pay.", (), ("Ngāti Rangi", "Te Āti Awa", "ACC", "Kiwibank")),
]


@pytest.mark.parametrize("text, people, kept", MIXED)
def test_the_rule_path_replaces_people_and_keeps_iwi_organisations_and_places(text, people, kept):
    out, counts = anonymise_by_rule(text, frozenset({"whānau"}), place_gazetteer("nz"), collectives=collectives("nz"))
    assert not any(person in out for person in people), out
    assert all(name in out for name in kept), out
    assert sum(counts[rule] for rule in REPLACED_BY) == out.count("[NAME]") == (1 if people else 0)


def test_without_the_lists_the_rule_path_takes_an_iwi_or_an_organisation_for_a_name():
    text = "Ngāti Rangi said the plan was late, according to Kāinga Ora."
    bare, bare_counts = anonymise_by_rule(text, frozenset(), place_gazetteer("nz"))
    assert bare == "Ngāti [NAME] said the plan was late, according to [NAME]."
    assert bare_counts == {"given_name": 1, "pattern": 1}
    kept, counts = anonymise_by_rule(text, frozenset(), place_gazetteer("nz"), collectives=collectives("nz"))
    # "Rangi" (a given name) and "Ngāti Rangi said" (the reporting pattern) both land in one iwi: counted once
    assert kept == text and counts == {"kept_iwi": 1, "kept_organisation": 1}
    assert {"kept_iwi", "kept_marae_kura", "kept_organisation"} <= set(KEPT_BY)


def test_the_ner_path_replaces_people_and_keeps_iwi_organisations_and_places(costly):
    pytest.importorskip("spacy")
    spacy_names = pytest.importorskip("culturebias.adapters.libra_build.spacy_ner.names")
    pytest.importorskip(spacy_names.PACKAGE)
    names = spacy_names.SpacyNames(places=place_gazetteer("nz"), collectives=collectives("nz"))
    cleaned = names.anonymise_all([text for text, _, _ in MIXED], frozenset({"whānau"}))
    totals: dict[str, int] = {}
    for (text, people, kept), (clean, counts) in zip(MIXED, cleaned):
        assert not any(person in clean for person in people), clean
        assert all(name in clean for name in kept), clean
        assert clean.count("[NAME]") == (1 if people else 0), clean
        for rule, n in counts.items():
            totals[rule] = totals.get(rule, 0) + n
    # the model calls "Porou", "Ngāi Tahu", "Te Rūnanga", "Ngāti Rangi", "Te Āti Awa" and "Fonterra" PERSON
    assert totals["kept_iwi"] >= 4 and totals["kept_organisation"] >= 1, totals
    # ... which is what the lists prevent
    bare = spacy_names.SpacyNames(places=place_gazetteer("nz")).anonymise_all([MIXED[6][0]], frozenset())
    assert "Ngāti Rangi" not in bare[0][0] and "[NAME]" in bare[0][0]
    # A bare name the model labels ORG is a person's name to the rules; an organisation word, a list or an
    # acronym makes it an organisation.
    org_like = names.anonymise_all(["The deacon, Tavita Sapolu, thanked Plunket and the ACC."], frozenset())
    assert org_like[0][0] == "The deacon, [NAME], thanked Plunket and the ACC."


def test_build_report_counts_iwi_and_organisations_kept(tmp_path):
    corpus = tmp_path / "c.jsonl"
    docs = ["Aroha from Ngāti Rangi said rangatahi are troublemakers at the mall.",
            "Sione works for the Waikato District Council and said rangatahi are troublemakers."]
    corpus.write_text("".join(json.dumps({"text": d}, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    settings = {"expander": "none", "clusterer": "none", "names": "list"}
    build_libra(corpus, SEEDS, tmp_path / "out", steps="clean", settings=settings)
    written = json.loads((tmp_path / "out" / "build_report.json").read_text(encoding="utf-8"))
    # "Rangi" and "Ngāti Rangi said" both land in the one iwi: counted once
    assert written["names_by_rule"] == {"given_name": 2, "kept_iwi": 1}
    assert "| names: kept, an iwi or hapū | 1 |" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    text = " ".join(p.read_text(encoding="utf-8") for p in (tmp_path / "out" / "steps").glob("clean*.json"))
    assert "Ngāti Rangi" in text and "Waikato District Council" in text and "Aroha" not in text
    build_libra(corpus, SEEDS, tmp_path / "bare", steps="clean", settings={**settings, "collectives": "none"})
    bare = json.loads((tmp_path / "bare" / "build_report.json").read_text(encoding="utf-8"))
    assert bare["names_by_rule"] == {"given_name": 3}  # "Rangi" of Ngāti Rangi taken for a name
    with pytest.raises(ConfigError, match="collectives"):
        build_libra(corpus, SEEDS, tmp_path / "x", steps="clean", settings={**settings, "collectives": "mine"})
