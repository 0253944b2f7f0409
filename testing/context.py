"""Build run contexts and whole runs from fakes: the one test bootstrap.

``fake_context(scorer=..., generator=...)`` is a ``RunContext`` whose ports are
the given objects; a port left out raises ``CapabilityError`` when a protocol
asks for it, as a backend without that capability would. ``run_with_fakes``
goes one step further: the benchmark's registered service, options, summary
model and report writer run through the real orchestrator, so a test sees the
typed summary that ``culturebias.evaluate`` would return.

Feature steps, service tests and speed scripts use these instead of wiring
``ModelPorts`` by hand.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from culturebias.adapters.progress.reporters import NullProgress
from culturebias.adapters.stores.memory_store import MemoryResultStore
from culturebias.application.context import Lazy, ModelPorts, RunContext
from culturebias.application.run_benchmark import RunRequest, RunResult, run_benchmark
from culturebias.domain.errors import CapabilityError
from culturebias.domain.fingerprint import fingerprint
from culturebias.domain.sampling import SamplingSettings
from culturebias.ports.progress import ProgressReporter
from culturebias.ports.results import ResultStore

CAPABILITY_OF_PORT = {
    "scorer": "continuation log-likelihood",
    "templater": "a chat template",
    "generator": "text generation",
    "pseudo_scorer": "pseudo-log-likelihood",
    "judge": "an LLM judge",
}


def _port(name: str, value: Any, backend: str) -> Lazy[Any]:  # Any: a test double for any port
    """A lazy port: a class or a function is called on first use, any other object is the port, None is unavailable."""
    if value is None:

        def unavailable() -> Any:  # Any: raises: stands for any port
            raise CapabilityError(backend, CAPABILITY_OF_PORT[name])

        return Lazy(unavailable)
    if isinstance(value, type) or inspect.isfunction(value) or isinstance(value, functools.partial):
        return Lazy(value)
    return Lazy(lambda: value)


def fake_ports(
    *,
    scorer: Any = None,  # Any: a test double: any object, or a factory of one
    templater: Any = None,  # Any: a test double: any object, or a factory of one
    generator: Any = None,  # Any: a test double: any object, or a factory of one
    pseudo_scorer: Any = None,  # Any: a test double: any object, or a factory of one
    judge: Any = None,  # Any: a test double: any object, or a factory of one
    backend: str = "scripted",
) -> ModelPorts:
    return ModelPorts(
        scorer=_port("scorer", scorer, backend),
        templater=_port("templater", templater, backend),
        generator=_port("generator", generator, backend),
        pseudo_scorer=_port("pseudo_scorer", pseudo_scorer, backend),
        judge=_port("judge", judge, backend),
    )


def fake_context(
    *,
    store: ResultStore | None = None,
    run_id: str = "test-run",
    progress: ProgressReporter | None = None,
    seed: int = 0,
    chunk_size: int = 10**6,
    lexicons: Callable[..., Any] | None = None,  # Any: test doubles of Lexicon
    embedders: Callable[[str], Any] | None = None,  # Any: test doubles of TextEmbedder
    backend: str = "scripted",
    sampling: SamplingSettings | None = None,
    **doubles: Any,  # Any: the port doubles fake_ports takes (scorer, templater, generator, pseudo_scorer, judge)
) -> RunContext:
    """A run context over the given fakes (any object, or a zero-argument factory of one), ports as ``fake_ports``."""
    return RunContext(
        run_id=run_id,
        ports=fake_ports(backend=backend, **doubles),
        store=store if store is not None else MemoryResultStore(),
        progress=progress or NullProgress(),
        seed=seed,
        chunk_size=chunk_size,
        lexicons=lexicons,
        embedders=embedders,
        sampling=sampling or SamplingSettings(),
    )


@dataclass
class InMemorySource:
    """A dataset source over an already loaded dataset."""

    dataset: Any  # Any: any benchmark's dataset
    name: str = "in-memory dataset"
    data_fingerprint: str = "in-memory"

    def describe(self) -> str:
        return self.name

    def fingerprint(self) -> str:
        return self.data_fingerprint

    def load(self) -> Any:  # Any: any benchmark's dataset
        return self.dataset


def run_with_fakes(
    benchmark: str,
    *,
    options: Mapping[str, Any] | Any | None = None,  # Any: protocol.* values, or the benchmark's options object
    dataset: Any = None,  # Any: any benchmark's dataset
    data_path: str | Path | None = None,
    out_dir: Path | None = None,
    report: bool = True,
    store: ResultStore | None = None,
    resume: bool = False,
    context: Callable[[str, ResultStore], RunContext] | None = None,
    repeats: int = 1,
    sampling: SamplingSettings | None = None,
    **ports: Any,  # Any: test doubles, as fake_context takes them
) -> RunResult:
    """One run of a registered benchmark through the real orchestrator, with fake ports.

    ``dataset`` is used as loaded; otherwise the benchmark's own source reads
    ``data_path`` (its bundled data when None). ``options`` is a dict of
    ``protocol.*`` values or the options object itself. ``context(run_id, store)``
    replaces the default ``fake_context(**ports)``. ``repeats`` and ``sampling`` are
    ``run.repeats`` and ``model.sampling`` (recorded in the run's configuration).
    """
    from culturebias.bootstrap.registry import registry

    descriptor = registry().benchmark(benchmark)
    options_model = descriptor.options_model()
    typed = options if isinstance(options, options_model) else options_model.model_validate(dict(options or {}))
    source = InMemorySource(dataset) if dataset is not None else descriptor.source_class()(None if data_path is None else str(data_path))
    store = store if store is not None else MemoryResultStore()
    config: dict[str, Any] = {"protocol": typed.model_dump(mode="json")}  # Any: the JSON configuration
    if repeats != 1 or sampling is not None:
        config |= {"run": {"repeats": repeats}, "model": {"sampling": (sampling or SamplingSettings()).model_dump(mode="json")}}
    request = RunRequest(
        benchmark=benchmark,
        service=descriptor.service_class()(typed),
        summary_model=descriptor.summary_model(),
        source=source,
        store=store,
        report=descriptor.report_writer()() if report and out_dir is not None else None,
        out_dir=out_dir,
        config=config,
        config_fingerprint=fingerprint(config),
        headlines=descriptor.headline_metrics(),
        resume=resume,
        repeats=repeats,
    )

    def make(run_id: str) -> RunContext:
        if context is not None:
            return context(run_id, store)
        return fake_context(store=store, run_id=run_id, sampling=sampling, **ports)

    return run_benchmark(request, make)
