"""Name removal by spaCy's NER (issue 27 point 7), on sentences the cleaner was not written for: names in no
list of the code, after roles and titles, before reporting verbs, and surnames alone."""

from __future__ import annotations

import json

import pytest

from culturebias.domain.errors import ConfigError
from culturebias.domain.libra_build.build_steps import REPLACED_BY
from culturebias.domain.libra_build.names import GIVEN_NAMES

spacy_names = pytest.importorskip("culturebias.adapters.libra_build.spacy_ner.names")
pytest.importorskip("spacy")
pytest.importorskip(spacy_names.PACKAGE)

SENTENCES = [
    ("Coordinator Anahira Pouwhare admitted the rollout was slow.", ("Anahira", "Pouwhare")),
    ("\"We will keep going,\" said Fetu Aumua-Leota.", ("Fetu", "Aumua-Leota")),
    ("According to Dr Priyanka Venkataraman, Māori whānau wait longest.", ("Priyanka", "Venkataraman")),
    ("Tauiwi Nakamura-Brown, a volunteer at the marae, thanked the Samoan families.", ("Tauiwi", "Nakamura-Brown")),
    ("The lecturer, Gwendolyn Achterberg, asked teenagers to apply.", ("Gwendolyn", "Achterberg")),
    ("Hinewai thanked the volunteers before the vote.", ("Hinewai",)),
    ("Oyekunle told the meeting the numbers were still being checked.", ("Oyekunle",)),
]
KEPT = ["Auckland Council admitted the plan had gaps.", "Samoans dominate the committee.",
        "Tongan families said the rent was too high."]


def test_people_not_in_any_list_are_anonymised_and_group_words_kept():
    assert not {part for _, parts in SENTENCES for part in parts} & GIVEN_NAMES
    names = spacy_names.SpacyNames()
    protected = frozenset({"Māori", "whānau", "Samoan families", "teenagers"})
    cleaned = names.anonymise_all([text for text, _ in SENTENCES], protected)
    for (text, parts), (clean, counts) in zip(SENTENCES, cleaned):
        assert "[NAME]" in clean and sum(counts[rule] for rule in REPLACED_BY) >= 1, clean
        assert not any(part in clean for part in parts), clean
    assert "Māori whānau" in cleaned[2][0] and "Samoan families" in cleaned[3][0] and "teenagers" in cleaned[4][0]
    assert cleaned[2][0].startswith("According to Dr [NAME]") and "[NAME]]" not in cleaned[2][0]
    # Organisations, peoples and group words that open a sentence are not names.
    kept = names.anonymise_all(KEPT, frozenset({"Samoans", "Tongan families"}))
    assert [text for text, _ in kept] == KEPT
    assert not any(counts[rule] for _, counts in kept for rule in REPLACED_BY)


def test_a_pipeline_that_is_not_en_core_web_sm_3_8_0_is_refused(tmp_path):
    nlp = spacy_names.SpacyNames().nlp
    meta = json.loads(json.dumps(nlp.meta))
    spacy_names.verify(nlp.path, meta)  # the installed one is the model it claims to be
    meta["performance"]["ents_f"] = 0.5
    with pytest.raises(ConfigError, match="not en_core_web_sm 3.8.0"):
        spacy_names.verify(nlp.path, meta)
    (tmp_path / "ner").mkdir()
    (tmp_path / "ner" / "model").write_bytes(b"other weights")
    with pytest.raises(ConfigError, match="SHA-256"):
        spacy_names.verify(tmp_path, json.loads(json.dumps(nlp.meta)))
