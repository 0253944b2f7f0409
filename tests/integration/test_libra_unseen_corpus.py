"""Issue 27 point 7: the LIBRA build on a New Zealand corpus it was not written for (tests/fixtures/libra_unseen,
people's names in no list of the code, ten groups without categories), with the default components.

Measured: the people's names left in triplets.jsonl, the review sheet and the step files; the share of triplets
whose target ω is a whole keyword of its own group; the share whose anti-stereotyped term comes from a group of
the same (held-out) category."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from culturebias.bootstrap.libra_build_wiring import build_libra
from culturebias.domain.libra_build.names import GIVEN_NAMES

FIXTURE = Path(__file__).parents[1] / "fixtures" / "libra_unseen"


def _contains(text: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text, re.IGNORECASE) is not None


def measure(out: Path, seeds: dict[str, list[str]], truth: dict) -> dict:
    """The issue's three numbers for a build folder."""
    def names_in(files: list[Path]) -> list[str]:
        return sorted({name for path in files for name in truth["names"]
                       if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", path.read_text(encoding="utf-8"))})

    triplets = [json.loads(line) for line in (out / "triplets.jsonl").read_text(encoding="utf-8").splitlines()]
    category = truth["categories"]

    def whole_keyword(t: dict) -> bool:
        in_word = (t["left"][-1:].isalnum() or t["right"][:1].isalnum())
        return not in_word and any(_contains(t["target"], k) for k in seeds[t["group"]])

    def sensible(t: dict) -> bool:
        return any(_contains(t["anti_stereotype"], k) for g, keys in seeds.items()
                   if g != t["group"] and category[g] == category[t["group"]] for k in keys)

    n = max(len(triplets), 1)
    return {"triplets": len(triplets), "name_parts": len(truth["names"]),
            "names_left": names_in([out / "triplets.jsonl", out / "review.csv"]),
            "names_left_in_steps": names_in(sorted((out / "steps").glob("*.json"))),
            "whole_keyword": sum(map(whole_keyword, triplets)) / n, "sensible_counterpart": sum(map(sensible, triplets)) / n}


def test_the_fixture_names_are_in_no_list_of_the_code():
    truth = json.loads((FIXTURE / "truth.json").read_text(encoding="utf-8"))
    assert len(truth["names"]) >= 48 and not set(truth["names"]) & GIVEN_NAMES
    assert sum(1 for _ in (FIXTURE / "corpus.jsonl").open(encoding="utf-8")) >= 100


@pytest.mark.slow
def test_the_build_on_an_unseen_corpus_leaves_no_name_and_pairs_groups_of_one_category(tmp_path):
    pytest.importorskip("umap")
    pytest.importorskip("mlxtend")
    pytest.importorskip("spacy")
    seeds = json.loads((FIXTURE / "seeds.json").read_text(encoding="utf-8"))
    truth = json.loads((FIXTURE / "truth.json").read_text(encoding="utf-8"))
    report = build_libra(FIXTURE / "corpus.jsonl", FIXTURE / "seeds.json", tmp_path)
    numbers = measure(tmp_path, seeds, truth)
    print(json.dumps(numbers, ensure_ascii=False))
    assert report.search == "per cluster" and report.documents_dropped == {"weather": 3}
    assert numbers["triplets"] >= 100
    # main (the name list alone, every keyword in every sentence, the first other group as counterpart):
    # 50 of 52 name parts left, 30 % whole keywords of the right group, 27 % sensible counterparts.
    assert numbers["names_left"] == []
    # The small model misses a few: "Imogen thanked" (before the ORG guard of issue 36 also "Pan told the meeting",
    # which the model labels ORG and the old guard kept because "pan" is an English word).
    assert len(numbers["names_left_in_steps"]) <= 1
    assert numbers["whole_keyword"] >= 0.9
    assert numbers["sensible_counterpart"] == 1.0
    # The proposed counterparts are listed for review, each with the similarity that chose it.
    written = json.loads((tmp_path / "build_report.json").read_text())
    pairs = {p["group"]: p["counterpart"] for p in written["counterparts"]}
    assert pairs["women"] == "men" and pairs["young people"] == "older people" and pairs["Samoans"] == "Tongans"
    # Places stay (issue 36): the model calls the Auckland suburb a PERSON in "The night market in Northcote";
    # the gazetteer keeps it, and no triplet has a [NAME] where a place goes.
    print(json.dumps(written["names_by_rule"]))
    assert written["names_by_rule"]["kept_gazetteer"] >= 1 and written["names_by_rule"]["ner_person"] >= 1
    text = (tmp_path / "triplets.jsonl").read_text(encoding="utf-8")
    assert "in Northcote" in text or "in Northcote" in "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "steps").glob("*.json"))
    assert not re.search(r"\b(?:in|near|around) \[NAME\]", text)
