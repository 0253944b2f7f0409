"""The dependency-injector container: configuration in, wired ports out.

Swapping the scorer backend or the store is a configuration change
(``model.backend``, ``store.backend``); nothing here is protocol-specific.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dependency_injector import containers, providers

from culturebias.application.context import Lazy, ModelPorts, RunContext
from culturebias.application.recorded_ports import RecordedGenerator
from culturebias.application.registry import import_object, service_class
from culturebias.bootstrap import registry
from culturebias.bootstrap.settings import ModelSettings, Settings
from culturebias.domain.errors import ConfigError


def _lookup(table: dict[str, str], key: str, what: str) -> Any:
    try:
        dotted = table[key]
    except KeyError:
        raise ConfigError(f"unknown {what} {key!r}; choose one of {sorted(table)}") from None
    return import_object(dotted)


def default_cache_dir(settings: Settings) -> Path:
    if settings.run.cache_dir:
        return Path(settings.run.cache_dir).expanduser()
    import os

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "culturebias"


def build_store(settings: Settings, out_dir: Path):
    store_cls = _lookup(registry.STORES, settings.store.backend, "store.backend")
    default = out_dir / ("results.sqlite" if settings.store.backend == "sqlite" else "results")
    return store_cls(Path(settings.store.path).expanduser() if settings.store.path else default)


def build_model_backend(model: ModelSettings, cache_dir: Path):
    create = _lookup(registry.MODEL_BACKENDS, model.backend, "model.backend")
    return create(model, cache_dir)


def judge_model_settings(settings: Settings) -> ModelSettings | None:
    """The judge's model settings, or None when the judge is the evaluated model itself."""
    judge = settings.judge
    if judge.backend is None and judge.path is None:
        return None
    update = {k: v for k, v in {"backend": judge.backend, "path": judge.path}.items() if v is not None}
    return settings.model.model_copy(update=update)


def build_judge_generator(settings: Settings, model_backend: Any, cache_dir: Path):
    """The generator the judge speaks through: the evaluated model's, unless ``judge.*`` names another."""
    judge_settings = judge_model_settings(settings)
    backend = model_backend if judge_settings is None else build_model_backend(judge_settings, cache_dir)
    return backend.generator()


def build_judge(settings: Settings, generator: Any):
    return import_object(registry.JUDGE)(generator, max_retries=settings.judge.max_retries)


def build_progress(settings: Settings):
    from culturebias.adapters.progress import NullProgress, TqdmProgress

    return TqdmProgress() if settings.run.progress else NullProgress()


def build_source(benchmark: str, settings: Settings):
    source_cls = _lookup(registry.DATASET_SOURCES, benchmark, "benchmark")
    return source_cls(settings.data.path)


def build_report(benchmark: str, settings: Settings):
    if settings.run.report == "none":
        return None
    return _lookup(registry.REPORTS, benchmark, "benchmark")()


def build_service(benchmark: str, settings: Settings):
    cls = service_class(benchmark)
    try:
        options = cls.settings_model.model_validate(settings.protocol)
    except Exception as error:  # pydantic.ValidationError
        raise ConfigError(f"protocol settings for {benchmark}: {error}") from None
    return cls(options)


class Container(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)
    out_dir = providers.Dependency(instance_of=Path)
    benchmark = providers.Dependency(instance_of=str)

    cache_dir = providers.Singleton(default_cache_dir, settings)
    store = providers.Singleton(build_store, settings, out_dir)
    progress = providers.Singleton(build_progress, settings)
    source = providers.Factory(build_source, benchmark, settings)
    report = providers.Factory(build_report, benchmark, settings)
    service = providers.Factory(build_service, benchmark, settings)

    # The model backend loads lazily: only when a protocol first asks for a port.
    model_backend = providers.Singleton(
        build_model_backend, settings.provided.model, cache_dir
    )
    judge_generator = providers.Singleton(build_judge_generator, settings, model_backend, cache_dir)


def make_container(benchmark: str, settings: Settings, out_dir: Path) -> Container:
    return Container(settings=settings, out_dir=out_dir, benchmark=benchmark)


# LIBRA's knowledge boundary: general lexicons and sentence embedders, opened by spec.
LEXICONS = "culturebias.adapters.lexicon:open_lexicon"
EMBEDDERS = "culturebias.adapters.embeddings:open_embedder"


def make_context_factory(container: Container):
    """``run_id -> RunContext`` with every model port resolved on first use."""
    settings: Settings = container.settings()

    def make(run_id: str) -> RunContext:
        store = container.store()
        ports = ModelPorts(
            scorer=Lazy(lambda: container.model_backend().scorer()),
            templater=Lazy(lambda: container.model_backend().templater()),
            generator=Lazy(lambda: container.model_backend().generator()),
            pseudo_scorer=Lazy(lambda: container.model_backend().pseudo_scorer()),
            # The judge's replies are stored like any generation, so --resume never re-asks it.
            judge=Lazy(
                lambda: build_judge(
                    settings,
                    RecordedGenerator(
                        container.judge_generator(), store, run_id, container.progress(), settings.run.chunk_size
                    ),
                )
            ),
        )
        return RunContext(
            run_id=run_id,
            ports=ports,
            store=container.store(),
            progress=container.progress(),
            seed=settings.run.seed,
            chunk_size=settings.run.chunk_size,
            lexicons=lambda spec, min_frequency=0.0: import_object(LEXICONS)(spec, min_frequency),
            embedders=lambda spec: import_object(EMBEDDERS)(spec),
        )

    return make
