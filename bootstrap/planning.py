"""Composition of a run's plan (``application/run_plan.py``): a dry run on placeholder ports that build no
model, the model's tokenizer, a calibration on the run's own model port, and the budget ports of the run itself."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import replace
from typing import Any, Callable, Iterator, Protocol, runtime_checkable

from culturebias.application.context import RunContext
from culturebias.application.run_benchmark import RunRequest, RunResult, run_benchmark
from culturebias.application.run_plan import (
    CALIBRATION_REQUESTS,
    BudgetedPort,
    Collected,
    Planner,
    PlaceholderPort,
    Prices,
    Spent,
    UnrenderedTemplater,
    request_text,
)
from culturebias.bootstrap.registry import registry
from culturebias.domain.errors import CapabilityError
from culturebias.domain.identity import ModelIdentity
from culturebias.domain.run_plan import Budget, RunPlan, Stage, estimated_tokens
from culturebias.logs import get_logger
from culturebias.ports.model_backend import Configured, PlanTemplating, Tokenizing

log = get_logger("culturebias.plan")


def budget_of(settings: Any) -> Budget:  # Any: the settings, container, service and source of any benchmark, and its requests
    run = settings.run
    return Budget(max_requests=run.max_requests, max_tokens=run.max_tokens, max_cost=run.max_cost)


def prices_of(container: Any) -> Prices:  # Any: the settings, container, service and source of any benchmark, and its requests
    model = container.model_options()
    return Prices(model.price_per_1k_input_tokens, model.price_per_1k_output_tokens)


def model_tokenizer(container: Any) -> Callable[[str], list[int]] | None:  # Any: the settings, container, service and source of any benchmark, and its requests
    """The evaluated model's tokenizer as text → ids; None for a backend without one (a served model)."""
    backend = container.model_backend()
    if not isinstance(backend, Tokenizing):
        return None
    built = backend.tokenizer()
    if built is None:
        return None
    return lambda text: list(built(text, add_special_tokens=False)["input_ids"])


def _chat_renderer(container: Any) -> Callable[[Any], str] | None:  # Any: the settings, container, service and source of any benchmark, and its requests
    backend = container.model_backend()
    try:
        templater = backend.plan_templater() if isinstance(backend, PlanTemplating) else backend.templater()
    except Exception:  # no templater: chat requests are counted by their message texts
        return None
    if not templater.has_chat_template:
        return None
    return lambda messages: templater.render(messages)


@contextlib.contextmanager
def _quiet_dry_run() -> Iterator[None]:
    """The dry run's lines ("run finished", a mode's warning, ...) would read as, or repeat, the real run's: errors only."""
    import structlog

    logger = logging.getLogger("culturebias")
    level = logger.level
    logger.setLevel(max(level, logging.ERROR))
    saved = structlog.get_config() if structlog.is_configured() else None  # the CLI's lines go through structlog
    if saved is not None:
        structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    try:
        yield
    finally:
        logger.setLevel(level)
        if saved is not None:
            structlog.configure(**saved)


# The capability (registry.CAPABILITIES) each placeholder stands for, and the model.kind it needs.
_NEEDS = {"scorer": ("loglikelihood", "causal"), "generator": ("generate", "causal"), "judge": ("generate", "causal"),
          "pseudo_scorer": ("pseudo_loglikelihood", "masked")}


def _placeholder(options: Any, name: str, collected: Collected) -> PlaceholderPort:  # Any: the settings, container, service and source of any benchmark, and its requests
    """A port standing for ``options``' model, refused (``CapabilityError``) as the backend's descriptor says."""
    capability, kind = _NEEDS[name]
    if capability not in registry().backend(options.backend).capabilities:
        raise CapabilityError(options.backend, capability, "the backend does not offer it")
    if options.kind != kind:
        raise CapabilityError(options.backend, capability, f"model.kind={options.kind}")
    identity = ModelIdentity(
        backend=options.backend, model=options.resolved_path(), kind=options.kind,
        description="a plan's placeholder: no model built",
    )
    return PlaceholderPort(identity, collected, scores=name in ("scorer", "pseudo_scorer"))


def placeholder_ports(settings: Any, container: Any, collected: Collected) -> Callable[[str], Any]:  # Any: the settings, container, service and source of any benchmark, and its requests
    """``name -> port`` for a dry run: placeholders for the model's ports (and the judge's); the real templater
    where the backend has a tokenizer (it loads that, no model), else one that asks no server."""
    from culturebias.bootstrap.container import judge_model_settings

    def port(name: str) -> Any:  # Any: a port of any kind
        if name == "templater":
            backend = container.model_backend()
            if isinstance(backend, PlanTemplating):
                return backend.plan_templater()
            templater = backend.templater()
            return templater if isinstance(backend, Tokenizing) else UnrenderedTemplater(templater)
        judge = judge_model_settings(settings) if name == "judge" else None
        return _placeholder(judge if judge is not None else container.model_options(), name, collected)

    return port


def dry_run(benchmark: str, settings: Any, container: Any, service: Any, source: Any) -> Collected:  # Any: the settings, container, service and source of any benchmark, and its requests
    """Every request the run would ask, from the service run on placeholder ports and a throwaway store."""
    return dry_run_result(benchmark, settings, container, service, source)[0]


# The resamples a policy plan's dry run draws: its intervals are read for their n (the units), never their bounds.
UNIT_COUNT_RESAMPLES = 2


def dry_run_result(
    benchmark: str, settings: Any, container: Any, service: Any, source: Any, *, resamples: int = 0  # Any: the settings, container, service and source of any benchmark, and its requests
) -> tuple[Collected, RunResult]:
    """``dry_run`` and the placeholder run's result; ``resamples`` > 0 gives its summary intervals, whose ``n``
    counts the units each headline rests on (``plan --policy``)."""
    collected = Collected()
    from culturebias.bootstrap.container import make_context_factory

    from dependency_injector import providers

    from culturebias.adapters.progress.reporters import NullProgress

    store = registry().store("memory").open(None, settings.store)
    try:
        recording = make_context_factory(
            container, store_object=store, model_port=placeholder_ports(settings, container, collected)
        )

        def make(run_id: str) -> RunContext:
            return replace(recording(run_id), bootstrap_resamples=resamples)  # placeholder answers: n only, if any

        descriptor = registry().benchmark(benchmark)
        request = RunRequest(
            benchmark=benchmark, service=service, summary_model=descriptor.summary_model(), source=source, store=store,
            report=None, out_dir=None, config={}, config_fingerprint="plan", headlines=descriptor.headline_metrics(),
        )
        with _quiet_dry_run(), container.progress.override(providers.Object(NullProgress())):  # no bars, no events
            result = run_benchmark(request, make)
    finally:
        store.close()
    return collected, result


def _batch_size(container: Any) -> int:  # Any: the settings, container, service and source of any benchmark, and its requests
    """The batch the run's port computes at once (settled by its model load where ``auto``)."""
    backend = container.model_backend()
    options = (backend.options if isinstance(backend, Configured) else None) or container.model_options()
    try:
        return int(options.settled_batch_size())
    except Exception:  # no number: a backend without batches, or auto not settled
        return CALIBRATION_REQUESTS


def _shared_stages(container: Any) -> frozenset[str]:  # Any: the settings, container, service and source of any benchmark, and its requests
    """Stages whose backend shares prompt prefixes across batches (a local model's prefix cache)."""
    options = container.model_options()
    if not isinstance(options, _PrefixCaching) or not options.prefix_cache:
        return frozenset()
    return frozenset({"loglikelihood", *({"generation"} if options.shared_generation else ())})


@runtime_checkable
class _PrefixCaching(Protocol):
    """The model options of a backend with a prefix cache (a local model's ``model.prefix_cache``)."""

    prefix_cache: bool
    shared_generation: bool


def make_plan(
    benchmark: str, settings: Any, container: Any, service: Any, source: Any, *, calibrate: bool = True,  # Any: the settings, container, service and source of any benchmark, and its requests
    shown: bool = False,
) -> RunPlan:
    """The run's plan: its requests from a dry run, tokens, distinct tokens, ETA (``calibrate``), cost.
    ``shown``: its work (counting tokens, timing the model) on the container's bars (the CLI's), not an
    embedding host's progress callback.

    The calibration asks the backend's own ports (``LocalBackend`` keeps each port once built, so a run
    that follows uses the model loaded here), never the run's recorded ones: nothing it computes is stored.
    """
    tokenize = model_tokenizer(container)  # a local model's tokenizer loads here, its log lines outside the quiet dry run
    collected, dry = dry_run_result(benchmark, settings, container, service, source)

    def prepare(stage: Stage) -> Callable[[list[Any]], Any]:  # Any: the settings, container, service and source of any benchmark, and its requests
        backend = container.model_backend()  # the stage's port is built (the model loads) here, before any timing
        if stage == "loglikelihood":
            return backend.scorer().loglikelihood
        if stage == "generation":
            return backend.generator().generate
        return backend.pseudo_scorer().pseudo_loglikelihood

    model = container.model_options()
    planner = Planner(
        benchmark=benchmark,
        model=f"{model.backend}:{model.resolved_path()}",
        tokenize=tokenize,
        text=request_text(_chat_renderer(container) if tokenize is not None else None),
        prepare=prepare if calibrate else None,
        prices=prices_of(container),
        budget=budget_of(settings),
        batch_size=lambda: _batch_size(container),
        shared_stages=_shared_stages(container),
        progress=container.progress() if shown else None,
    )
    drawn = dry.summary.sample  # the sample the run will draw (the service returns it in its outcome)
    return planner.plan(collected, sample=drawn.sentence() if drawn is not None else None)


def budget_wrapper(settings: Any, container: Any) -> Callable[[Any], Any] | None:  # Any: the settings, container, service and source of any benchmark, and its requests
    """The port wrapper that stops a run at its budget; None without a budget."""
    budget = budget_of(settings)
    if not budget.set:
        return None
    tokenize = model_tokenizer(container) if budget.max_tokens or budget.max_cost else None
    text = request_text(_chat_renderer(container) if tokenize is not None else None)
    count = tokenize or estimated_tokens
    spent = Spent(budget, lambda request: len(count(text(request))), prices_of(container))
    return lambda port: BudgetedPort(port, spent)
