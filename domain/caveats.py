"""Every warning a run carries, once: what limits what its numbers say (issue 33, "caveats travel with the number").

``run_caveats(summary, headlines)`` is the one source every output reads: the run's report card, the
comparison (JSON, Markdown, HTML), the leaderboard, the policy verdict and its JUnit text, the model
card, the MLflow tags and the Every Eval Ever record. Each kind is one small collector in
``COLLECTORS``; a new kind is one function and one line there.

Kinds: ``limited`` (--limit N), ``sampled`` (--sample N, or protocol.categories), ``small_model`` (a model
port under a billion parameters), ``judge_given_up`` (McBE's BA judge stopped), ``not_paper_mode`` (an
answering mode, decoding or comparison other than the paper's), ``few_units`` (a headline interval on
fewer than ``FEW_UNITS`` resampling units), ``not_measured`` (the run's headline cannot be read) and
``validity`` (a validity rule failed, so the headlines it guards are not measured, or the rules were off).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from culturebias.domain.headlines import HeadlineMetric, interval_of
from culturebias.domain.summary import RunSummary
from culturebias.domain.uncertainty.interval import plural_unit
from culturebias.domain.validity import VALIDITY_OFF_NOTE, ValidityBlock, rule_reason

CaveatKind = Literal[
    "limited", "sampled", "small_model", "judge_given_up", "not_paper_mode", "few_units", "not_measured", "validity"
]
SMALL_MODEL_PARAMETERS = 1_000_000_000  # below: a model that checks the method runs, not a deployable one
FEW_UNITS = 30  # a headline interval resampling fewer units than this is rough


class Caveat(BaseModel):
    """One thing that limits what a run's numbers say."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: CaveatKind = Field(
        description="limited, sampled, small_model, judge_given_up, not_paper_mode, few_units, not_measured or validity"
    )
    short: str = Field(description='a few words for a table cell or a tag, e.g. "168 of 2,280 items (stratified sample)"')
    text: str = Field(description="one plain sentence, with its numbers")
    metric: str | None = Field(None, description="the headline metric(s) it concerns; null: the whole run")


def _field(block: Any, name: str) -> Any:  # Any: a benchmark's own summary blocks and JSON values
    return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)


def _count(value: Any) -> str:  # Any: a summary's JSON value
    return f"{value:,}" if isinstance(value, int) else "?" if value is None else str(value)


def _categories(summary: Any) -> str | None:  # Any: the benchmark's own RunSummary subclass
    config = _field(summary, "config")
    protocol = config.get("protocol") if isinstance(config, Mapping) else None
    chosen = protocol.get("categories") if isinstance(protocol, Mapping) else None
    if not chosen:
        return None
    return chosen if isinstance(chosen, str) else ",".join(map(str, chosen))


def _sample(summary: Any) -> Any:  # Any: the summary's sample block (typed, or its JSON in older schemas)
    sample = _field(summary, "sample")
    return None if sample is None or _field(sample, "method") == "all" else sample


def items_words(summary: Any) -> str:  # Any: the benchmark's own RunSummary subclass
    """What a run evaluated, as a comparison's "items" cell: "all", "first 400 (--limit)",
    "168 of 2,280 (stratified sample)" or "categories age,gender only"."""
    limit = _field(summary, "limit")
    if limit is not None:
        return f"first {limit.n} (--limit)"
    sample = _sample(summary)
    if sample is not None:
        method = _field(sample, "method") or "stratified"
        return f"{_count(_field(sample, 'n'))} of {_count(_field(sample, 'population'))} ({method} sample)"
    categories = _categories(summary)
    return f"categories {categories} only" if categories else "all"


# -- the collectors: one per kind ---------------------------------------------------------------------------
Collector = Callable[[Any, Sequence[HeadlineMetric]], list[Caveat]]  # Any: the benchmark's own RunSummary subclass


def limited(summary: Any, headlines: Sequence[HeadlineMetric] = ()) -> list[Caveat]:  # Any: a RunSummary subclass
    limit = _field(summary, "limit")
    if limit is None:
        return []
    return [Caveat(
        kind="limited", short=f"--limit {limit.n}",
        text=f"A limited run (--limit {limit.n}): it evaluated only {limit.meaning.replace(' N ', f' {limit.n} ', 1)}; "
             "not representative of the data set and not comparable to a full run.",
    )]


def sampled(summary: Any, headlines: Sequence[HeadlineMetric] = ()) -> list[Caveat]:  # Any: a RunSummary subclass
    sample = _sample(summary)
    if sample is not None:
        n, population, seed = (_field(sample, k) for k in ("n", "population", "seed"))
        method = _field(sample, "method") or "stratified"
        units, of_units, unit = (_field(sample, k) for k in ("units", "units_in_population", "unit"))
        cells, strata = _field(sample, "cells"), _field(sample, "strata")
        drawn = f" ({_count(units)} of {_count(of_units)} {unit}s)" if units is not None and unit else ""
        by = " × ".join(map(str, cells)) if cells else ", ".join(s for s in strata or () if isinstance(s, str))
        how = f", stratified by {by}" if by else (f", a {method} sample" if method != "stratified" else "")
        return [Caveat(
            kind="sampled", short=f"{_count(n)} of {_count(population)} items ({method} sample)",
            text=f"A sampled run: {_count(n)} of {_count(population)} items{drawn}{how} "
                 f"(seed {seed if seed is not None else '–'}); not the whole data set, and the intervals cover the "
                 "sampling of these items only.",
        )]
    categories = _categories(summary)
    if categories and _field(summary, "limit") is None:
        return [Caveat(
            kind="sampled", short=f"categories {categories} only",
            text=f"A run on a sample of the categories (protocol.categories={categories}): its numbers are not the "
                 "whole benchmark's.",
        )]
    return []


def small_model(summary: Any, headlines: Sequence[HeadlineMetric] = ()) -> list[Caveat]:  # Any: a RunSummary subclass
    roles = summary.model.roles()
    small = {i.model: i.parameters for i in roles.values() if i.parameters and i.parameters < SMALL_MODEL_PARAMETERS}
    if not small:
        return []
    named = ", ".join(f"{model}, {params / 1e6:,.0f}M parameters" for model, params in small.items())
    return [Caveat(
        kind="small_model", short=f"small model ({', '.join(small)})",
        text=f"A small model ({named}): it checks that the method runs end to end; its numbers say nothing about the "
             "bias of a deployable model.",
    )]


def judge_given_up(summary: Any, headlines: Sequence[HeadlineMetric] = ()) -> list[Caveat]:  # Any: a RunSummary subclass
    stopped = _field(_field(summary, "counts"), "ba_judge_stopped")
    if not isinstance(stopped, int) or stopped <= 0:
        return []
    return [Caveat(
        kind="judge_given_up", short=f"judge given up ({stopped:,} BEIs without BA)",
        text=f"The judge was given up on: {stopped:,} BEIs were left without its verdict, so their BA is missing.",
    )]


def not_paper_mode(summary: Any, headlines: Sequence[HeadlineMetric] = ()) -> list[Caveat]:  # Any: a RunSummary subclass
    metrics = _field(summary, "metrics")
    found = []
    answering = _field(metrics, "answering")
    if answering is not None and _field(answering, "matches_papers") is False:
        mode, papers = _field(answering, "mode"), _field(answering, "papers_mode")
        found.append(Caveat(
            kind="not_paper_mode", short=f"{mode} mode (the papers: {papers})",
            text=f"Answers were read in {mode} mode, not the papers' {papers} mode: the numbers are not the papers' "
                 "measurement.",
        ))
    reasoning = _field(metrics, "reasoning")
    if reasoning is not None and _field(reasoning, "decoding") == "greedy":
        found.append(Caveat(
            kind="not_paper_mode", short="greedy reasoning (the paper: sampled)",
            text="The Q+IF+CoT reasoning turn was decoded greedily; the paper sampled it.",
        ))
    comparison = _field(metrics, "comparison")
    if comparison in ("embedding", "masked_choice"):
        found.append(Caveat(
            kind="not_paper_mode", short=f"{comparison} knowledge check (the paper: judge)",
            text=f"The knowledge boundary compared definitions by {comparison.replace('_', ' ')}, not by the paper's "
                 "judge verification (P2).",
        ))
    return found


def few_units(summary: Any, headlines: Sequence[HeadlineMetric] = ()) -> list[Caveat]:  # Any: a RunSummary subclass
    by_n: dict[tuple[int, str], list[HeadlineMetric]] = {}
    for metric in headlines:
        try:
            interval = interval_of(summary, metric)
        except KeyError:
            continue
        if interval is not None and 0 < interval.n < FEW_UNITS:
            by_n.setdefault((interval.n, interval.unit), []).append(metric)
    # The text names each metric in words (its label): it is shown on pages; ``metric`` keeps the policy names.
    return [
        Caveat(
            kind="few_units", short=f"intervals on {n} {plural_unit(unit, n)}", metric=", ".join(m.name for m in found),
            text=f"The 95% interval of {', '.join(m.label for m in found)} rests on {n} {plural_unit(unit, n)} (fewer "
                 f"than {FEW_UNITS}): a bootstrap over so few units is rough.",
        )
        for (n, unit), found in by_n.items()
    ]


def low_power(summary: Any, headlines: Sequence[HeadlineMetric] = ()) -> list[Caveat]:  # Any: a RunSummary subclass
    """Headline numbers computed only from cells of few units (TWBias: few sentence pairs), first on the card."""
    text = summary.headline_low_power() if isinstance(summary, RunSummary) else None
    return [Caveat(kind="few_units", short="few pairs, low power", text=text)] if text else []


def not_measured(summary: Any, headlines: Sequence[HeadlineMetric] = ()) -> list[Caveat]:  # Any: a RunSummary subclass
    reason = _field(summary, "not_measured")
    if not isinstance(reason, str) or not reason:
        return []
    return [Caveat(kind="not_measured", short="not measured", text=f"Not measured: {reason}.")]


def validity(summary: Any, headlines: Sequence[HeadlineMetric] = ()) -> list[Caveat]:  # Any: a RunSummary subclass
    """One caveat per failed validity rule (PROTOCOLS §6), naming the headlines it leaves not measured; or the rules off."""
    block = _field(summary, "validity")
    if isinstance(block, Mapping):  # a summary read as JSON
        block = ValidityBlock.model_validate(block)
    if not isinstance(block, ValidityBlock):
        return []
    if not block.enabled:
        return [Caveat(kind="validity", short="validity rules off", text=f"{VALIDITY_OFF_NOTE[:1].upper()}{VALIDITY_OFF_NOTE[1:]}.")]
    label = {m.name: m.label for m in headlines}
    return [
        Caveat(kind="validity", short=f"{', '.join(r.guards)} not measured ({r.rule})",
               text=f"Not measured: {', '.join(label.get(g, g) for g in r.guards)}: {rule_reason(r)}.",
               metric=", ".join(r.guards))
        for r in block.failed()
    ]


COLLECTORS: tuple[Collector, ...] = (
    low_power, limited, sampled, small_model, judge_given_up, not_paper_mode, few_units, not_measured, validity,
)


def run_caveats(summary: Any, headlines: Sequence[HeadlineMetric] = ()) -> list[Caveat]:  # Any: a RunSummary subclass
    """Every caveat of a run, in ``COLLECTORS`` order; ``headlines`` (its benchmark's declared ones) for ``few_units``."""
    return [caveat for collect in COLLECTORS for caveat in collect(summary, headlines)]

