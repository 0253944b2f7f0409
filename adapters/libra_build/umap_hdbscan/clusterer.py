"""The default topic clusterer (PROTOCOLS §4 construction step 3).

Sentences are embedded through the ``TextEmbedder`` port, projected by UMAP and
clustered by HDBSCAN; the noise points are clustered once more (HDBSCAN again,
smaller clusters, same projection). Each cluster gets its c-TF-IDF terms, a
summary (extractive, or folded chunk by chunk through the generator) and a
social group: the generator's choice when its reply parses, else keyword
overlap. A generator that keeps answering junk (a 135M model may) is asked no
more after ``max_failures`` unusable replies in a row; the counts say so.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from culturebias.adapters.libra_build.keyword_expansion import CachedEmbeddings
from culturebias.adapters.libra_build.umap_hdbscan.reduction import Projections, hdbscan_labels, umap_projections
from culturebias.domain.errors import ConfigError
from culturebias.domain.libra_build.clustering import (
    auto_min_cluster_size,
    ctfidf_terms,
    extractive_summary,
    members_by_cluster,
    merge_noise_labels,
    nearest_to_centroid,
    principal_plane,
)
from culturebias.domain.libra_build.component_options import ClustererOptions
from culturebias.domain.libra_build.group_mapping import (
    GeneratorLedger,
    keyword_overlap_group,
    mapping_prompt,
    parse_mapping_reply,
    parse_summary_reply,
    summary_prompt,
)
from culturebias.domain.libra_build.terms import sentence_terms, term_key, tokens
from culturebias.domain.libra_build.topics import TopicCluster, TopicClusters
from culturebias.domain.requests import ChatMessage, GenerationParams, GenerationRequest
from culturebias.ports.generation import Generator
from culturebias.ports.similarity import TextEmbedder


class UmapHdbscanClusterer:
    def __init__(self, options: ClustererOptions, *, embedder: TextEmbedder, generator: Generator | None = None):
        self.options = options
        self._embeddings = CachedEmbeddings(embedder)
        self._generator = generator

    @property
    def _asks_generator(self) -> bool:
        return self._generator is not None and self.options.mapping in ("auto", "llm")

    def describe(self) -> str:
        o = self.options
        size = o.min_cluster_size if o.min_cluster_size is not None else "auto"
        mapping = (
            f"group mapping by {self._generator.identity.model} (keyword-overlap fallback)"
            if self._asks_generator and self._generator is not None
            else "group mapping by keyword overlap"
        )
        reduction = f"umap(n_neighbors={o.n_neighbors}, n_components={o.n_components})" if o.reduction == "umap" else "no reduction"
        return (
            f"{self._embeddings.embedder.describe()}; {reduction} "
            f"+ hdbscan(min_cluster_size={size}), noise re-clustered: {o.recluster_noise}; "
            f"c-TF-IDF terms; {o.summary} summaries; {mapping}"
        )

    def cluster(self, sentences: Sequence[str], groups: Mapping[str, Sequence[str]], *, seed: int = 0) -> TopicClusters:
        o = self.options
        if self.options.mapping == "llm" and self._generator is None:
            raise ConfigError("clusterer mapping=llm needs a generator (or mapping=auto|keywords)")
        texts = list(sentences)
        if not texts:
            return TopicClusters(labels=(), clusters=(), method="no sentences: nothing clustered", coordinates=())
        # Identical sentences are one point (UMAP would scatter copies at random), then share its cluster.
        distinct = list(dict.fromkeys(texts))
        position = {text: j for j, text in enumerate(distinct)}
        copy_of = [position[text] for text in texts]
        distinct_vectors = self._embeddings.of(distinct)
        vectors = distinct_vectors[copy_of]
        steps: list[str] = [self._embeddings.embedder.describe()]
        if len(distinct) < len(texts):
            steps.append(f"{len(texts)} sentences, {len(distinct)} distinct: copies share a point")
        distinct_labels, formed, distinct_coordinates = self._labels(distinct_vectors, seed, steps)
        labels = [distinct_labels[j] for j in copy_of]
        coordinates = [distinct_coordinates[j] for j in copy_of] if distinct_coordinates is not None else None
        clusters = members_by_cluster(labels)
        member_terms = [[key for key, _ in sentence_terms(text, o.max_ngram)] for text in texts]
        terms = ctfidf_terms(member_terms, clusters, o.top_terms)
        ordered = {cid: nearest_to_centroid(vectors, members) for cid, members in clusters.items()}
        summaries = {cid: extractive_summary(texts, ordered[cid], o.summary_sentences) for cid in clusters}
        summary_ledger = None
        if o.summary == "llm" and self._generator is not None:
            summary_ledger = GeneratorLedger(o.max_failures)
            summaries = self._llm_summaries(texts, ordered, summaries, summary_ledger, seed)
            steps.append(f"summaries folded in by {self._generator.identity.model}, extractive where it failed")
        else:
            steps.append(f"extractive summaries ({o.summary_sentences} sentences nearest the centroid)")
        group_of, mapped_by, mapping_ledger = self._map_groups(texts, clusters, terms, summaries, groups, seed)
        steps.append(
            f"groups by {self._generator.identity.model}, keyword overlap where its reply did not parse"
            if mapping_ledger is not None and self._generator is not None
            else f"groups by keyword overlap (share >= {o.min_keyword_share})"
        )
        if mapping_ledger is not None and mapping_ledger.gave_up:
            steps.append(f"generator given up after {o.max_failures} unusable replies in a row")
        return TopicClusters(
            labels=tuple(labels),
            clusters=tuple(
                TopicCluster(
                    id=cid,
                    members=tuple(members),
                    terms=terms[cid],
                    summary=summaries[cid],
                    from_noise=cid in formed,
                    group=group_of[cid],
                    mapped_by=mapped_by[cid],
                )
                for cid, members in clusters.items()
            ),
            method="; ".join(steps),
            coordinates=tuple(coordinates) if coordinates is not None else None,
            mapping_use=mapping_ledger.use() if mapping_ledger is not None else None,
            summary_use=summary_ledger.use() if summary_ledger is not None else None,
        )

    def _labels(self, vectors: np.ndarray, seed: int, steps: list[str]):
        """Each sentence's cluster (-1 noise), the ids formed from the noise, the plot coordinates; ``steps`` says what ran."""
        o = self.options
        n = vectors.shape[0]
        formed: set[int] = set()
        if n < o.min_sentences:
            labels = [0] * n
            coordinates = principal_plane(vectors) if o.plot_coordinates else None
            steps.append(
                f"{n} distinct sentences (fewer than min_sentences={o.min_sentences}): one cluster of all of them, "
                "no UMAP/HDBSCAN; plot on the first two principal axes"
            )
        else:
            if o.reduction == "umap":
                projection = umap_projections(
                    vectors,
                    n_neighbors=o.n_neighbors,
                    n_components=o.n_components,
                    min_dist=o.min_dist,
                    metric=o.metric,
                    seed=seed,
                    plane=o.plot_coordinates,
                )
            else:
                plane = np.asarray(principal_plane(vectors)) if o.plot_coordinates else None
                projection = Projections(vectors, plane, "no reduction: hdbscan on the embeddings (euclidean)")
            size = o.min_cluster_size if o.min_cluster_size is not None else auto_min_cluster_size(n)
            labels = hdbscan_labels(projection.reduced, min_cluster_size=size, min_samples=o.min_samples)
            steps += [projection.description, f"hdbscan(min_cluster_size={size}, min_samples={o.min_samples or size})"]
            noise = [i for i, label in enumerate(labels) if label < 0]
            if o.recluster_noise:
                noise_size = o.noise_min_cluster_size if o.noise_min_cluster_size is not None else max(3, size // 2)
                samples = min(o.min_samples, noise_size) if o.min_samples is not None else None
                second = hdbscan_labels(projection.reduced[noise], min_cluster_size=noise_size, min_samples=samples)
                labels, formed = merge_noise_labels(labels, second)
                steps.append(
                    f"{len(noise)} noise points re-clustered: hdbscan(min_cluster_size={noise_size}) on their projection, "
                    f"{len(formed)} clusters formed"
                )
            if projection.plane is not None:
                coordinates = [(float(x), float(y)) for x, y in projection.plane]
                steps.append(
                    "plot: first two principal axes"
                    if o.reduction == "none"
                    else "plot: umap n_components=2 on the same neighbour graph"
                )
            else:
                coordinates = None
        return labels, formed, coordinates

    def _ask(self, prompts: Sequence[str], max_new_tokens: int, seed: int) -> list[str | None]:
        """One reply per prompt (None where the backend marks it invalid), in batches."""
        assert self._generator is not None
        params = GenerationParams(max_new_tokens=max_new_tokens, temperature=0.0, seed=seed, stop=("\n\n",))
        requests = [GenerationRequest.chat([ChatMessage("user", p)], params) for p in prompts]
        results = self._generator.generate(requests)
        return [None if r.invalid else r.text for r in results]

    def _batches(self, items: list, ledger: GeneratorLedger):
        """The first batch is a probe of ``max_failures`` items, so a generator that only answers junk
        is found out after that many requests; the rest go ``generator_batch_size`` at a time."""
        start = 0
        size = min(self.options.max_failures, self.options.generator_batch_size) if ledger.asked == 0 else self.options.generator_batch_size
        while start < len(items):
            if ledger.gave_up:
                ledger.skip(len(items) - start)
                return
            yield items[start : start + size]
            start += size
            size = self.options.generator_batch_size

    def _llm_summaries(self, texts, ordered, summaries: dict[int, str], ledger: GeneratorLedger, seed: int) -> dict[int, str]:
        o = self.options
        k = o.summary_sentences
        folded: dict[int, str] = {}
        for chunk in range(o.summary_chunks):
            due = [cid for cid in ordered if len(ordered[cid]) > chunk * k]
            for batch in self._batches(due, ledger):
                prompts = [summary_prompt(folded.get(cid, ""), [texts[i] for i in ordered[cid][chunk * k : (chunk + 1) * k]]) for cid in batch]
                for cid, reply in zip(batch, self._ask(prompts, o.summary_max_new_tokens, seed)):
                    usable = parse_summary_reply(reply) if reply is not None else None
                    ledger.record(usable is not None)
                    if usable is not None:
                        folded[cid] = usable
            if ledger.gave_up:
                break
        return {cid: folded.get(cid, summary) for cid, summary in summaries.items()}

    def _map_groups(self, texts, clusters, terms, summaries, groups: Mapping[str, Sequence[str]], seed: int):
        o = self.options
        names = list(groups)
        member_tokens = {cid: [[term_key(w) for w in tokens(texts[i])] for i in members] for cid, members in clusters.items()}
        group_of = {cid: keyword_overlap_group(member_tokens[cid], groups, o.min_keyword_share) for cid in clusters}
        mapped_by: dict[int, str | None] = {cid: "keywords" for cid in clusters}
        if not self._asks_generator or not names:
            return group_of, mapped_by, None
        ledger = GeneratorLedger(o.max_failures)
        for batch in self._batches(list(clusters), ledger):
            prompts = [mapping_prompt(names, terms[cid], summaries[cid]) for cid in batch]
            for cid, reply in zip(batch, self._ask(prompts, o.max_new_tokens, seed)):
                parsed = parse_mapping_reply(reply, names) if reply is not None else None
                ledger.record(parsed is not None)
                if parsed is not None:
                    group_of[cid] = parsed.group
                    mapped_by[cid] = "llm"
        return group_of, mapped_by, ledger
