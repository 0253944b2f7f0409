"""Counterpart groups for S_p (PROTOCOLS §4 construction step 5; issue 27 point 7)."""

from __future__ import annotations

import pytest

from culturebias.domain.errors import DataError
from culturebias.domain.libra_build.build_steps import Hit, Sentence, perturb, search
from culturebias.domain.libra_build.counterparts import SIMILARITY_FLOOR, needs_similarity, pair_groups
from culturebias.domain.libra_build.keywords import ExpandedKeyword, SeedGroup


def group(name, *keywords, category=None, counterpart=None):
    return SeedGroup(group=name, keywords=keywords or (name,), category=category, counterpart=counterpart)


def test_groups_without_categories_pair_by_name_similarity_above_the_floor():
    seeds = [group("women"), group("men"), group("older people"), group("young people")]
    vectors = [[1, 0.1, 0], [0.9, 0.1, 0], [0, 1, 0.1], [0, 0.9, 0.2]]
    pairs = {p.group: (p.counterpart, p.source) for p in pair_groups(seeds, vectors)}
    assert pairs == {"women": ("men", "similarity"), "men": ("women", "similarity"),
                     "older people": ("young people", "similarity"), "young people": ("older people", "similarity")}


def test_groups_that_cannot_be_paired_are_named_and_nothing_unrelated_is_proposed():
    seeds = [group("women"), group("Māori"), group("farmers")]
    vectors = [[1, 0, 0], [0, 1, 0], [0.3, 0.3, 1]]  # every pair below the floor
    with pytest.raises(DataError, match="'women', 'Māori', 'farmers'") as caught:
        pair_groups(seeds, vectors)
    assert caught.value.field == "counterpart"
    # Without embeddings no similarity is guessed either.
    with pytest.raises(DataError, match="'women'"):
        pair_groups(seeds[:2], None)


def test_a_named_counterpart_and_a_shared_category_win_over_similarity():
    seeds = [group("women", counterpart="men"), group("men", category="gender"), group("wāhine", category="gender"),
             group("iwi", "iwi", "hapū")]
    pairs = {p.group: (p.counterpart, p.source) for p in pair_groups(seeds, None, antonym_keywords=frozenset({"iwi", "hapū"}))}
    assert pairs == {"women": ("men", "seeds"), "men": ("wāhine", "category"), "wāhine": ("men", "category")}
    assert not needs_similarity(seeds[:3])
    with pytest.raises(DataError, match="'nobody'"):
        pair_groups([group("women", counterpart="nobody"), group("men", category="gender")])


def test_perturb_uses_the_counterpart_and_never_another_groups_term():
    seeds = [group("women", "women", counterpart="men"), group("men", "men", counterpart="women"), group("Māori", "Māori")]
    hits = [Hit(sentence_id=f"d:{i}", text=f"{k} were late.", keyword=k, group=g, category="unspecified", start=0, span=k)
            for i, (k, g) in enumerate([("women", "women"), ("Māori", "Māori")])]
    result = perturb(hits, seeds, {})
    assert [(c.target, c.anti_stereotype) for c in result.candidates] == [("women", "men")]
    assert len(result.not_perturbable) == 1  # Māori: no counterpart, no category -> counted, not paired with women


def test_search_takes_each_groups_keywords_within_its_own_clusters_and_whole_words_only():
    sentences = [Sentence(id=f"d:{i}", document="d", text=t) for i, t in enumerate([
        "The rangatahi mentoring programme and the Men's Shed.", "Many women and men came.", "Women stayed."])]
    keywords = [ExpandedKeyword(group=g, keyword=k, source="seed", score=1.0)
                for g, k in [("young people", "rang"), ("men", "men"), ("women", "women"), ("men", "mentor")]]
    everything = search(sentences, keywords, {})
    assert sorted((h.sentence_id, h.span) for h in everything) == [
        ("d:0", "Men"), ("d:1", "men"), ("d:1", "women"), ("d:2", "Women")]  # no "rang", no "mentor"
    per_cluster = search(sentences, keywords, {}, [frozenset({"young people"}), frozenset({"women"}), frozenset()])
    assert [(h.sentence_id, h.span) for h in per_cluster] == [("d:1", "women")]


def test_a_word_that_only_looks_like_a_seed_is_not_a_keyword():
    from culturebias.domain.libra_build.terms import look_alike

    assert look_alike("Tongariro crossing", ["Tongan", "Tongans"]) and look_alike("rang", ["rangatahi"]) is False
    assert not look_alike("Tongan youth", ["Tongan"]) and not look_alike("Samoa", ["Samoan"])
    assert look_alike("mentoring", ["mentors"]) and not look_alike("men", ["women"])


@pytest.mark.slow
def test_the_similarity_floor_separates_labelled_group_pairs():
    from culturebias.adapters.similarity.embeddings import open_embedder

    same = [("women", "men"), ("older people", "young people"), ("Christians", "Muslims"), ("Samoans", "Tongans"),
            ("Māori", "Asian New Zealanders")]
    different = [("farmers", "Indians"), ("rural communities", "older people"), ("Pasifika", "kaumātua"),
                 ("disabled people", "older people"), ("students", "women"), ("migrants", "Muslims")]
    embedder = open_embedder("minilm")
    for pairs, above in ((same, True), (different, False)):
        for a, b in pairs:
            seeds = [group(a), group(b)]
            vectors = embedder.embed([a, b])
            if above:
                assert {p.counterpart for p in pair_groups(seeds, vectors)} == {a, b}, (a, b)
            else:
                with pytest.raises(DataError):
                    pair_groups(seeds, vectors)
    assert 0.5 < SIMILARITY_FLOOR < 0.67
