"""Local words: lexicon spellings, inflections, glossary phrases, validity of triplets."""

from __future__ import annotations

import pytest

from culturebias.domain.libra.knowledge import cosine_similarity, decide_knowledge_boundary, find_local_vocabulary
from culturebias.domain.libra.triplets import GlossaryEntry, Triplet
from culturebias.domain.libra.words import (
    GlossaryIndex,
    inflection_bases,
    is_general,
    lexicon_forms,
    local_terms,
    words,
)

LEXICON = {"the", "a", "my", "came", "over", "to", "walk", "family", "sandal", "well", "known", "chilly", "bin",
           "brought", "maori", "dairy", "at", "kids", "tangata", "in", "bought", "pies", "men", "women", "cake"}


def known(form: str) -> bool:
    return form in LEXICON


def test_words_keep_macrons_apostrophes_and_hyphens():
    assert words("My whānau's kai, tangata whenua; wop-wops, 42 O'Neill") == [
        "My", "whānau's", "kai", "tangata", "whenua", "wop-wops", "O'Neill"
    ]


def test_lexicon_forms_cover_case_diacritics_possessives_and_inflections():
    forms = lexicon_forms("Māori's")
    assert "maori" in forms and "māori" in forms
    assert "walk" in lexicon_forms("walked") and "walk" in lexicon_forms("walking")
    assert "carry" in inflection_bases("carried") and "stop" in inflection_bases("stopped")
    assert "family" in inflection_bases("families")
    assert "class" not in inflection_bases("class")


def test_general_words_include_inflections_and_hyphenated_compounds():
    assert is_general("Walked", known)
    assert is_general("sandals", known)
    assert is_general("well-known", known)
    assert is_general("Māori", known)  # dictionaries write it without the macron
    assert not is_general("whānau", known)
    assert not is_general("wop-wops", known)


GLOSSARY = [
    GlossaryEntry("whānau", "extended family", ("whanau",)),
    GlossaryEntry("tangata whenua", "people of the land"),
    GlossaryEntry("chilly bin", "a cooler"),
    GlossaryEntry("jandal", "a flip-flop", ("jandals",)),
]


def test_a_local_word_inside_a_glossary_phrase_is_checked_as_the_phrase():
    terms = local_terms("The tangata whenua came over.", known, GlossaryIndex.build(GLOSSARY))
    assert [(t.key, t.surface) for t in terms] == [("tangata whenua", "tangata whenua")]


def test_glossary_matching_ignores_macrons_and_case_and_takes_inflections():
    index = GlossaryIndex.build(GLOSSARY)
    terms = local_terms("My Whanau brought jandals.", known, index)
    assert [(t.key, t.entry.term) for t in terms] == [("whānau", "whānau"), ("jandal", "jandal")]


def test_local_words_missing_from_the_glossary_are_terms_without_entry():
    terms = local_terms("The kids at the Waikato dairy", known, GlossaryIndex.build(GLOSSARY))
    assert [(t.key, t.entry) for t in terms] == [("waikato", None)]


def test_glossary_phrases_of_general_words_are_local_only_when_asked():
    index = GlossaryIndex.build(GLOSSARY)
    assert local_terms("a chilly bin", known, index) == []
    terms = local_terms("a chilly bin", known, index, glossary_always_local=True)
    assert [t.key for t in terms] == ["chilly bin"]


def _triplet(tid: str, sentence: str, target: str, anti: str, unrelated: str, group: str = "g") -> Triplet:
    start = sentence.index(target)
    return Triplet(tid, sentence[:start], target, sentence[start + len(target):], anti, unrelated, group, "c")


TRIPLETS = [
    _triplet("a", "The men bought pies at the dairy.", "men", "women", "cake"),
    _triplet("b", "My whānau came over.", "My", "The", "A"),
    _triplet("c", "The men came over.", "men", "women", "hapū"),  # local word only in S_u
    _triplet("d", "The kids came to the Waikato.", "kids", "men", "cake"),
]


def test_vocabulary_collects_terms_from_all_three_sentences():
    vocabulary = find_local_vocabulary(TRIPLETS, known, GLOSSARY + [GlossaryEntry("hapū", "subtribe")])
    assert vocabulary.by_triplet == {"a": (), "b": ("whānau",), "c": ("hapū",), "d": ("waikato",)}
    assert vocabulary.terms["hapū"].context == "The hapū came over."
    assert vocabulary.terms["whānau"].context == "My whānau came over."
    assert [t.term for t in vocabulary.with_definition()] == ["whānau", "hapū"]
    assert [t.term for t in vocabulary.without_definition()] == ["waikato"]


def test_misunderstood_words_invalidate_their_triplets_and_missing_ones_are_skipped():
    vocabulary = find_local_vocabulary(TRIPLETS, known, GLOSSARY + [GlossaryEntry("hapū", "subtribe")])
    boundary = decide_knowledge_boundary(vocabulary, {"whānau": True, "hapū": False})
    assert boundary.understood == {"whānau": True, "hapū": False}
    assert boundary.unchecked == ("waikato",)
    assert [t.id for t in TRIPLETS if boundary.is_valid(t.id)] == ["a", "b", "d"]
    assert boundary.misunderstood("c") == ["hapū"]
    assert boundary.understood_over(["a", "b", "c", "d"]) == [True, False]


def test_missing_definitions_can_count_as_not_understood():
    vocabulary = find_local_vocabulary(TRIPLETS, known, GLOSSARY + [GlossaryEntry("hapū", "subtribe")])
    boundary = decide_knowledge_boundary(vocabulary, {"whānau": True, "hapū": True}, missing_definition="invalid")
    assert boundary.understood["waikato"] is False
    assert not boundary.is_valid("d")


def test_a_missing_comparison_is_an_error_not_a_default():
    vocabulary = find_local_vocabulary(TRIPLETS, known, GLOSSARY)
    with pytest.raises(KeyError):
        decide_knowledge_boundary(vocabulary, {})


def test_cosine_similarity():
    assert cosine_similarity([1, 0], [1, 0]) == pytest.approx(1.0)
    assert cosine_similarity([1, 1], [1, 0]) == pytest.approx(2**-0.5)
    assert cosine_similarity([0, 0], [1, 0]) == 0.0


def test_a_stereotyped_sentence_is_the_preferred_context():
    triplets = [
        _triplet("x", "The men came over.", "men", "women", "jandals"),  # only in S_u here
        _triplet("y", "The jandals came to the dairy.", "jandals", "sandals", "cake"),
    ]
    vocabulary = find_local_vocabulary(triplets, known, GLOSSARY)
    assert vocabulary.terms["jandal"].context == "The jandals came to the dairy."
    assert vocabulary.terms["jandal"].triplet_ids == ("x", "y")
