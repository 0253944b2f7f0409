"""Step definitions of features/libra_build.feature: the LIBRA build on real default components."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from culturebias.bootstrap.libra_build_wiring import build_libra, import_libra_review

scenarios("libra_build.feature")


class World:
    def __init__(self, folder: Path):
        self.folder = folder
        self.seeds: dict = {}
        self.documents: list[str] = []

    @property
    def out(self) -> Path:
        return self.folder / "out"

    def triplets(self) -> list[dict]:
        return [json.loads(line) for line in (self.out / "triplets.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def world(tmp_path) -> World:
    return World(tmp_path)


@given("the seed groups")
def seed_groups(world, datatable):
    header, *rows = datatable
    for row in rows:
        fields = dict(zip(header, row))
        keywords = [k.strip() for k in fields["keywords"].split(",")]
        anti = [a.strip() for a in fields["anti"].split(",")]
        world.seeds[fields["group"]] = {"category": fields["category"], "keywords": keywords,
                                        "anti": dict(zip(keywords, anti))}


@given(parsers.parse('the document "{text}"'))
def a_document(world, text):
    world.documents.append(text)


@when("the triplets are built")
def built(world):
    corpus = world.folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"text": d}, ensure_ascii=False) + "\n" for d in world.documents), "utf-8")
    seeds = world.folder / "seeds.json"
    seeds.write_text(json.dumps(world.seeds, ensure_ascii=False), encoding="utf-8")
    build_libra(corpus, seeds, world.out, settings={"expander": "none", "clusterer": "none"})


@when(parsers.parse('the reviewer rejects the row of "{sentence}"'))
def reject(world, sentence):
    rows = list(csv.DictReader((world.out / "review.csv").open(encoding="utf-8")))
    hit = [row for row in rows if row["left"] + row["target"] + row["right"] == sentence]
    assert len(hit) == 1
    hit[0]["decision"] = "reject"
    sheet = world.folder / "edited.csv"
    with sheet.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert import_libra_review(world.out, sheet) == {"rejected": 1, "accepted": len(rows) - 1}


def _sentences(triplet: dict) -> tuple[str, str, str]:
    left, right = triplet["left"], triplet["right"]
    return left + triplet["target"] + right, left + triplet["anti_stereotype"] + right, left + triplet["unrelated"] + right


@then(parsers.parse('no output sentence holds "{a}", "{b}" or "{c}"'))
def no_names(world, a, b, c):
    texts = [s for t in world.triplets() for s in _sentences(t)]
    texts += [row["left"] + row["right"] for row in csv.DictReader((world.out / "review.csv").open(encoding="utf-8"))]
    assert texts and not [name for name in (a, b, c) for text in texts if name in text]


@then(parsers.re(r"there (?:is|are) (?P<n>\d+) triplets?"))
def count(world, n):
    assert len(world.triplets()) == int(n)


@then(parsers.parse('no triplet comes from "{sentence}"'))
def not_from(world, sentence):
    assert sentence not in {_sentences(t)[0] for t in world.triplets()}


@then("every triplet's three sentences share U_left and U_right and differ in ω")
def differ_only_in_target(world):
    triplets = world.triplets()
    assert len(triplets) == 2
    for triplet in triplets:
        s, s_p, s_u = _sentences(triplet)
        assert len({s, s_p, s_u}) == 3
        for other in (s_p, s_u):
            prefix = len(triplet["left"])
            suffix = len(triplet["right"])
            assert other[:prefix] == s[:prefix] and other[len(other) - suffix:] == s[len(s) - suffix:]
        assert triplet["target"] in {"whānau", "Teenagers"}
