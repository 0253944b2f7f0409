"""Ports wrapped with the result store: dedupe, resume, and commits in proportion to progress.

Every request is keyed by the model's identity and the request's full text, so
a key changes with the model, its revision, its weights, its tokenizer and the
rendered chat template.

A call's new requests go to the port in chunks of ``run.chunk_size`` (what the
backend batches together is decided within a chunk, exactly as before). A
backend that delivers results batch by batch (``ports.recording.BatchSink``) has
them committed once ``run.commit_seconds`` have passed since the last commit or
once 2 % of the stage's results are waiting (``COMMIT_SHARE``), whichever comes
first: on a fast model a chunk is scored in less than ``commit_seconds``, and a
short run keeps its share too. Any other backend's are committed when its chunk
returns. Whatever was computed is committed before an exception (Ctrl-C,
SIGTERM, an error) leaves the call, so a kill loses at most the work since the
last commit, and ``--resume`` recomputes nothing that is stored.

The progress bar counts what is stored, not what was computed: the share it
shows is the share a kill keeps.

Before a chunk is computed its request keys are stored as a plan (stage
``<stage>.plan``). A resumed call first completes any planned chunk that was cut
short, handing the port the same chunk with the stored results ``known``: the
port plans the same batches and skips those already done, so a resumed run's
numbers are those of an uninterrupted one.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any, Callable, Generic, Mapping, Sequence, TypeVar

from culturebias.domain.errors import ResumeMismatchError
from culturebias.domain.fingerprint import fingerprint
from culturebias.domain.requests import (
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    PseudoLoglikelihoodRequest,
    PseudoLoglikelihoodResult,
)
from culturebias.domain.runs import StageProgress
from culturebias.ports.described import Described
from culturebias.ports.progress import ProgressReporter, ProgressTask
from culturebias.ports.results import ResultStore

Req = TypeVar("Req", bound=LoglikelihoodRequest | PseudoLoglikelihoodRequest | GenerationRequest)
Res = TypeVar("Res")

DEFAULT_COMMIT_SECONDS = 2.0
# Results of a stage waiting to be committed, as a share of the stage's results: at most this many wait.
COMMIT_SHARE = 0.02
PLAN_SUFFIX = ".plan"


def request_key(model_key: str, request: LoglikelihoodRequest | PseudoLoglikelihoodRequest | GenerationRequest) -> str:
    """A sampled reply's key holds its seed and sampling values; a greedy one's does not (its seed is 0)."""
    payload = asdict(request)
    if isinstance(request, GenerationRequest):
        payload["params"] = request.params.key_fields()
    return fingerprint([model_key, type(request).__name__, payload], length=32)


class RunProgress:
    """How far a run got, per stage: distinct requests asked for so far, and how many of them are stored.

    One per run, shared by every recorded port of the run (the judge's replies and
    the generator's share the ``generation`` stage).
    """

    def __init__(self) -> None:
        self._asked: dict[str, set[str]] = {}
        self._done: dict[str, set[str]] = {}

    def ask(self, stage: str, keys: Sequence[str], stored: Mapping[str, object]) -> None:
        asked = self._asked.setdefault(stage, set())
        asked.update(keys)
        self._done.setdefault(stage, set()).update(k for k in keys if k in stored)

    def after(self, stage: str, keys: Sequence[str]) -> StageProgress:
        """The stage's progress once ``keys`` are stored too."""
        done = self._done.get(stage, set())
        extra = sum(1 for k in keys if k not in done)
        return StageProgress(done=len(done) + extra, total=len(self._asked.get(stage, ())))

    def stored(self, stage: str, keys: Sequence[str]) -> None:
        self._done.setdefault(stage, set()).update(keys)

    def total(self, stage: str) -> int:
        return len(self._asked.get(stage, ()))


class _Chunk:
    """The sink a port receives for one chunk: collects results and commits them by time and by share.

    The port's own ``advance`` calls count what it computed; the bar moves by what is committed.
    """

    def __init__(self, owner: "_Recorded", keys: list[str], results: dict[str, Any], task: ProgressTask):  # Any: results of the port's own type (a BatchSink's are untyped)
        self._owner = owner
        self._keys = keys
        self._results = results  # shared with the call: stored and computed results by key
        self._task = task
        self._pending: dict[str, Any] = {}  # Any: results of the port's own type
        self._last_commit = owner._clock()

    # -- BatchSink ------------------------------------------------------------
    def advance(self, n: int = 1) -> None:
        """Computed, not yet stored: the bar waits for the commit."""

    def close(self) -> None:
        pass

    def known(self, index: int) -> Any | None:  # Any: BatchSink's (port) result type
        return self._results.get(self._keys[index])

    def deliver(self, results: Mapping[int, Any]) -> None:  # Any: BatchSink's (port) result type
        for index, result in results.items():
            self.add(self._keys[index], result)
        owner = self._owner
        waiting = max(1, int(COMMIT_SHARE * owner._run_progress.total(owner.stage)))
        if len(self._pending) >= waiting or owner._clock() - self._last_commit >= owner._commit_seconds:
            self.commit()

    # -- the call's side ------------------------------------------------------
    def add(self, key: str, result: Any) -> None:  # Any: a result of the port's own type
        if key not in self._results:
            self._results[key] = result
            self._pending[key] = result

    def commit(self) -> None:
        if self._pending:
            self._owner._save(self._pending)
            self._task.advance(len(self._pending))  # the bar shows what a kill now keeps
            self._pending = {}
        self._last_commit = self._owner._clock()


class _Recorded(Generic[Req, Res]):
    stage: str
    description: str

    def __init__(
        self,
        port: Any,  # Any: the wrapped scorer, pseudo-scorer or generator port
        store: ResultStore,
        run_id: str,
        progress: ProgressReporter,
        chunk_size: int,
        *,
        commit_seconds: float = DEFAULT_COMMIT_SECONDS,
        run_progress: RunProgress | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._port = port
        self._store = store
        self._run_id = run_id
        self._progress = progress
        self._chunk_size = max(1, chunk_size)
        self._commit_seconds = max(0.0, commit_seconds)
        self._run_progress = run_progress if run_progress is not None else RunProgress()
        self._clock = clock

    @property
    def port(self) -> Any:  # Any: the wrapped port
        return self._port

    @property
    def identity(self):
        return self._port.identity

    def _compute(self, requests: Sequence[Req], task: _Chunk) -> list[Res]:
        raise NotImplementedError

    def _payload(self, result: Res) -> dict[str, Any]:  # Any: a stored JSON payload
        raise NotImplementedError

    def _result(self, payload: dict[str, Any]) -> Res:  # Any: a stored JSON payload
        raise NotImplementedError

    def _save(self, computed: Mapping[str, Res]) -> None:
        keys = list(computed)
        progress = self._run_progress.after(self.stage, keys)
        self._store.save_results(
            self._run_id, self.stage, {key: self._payload(result) for key, result in computed.items()}, progress=progress
        )
        self._run_progress.stored(self.stage, keys)

    def _run(self, requests: Sequence[Req], description: str | None) -> list[Res]:
        model_key = self._port.identity.cache_key()
        keys = [request_key(model_key, r) for r in requests]
        first: dict[str, Req] = {}
        for key, request in zip(keys, requests):
            first.setdefault(key, request)
        stored = self._store.load_results(self._run_id, self.stage)
        results: dict[str, Res] = {k: self._result(stored[k]) for k in first if k in stored}
        self._run_progress.ask(self.stage, list(first), stored)
        todo = [k for k in first if k not in stored]
        if todo and stored:
            self._ready()
            self._check_provenance(stored)
        task = self._progress.task(description or self.description, total=len(todo))
        try:
            if todo:
                for planned in self._unfinished_plans(first, stored):
                    self._chunk(planned, first, results, task)
                    done = set(planned)
                    todo = [k for k in todo if k not in done]
            for start in range(0, len(todo), self._chunk_size):
                chunk = todo[start : start + self._chunk_size]
                self._store.save_results(self._run_id, self.stage + PLAN_SUFFIX, {fingerprint(chunk, length=32): {"keys": chunk}})
                self._chunk(chunk, first, results, task)
        finally:
            task.close()
        return [results[k] for k in keys]

    def _ready(self) -> None:
        """Settle what the port's provenance depends on before it is compared (the scorer's probe)."""

    def _check_provenance(self, stored: Mapping[str, Mapping[str, Any]]) -> None:  # Any: stored JSON payloads
        """Stored scores and new ones must come from the same numeric settings (a batch size chosen
        at load time, the device ``auto`` picked): a resumed run never mixes the two."""
        current = self._port.provenance if isinstance(self._port, Described) else None
        earlier = next(iter(stored.values())).get("provenance")
        if current is None or not isinstance(earlier, dict):
            return
        now = current.model_dump()
        differ = [f"{k}: {earlier.get(k)!r} -> {now.get(k)!r}" for k in sorted(set(earlier) | set(now)) if earlier.get(k) != now.get(k)]
        if differ:
            raise ResumeMismatchError(
                f"--resume: run {self._run_id} has {self.stage} results computed with other numeric settings "
                f"({'; '.join(differ)}); resume where they are the same, or run without --resume to start afresh"
            )

    def _unfinished_plans(self, first: Mapping[str, Req], stored: Mapping[str, Any]) -> list[list[str]]:  # Any: stored JSON payloads
        """Chunks of this call that an interrupted attempt planned and did not finish, in request order."""
        order = {key: i for i, key in enumerate(first)}
        plans = [
            plan["keys"]
            for plan in self._store.load_results(self._run_id, self.stage + PLAN_SUFFIX).values()
            if plan.get("keys") and all(k in order for k in plan["keys"]) and any(k not in stored for k in plan["keys"])
        ]
        return sorted(plans, key=lambda keys: order[keys[0]])

    def _chunk(self, keys: list[str], first: Mapping[str, Req], results: dict[str, Res], task: ProgressTask) -> None:
        sink = _Chunk(self, keys, results, task)
        try:
            computed = self._compute([first[k] for k in keys], sink)
        except BaseException:
            try:
                sink.commit()  # keep what was delivered before the interruption or error
            except Exception:  # the store failed too: the original error is the one to report
                pass
            raise
        for key, result in zip(keys, computed):
            sink.add(key, result)
        sink.commit()


class RecordedScorer(_Recorded[LoglikelihoodRequest, LoglikelihoodResult]):
    stage = "loglikelihood"
    description = "scoring"

    def check_loglikelihood(self) -> None:
        self._port.check_loglikelihood()

    def _ready(self) -> None:
        # A served model's boundary source is part of its provenance and is settled by the
        # probe (done once per scorer: preflight usually did it already).
        self._port.check_loglikelihood()

    @property
    def provenance(self):
        return self._port.provenance

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], description: str | None = None) -> list[LoglikelihoodResult]:
        return self._run(requests, description)

    def _compute(self, requests, task):
        return self._port.loglikelihood(requests, progress=task)

    def _payload(self, result: LoglikelihoodResult) -> dict[str, Any]:  # Any: a stored JSON payload
        # An invalid score is stored as such (logprob NaN), so a resumed run counts it as the first
        # attempt did; a valid one keeps the former shape.
        payload = asdict(result)
        if not result.invalid:
            del payload["invalid"]
        return {**payload, "provenance": self._port.provenance.model_dump()}

    def _result(self, payload: dict[str, Any]) -> LoglikelihoodResult:  # Any: a stored JSON payload
        if payload.get("invalid", False):
            return LoglikelihoodResult(float("nan"), payload["n_tokens"], False, invalid=True)
        return LoglikelihoodResult(payload["logprob"], payload["n_tokens"], payload["is_greedy"])


class RecordedPseudoScorer(_Recorded[PseudoLoglikelihoodRequest, PseudoLoglikelihoodResult]):
    stage = "pseudo_loglikelihood"
    description = "pseudo-log-likelihood"

    @property
    def provenance(self):
        return self._port.provenance

    def pseudo_loglikelihood(self, requests, description: str | None = None) -> list[PseudoLoglikelihoodResult]:
        return self._run(requests, description)

    def _compute(self, requests, task):
        return self._port.pseudo_loglikelihood(requests, progress=task)

    def _payload(self, result: PseudoLoglikelihoodResult) -> dict[str, Any]:  # Any: a stored JSON payload
        return {**asdict(result), "provenance": self._port.provenance.model_dump()}

    def _result(self, payload: dict[str, Any]) -> PseudoLoglikelihoodResult:  # Any: a stored JSON payload
        return PseudoLoglikelihoodResult(payload["logprob"], payload["n_tokens"])


class RecordedGenerator(_Recorded[GenerationRequest, GenerationResult]):
    stage = "generation"
    description = "generating"

    def generate(self, requests: Sequence[GenerationRequest], description: str | None = None) -> list[GenerationResult]:
        return self._run(requests, description)

    def _compute(self, requests, task):
        return self._port.generate(requests, progress=task)

    def _payload(self, result: GenerationResult) -> dict[str, Any]:  # Any: a stored JSON payload
        # An invalid reply is stored as such, so a resumed run counts it as the first attempt did.
        marker = {"invalid": True} if result.invalid else {}
        return {"text": result.text, **marker, "model": self._port.identity.model_dump()}

    def _result(self, payload: dict[str, Any]) -> GenerationResult:  # Any: a stored JSON payload
        return GenerationResult(payload["text"], invalid=bool(payload.get("invalid", False)))


RecordedFactory = Callable[[], _Recorded]
