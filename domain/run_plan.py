"""What a run will ask of the model, before it does: requests, tokens, distinct tokens, time, cost, budget.

``culturebias plan`` prints a ``RunPlan`` without running; every run prints one
first and refuses to start above ``run.max_requests`` / ``run.max_tokens`` /
``run.max_cost``. Tokens come from the model's tokenizer, or, for a served model
without one, from an estimate (UTF-8 bytes / ``BYTES_PER_TOKEN``) marked so. The
distinct tokens are the nodes of a token trie over all request sequences: what
a backend that shares every common prefix computes at least. The ETA is each
stage's requests × the seconds per request of one batch timed on the actual
model (after its load and a warm-up), × the prefix sharing across batches of a
backend that shares (``application/run_plan.py``). A generation request counts
its prompt tokens plus ``max_new_tokens`` (an upper bound of its output). A
resumed run's plan says how many requests the store already holds
(``with_stored``).
"""

from __future__ import annotations

import math
from typing import Iterable, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from culturebias.domain.errors import ConfigError

Stage = Literal["loglikelihood", "generation", "pseudo_loglikelihood"]
# A rough bytes-per-token of BPE tokenizers over mixed Latin and CJK text (a Hangul or Han character is 3 bytes
# and usually about one token; English is about 4 bytes per token).
BYTES_PER_TOKEN = 3.5


def estimated_tokens(text: str) -> list[int]:
    """An estimate of ``text``'s tokens without a tokenizer: one pseudo-token per ``BYTES_PER_TOKEN`` bytes.

    The pseudo-tokens are chunks of the text (hashed), so a trie over them still shares common prefixes.
    """
    data = text.encode("utf-8")
    n = max(1, math.ceil(len(data) / BYTES_PER_TOKEN)) if data else 0
    step = len(data) / n if n else 0
    return [hash(data[int(i * step) : int((i + 1) * step)]) for i in range(n)]


def trie_nodes(sequences: Iterable[Sequence[int]]) -> int:
    """The nodes of the token trie over ``sequences``: each distinct prefix counted once.

    A node is an int and an edge the int key ``parent << 64 | token``: a full KoBBQ plan (3.9M nodes) fits in a
    few hundred MB where nested dicts took over a GB.
    """
    children: dict[int, int] = {}
    for sequence in sequences:
        node = 0
        for token in sequence:
            key = node << 64 | (token & _TOKEN_MASK)
            child = children.get(key)
            if child is None:
                child = children[key] = len(children) + 1
            node = child
    return len(children)


_TOKEN_MASK = (1 << 64) - 1


class StagePlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stage: Stage
    requests: int
    tokens: int = Field(description="input tokens (+ max_new_tokens for a generation request)")
    input_tokens: int
    output_tokens: int = Field(0, description="max_new_tokens summed over generation requests: an upper bound")
    distinct_tokens: int = Field(description="token trie nodes over the stage's inputs: tokens after prefix sharing")
    calibration_requests: int = Field(0, description="the batch timed (after a warm-up request, not timed)")
    calibration_seconds: float | None = None
    seconds_per_request: float | None = Field(None, description="calibration_seconds / calibration_requests")
    prefix_sharing: float | None = Field(
        None, description="the stage's share of distinct tokens over the timed batch's (a backend that shares prefixes)"
    )
    eta_seconds: float | None = None


class Budget(BaseModel):
    """``run.max_requests`` / ``run.max_tokens`` / ``run.max_cost``: None = no limit."""

    model_config = ConfigDict(extra="forbid")

    max_requests: int | None = Field(None, ge=1)
    max_tokens: int | None = Field(None, ge=1)
    max_cost: float | None = Field(None, gt=0)

    @property
    def set(self) -> bool:
        return any(v is not None for v in (self.max_requests, self.max_tokens, self.max_cost))


class RunPlan(BaseModel):
    """A run's plan: what ``culturebias plan`` prints and ``culturebias.plan(...)`` returns."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    model: str
    requests: int
    tokens: int
    input_tokens: int
    output_tokens: int
    distinct_tokens: int
    tokens_estimated: bool = Field(description="no tokenizer: tokens estimated from UTF-8 bytes")
    stages: list[StagePlan]
    eta_seconds: float | None = Field(None, description="from a short calibration on the model; None without one")
    cost: float | None = Field(None, description="from model.price_per_1k_*_tokens (output at max_new_tokens: an upper bound)")
    sample: str | None = Field(None, description="the --sample draw the plan counts, if any")
    notes: list[str] = Field(default_factory=list)
    stored_requests: int | None = Field(
        None, description="a resumed run: results its store holds already (distinct requests); null otherwise"
    )

    def text(self) -> str:
        left = (
            f" (resumed: {self.stored_requests:,} stored, about {max(0, self.requests - self.stored_requests):,} left)"
            if self.stored_requests is not None else ""
        )
        lines = [
            f"plan for {self.benchmark} on {self.model}"
            + (f" ({self.sample})" if self.sample else ""),
            f"  requests: {self.requests:,}{left}",
            f"  tokens: {self.tokens:,}{' (estimated: no tokenizer)' if self.tokens_estimated else ''}"
            + (f" ({self.input_tokens:,} in, up to {self.output_tokens:,} out)" if self.output_tokens else ""),
            f"  distinct tokens after prefix sharing: {self.distinct_tokens:,}",
        ]
        for s in self.stages:
            lines.append(f"  - {s.stage}: {s.requests:,} requests, {s.tokens:,} tokens, {s.distinct_tokens:,} distinct")
        if self.eta_seconds is not None:
            timed = ", ".join(_timed(s) for s in self.stages)
            whole = " for the whole run" if self.stored_requests is not None else ""
            lines.append(f"  ETA: {_duration(self.eta_seconds)}{whole} (timed on the model after its load and a warm-up: {timed})")
        else:
            lines.append("  ETA: not calibrated (`culturebias plan` or run.plan=auto gives one)")
        if self.cost is not None:
            lines.append(f"  cost: {self.cost:.4f} (model.price_per_1k_*_tokens; output at max_new_tokens: an upper bound)")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def over_budget(self, budget: Budget) -> list[str]:
        """The budget settings this plan exceeds, each with its numbers."""
        found = []
        if budget.max_requests is not None and self.requests > budget.max_requests:
            found.append(f"run.max_requests={budget.max_requests} < {self.requests:,} requests")
        if budget.max_tokens is not None and self.tokens > budget.max_tokens:
            found.append(f"run.max_tokens={budget.max_tokens} < {self.tokens:,} tokens")
        if budget.max_cost is not None:
            if self.cost is None:
                found.append("run.max_cost is set but the model has no price (set model.price_per_1k_input_tokens)")
            elif self.cost > budget.max_cost:
                found.append(f"run.max_cost={budget.max_cost} < {self.cost:.4f}")
        return found


def with_stored(plan: RunPlan, stored: Mapping[str, int]) -> RunPlan:
    """A resumed run's plan: ``stored`` results per stage (the run record's progress), counted in the plan's stages."""
    held = sum(n for stage, n in stored.items() if any(s.stage == stage for s in plan.stages))
    return plan.model_copy(update={"stored_requests": held})


def refuse_over_budget(plan: RunPlan, budget: Budget) -> None:
    """A ``ConfigError`` with the plan when the run would exceed its budget."""
    found = plan.over_budget(budget)
    if found:
        raise ConfigError("the run is over its budget (" + "; ".join(found) + "); nothing was run\n" + plan.text())


def check_calibration_budget(requests: int, tokens: int, cost: float | None, budget: Budget) -> None:
    """A budget smaller than the calibration itself cannot be planned within: a ``ConfigError`` naming the setting."""
    if budget.max_requests is not None and requests > budget.max_requests:
        raise ConfigError(
            f"run.max_requests={budget.max_requests} is smaller than the plan's calibration ({requests} requests); "
            "raise it, or plan without calibration (culturebias plan --no-calibration)"
        )
    if budget.max_tokens is not None and tokens > budget.max_tokens:
        raise ConfigError(
            f"run.max_tokens={budget.max_tokens} is smaller than the plan's calibration ({tokens} tokens); "
            "raise it, or plan without calibration (culturebias plan --no-calibration)"
        )
    if budget.max_cost is not None and cost is not None and cost > budget.max_cost:
        raise ConfigError(f"run.max_cost={budget.max_cost} is smaller than the plan's calibration ({cost:.4f})")


def _timed(stage: StagePlan) -> str:
    if stage.seconds_per_request is None:
        return f"{stage.stage} not timed"
    shared = f", × {stage.prefix_sharing:.2f} for prefix sharing across batches" if stage.prefix_sharing is not None else ""
    return f"{stage.stage} {stage.seconds_per_request:.3g} s per request over a batch of {stage.calibration_requests}{shared}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
