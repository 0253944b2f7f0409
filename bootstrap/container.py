"""The dependency-injector container: configuration in, wired ports out.

Swapping the scorer backend or the store is a configuration change
(``model.backend``, ``store.backend``); nothing here is protocol-specific.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from dependency_injector import containers, providers

from culturebias.application.context import Lazy, ModelPorts, RunContext
from culturebias.ports.model_backend import ModelBackend
from culturebias.application.recorded_ports import RecordedGenerator, RunProgress
from culturebias.bootstrap.registry import registry
from culturebias.domain.model_options import ModelOptions
from culturebias.bootstrap.settings import Settings
from culturebias.domain.errors import ConfigError
from culturebias.ports.generation import Generator
from culturebias.ports.judging import Judge
from culturebias.ports.results import ResultStore

if TYPE_CHECKING:
    from culturebias.adapters.judging.judge import Replies
    from culturebias.adapters.reports.html.comparison_report import RunItems


def default_cache_dir(settings: Settings) -> Path:
    if settings.run.cache_dir:
        return Path(settings.run.cache_dir).expanduser()
    import os

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "culturebias"


def build_store(settings: Settings, out_dir: Path | None):
    descriptor = registry().store(settings.store.backend)
    if settings.store.path:
        return descriptor.open(Path(settings.store.path).expanduser(), settings.store)
    if out_dir is None and descriptor.durable and descriptor.default_location:
        raise ConfigError(f"store.backend={descriptor.name} needs store.path when no output folder is given")
    location = Path(out_dir or ".") / descriptor.default_location if descriptor.default_location else None
    return descriptor.open(location, settings.store)


def build_model_backend(model: ModelOptions, cache_dir: Path) -> ModelBackend:
    """The backend's factory with its own typed options."""
    return registry().backend(model.backend).create()(model, cache_dir)


def build_executor_backend(settings: Settings, model: ModelOptions, cache_dir: Path) -> ModelBackend:
    """The run's model backend: loaded in this process (``run.executor=local``), or replicas on a Ray cluster."""
    if settings.run.executor != "ray":
        return build_model_backend(model, cache_dir)
    from culturebias.bootstrap.registry import require_modules

    require_modules("run.executor=ray", ("ray",), "ray")
    from culturebias.adapters.ray.backend import RayBackend

    factory = registry().backend(model.backend).create()
    return RayBackend(factory, model, cache_dir, settings.ray)


def judge_model_settings(settings: Settings) -> ModelOptions | None:
    """The judge's model options, or None when the judge is the evaluated model itself (``Settings.judge_options``)."""
    return settings.judge_options()


def check_model_locations(settings: Settings, cache_dir: Path) -> None:
    """``model.path`` (and the judge's, where it has its own) checked before a run writes anything.

    With ``run.executor=ray`` the paths are the cluster nodes', checked when the replicas load.
    """
    if settings.run.executor == "ray":
        return
    for options in (settings.model_options(), judge_model_settings(settings)):
        if options is not None:
            registry().backend(options.backend).check_location(options, cache_dir)


def build_judge_generator(settings: Settings, model_backend: ModelBackend, cache_dir: Path) -> Generator:
    """The generator the judge speaks through: the evaluated model's, unless ``judge.*`` names another."""
    judge_settings = judge_model_settings(settings)
    backend = model_backend if judge_settings is None else build_model_backend(judge_settings, cache_dir)
    return backend.generator()


def read_model_weights(model: ModelOptions, cache_dir: Path) -> dict[str, str] | None:
    """The sizes and hashes of the weights ``model.*`` names, for the run's resume identity (None: not local)."""
    from culturebias.adapters.hf.weights_fingerprint import model_weights_identity

    return model_weights_identity(model, cache_dir)


def build_judge(settings: Settings, generator: Replies) -> Judge:
    """The judge: greedy, unless ``judge.sampling.*`` gives it sampling of its own."""
    from culturebias.adapters.judging.judge import GeneratorJudge

    options = settings.judge_options()
    params = None
    if options is not None and not options.sampling.greedy:
        params = options.sampling.params(GeneratorJudge.MAX_NEW_TOKENS, seed=options.sampling.seed_for(settings.run.seed))
    return GeneratorJudge(generator, max_retries=settings.judge.max_retries, params=params)


def build_progress(settings: Settings):
    from culturebias.adapters.progress.reporters import terminal_progress

    return terminal_progress(settings.run.progress, json_logs=settings.run.log_format == "json")


def build_source(benchmark: str, settings: Settings):
    return registry().benchmark(benchmark).source_class()(settings.data.path)


def build_report(benchmark: str, settings: Settings, store: ResultStore | None = None):
    """The benchmark's Markdown report, then report.html beside it (drill-down to the items in ``store``)."""
    if settings.run.report == "none":
        return None
    from culturebias.adapters.reports.html.run_report import HtmlRunReport, WithHtml
    from culturebias.application.audit import stored_items

    items = (lambda run_id: stored_items(store, run_id)) if store is not None else None
    descriptor = registry().benchmark(benchmark)
    html = HtmlRunReport(items, title=descriptor.title, headlines=descriptor.headline_metrics(), language=descriptor.language)
    return WithHtml(descriptor.report_writer()(), html)


def build_comparison_report(benchmark: str, items: RunItems | None, verdicts: Sequence[Any] = ()):  # Any: PolicyVerdicts
    """comparison.md, then comparison.html beside it (drill-down to the compared runs' stored ``items``); both
    open with the ``verdicts`` of policies checked on the compared runs."""
    from culturebias.adapters.reports.comparison_report import ComparisonReport
    from culturebias.adapters.reports.html.comparison_report import HtmlComparisonReport
    from culturebias.adapters.reports.html.run_report import WithHtml

    descriptor = registry().benchmark(benchmark)
    return WithHtml(
        ComparisonReport(descriptor.title, descriptor.comparison_sections_function(), verdicts=verdicts),
        HtmlComparisonReport(items, title=descriptor.title, language=descriptor.language, verdicts=verdicts),
    )


class Container(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)
    out_dir: providers.Object[Path | None] = providers.Object(None)
    benchmark = providers.Dependency(instance_of=str)

    cache_dir = providers.Singleton(default_cache_dir, settings)
    store = providers.Singleton(build_store, settings, out_dir)
    progress = providers.Singleton(build_progress, settings)
    source = providers.Factory(build_source, benchmark, settings)
    report = providers.Factory(build_report, benchmark, settings, store)

    # The model backend loads lazily: only when a protocol first asks for a port.
    model_options = providers.Singleton(lambda settings: settings.model_options(), settings)
    model_weights = providers.Singleton(read_model_weights, model_options, cache_dir)
    model_backend = providers.Singleton(build_executor_backend, settings, model_options, cache_dir)
    judge_generator = providers.Singleton(build_judge_generator, settings, model_backend, cache_dir)


def make_container(benchmark: str, settings: Settings, out_dir: Path | None) -> Container:
    return Container(settings=settings, out_dir=out_dir, benchmark=benchmark)


class SharedModel:
    """One model backend and judge for several evaluations: several benchmarks, one model load.

    The first container attached owns them; later ones use its providers. Both stay
    lazy: nothing loads until a benchmark first asks for a port.
    """

    def __init__(self) -> None:
        self._owner: Container | None = None

    def attach(self, container: Container) -> None:
        if self._owner is None:
            self._owner = container
            return
        container.model_backend.override(self._owner.model_backend)
        container.judge_generator.override(self._owner.judge_generator)


def open_lexicon(spec: str, min_frequency: float = 0.0):
    """LIBRA's knowledge boundary: a general lexicon, opened by spec."""
    from culturebias.adapters.lexicon.lexicons import open_lexicon as open_

    return open_(spec, min_frequency)


def open_embedder(spec: str):
    """LIBRA's knowledge boundary: a sentence embedder, opened by spec."""
    from culturebias.adapters.similarity.embeddings import open_embedder as open_

    return open_(spec)


def _backend_port(container: Any, name: str) -> Any:  # Any: the run's container, and a port of any kind
    """The port ``name`` (scorer, generator, pseudo_scorer, templater, judge) built from the backend."""
    if name == "judge":
        return container.judge_generator()
    backend: ModelBackend = container.model_backend()
    builders: dict[str, Callable[[ModelBackend], Any]] = {  # Any: a port of any kind
        "scorer": lambda b: b.scorer(), "generator": lambda b: b.generator(), "pseudo_scorer": lambda b: b.pseudo_scorer(),
        "templater": lambda b: b.templater(),
    }
    return builders[name](backend)


def make_context_factory(
    container: Container,
    wrap: Callable[[Any], Any] | None = None,  # Any: the port wrapper of any port
    store_object: Any = None,  # Any: a store object of any backend
    model_port: Callable[[str], Any] | None = None,  # Any: a port of any kind
):
    """``run_id -> RunContext`` with every model port resolved on first use.

    ``wrap`` wraps each model port the run computes with (a budget's counting ports); ``store_object``
    replaces the container's store (a plan's dry run keeps nothing); ``model_port(name)`` replaces building
    the port ``name`` (scorer, generator, pseudo_scorer, templater, judge) from the backend (a plan's
    placeholders, which build no model).
    """
    settings: Settings = container.settings()
    port = wrap or (lambda built: built)
    build: Callable[[str], Any] = model_port or (lambda name: _backend_port(container, name))  # Any: a port of any kind

    def make(run_id: str) -> RunContext:
        store = store_object if store_object is not None else container.store()
        run_progress = RunProgress()  # one per run: the judge's generations count in the same stage
        ports = ModelPorts(
            scorer=Lazy(lambda: port(build("scorer"))),
            templater=Lazy(lambda: build("templater")),
            generator=Lazy(lambda: port(build("generator"))),
            pseudo_scorer=Lazy(lambda: port(build("pseudo_scorer"))),
            # The judge's replies are stored like any generation, so --resume never re-asks it.
            judge=Lazy(
                lambda: build_judge(
                    settings,
                    RecordedGenerator(
                        port(build("judge")),
                        store,
                        run_id,
                        container.progress(),
                        settings.run.chunk_size,
                        commit_seconds=settings.run.commit_seconds,
                        run_progress=run_progress,
                    ),
                )
            ),
        )
        return RunContext(
            run_id=run_id,
            ports=ports,
            store=store,
            progress=container.progress(),
            seed=settings.run.seed,
            sampling=container.model_options().sampling,
            bootstrap_resamples=settings.run.bootstrap_resamples,
            chunk_size=settings.run.chunk_size,
            commit_seconds=settings.run.commit_seconds,
            run_progress=run_progress,
            lexicons=open_lexicon,
            embedders=open_embedder,
            judge_configured=judge_model_settings(settings) is not None,
        )

    return make
