"""``culturebias build libra`` wired: ``--set`` settings validated, components opened, files read by adapters.

The build itself is ``application/libra_build/build.py``. The mapping LLM (``--set llm=MODEL``) is opened by
``generators``, which the host gives (``bootstrap``: a model backend as ``model.path`` names one).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from culturebias.adapters.install.optional_modules import install_hint
from culturebias.application.libra_build import build
from culturebias.application.libra_build.service import STEPS, BuildReport, Components
from culturebias.domain.errors import ConfigError
from culturebias.domain.libra_build.component_options import ClustererOptions, ExpanderOptions
from culturebias.ports.dataset_building import GeneratorOf, KeywordExpander, TopicClusterer
from culturebias.ports.generation import Generator

BUILD_EXTRA = install_hint("build")


class BuildSettings(BaseModel):
    """``--set key=value``: expander/clusterer name a component spec of ``libra_build_components``, or ``none``."""

    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    expander: str = "default"
    clusterer: str = "default"
    embedder: str = "minilm"
    cleaner: Literal["rules", "classifier"] = "rules"
    # People's names: "ner" a named-entity model (spaCy's en_core_web_sm, the libra-build extra) with the name
    # list as a supplement (PROTOCOLS §4 step 1); "list" the name list and its rules alone.
    names: Literal["ner", "list"] = "ner"
    # Places kept, never taken for a person's name (issue 36): "nz" the shipped New Zealand gazetteer
    # (adapters/libra_build/data/nz_places.txt), "none", or a file of that format (one place a line).
    places: str = "nz"
    # Iwi, hapū, marae, kura and organisations kept, never taken for a person's name (issue 36): "nz" the shipped
    # lists (adapters/libra_build/data/nz_iwi.txt, nz_organisations.txt) and their patterns, or "none".
    collectives: Literal["nz", "none"] = "nz"
    perturber: Literal["table", "embedding"] = "table"
    # The default components' own options: --set expand.similarity_threshold=0.7, --set cluster.mapping=llm.
    expand: ExpanderOptions = Field(default_factory=ExpanderOptions)
    cluster: ClustererOptions = Field(default_factory=ClustererOptions)
    # The LLM that maps clusters to social groups (and, with cluster.summary=llm, summarises them), through
    # the Generator port of the hf backend: a model.path (`embedded:smollm2-135m-instruct`, a folder, a hub
    # id in the cache) or "none" (clusters map to groups by keyword overlap).
    llm: str = "none"
    # Official definitions the user gives (a glossary.jsonl as `culturebias run libra` reads it); they win
    # over definitions the build finds in the corpus.
    glossary: str | None = None


def _settings(values: Mapping[str, object] | None) -> BuildSettings:
    try:
        return BuildSettings.model_validate(dict(values or {}))
    except ValueError as error:  # pydantic's ValidationError: names the key and what was wrong
        raise ConfigError(f"culturebias build libra --set: {error}") from None


def _generator(settings: BuildSettings, generators: GeneratorOf | None) -> Generator | None:
    """The Generator port of the configured mapping LLM, or None."""
    if settings.llm == "none":
        return None
    if generators is None:
        raise ConfigError(f"llm={settings.llm}: this build was given no way to open a model (build through culturebias.build_libra)")
    return generators(settings.llm)


def _components(settings: BuildSettings, steps: Sequence[str], expander, clusterer, generators: GeneratorOf | None) -> Components:
    from culturebias.adapters.libra_build.corpus.steps import CsvXlsxSheets, EmbeddingPerturber, RuleCleaner, TablePerturber

    needs = {"expand": expander is None and settings.expander != "none",
             "cluster": clusterer is None and settings.clusterer != "none"}
    if any(needs[s] for s in steps if s in needs):
        from culturebias.adapters.libra_build import components as factories
        from culturebias.adapters.similarity.embeddings import open_embedder

        embedder = open_embedder(settings.embedder)
        try:
            if "expand" in steps and needs["expand"]:
                expander = factories.open_expander(settings.expander, embedder=embedder, options=settings.expand)
            if "cluster" in steps and needs["cluster"]:
                clusterer = factories.open_clusterer(
                    settings.clusterer, embedder=embedder, generator=_generator(settings, generators), options=settings.cluster
                )
        except ImportError as missing:
            raise ConfigError(f"the expand and cluster steps need the build extra: {BUILD_EXTRA} ({missing})") from None
    from culturebias.adapters.libra_build.corpus.steps import collectives, place_gazetteer

    places, kept = place_gazetteer(settings.places), collectives(settings.collectives)
    cleaner = RuleCleaner().with_places(places).with_collectives(kept)
    if settings.cleaner == "classifier":
        if importlib.util.find_spec("sklearn") is None:
            raise ConfigError(f"cleaner=classifier needs scikit-learn: {BUILD_EXTRA}")
        from culturebias.adapters.libra_build.sklearn_relevance.classifier import ClassifierCleaner

        cleaner = ClassifierCleaner(seed=settings.seed).with_places(places).with_collectives(kept)
    if settings.names == "ner":
        from culturebias.adapters.libra_build.spacy_ner.names import SpacyNames

        cleaner = cleaner.with_names(SpacyNames(places=places, collectives=kept))
    perturber = TablePerturber()
    if settings.perturber == "embedding":
        from culturebias.adapters.similarity.embeddings import open_embedder

        perturber = EmbeddingPerturber(open_embedder(settings.embedder))
    return Components(cleaner=cleaner, perturber=perturber, sheets=CsvXlsxSheets(),
                      expander=expander, clusterer=clusterer, group_embedder=_OnFirstUse(settings.embedder))


class _OnFirstUse:
    """The embedder, opened only when group names must be compared (a seeds file without categories)."""

    def __init__(self, spec: str):
        self.spec = spec
        self._opened = None

    def describe(self) -> str:
        return self.spec

    def embed(self, texts):
        if self._opened is None:
            from culturebias.adapters.similarity.embeddings import open_embedder

            self._opened = open_embedder(self.spec)
        return self._opened.embed(texts)


def build_libra(
    corpus: str | Path,
    seeds: str | Path,
    out: str | Path,
    *,
    steps: Sequence[str] | str = STEPS,
    resume: bool = False,
    text_field: str = "text",
    settings: BuildSettings | Mapping[str, object] | None = None,
    expander: KeywordExpander | None = None,
    clusterer: TopicClusterer | None = None,
    generators: GeneratorOf | None = None,
) -> BuildReport:
    """Build LIBRA triplets from a local corpus into ``out`` (a valid ``data.path`` for ``culturebias run libra``).

    ``expander`` and ``clusterer`` replace the components ``settings`` name; ``generators`` opens the mapping LLM."""
    from culturebias.adapters.libra_build.corpus.files import CorpusFiles
    from culturebias.adapters.reports.libra_build_report import write_build_report

    typed = settings if isinstance(settings, BuildSettings) else _settings(settings)
    wanted = [s.strip() for s in steps.split(",")] if isinstance(steps, str) else list(steps)
    return build.build_libra(
        corpus,
        seeds,
        out,
        steps=wanted,
        resume=resume,
        text_field=text_field,
        seed=typed.seed,
        glossary=typed.glossary,
        inputs=CorpusFiles(),
        components=lambda: _components(typed, wanted, expander, clusterer, generators),
        write_report=write_build_report,
    )


def import_libra_review(out: str | Path, sheet: str | Path) -> dict[str, int]:
    """Apply an edited review sheet (CSV or XLSX) to ``out``'s triplets.jsonl, every row validated first."""
    from culturebias.adapters.libra_build.corpus.steps import CsvXlsxSheets

    return build.import_libra_review(out, sheet, CsvXlsxSheets())
