"""Ports wrapped with the result store: dedupe, resume, and transactional chunks.

Every request is keyed by the model's identity and the request's full text, so
a key changes with the model, its revision, its tokenizer and the rendered chat
template. Results of a chunk are saved in one transaction right after the chunk
is computed: a killed run loses at most the chunk in flight, and ``--resume``
recomputes nothing that is stored.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Callable, Generic, Sequence, TypeVar

from culturebias.domain.fingerprint import fingerprint
from culturebias.domain.requests import (
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    PseudoLoglikelihoodRequest,
    PseudoLoglikelihoodResult,
)
from culturebias.ports.progress import ProgressReporter, ProgressTask
from culturebias.ports.results import ResultStore

Req = TypeVar("Req")
Res = TypeVar("Res")


def request_key(model_key: str, request: Any) -> str:
    return fingerprint([model_key, type(request).__name__, asdict(request)], length=32)


class _Recorded(Generic[Req, Res]):
    stage: str
    description: str

    def __init__(self, port: Any, store: ResultStore, run_id: str, progress: ProgressReporter, chunk_size: int):
        self._port = port
        self._store = store
        self._run_id = run_id
        self._progress = progress
        self._chunk_size = max(1, chunk_size)

    @property
    def port(self) -> Any:
        return self._port

    @property
    def identity(self):
        return self._port.identity

    def _compute(self, requests: Sequence[Req], task: ProgressTask) -> list[Res]:
        raise NotImplementedError

    def _payload(self, result: Res) -> dict[str, Any]:
        raise NotImplementedError

    def _result(self, payload: dict[str, Any]) -> Res:
        raise NotImplementedError

    def _run(self, requests: Sequence[Req], description: str | None) -> list[Res]:
        model_key = self._port.identity.cache_key()
        keys = [request_key(model_key, r) for r in requests]
        stored = self._store.load_results(self._run_id, self.stage)
        unique: dict[str, Req] = {}
        for key, request in zip(keys, requests):
            if key not in stored and key not in unique:
                unique[key] = request
        results: dict[str, Res] = {k: self._result(v) for k, v in stored.items()}
        todo = list(unique.items())
        task = self._progress.task(description or self.description, total=len(todo))
        try:
            for start in range(0, len(todo), self._chunk_size):
                chunk = todo[start : start + self._chunk_size]
                computed = self._compute([r for _, r in chunk], task)
                payloads = {key: self._payload(res) for (key, _), res in zip(chunk, computed)}
                self._store.save_results(self._run_id, self.stage, payloads)
                for (key, _), res in zip(chunk, computed):
                    results[key] = res
        finally:
            task.close()
        return [results[k] for k in keys]


class RecordedScorer(_Recorded[LoglikelihoodRequest, LoglikelihoodResult]):
    stage = "loglikelihood"
    description = "scoring"

    def check_loglikelihood(self) -> None:
        self._port.check_loglikelihood()

    @property
    def provenance(self):
        return self._port.provenance

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], description: str | None = None) -> list[LoglikelihoodResult]:
        return self._run(requests, description)

    def _compute(self, requests, task):
        return self._port.loglikelihood(requests, progress=task)

    def _payload(self, result: LoglikelihoodResult) -> dict[str, Any]:
        return {**asdict(result), "provenance": self._port.provenance.model_dump()}

    def _result(self, payload: dict[str, Any]) -> LoglikelihoodResult:
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

    def _payload(self, result: PseudoLoglikelihoodResult) -> dict[str, Any]:
        return {**asdict(result), "provenance": self._port.provenance.model_dump()}

    def _result(self, payload: dict[str, Any]) -> PseudoLoglikelihoodResult:
        return PseudoLoglikelihoodResult(payload["logprob"], payload["n_tokens"])


class RecordedGenerator(_Recorded[GenerationRequest, GenerationResult]):
    stage = "generation"
    description = "generating"

    def generate(self, requests: Sequence[GenerationRequest], description: str | None = None) -> list[GenerationResult]:
        return self._run(requests, description)

    def _compute(self, requests, task):
        return self._port.generate(requests, progress=task)

    def _payload(self, result: GenerationResult) -> dict[str, Any]:
        return {"text": result.text, "model": self._port.identity.model_dump()}

    def _result(self, payload: dict[str, Any]) -> GenerationResult:
        return GenerationResult(payload["text"])


RecordedFactory = Callable[[], _Recorded]
