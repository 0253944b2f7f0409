"""LIBRA build, step "cluster": UMAP + HDBSCAN, noise re-clustered, c-TF-IDF terms, summaries, group mapping."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from culturebias.adapters.similarity.embeddings import open_embedder
from culturebias.adapters.libra_build.components import open_clusterer
from culturebias.testing.scripted import ScriptedGenerator
from culturebias.domain.libra_build.component_options import ClustererOptions
from culturebias.domain.libra_build.group_mapping import parse_mapping_reply

# Three large topics; three small ones near each other, far from the rest (together smaller than the first
# pass's min_cluster_size, so its noise, and three clear groups when the noise is clustered again).
TOPICS = {
    "maori": ("The iwi gathered at the marae for a hui", 40),
    "youth": ("Teenagers were vaping behind the school gym", 40),
    "farming": ("Dairy farmers worried about the milk payout", 40),
    "migrants": ("Migrants queued for work visas in Auckland", 10),
    "elderly": ("Pensioners asked for a larger winter energy payment", 10),
    "disabled": ("Disabled people could not reach the new library", 10),
}
SMALL = ("migrants", "elderly", "disabled")
GROUPS = {
    "Māori": ["iwi", "marae", "Māori"],
    "young people": ["teenagers", "rangatahi"],
    "farmers": ["farmers"],
    "immigrants": ["migrants"],
    "older people": ["pensioners"],
}


def constructed_corpus() -> tuple[list[str], dict[str, str]]:
    sentences, topic_of = [], {}
    for topic, (text, count) in TOPICS.items():
        for i in range(count):
            sentence = f"{text} (report {topic} {i})."
            sentences.append(sentence)
            topic_of[sentence] = topic
    order = np.random.default_rng(7).permutation(len(sentences))
    return [sentences[i] for i in order], topic_of


class TopicEmbedder:
    """Each topic a centre in 24 dimensions, each sentence a small deterministic jitter around it."""

    def __init__(self, topic_of: dict[str, str]):
        self._topic_of = topic_of
        self.calls = 0

    def describe(self) -> str:
        return "topic centres + jitter (test)"

    def embed(self, texts):
        self.calls += 1
        out = []
        for text in texts:
            topic = self._topic_of[text]
            centre = np.random.default_rng(zlib.crc32(topic.encode())).normal(size=24) * 4
            if topic in SMALL:  # one region, three groups in it
                centre = np.full(24, 6.0) + np.random.default_rng(zlib.crc32(topic.encode())).normal(size=24) * 1.2
            jitter = np.random.default_rng(zlib.crc32(text.encode())).normal(size=24) * 0.3
            out.append((centre + jitter).tolist())
        return out


OPTIONS = ClustererOptions(min_cluster_size=35, noise_min_cluster_size=5)
# HDBSCAN on the embeddings themselves: UMAP places a small topic beside whichever large one it likes
# (a disconnected neighbour graph's components are laid out independently), so exact cluster contents are
# asserted without it; the UMAP runs below assert what UMAP keeps.
FLAT = OPTIONS.model_copy(update={"reduction": "none"})


@pytest.fixture(scope="module")
def corpus():
    return constructed_corpus()


@pytest.fixture(scope="module")
def clustered(corpus, costly):
    sentences, topic_of = corpus
    return open_clusterer(embedder=TopicEmbedder(topic_of), options=OPTIONS).cluster(sentences, GROUPS, seed=0)


@pytest.fixture(scope="module")
def flat(corpus):
    sentences, topic_of = corpus
    return open_clusterer(embedder=TopicEmbedder(topic_of), options=FLAT).cluster(sentences, GROUPS, seed=0)


def topics_of(cluster, corpus) -> set[str]:
    sentences, topic_of = corpus
    return {topic_of[sentences[i]] for i in cluster.members}


def test_large_topics_form_clusters_and_the_noise_is_clustered_again(flat, corpus):
    first = [c for c in flat.clusters if not c.from_noise]
    again = [c for c in flat.clusters if c.from_noise]
    assert sorted(tuple(sorted(topics_of(c, corpus))) for c in first) == [("farming",), ("maori",), ("youth",)]
    assert sorted(tuple(sorted(topics_of(c, corpus))) for c in again) == [("disabled",), ("elderly",), ("migrants",)]
    assert all(len(c.members) == 10 for c in again) and flat.noise == 0
    assert "30 noise points re-clustered" in flat.method and "3 clusters formed" in flat.method
    for cluster in flat.clusters:
        assert all(flat.labels[i] == cluster.id for i in cluster.members)


def test_without_the_second_pass_the_small_topics_stay_noise(corpus):
    sentences, topic_of = corpus
    options = FLAT.model_copy(update={"recluster_noise": False})
    result = open_clusterer(embedder=TopicEmbedder(topic_of), options=options).cluster(sentences, GROUPS)
    assert len(result.clusters) == 3 and result.noise == 30
    assert {topic_of[sentences[i]] for i, label in enumerate(result.labels) if label < 0} == set(SMALL)


def test_umap_keeps_each_large_topic_whole_and_apart(clustered, corpus):
    sentences, topic_of = corpus
    for topic in ("maori", "youth", "farming"):
        labels = {clustered.labels[i] for i, s in enumerate(sentences) if topic_of[s] == topic}
        assert len(labels) == 1 and labels != {-1}
    big = [next(iter(topics_of(c, corpus) - set(SMALL))) for c in clustered.clusters if topics_of(c, corpus) - set(SMALL)]
    assert sorted(big) == ["farming", "maori", "youth"]
    assert "umap(n_neighbors=15 (exact), n_components=5" in clustered.method and "random_state=0, n_jobs=1" in clustered.method
    assert "hdbscan(min_cluster_size=35" in clustered.method and "re-clustered" in clustered.method
    assert clustered.coordinates is not None and len(clustered.coordinates) == len(sentences)
    assert all(len(point) == 2 for point in clustered.coordinates)


def test_terms_summaries_and_keyword_mapping(flat, corpus):
    by_topic = {next(iter(topics_of(c, corpus))): c for c in flat.clusters}
    assert {"iwi", "marae", "hui"} <= set(by_topic["maori"].terms)
    assert by_topic["maori"].terms[-1] == "report"  # in every cluster: c-TF-IDF ranks it last
    assert by_topic["youth"].summary.startswith("Teenagers were vaping behind the school gym")
    assert len(by_topic["youth"].summary.split("(report")) == 4  # three sentences
    expected = {
        "maori": "Māori", "youth": "young people", "farming": "farmers",
        "migrants": "immigrants", "elderly": "older people", "disabled": None,
    }
    assert {t: c.group for t, c in by_topic.items()} == expected
    assert all(c.mapped_by == "keywords" for c in flat.clusters)
    assert flat.mapping_use is None and flat.summary_use is None


def test_the_same_inputs_and_seed_give_identical_clusters(clustered, corpus):
    sentences, topic_of = corpus
    again = open_clusterer(embedder=TopicEmbedder(topic_of), options=OPTIONS).cluster(sentences, GROUPS, seed=0)
    assert again.model_dump() == clustered.model_dump()


def number_for(prompt: str) -> str:
    """A generator that reads the choices and picks the group whose keyword the prompt's topic holds."""
    choices = [line.split(". ", 1) for line in prompt.splitlines() if line[:1].isdigit() and ". " in line]
    topic = prompt.split("Which social group")[0].casefold()
    for number, name in choices:
        if any(keyword.casefold() in topic for keyword in GROUPS.get(name, ())):
            return number
    return "0"


def test_the_generators_choice_maps_clusters_when_it_parses(corpus):
    sentences, topic_of = corpus
    prompts = []

    def rule(request, prompt):
        prompts.append(prompt)
        return "1" if "Dairy" in prompt else number_for(prompt)  # the farming topic goes to group 1 (Māori): the LLM decides

    generator = ScriptedGenerator(rule)
    result = open_clusterer(embedder=TopicEmbedder(topic_of), generator=generator, options=FLAT).cluster(sentences, GROUPS)
    by_topic = {next(iter(topics_of(c, corpus))): c for c in result.clusters}
    assert by_topic["farming"].group == "Māori"
    assert by_topic["youth"].group == "young people" and by_topic["elderly"].group == "older people"
    assert all(c.mapped_by == "llm" for c in result.clusters)
    assert result.mapping_use.asked == result.mapping_use.parsed == len(result.clusters) == len(prompts)
    assert "0. none of these\n1. Māori\n2. young people" in prompts[0]
    assert "ScriptedGenerator" not in result.method and "scripted-generator" in result.method


def test_junk_replies_fall_back_to_keywords_and_the_generator_is_given_up(corpus):
    sentences, topic_of = corpus
    asked = []

    def rule(request, prompt):
        asked.append(prompt)
        return "This topic seems to be about a community in New Zealand."

    options = FLAT.model_copy(update={"max_failures": 2, "summary": "llm"})
    result = open_clusterer(embedder=TopicEmbedder(topic_of), generator=ScriptedGenerator(rule), options=options).cluster(
        sentences, GROUPS
    )
    n = len(result.clusters)
    assert result.mapping_use.model_dump() == {"asked": 2, "parsed": 0, "unparseable": 2, "not_asked": n - 2, "gave_up": True}
    assert all(c.mapped_by == "keywords" for c in result.clusters)
    assert sorted(str(c.group) for c in result.clusters) == sorted(["Māori", "young people", "farmers", "immigrants", "older people", "None"])
    assert "given up after 2 unusable replies" in result.method
    # The summary replies were usable (two words or more): every cluster's summary is the generator's.
    assert result.summary_use.parsed == result.summary_use.asked > 0
    assert all(c.summary == "This topic seems to be about a community in New Zealand." for c in result.clusters)
    assert len(asked) == result.summary_use.asked + 2


@pytest.mark.parametrize(
    "reply,expected",
    [("2", "young people"), (" 2. ", "young people"), ("(1)", "Māori"), ("2. Young people", "young people"),
     ("0", None), ("none", None), ("Māori", "Māori")],
)
def test_a_mapping_reply_parses_only_when_it_is_a_choice(reply, expected):
    parsed = parse_mapping_reply(reply, ["Māori", "young people"])
    assert parsed is not None and parsed.group == expected


@pytest.mark.parametrize("reply", ["", "3", "2. Māori", "I think 2", "The answer is Māori.", "1 or 2"])
def test_any_other_reply_is_unparseable(reply):
    assert parse_mapping_reply(reply, ["Māori", "young people"]) is None


@pytest.mark.parametrize("n", [0, 1, 5, 9])
def test_a_tiny_corpus_is_one_cluster_without_umap(n):
    sentences = [f"The iwi met at the marae number {i}." for i in range(n)]
    result = open_clusterer(embedder=open_embedder("bag-of-words")).cluster(sentences, GROUPS)
    assert result.labels == tuple([0] * n)
    if n == 0:
        assert result.clusters == () and result.method.startswith("no sentences")
        return
    (cluster,) = result.clusters
    assert cluster.members == tuple(range(n)) and cluster.group == "Māori"
    assert "fewer than min_sentences=10" in result.method and "umap" not in result.method
    assert len(result.coordinates) == n


@pytest.mark.parametrize("n", [10, 14])
def test_a_small_corpus_runs_umap_with_fewer_neighbours(n):
    sentences = [f"The iwi met at the marae number {i}." for i in range(n // 2)]
    sentences += [f"Teenagers vaped at school day {i}." for i in range(n - n // 2)]
    result = open_clusterer(embedder=open_embedder("bag-of-words")).cluster(sentences, GROUPS, seed=1)
    assert f"n_neighbors={n - 1}" in result.method
    assert len(result.labels) == n and len(result.coordinates) == n
    assert all(label >= -1 for label in result.labels)


def test_identical_sentences_are_one_point_and_share_a_cluster():
    sentences = ["The iwi met at the marae."] * 30 + ["Teenagers vaped at school."] * 20
    result = open_clusterer(embedder=open_embedder("bag-of-words")).cluster(sentences, GROUPS)
    assert "50 sentences, 2 distinct" in result.method and "fewer than min_sentences" in result.method
    (cluster,) = result.clusters
    assert cluster.members == tuple(range(50)) and result.coordinates[0] == result.coordinates[29]
    assert cluster.summary == "The iwi met at the marae. Teenagers vaped at school."
