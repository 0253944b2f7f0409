"""The plan of a run (``domain/run_plan.py``) and the budget that stops a run crossing it.

A plan is a dry run: the protocol service runs as it would, on ports that record
every request and answer with placeholders (a log-probability of −1 per request,
the reply "A"), so the requests are exactly the run's, whatever the benchmark.
Requests that depend on real replies (a retry after an unparsable reply, a
judge's turn on a reply) are counted for one pass. The planned requests are then
tokenised, put in a token trie, and a few of each stage, spread over it, are
timed on the real model.

``BudgetedPort`` wraps a real port during a run: a call that would take the
run's model requests or tokens past ``run.max_requests`` / ``run.max_tokens`` /
``run.max_cost`` raises ``BudgetExceeded`` before it computes anything; what
earlier calls computed is stored (the recorded ports commit before an
exception leaves them), and ``--resume`` continues from there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from culturebias.domain.errors import ConfigError
from culturebias.domain.requests import (
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    PseudoLoglikelihoodRequest,
    PseudoLoglikelihoodResult,
)
from culturebias.domain.run_plan import Budget, RunPlan, Stage, StagePlan, check_calibration_budget, estimated_tokens, trie_nodes

PLACEHOLDER_REPLY = "A"
CALIBRATION_REQUESTS = 4  # per stage


class BudgetExceeded(ConfigError):
    """A run reached ``run.max_*``: it stops; what it computed is stored, ``--resume`` continues."""


@dataclass
class Collected:
    """Every request a dry run asked, by stage, in order."""

    loglikelihood: list[LoglikelihoodRequest] = field(default_factory=list)
    generation: list[GenerationRequest] = field(default_factory=list)
    pseudo_loglikelihood: list[PseudoLoglikelihoodRequest] = field(default_factory=list)


class CollectingPort:
    """A model port that records requests and answers with placeholders; everything else is the real port's."""

    def __init__(self, port: Any, collected: Collected):  # Any: the wrapped model ports, their requests and progress, of any kind
        self._port = port
        self._collected = collected

    def __getattr__(self, name: str) -> Any:  # Any: the wrapped model ports, their requests and progress, of any kind
        return getattr(self._port, name)

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], progress: Any = None) -> list[LoglikelihoodResult]:  # Any: the wrapped model ports, their requests and progress, of any kind
        self._collected.loglikelihood.extend(requests)
        return [LoglikelihoodResult(logprob=-1.0, n_tokens=1, is_greedy=False) for _ in requests]

    def generate(self, requests: Sequence[GenerationRequest], progress: Any = None) -> list[GenerationResult]:  # Any: the wrapped model ports, their requests and progress, of any kind
        self._collected.generation.extend(requests)
        return [GenerationResult(text=PLACEHOLDER_REPLY) for _ in requests]

    def pseudo_loglikelihood(
        self, requests: Sequence[PseudoLoglikelihoodRequest], progress: Any = None  # Any: the wrapped model ports, their requests and progress, of any kind
    ) -> list[PseudoLoglikelihoodResult]:
        self._collected.pseudo_loglikelihood.extend(requests)
        return [PseudoLoglikelihoodResult(logprob=-1.0, n_tokens=1) for _ in requests]


# The text a request puts through the model (a chat request rendered by the model's template).
RequestText = Callable[[Any], str]


def request_text(render_chat: Callable[[Any], str] | None) -> RequestText:  # Any: the wrapped model ports, their requests and progress, of any kind
    def text(request: Any) -> str:  # Any: the wrapped model ports, their requests and progress, of any kind
        if isinstance(request, LoglikelihoodRequest):
            return request.context + request.continuation
        if isinstance(request, PseudoLoglikelihoodRequest):
            return request.text
        if request.prompt is not None:
            return str(request.prompt)
        if render_chat is not None:
            return render_chat(request.messages)
        return "\n".join(m.content for m in request.messages)

    return text


@dataclass
class Prices:
    per_1k_input: float | None = None
    per_1k_output: float | None = None

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        if self.per_1k_input is None and self.per_1k_output is None:
            return None
        return input_tokens / 1000 * (self.per_1k_input or 0.0) + output_tokens / 1000 * (self.per_1k_output or 0.0)


@dataclass
class Planner:
    """Turns collected requests into a ``RunPlan``.

    ``tokenize``: the model's tokenizer (text → ids), None for an estimate. ``compute(stage, requests)`` runs
    requests on the real model (the calibration); None plans without an ETA.
    """

    benchmark: str
    model: str
    tokenize: Callable[[str], list[int]] | None
    text: RequestText
    compute: Callable[[Stage, list[Any]], Any] | None  # Any: the wrapped model ports, their requests and progress, of any kind
    prices: Prices = field(default_factory=Prices)
    budget: Budget = field(default_factory=Budget)
    calibration_requests: int = CALIBRATION_REQUESTS
    failures: list[str] = field(default_factory=list)

    def plan(self, collected: Collected, sample: str | None = None, notes: Sequence[str] = ()) -> RunPlan:
        tokenize = self.tokenize or estimated_tokens
        stages = []
        for stage in ("loglikelihood", "generation", "pseudo_loglikelihood"):
            requests: list[Any] = getattr(collected, stage)  # Any: the wrapped model ports, their requests and progress, of any kind
            if requests:
                stages.append(self._stage(stage, requests, tokenize))
        totals = {k: sum(getattr(s, k) for s in stages) for k in ("requests", "tokens", "input_tokens", "output_tokens", "distinct_tokens")}
        etas = [s.eta_seconds for s in stages]
        all_notes = [*notes, *self.failures]
        if not stages:
            all_notes.append("the dry run asked the model nothing")
        all_notes.append("requests that depend on real replies (retries, judge turns) are counted for one pass")
        return RunPlan(
            benchmark=self.benchmark,
            model=self.model,
            tokens_estimated=self.tokenize is None,
            stages=stages,
            eta_seconds=sum(e for e in etas if e is not None) if stages and all(e is not None for e in etas) else None,
            cost=self.prices.cost(totals["input_tokens"], totals["output_tokens"]),
            sample=sample,
            notes=all_notes,
            **totals,
        )

    def _stage(self, stage: Stage, requests: list[Any], tokenize: Callable[[str], list[int]]) -> StagePlan:  # Any: the wrapped model ports, their requests and progress, of any kind
        sequences = [tokenize(self.text(r)) for r in requests]
        outputs = [r.params.max_new_tokens for r in requests] if stage == "generation" else [0] * len(requests)
        input_tokens = sum(len(s) for s in sequences)
        plan = StagePlan(
            stage=stage,
            requests=len(requests),
            tokens=input_tokens + sum(outputs),
            input_tokens=input_tokens,
            output_tokens=sum(outputs),
            distinct_tokens=trie_nodes(sequences),
        )
        if self.compute is None:
            return plan
        k = min(self.calibration_requests, len(requests))
        picks = [i * len(requests) // k for i in range(k)]  # spread over the stage
        cost = self.prices.cost(sum(len(sequences[i]) for i in picks), sum(outputs[i] for i in picks))
        check_calibration_budget(k, sum(len(sequences[i]) + outputs[i] for i in picks), cost, self.budget)
        started = time.perf_counter()
        try:
            self.compute(stage, [requests[i] for i in picks])
        except Exception as error:  # the run itself meets (and reports) what the model does wrong
            self.failures.append(f"{stage} calibration failed ({type(error).__name__}: {error}): no ETA")
            return plan
        seconds = time.perf_counter() - started
        calibrated = sum(len(sequences[i]) + outputs[i] for i in picks)
        return plan.model_copy(
            update={
                "calibration_requests": k,
                "calibration_seconds": seconds,
                "eta_seconds": seconds / max(1, calibrated) * plan.tokens,
            }
        )


class BudgetedPort:
    """A model port that stops before a call would take the run past its budget (module doc)."""

    def __init__(self, port: Any, spent: "Spent"):  # Any: the wrapped model ports, their requests and progress, of any kind
        self._port = port
        self._spent = spent

    def __getattr__(self, name: str) -> Any:  # Any: the wrapped model ports, their requests and progress, of any kind
        return getattr(self._port, name)

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], progress: Any = None) -> list[LoglikelihoodResult]:  # Any: the wrapped model ports, their requests and progress, of any kind
        self._spent.charge(requests, 0)
        return list(self._port.loglikelihood(requests, progress))

    def generate(self, requests: Sequence[GenerationRequest], progress: Any = None) -> list[GenerationResult]:  # Any: the wrapped model ports, their requests and progress, of any kind
        self._spent.charge(requests, sum(r.params.max_new_tokens for r in requests))
        return list(self._port.generate(requests, progress))

    def pseudo_loglikelihood(
        self, requests: Sequence[PseudoLoglikelihoodRequest], progress: Any = None  # Any: the wrapped model ports, their requests and progress, of any kind
    ) -> list[PseudoLoglikelihoodResult]:
        self._spent.charge(requests, 0)
        return list(self._port.pseudo_loglikelihood(requests, progress))


@dataclass
class Spent:
    """What this process asked of the model in one run, against the budget."""

    budget: Budget
    count_tokens: Callable[[Any], int]  # Any: the wrapped model ports, their requests and progress, of any kind
    prices: Prices = field(default_factory=Prices)
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def charge(self, requests: Sequence[Any], output_tokens: int) -> None:  # Any: the wrapped model ports, their requests and progress, of any kind
        n = len(requests)
        tokens = sum(self.count_tokens(r) for r in requests) if self.budget.max_tokens or self.budget.max_cost else 0
        after = (self.requests + n, self.input_tokens + tokens, self.output_tokens + output_tokens)
        cost = self.prices.cost(after[1], after[2])
        b = self.budget
        crossed = (
            f"run.max_requests={b.max_requests} ({after[0]:,} requests)" if b.max_requests is not None and after[0] > b.max_requests
            else f"run.max_tokens={b.max_tokens} ({after[1] + after[2]:,} tokens)" if b.max_tokens is not None and after[1] + after[2] > b.max_tokens
            else f"run.max_cost={b.max_cost} ({cost:.4f})" if b.max_cost is not None and cost is not None and cost > b.max_cost
            else None
        )
        if crossed:
            raise BudgetExceeded(
                f"the run stopped at its budget: the next {n} request(s) would exceed {crossed}; what was computed "
                f"is stored ({self.requests:,} requests this run): raise the budget and continue with --resume"
            )
        self.requests, self.input_tokens, self.output_tokens = after
