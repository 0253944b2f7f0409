"""Factories of the expand and cluster components of ``culturebias build libra`` (PROTOCOLS §4 construction).

``open_expander(spec, embedder=..., options=...)`` -> ``KeywordExpander``:
    ``default``: embedding similarity + FP-growth association rules;
    ``embedding``: embedding similarity only; ``association``: association rules only (no embedder needed).
``open_clusterer(spec, embedder=..., generator=None, options=...)`` -> ``TopicClusterer``:
    ``default`` / ``umap-hdbscan``: UMAP + HDBSCAN, noise re-clustered, c-TF-IDF terms, summaries,
    group mapping by the generator when given (keyword overlap otherwise or on unusable replies).

The libraries (umap-learn, scikit-learn, mlxtend) are the ``build`` extra; they are
located, not imported, here, and imported only when a component runs.
"""

from __future__ import annotations

from typing import Any, Mapping

from culturebias.adapters.install.optional_modules import findable, require_modules
from culturebias.domain.errors import ConfigError, UnknownNameError
from culturebias.domain.libra_build.component_options import ClustererOptions, ExpanderOptions
from culturebias.ports.dataset_building import KeywordExpander, TopicClusterer
from culturebias.ports.generation import Generator
from culturebias.ports.similarity import TextEmbedder

EXPANDERS: dict[str, tuple[str, ...]] = {
    "default": ("embedding", "association"),
    "embedding": ("embedding",),
    "association": ("association",),
}
CLUSTERERS = ("default", "umap-hdbscan")


def open_expander(
    spec: str = "default",
    *,
    embedder: TextEmbedder | None,
    options: ExpanderOptions | Mapping[str, Any] | None = None,  # Any: options as given (TOML/JSON values)
) -> KeywordExpander:
    """The keyword expander ``spec`` names. ``options.sources`` (when given) must be among the spec's sources;
    left unset, the spec's sources are used."""
    if spec not in EXPANDERS:
        raise UnknownNameError("libra build expander", spec, list(EXPANDERS))
    typed = _typed(ExpanderOptions, options, "expander")
    if not _sources_given(options):
        typed = typed.model_copy(update={"sources": list(EXPANDERS[spec])})
    elif not set(typed.sources) <= set(EXPANDERS[spec]):
        raise ConfigError(f"libra build expander {spec!r} runs {list(EXPANDERS[spec])}, not sources={typed.sources}")
    from culturebias.adapters.libra_build.keyword_expansion import CorpusKeywordExpander

    rule_miner = None
    if "association" in typed.sources:
        _require(f"libra build expander {spec!r} (association rules)", ("mlxtend", "pandas"))
        from culturebias.adapters.libra_build.mlxtend.rules import mine_pair_rules

        rule_miner = mine_pair_rules
    if "embedding" in typed.sources and embedder is None:
        raise ConfigError(f"libra build expander {spec!r} needs an embedder for embedding similarity")
    return CorpusKeywordExpander(typed, embedder=embedder if "embedding" in typed.sources else None, rule_miner=rule_miner)


def open_clusterer(
    spec: str = "default",
    *,
    embedder: TextEmbedder,
    generator: Generator | None = None,
    options: ClustererOptions | Mapping[str, Any] | None = None,  # Any: options as given (TOML/JSON values)
) -> TopicClusterer:
    """The topic clusterer ``spec`` names; ``generator`` (optional) maps clusters to groups and, with
    ``summary=llm``, writes the summaries."""
    if spec not in CLUSTERERS:
        raise UnknownNameError("libra build clusterer", spec, list(CLUSTERERS))
    typed = _typed(ClustererOptions, options, "clusterer")
    if typed.mapping == "llm" and generator is None:
        raise ConfigError("libra build clusterer mapping=llm needs a generator (or mapping=auto|keywords)")
    if typed.summary == "llm" and generator is None:
        raise ConfigError("libra build clusterer summary=llm needs a generator (or summary=extractive)")
    _require(f"libra build clusterer {spec!r}", ("umap", "sklearn"))
    from culturebias.adapters.libra_build.umap_hdbscan.clusterer import UmapHdbscanClusterer

    return UmapHdbscanClusterer(typed, embedder=embedder, generator=generator)


def _typed(model, options, what: str):
    if options is None:
        return model()
    if isinstance(options, model):
        return options
    try:
        return model.model_validate(dict(options))
    except ValueError as error:  # pydantic's ValidationError is a ValueError
        raise ConfigError(f"libra build {what} options: {error}") from error


def _sources_given(options) -> bool:
    if options is None:
        return False
    if isinstance(options, ExpanderOptions):
        return "sources" in options.model_fields_set
    return "sources" in options


def _require(what: str, modules: tuple[str, ...]) -> None:
    require_modules(what, modules, "build", locate=_findable)


_findable = findable
