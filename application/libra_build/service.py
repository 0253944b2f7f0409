"""Runs the six steps of the LIBRA build, each stored in ``<out>/steps/<step>.json`` once done.

A step's file carries the fingerprint of everything it was computed from (inputs, settings and the
steps before it); ``resume`` reuses a step whose fingerprint matches, so a killed build continues
at the first step it had not finished. Every file is written atomically; the triplets, glossary
and sheet appear only when the review step runs.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter

from culturebias.application.out_folder import write_text_atomically
from culturebias.domain.errors import ConfigError, DataError
from culturebias.domain.libra_build.build_steps import NAME_PLACEHOLDER, Candidate, CleanResult, Hit, PerturbResult, search
from culturebias.domain.libra_build.counterparts import Counterpart, needs_similarity, pair_groups
from culturebias.domain.libra_build.keywords import ExpandedKeyword, SeedGroup
from culturebias.domain.libra_build.terms import look_alike
from culturebias.domain.libra_build.topics import TopicClusters
from culturebias.ports.dataset_building import KeywordExpander, TopicClusterer
from culturebias.ports.libra_build_steps import DocumentCleaner, Perturber, ReviewSheets
from culturebias.ports.similarity import TextEmbedder

STEPS = ("clean", "expand", "cluster", "search", "perturb", "review")
STEP_DIR = "steps"
TRIPLETS = "triplets.jsonl"
GLOSSARY = "glossary.jsonl"
REPORT = "build_report.json"
DECISIONS = ("accept", "reject")
_DEFINITION = re.compile(r"(?P<term>[\wĀĒĪŌŪāēīōū'’-]+(?: [\wĀĒĪŌŪāēīōū'’-]+)?) \((?P<definition>[^()]{3,80})\)")


class BuildReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    steps_run: tuple[str, ...]
    steps_reused: tuple[str, ...]
    documents: int
    documents_dropped: dict[str, int]  # reason -> documents
    names_replaced: int
    # rule → people's names it replaced (ner_person, after_role, leading_subject, given_name, title, pattern), and
    # name-like spans kept (kept_gazetteer, kept_iwi, kept_marae_kura, kept_organisation, kept_ner_place); {} in
    # reports written before (issue 36)
    names_by_rule: dict[str, int] = {}
    sentences: int
    keywords: dict[str, int]  # source -> keywords
    clusters: int
    cluster_noise: int
    clusters_per_group: dict[str, int]
    hits: int
    hits_per_group: dict[str, int]
    not_perturbable: int
    candidates: int
    triplets_per_group: dict[str, int]
    triplets_per_category: dict[str, int]
    glossary_terms: int
    components: dict[str, str]
    # Each group's counterpart (the group whose terms make S_p) and what chose it, for review.
    counterparts: tuple[Counterpart, ...] = ()
    # "per cluster": each group's keywords searched in the sentences of its clusters (PROTOCOLS §4 step 4);
    # "every sentence": no clusters (the cluster step configured off).
    search: str = "every sentence"


class Components(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    cleaner: DocumentCleaner
    perturber: Perturber
    sheets: ReviewSheets
    expander: KeywordExpander | None = None
    clusterer: TopicClusterer | None = None
    # Embeds the group names to propose counterparts where the seeds give no category (PROTOCOLS §4 step 5).
    group_embedder: TextEmbedder | None = None


T = TypeVar("T")


def _digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:16]


class LibraBuild:
    def __init__(self, out: Path, components: Components, *, seed: int = 0):
        self.out = Path(out)
        self.parts = components
        self.seed = seed
        self.run: list[str] = []
        self.reused: list[str] = []

    # -- storage of step results ------------------------------------------------------------
    def _path(self, step: str) -> Path:
        return self.out / STEP_DIR / f"{step}.json"

    def _stored(self, step: str, fingerprint: str) -> Any | None:  # Any: the step's stored JSON
        path = self._path(step)
        if not path.exists():
            return None
        record = json.loads(path.read_text(encoding="utf-8"))
        return record["result"] if record.get("fingerprint") == fingerprint else None

    def _step(self, step: str, wanted: set[str], resume: bool, fingerprint: str, compute: Callable[[], T],
              adapter: TypeAdapter[T], empty: T, *, optional: bool = False) -> T:
        if STEPS.index(step) > max(STEPS.index(s) for s in wanted):
            return empty  # after the last step asked for: not run, not loaded
        stored = self._stored(step, fingerprint) if (resume or step not in wanted) else None
        if stored is not None:
            self.reused.append(step)
            return adapter.validate_python(stored)
        if step not in wanted:
            if optional:  # expand and cluster may be left out: the seeds alone are searched
                return empty
            raise ConfigError(f"step {step!r} is not in --steps and {self._path(step)} holds no result for these inputs")
        result = compute()
        write_text_atomically(
            self._path(step),
            json.dumps({"fingerprint": fingerprint, "result": adapter.dump_python(result, mode="json")}, ensure_ascii=False),
        )
        self.run.append(step)
        return result

    # -- the six steps ------------------------------------------------------------------------
    def build(
        self,
        documents: Sequence[tuple[str, str]],
        seeds: Sequence[SeedGroup],
        antonyms: Mapping[str, str],
        *,
        steps: Sequence[str] = STEPS,
        resume: bool = False,
        glossary: Mapping[str, str] | None = None,
    ) -> BuildReport:
        unknown = [step for step in steps if step not in STEPS]
        if unknown:
            raise ConfigError(f"unknown build step {unknown[0]!r}; the steps are {', '.join(STEPS)}")
        if not seeds:
            raise DataError("the seed file names no social group", field="seeds")
        wanted = set(steps)
        parts = self.parts
        pairs = self._pair(seeds, antonyms)  # groups that cannot be paired stop the build before it writes
        paired = {pair.group: pair.counterpart for pair in pairs}
        perturb_seeds = [g.model_copy(update={"counterpart": paired.get(g.group, g.counterpart)}) for g in seeds]
        protected = frozenset(k for group in seeds for k in group.keywords) | frozenset(g.group for g in seeds)
        fp = _digest(documents, [s.model_dump() for s in seeds], dict(antonyms), self.seed, parts.cleaner.describe())
        cleaned: CleanResult = self._step(
            "clean", wanted, resume, fp, lambda: parts.cleaner.clean(documents, protected, seed=self.seed),
            TypeAdapter(CleanResult), CleanResult(sentences=(), documents_read=0, documents_dropped=(), names_replaced=0),
        )
        texts = [sentence.text for sentence in cleaned.sentences]
        fp = _digest(fp, parts.expander.describe() if parts.expander else None)
        expanded: list[ExpandedKeyword] = self._step(
            "expand", wanted, resume, fp,
            lambda: self._expand(texts, seeds), TypeAdapter(list[ExpandedKeyword]), [], optional=True,
        )
        keywords = [ExpandedKeyword(group=g.group, keyword=k, source="seed", score=1.0) for g in seeds for k in g.keywords]
        keywords += expanded
        fp = _digest(fp, parts.clusterer.describe() if parts.clusterer else None)
        clusters: TopicClusters = self._step(
            "cluster", wanted, resume, fp, lambda: self._cluster(texts, keywords), TypeAdapter(TopicClusters),
            TopicClusters(labels=(), clusters=(), method="not run"), optional=True,
        )
        categories = {group.group: group.category or "unspecified" for group in seeds}
        per_sentence = _groups_per_sentence(clusters, len(texts))
        hits: list[Hit] = self._step(
            "search", wanted, resume, _digest(fp, "whole words", "per cluster"),
            lambda: search(cleaned.sentences, keywords, categories, per_sentence), TypeAdapter(list[Hit]), [],
        )
        fp = _digest(fp, "per cluster", parts.perturber.describe(), [p.model_dump() for p in pairs])
        perturbed: PerturbResult = self._step(
            "perturb", wanted, resume, fp,
            lambda: parts.perturber.perturb(hits, perturb_seeds, antonyms, seed=self.seed),
            TypeAdapter(PerturbResult), PerturbResult(candidates=(), not_perturbable=()),
        )
        sources = {(k.group, k.keyword.lower()): k.source for k in keywords}
        candidates = [
            c.model_copy(update={"keyword_source": sources.get((c.group, c.target.lower()), "seed")})
            for c in perturbed.candidates
        ]
        found = dict(glossary or {})
        if "review" in wanted:
            found = {**self._definitions(texts, keywords), **found}
            self._review_export(candidates, found)
            self.run.append("review")
        return self._report(cleaned, keywords, clusters, hits, perturbed, candidates, found, pairs,
                            "every sentence" if per_sentence is None else "per cluster")

    def _pair(self, seeds: Sequence[SeedGroup], antonyms: Mapping[str, str]) -> tuple[Counterpart, ...]:
        vectors = None
        if needs_similarity(seeds) and self.parts.group_embedder is not None:
            vectors = self.parts.group_embedder.embed([g.group for g in seeds])
        return pair_groups(seeds, vectors, antonym_keywords=frozenset(k.lower() for k in antonyms))

    def _expand(self, texts: list[str], seeds: Sequence[SeedGroup]) -> list[ExpandedKeyword]:
        if self.parts.expander is None:  # configured off: the seeds alone are searched
            return []
        seen = {(g.group, k.lower()) for g in seeds for k in g.keywords}
        new = self.parts.expander.expand(texts, seeds, seed=self.seed)
        # A term built from the anonymisation placeholder ("NAME", "NAME said") names no group, nor a word that
        # only looks like a seed ("Tongariro" for "Tongan").
        placeholder = NAME_PLACEHOLDER.strip("[]")
        seed_words = {g.group: g.keywords for g in seeds}
        return [k for k in new if (k.group, k.keyword.lower()) not in seen and placeholder not in k.keyword.split()
                and not look_alike(k.keyword, seed_words.get(k.group, ()))]

    def _cluster(self, texts: list[str], keywords: list[ExpandedKeyword]) -> TopicClusters:
        if self.parts.clusterer is None:  # configured off
            return TopicClusters(labels=(), clusters=(), method="not run")
        groups: dict[str, list[str]] = {}
        for keyword in keywords:
            groups.setdefault(keyword.group, []).append(keyword.keyword)
        return self.parts.clusterer.cluster(texts, groups, seed=self.seed)

    @staticmethod
    def _definitions(texts: list[str], keywords: list[ExpandedKeyword]) -> dict[str, str]:
        """A keyword or a word with a macron followed by a gloss in parentheses: "whānau (extended family)"."""
        known = {k.keyword.lower() for k in keywords}
        found: dict[str, str] = {}
        for text in texts:
            for match in _DEFINITION.finditer(text):
                term = match["term"].split(" ")[-1] if match["term"].lower() not in known else match["term"]
                if term.lower() in known or any(ch in term for ch in "āēīōūĀĒĪŌŪ"):
                    found.setdefault(term, match["definition"].strip())
        return found

    # -- review ---------------------------------------------------------------------------------
    def _review_export(self, candidates: list[Candidate], glossary: Mapping[str, str]) -> None:
        rows = [{"decision": "accept", **{f: getattr(c, f) for f in ("id", "group", "category", "left", "target", "right",
                                                                       "anti_stereotype", "unrelated")}}  # a candidate's fields, by name
                for c in candidates]
        self.parts.sheets.write(self.out, rows)
        write_text_atomically(self.out / GLOSSARY, "".join(
            json.dumps({"term": t, "definition": d, "source": "libra build"}, ensure_ascii=False) + "\n"
            for t, d in sorted(glossary.items())))
        write_triplets(self.out, candidates)

    def _report(self, cleaned, keywords, clusters, hits, perturbed, candidates, glossary, pairs, searched) -> BuildReport:
        report = BuildReport(
            steps_run=tuple(self.run),
            steps_reused=tuple(self.reused),
            documents=cleaned.documents_read,
            documents_dropped=dict(Counter(reason for _, reason in cleaned.documents_dropped)),
            names_replaced=cleaned.names_replaced,
            names_by_rule=cleaned.names_by_rule,
            sentences=len(cleaned.sentences),
            keywords=dict(Counter(k.source for k in keywords)),
            clusters=len(clusters.clusters),
            cluster_noise=clusters.noise,
            clusters_per_group=dict(Counter(c.group or "(none)" for c in clusters.clusters)),
            hits=len(hits),
            hits_per_group=dict(Counter(h.group for h in hits)),
            not_perturbable=len(perturbed.not_perturbable),
            candidates=len(candidates),
            triplets_per_group=dict(Counter(c.group for c in candidates)),
            triplets_per_category=dict(Counter(c.category for c in candidates)),
            glossary_terms=len(glossary),
            components={
                "clean": self.parts.cleaner.describe(),
                "expand": self.parts.expander.describe() if self.parts.expander else "seeds only",
                "cluster": clusters.method,
                "perturb": self.parts.perturber.describe(),
            },
            counterparts=pairs,
            search=searched,
        )
        write_text_atomically(self.out / REPORT, report.model_dump_json(indent=2))
        return report


def _groups_per_sentence(clusters: TopicClusters, sentences: int) -> list[frozenset[str]] | None:
    """The group each sentence's cluster was mapped to (empty for noise and unmapped clusters); None without
    clusters, where every sentence is searched with every keyword."""
    if not clusters.clusters or len(clusters.labels) != sentences:
        return None
    group_of = {cluster.id: cluster.group for cluster in clusters.clusters}
    return [frozenset({group}) if (group := group_of.get(label)) else frozenset() for label in clusters.labels]


def write_triplets(out: Path, candidates: Sequence[Candidate]) -> None:
    write_text_atomically(out / TRIPLETS, "".join(
        json.dumps({"id": c.id, "category": c.category, "group": c.group, "left": c.left, "target": c.target,
                    "right": c.right, "anti_stereotype": c.anti_stereotype, "unrelated": c.unrelated},
                   ensure_ascii=False) + "\n"
        for c in candidates))


def import_review(out: Path, sheet: Path, sheets: ReviewSheets) -> dict[str, int]:
    """Apply an edited sheet: every row validated before triplets.jsonl is replaced (atomically)."""
    name = str(sheet)
    stored = json.loads((Path(out) / STEP_DIR / "perturb.json").read_text(encoding="utf-8"))["result"]
    known = {c["id"]: Candidate.model_validate(c) for c in stored["candidates"]}
    accepted: list[Candidate] = []
    counts: Counter[str] = Counter()
    seen: set[str] = set()
    for row, fields in sheets.read(sheet):
        ident = fields["id"].strip()
        if ident not in known:
            raise DataError(f"unknown triplet id {ident!r}", file=name, row=row, field="id")
        if ident in seen:
            raise DataError(f"id {ident!r} appears twice", file=name, row=row, field="id")
        seen.add(ident)
        decision = fields["decision"].strip().lower()
        if decision not in DECISIONS:
            raise DataError(f"must be one of {', '.join(DECISIONS)}, got {decision!r}", file=name, row=row, field="decision")
        if decision == "reject":
            counts["rejected"] += 1
            continue
        for field in ("group", "category", "target", "anti_stereotype", "unrelated"):
            if not fields[field].strip():
                raise DataError("empty", file=name, row=row, field=field)
        target = fields["target"]
        for field in ("anti_stereotype", "unrelated"):
            if fields[field].strip().lower() == target.strip().lower():
                raise DataError("must differ from the target ω", file=name, row=row, field=field)
        if fields["anti_stereotype"].strip().lower() == fields["unrelated"].strip().lower():
            raise DataError("must differ from anti_stereotype", file=name, row=row, field="unrelated")
        edited = Candidate(id=ident, **{f: fields[f] for f in ("group", "category", "left", "target", "right",
                                                                 "anti_stereotype", "unrelated")})
        counts["edited" if edited != known[ident] else "accepted"] += 1
        accepted.append(edited)
    write_triplets(out, accepted)
    return dict(counts)
