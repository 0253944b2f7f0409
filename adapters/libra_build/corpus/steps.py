"""Default clean/perturb/review components of the LIBRA build (no hub model needed)."""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path
from typing import Mapping, Sequence

from culturebias.adapters.libra_build.corpus.files import read_sheet, sheet_text, write_xlsx
from culturebias.application.out_folder import write_text_atomically
from culturebias.domain.libra_build.build_steps import (
    CleanResult,
    Hit,
    PerturbResult,
    Sentence,
    REPLACED_BY,
    anonymise_by_rule,
    irrelevant_reason,
    perturb,
    split_sentences,
)
from culturebias.domain.errors import ConfigError
from culturebias.domain.libra_build.collectives import Collectives
from culturebias.domain.libra_build.keywords import SeedGroup
from culturebias.domain.libra_build.places import PlaceGazetteer

NZ_PLACES = Path(__file__).parents[1] / "data" / "nz_places.txt"
NZ_IWI = Path(__file__).parents[1] / "data" / "nz_iwi.txt"
NZ_ORGANISATIONS = Path(__file__).parents[1] / "data" / "nz_organisations.txt"


@functools.lru_cache(maxsize=4)
def place_gazetteer(spec: str = "nz") -> PlaceGazetteer | None:
    """``places``: "nz" the shipped New Zealand gazetteer (data/nz_places.txt), "none", or a file of that format."""
    if spec == "none":
        return None
    path = NZ_PLACES if spec == "nz" else Path(spec)
    if not path.is_file():
        raise ConfigError(f"places={spec}: no such gazetteer file {path} (give nz, none or a file, one place a line)")
    return PlaceGazetteer.from_lines(path.read_text(encoding="utf-8").splitlines())


@functools.lru_cache(maxsize=2)
def collectives(spec: str = "nz") -> Collectives | None:
    """``collectives``: "nz" the shipped iwi and organisation lists (data/nz_iwi.txt, data/nz_organisations.txt)
    with the iwi, marae, kura and organisation patterns; "none" keeps none of them."""
    if spec == "none":
        return None
    if spec != "nz":
        raise ConfigError(f"collectives={spec}: give nz (the shipped iwi and organisation lists) or none")
    return Collectives.from_lines(NZ_IWI.read_text(encoding="utf-8").splitlines(),
                                  NZ_ORGANISATIONS.read_text(encoding="utf-8").splitlines())


class RuleCleaner:
    """Irrelevant documents by cue-word rules; names by ``names`` (a named-entity model, see
    adapters/libra_build/spacy_ner) or, without one, by the gazetteer + titles + capitalisation."""

    names = None  # an object with anonymise_all(texts, protected) -> [(text, counts per rule)] and describe()
    places: PlaceGazetteer | None = None  # places kept, never taken for a name (issue 36)
    collectives: Collectives | None = None  # iwi, hapū, marae, kura and organisations kept (issue 36)

    def with_names(self, names) -> "RuleCleaner":
        self.names = names
        return self

    def with_places(self, places: PlaceGazetteer | None) -> "RuleCleaner":
        self.places = places
        return self

    def with_collectives(self, collectives: Collectives | None) -> "RuleCleaner":
        self.collectives = collectives
        return self

    def describe(self) -> str:
        kept = f" + {len(self.places)} places kept" if self.places is not None else ""
        kept += " + iwi, marae, kura, organisations kept" if self.collectives is not None else ""
        found_by = self.names.describe() if self.names is not None else f"name gazetteer + titles{kept}"
        return f"rules({found_by}; weather/joke/puzzle cue words)"

    def irrelevant(self, text: str) -> str | None:
        return irrelevant_reason(text)

    def clean(self, documents: Sequence[tuple[str, str]], protected: frozenset[str], *, seed: int = 0) -> CleanResult:
        sentences: list[Sentence] = []
        dropped: list[tuple[str, str]] = []
        for document, text in documents:
            reason = self.irrelevant(text)
            if reason is not None:
                dropped.append((document, reason))
                continue
            for n, raw in enumerate(split_sentences(text), start=1):
                sentences.append(Sentence(id=f"{document}:{n}", document=document, text=raw))
        raws = [sentence.text for sentence in sentences]
        if self.names is not None:
            cleaned = self.names.anonymise_all(raws, protected)
        else:
            cleaned = [anonymise_by_rule(raw, protected, self.places, collectives=self.collectives) for raw in raws]
        sentences = [s.model_copy(update={"text": text}) for s, (text, _) in zip(sentences, cleaned)]
        by_rule: Counter[str] = Counter()
        for _, counts in cleaned:
            by_rule.update(counts)
        return CleanResult(
            sentences=tuple(sentences), documents_read=len(documents), documents_dropped=tuple(dropped),
            names_replaced=sum(by_rule[rule] for rule in REPLACED_BY), names_by_rule=dict(sorted(by_rule.items())),
        )


class TablePerturber:
    """Antonyms from the seeds file, else a same-category group's first seed; unrelated terms from a table."""

    def describe(self) -> str:
        return "table(antonyms from seeds, else same-category seed; unrelated nouns)"

    def perturb(
        self, hits: Sequence[Hit], seeds: Sequence[SeedGroup], antonyms: Mapping[str, str], *, seed: int = 0
    ) -> PerturbResult:
        return perturb(hits, seeds, antonyms, seed=seed)


class CsvXlsxSheets:
    def write(self, folder: Path, rows: list[dict[str, str]]) -> list[Path]:
        csv_path, xlsx_path = folder / "review.csv", folder / "review.xlsx"
        write_text_atomically(csv_path, sheet_text(rows))
        write_xlsx(xlsx_path, rows)
        return [csv_path, xlsx_path]

    def read(self, path: Path) -> list[tuple[int, dict[str, str]]]:
        return list(read_sheet(path))


class EmbeddingPerturber(TablePerturber):
    """Where the seeds give no antonym: the counterpart group's (else a same-category group's) keyword most
    distant from the keyword by embedding cosine (ties: alphabetical), as the paper's "most distant same-group term"."""

    def __init__(self, embedder):
        self.embedder = embedder

    def describe(self) -> str:
        return f"antonyms from seeds, else the most distant same-category term by {self.embedder.describe()}"

    def perturb(
        self, hits: Sequence[Hit], seeds: Sequence[SeedGroup], antonyms: Mapping[str, str], *, seed: int = 0
    ) -> PerturbResult:
        import numpy as np

        known = {key.lower() for key in antonyms}
        category = {group.group: group.category for group in seeds}
        counterpart = {group.group: group.counterpart for group in seeds}
        needed = sorted({(hit.keyword, hit.group) for hit in hits if hit.keyword.lower() not in known})
        chosen = dict(antonyms)
        terms = sorted({k for group in seeds for k in group.keywords})
        if needed and terms:
            vectors = np.asarray(self.embedder.embed(terms + [k for k, _ in needed]), dtype=float)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            index = {term: vectors[i] for i, term in enumerate(terms)}
            for offset, (keyword, group) in enumerate(needed):
                options = sorted(
                    k for other in seeds if other.group != group and (
                        other.group == counterpart.get(group)
                        or (counterpart.get(group) is None and category.get(group) is not None
                            and other.category == category.get(group)))
                    for k in other.keywords
                )
                if options:
                    vector = vectors[len(terms) + offset]
                    chosen[keyword] = min(options, key=lambda term: (float(index[term] @ vector), term))
        return perturb(hits, seeds, chosen, seed=seed)
