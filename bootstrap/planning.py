"""Composition of a run's plan (``application/run_plan.py``): a dry run on recording ports, the model's
tokenizer, a calibration on the real model, and the budget ports of the run itself."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import replace
from typing import Any, Callable, Iterator

from culturebias.application.context import RunContext
from culturebias.application.run_benchmark import RunRequest, run_benchmark
from culturebias.application.run_plan import (
    BudgetedPort,
    Collected,
    CollectingPort,
    Planner,
    Prices,
    Spent,
    request_text,
)
from culturebias.bootstrap.registry import registry
from culturebias.domain.run_plan import Budget, RunPlan, Stage, estimated_tokens
from culturebias.logs import get_logger

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
    tokenizer = getattr(backend, "tokenizer", None)
    if not callable(tokenizer):
        return None
    built = tokenizer()
    if built is None:
        return None
    return lambda text: list(built(text, add_special_tokens=False)["input_ids"])


def _chat_renderer(container: Any) -> Callable[[Any], str] | None:  # Any: the settings, container, service and source of any benchmark, and its requests
    try:
        templater = container.model_backend().templater()
    except Exception:  # no templater: chat requests are counted by their message texts
        return None
    if not getattr(templater, "has_chat_template", False):
        return None
    return lambda messages: templater.render(messages)


@contextlib.contextmanager
def _quiet_dry_run() -> Iterator[None]:
    """The dry run's lines ("run finished", a mode's warning, ...) would read as, or repeat, the real run's: errors only."""
    logger = logging.getLogger("culturebias")
    level = logger.level
    logger.setLevel(max(level, logging.ERROR))
    try:
        yield
    finally:
        logger.setLevel(level)


def dry_run(benchmark: str, settings: Any, container: Any, service: Any, source: Any) -> Collected:  # Any: the settings, container, service and source of any benchmark, and its requests
    """Every request the run would ask, from the service run on recording ports and a throwaway store."""
    collected = Collected()
    from culturebias.bootstrap.container import make_context_factory

    store = registry().store("memory").open(None, settings.store)
    try:
        recording = make_context_factory(container, wrap=lambda port: CollectingPort(port, collected), store_object=store)

        def make(run_id: str) -> RunContext:
            return replace(recording(run_id), bootstrap_resamples=0)  # placeholder answers need no intervals

        descriptor = registry().benchmark(benchmark)
        request = RunRequest(
            benchmark=benchmark, service=service, summary_model=descriptor.summary_model(), source=source, store=store,
            report=None, out_dir=None, config={}, config_fingerprint="plan", headlines=descriptor.headline_metrics(),
        )
        with _quiet_dry_run():
            run_benchmark(request, make)
    finally:
        store.close()
    return collected


def make_plan(
    benchmark: str, settings: Any, container: Any, service: Any, source: Any, *, calibrate: bool = True  # Any: the settings, container, service and source of any benchmark, and its requests
) -> RunPlan:
    """The run's plan: its requests from a dry run, tokens, distinct tokens, ETA (``calibrate``), cost."""
    tokenize = model_tokenizer(container)  # a local model loads here, its log lines outside the quiet dry run
    collected = dry_run(benchmark, settings, container, service, source)
    backend = container.model_backend() if calibrate else None

    def compute(stage: Stage, requests: list[Any]) -> Any:  # Any: the settings, container, service and source of any benchmark, and its requests
        port = {"loglikelihood": "scorer", "generation": "generator", "pseudo_loglikelihood": "pseudo_scorer"}[stage]
        method = {"loglikelihood": "loglikelihood", "generation": "generate", "pseudo_loglikelihood": "pseudo_loglikelihood"}
        return getattr(getattr(backend, port)(), method[stage])(requests)

    model = container.model_options()
    planner = Planner(
        benchmark=benchmark,
        model=f"{model.backend}:{model.resolved_path()}",
        tokenize=tokenize,
        text=request_text(_chat_renderer(container)),
        compute=compute if calibrate else None,
        prices=prices_of(container),
        budget=budget_of(settings),
    )
    drawn = getattr(service, "drawn_sample", None)
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
