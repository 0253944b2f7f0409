"""The plan of a run (``domain/run_plan.py``) and the budget that stops a run crossing it.

A plan is a dry run: the protocol service runs as it would, on ports that record
every request and answer with placeholders (a log-probability of −1 per request,
the reply "A"), so the requests are exactly the run's, whatever the benchmark.
The placeholders never build the real model (``PlaceholderPort``): a plan costs
no model request, no probe of a server, no model load. Requests that depend on
real replies (a retry after an unparsable reply, a judge's turn on a reply) are
counted for one pass. The planned requests are then tokenised and put in a token
trie.

The calibration (optional) builds the model's port first and sends it one
request to warm up, neither timed; then it times one batch of the run's batch
size, contiguous requests from the middle of the stage (as the run hands them
over, so the sharing a backend does within a batch is in the measurement). The
ETA is requests × seconds per request, and for a backend that shares prefixes
across batches (``Planner.shared_stages``) × the stage's share of distinct
tokens over the batch's (``prefix_sharing``): the whole stage shares more than
one batch of it.

``BudgetedPort`` wraps a real port during a run: a call that would take the
run's model requests or tokens past ``run.max_requests`` / ``run.max_tokens`` /
``run.max_cost`` raises ``BudgetExceeded`` before it computes anything; what
earlier calls computed is stored (the recorded ports commit before an
exception leaves them), and ``--resume`` continues from there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

from culturebias.domain.errors import ConfigError
from culturebias.domain.identity import ModelIdentity, ScoreProvenance
from culturebias.domain.requests import (
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    PseudoLoglikelihoodRequest,
    PseudoLoglikelihoodResult,
)
from culturebias.domain.run_plan import Budget, RunPlan, Stage, StagePlan, check_calibration_budget, estimated_tokens, trie_nodes
from culturebias.ports.described import Described, ProbeReporting
from culturebias.ports.progress import ProgressReporter, ProgressTask

PLACEHOLDER_REPLY = "A"
CALIBRATION_REQUESTS = 4  # the batch a stage's calibration times, where the run's batch size is not known


class BudgetExceeded(ConfigError):
    """A run reached ``run.max_*``: it stops; what it computed is stored, ``--resume`` continues."""


@dataclass
class Collected:
    """Every request a dry run asked, by stage, in order."""

    loglikelihood: list[LoglikelihoodRequest] = field(default_factory=list)
    generation: list[GenerationRequest] = field(default_factory=list)
    pseudo_loglikelihood: list[PseudoLoglikelihoodRequest] = field(default_factory=list)


class _ForwardingPort:
    """A wrapper of a model port that says what the port declares of itself (``ports/described.py``): its
    identity, its scores' provenance (None for a port without), a probe's findings, the scorer's check."""

    def __init__(self, port: Any):  # Any: the wrapped model ports, their requests and progress, of any kind
        self._port = port

    @property
    def identity(self) -> ModelIdentity:
        return self._port.identity

    @property
    def provenance(self) -> ScoreProvenance | None:
        return self._port.provenance if isinstance(self._port, Described) else None

    @property
    def probe_findings(self) -> Mapping[str, str] | None:
        return self._port.probe_findings if isinstance(self._port, ProbeReporting) else None

    def check_loglikelihood(self) -> None:
        self._port.check_loglikelihood()  # a scorer's (a run calls it on its scorer only)


class CollectingPort(_ForwardingPort):
    """A model port that records requests and answers with placeholders; what it declares of itself is the real port's."""

    def __init__(self, port: Any, collected: Collected):  # Any: the wrapped model ports, their requests and progress, of any kind
        super().__init__(port)
        self._collected = collected

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


class PlaceholderPort(CollectingPort):
    """A dry run's model port standing for a model it never builds: it records, answers placeholders, and
    checks nothing (its capabilities were checked from the backend's descriptor when it was made)."""

    def __init__(self, identity: ModelIdentity, collected: Collected, scores: bool = False):
        super().__init__(None, collected)
        self._identity = identity
        self._scores = scores  # a scorer's stands for scores, which carry a provenance; a generator's do not

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    @property
    def provenance(self) -> ScoreProvenance | None:
        return ScoreProvenance(backend=self._identity.backend, dtype="placeholder", device="none") if self._scores else None

    def check_loglikelihood(self) -> None:
        return None


class UnrenderedTemplater:
    """A served model's templater in a dry run: it says whether the model has a chat template, renders
    nothing itself (a server would be asked), and lets the plan count the messages' text."""

    def __init__(self, templater: Any):  # Any: the backend's own templater
        self._templater = templater

    @property
    def has_chat_template(self) -> bool:
        return bool(self._templater.has_chat_template)

    @property
    def template_use(self) -> Any:  # Any: the backend's own template account
        return None

    def check_render(self) -> None:
        return None

    def render(self, messages: Sequence[Any], add_generation_prompt: bool = True) -> str:  # Any: chat messages
        return "\n".join(m.content for m in messages)


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


# Builds a stage's port on the model (a load: not timed) and returns what computes its requests.
Prepare = Callable[[Stage], Callable[[list[Any]], Any]]  # Any: the requests and results of any stage


@dataclass
class Planner:
    """Turns collected requests into a ``RunPlan``.

    ``tokenize``: the model's tokenizer (text → ids), None for an estimate. ``prepare``: the calibration on the
    real model (module doc); None plans without an ETA. ``batch_size``: the run's, the batch timed (a callable: read once the port is built).
    ``shared_stages``: the stages whose backend shares prefixes across batches. ``clock``: seconds, for the timing.
    ``progress``: where the planning shows its work (counting a stage's tokens, the calibration), None for nowhere.
    """

    benchmark: str
    model: str
    tokenize: Callable[[str], list[int]] | None
    text: RequestText
    prepare: Prepare | None
    prices: Prices = field(default_factory=Prices)
    budget: Budget = field(default_factory=Budget)
    batch_size: int | Callable[[], int] = CALIBRATION_REQUESTS
    shared_stages: frozenset[str] = frozenset()
    clock: Callable[[], float] = time.perf_counter
    failures: list[str] = field(default_factory=list)
    progress: ProgressReporter | None = None

    def _task(self, description: str, total: int) -> ProgressTask | None:
        return self.progress.task(description, total) if self.progress is not None else None

    def plan(self, collected: Collected, sample: str | None = None, notes: Sequence[str] = ()) -> RunPlan:
        tokenize = self.tokenize or estimated_tokens
        stages = []
        asked: dict[Stage, list[Any]] = {  # Any: the requests of each stage
            "loglikelihood": collected.loglikelihood, "generation": collected.generation, "pseudo_loglikelihood": collected.pseudo_loglikelihood,
        }
        for stage, requests in asked.items():
            if requests:
                stages.append(self._stage(stage, requests, tokenize))
        totals = {
            "requests": sum(s.requests for s in stages), "tokens": sum(s.tokens for s in stages),
            "input_tokens": sum(s.input_tokens for s in stages), "output_tokens": sum(s.output_tokens for s in stages),
            "distinct_tokens": sum(s.distinct_tokens for s in stages),
        }
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
        lengths: list[int] = []
        counting = self._task(f"plan: counting {stage} tokens", len(requests))

        def sequences() -> Iterator[list[int]]:  # one at a time: a full KoBBQ run holds 17M tokens
            for request in requests:
                sequence = tokenize(self.text(request))
                lengths.append(len(sequence))
                if counting is not None:
                    counting.advance()
                yield sequence

        try:
            distinct = trie_nodes(sequences())
        finally:
            if counting is not None:
                counting.close()
        outputs = [r.params.max_new_tokens for r in requests] if stage == "generation" else [0] * len(requests)
        plan = StagePlan(
            stage=stage,
            requests=len(requests),
            tokens=sum(lengths) + sum(outputs),
            input_tokens=sum(lengths),
            output_tokens=sum(outputs),
            distinct_tokens=distinct,
        )
        if self.prepare is None:
            return plan
        return self._calibrated(plan, requests, lengths, outputs, tokenize)

    def _calibrated(
        self, plan: StagePlan, requests: list[Any], lengths: list[int], outputs: list[int], tokenize: Callable[[str], list[int]]  # Any: the requests of any stage
    ) -> StagePlan:
        assert self.prepare is not None
        try:
            compute = self.prepare(plan.stage)
        except Exception as error:  # the run itself meets (and reports) what the model does wrong
            self.failures.append(f"{plan.stage} calibration failed ({type(error).__name__}: {error}): no ETA")
            return plan
        size = self.batch_size() if callable(self.batch_size) else self.batch_size  # settled by the load
        k = min(max(1, size), len(requests))
        start = (len(requests) - k) // 2  # one batch from the middle, in the run's order
        batch = list(range(start, start + k))
        warm_up = [0] if start > 0 else []  # the first call's one-time costs, on a request outside the batch
        asked = warm_up + batch
        cost = self.prices.cost(sum(lengths[i] for i in asked), sum(outputs[i] for i in asked))
        check_calibration_budget(len(asked), sum(lengths[i] + outputs[i] for i in asked), cost, self.budget)
        timing = self._task(f"plan: timing {plan.stage} on the model", len(asked))
        try:
            if warm_up:
                compute([requests[i] for i in warm_up])
                if timing is not None:
                    timing.advance(len(warm_up))
            started = self.clock()
            compute([requests[i] for i in batch])
            seconds = self.clock() - started
            if timing is not None:
                timing.advance(len(batch))
        except Exception as error:  # the run itself meets (and reports) what the model does wrong
            self.failures.append(f"{plan.stage} calibration failed ({type(error).__name__}: {error}): no ETA")
            return plan
        finally:
            if timing is not None:
                timing.close()
        sharing = 1.0
        if plan.stage in self.shared_stages:
            batch_share = _distinct_share([tokenize(self.text(requests[i])) for i in batch], [outputs[i] for i in batch])
            stage_share = (plan.distinct_tokens + plan.output_tokens) / plan.tokens if plan.tokens else 0.0
            sharing = stage_share / batch_share if batch_share else 1.0
        per_request = seconds / k
        return plan.model_copy(
            update={
                "calibration_requests": k,
                "calibration_seconds": seconds,
                "seconds_per_request": per_request,
                "prefix_sharing": sharing if plan.stage in self.shared_stages else None,
                "eta_seconds": per_request * plan.requests * sharing,
            }
        )


def _distinct_share(sequences: list[list[int]], outputs: list[int]) -> float:
    """(distinct input tokens + output tokens) / (input + output tokens): what is left to compute after sharing."""
    total = sum(len(s) for s in sequences) + sum(outputs)
    return (trie_nodes(sequences) + sum(outputs)) / total if total else 0.0


class BudgetedPort(_ForwardingPort):
    """A model port that stops before a call would take the run past its budget (module doc)."""

    def __init__(self, port: Any, spent: "Spent"):  # Any: the wrapped model ports, their requests and progress, of any kind
        super().__init__(port)
        self._spent = spent

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
