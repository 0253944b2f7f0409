"""What a protocol service receives: lazily resolved ports and the run's identity."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, TypeVar

from culturebias.application.audit import StoredItemLog
from culturebias.application.recorded_ports import (
    DEFAULT_COMMIT_SECONDS,
    RecordedGenerator,
    RecordedPseudoScorer,
    RecordedScorer,
    RunProgress,
)
from culturebias.domain.requests import GenerationParams
from culturebias.domain.sampling import Decoding, SamplingSettings
from culturebias.logs import get_logger
from culturebias.ports.audit import ItemLog
from culturebias.ports.generation import Generator
from culturebias.ports.judging import Judge
from culturebias.ports.lexicon import Lexicon
from culturebias.ports.progress import ProgressReporter
from culturebias.ports.results import ResultStore
from culturebias.ports.scoring import LoglikelihoodScorer, PseudoLoglikelihoodScorer
from culturebias.ports.similarity import TextEmbedder
from culturebias.ports.templating import ChatTemplater

T = TypeVar("T")


class Lazy(Generic[T]):
    """A port built on first use: heavy backends load only if the protocol needs them."""

    def __init__(self, factory: Callable[[], T]):
        self._factory = factory
        self._value: list[T] = []  # empty until built (a port may legitimately be None)

    @property
    def built(self) -> bool:
        return bool(self._value)

    def get(self) -> T:
        if not self._value:
            self._value.append(self._factory())
        return self._value[0]


@dataclass
class ModelPorts:
    """The model-facing ports of one configured backend (each built on demand)."""

    scorer: Lazy[LoglikelihoodScorer]
    templater: Lazy[ChatTemplater]
    generator: Lazy[Generator]
    pseudo_scorer: Lazy[PseudoLoglikelihoodScorer]
    judge: Lazy[Judge]


@dataclass
class RunContext:
    run_id: str
    ports: ModelPorts
    store: ResultStore
    progress: ProgressReporter
    seed: int = 0
    # Resamples of the headline metrics' bootstrap intervals (run.bootstrap_resamples); 0: no intervals.
    bootstrap_resamples: int = 2000
    chunk_size: int = 2048
    commit_seconds: float = DEFAULT_COMMIT_SECONDS
    # How far the run got per stage, shared by every recorded port of the run (the judge's included).
    run_progress: RunProgress = field(default_factory=RunProgress)
    log: Any = field(default_factory=lambda: get_logger("culturebias"))  # Any: structlog's loggers are untyped
    # LIBRA's knowledge boundary opens these by spec: ``lexicons(spec, min_frequency)``
    # and ``embedders(spec)``; None where the caller wires none.
    lexicons: Callable[..., Lexicon] | None = None
    embedders: Callable[[str], TextEmbedder] | None = None
    # True when judge.backend or judge.path names a judge of its own (LIBRA then compares meanings by the judge).
    judge_configured: bool = False
    # How the evaluated model decodes (model.sampling), and which of run.repeats this is (0-based).
    sampling: SamplingSettings = field(default_factory=SamplingSettings)
    repeat: int = 0
    # The audit logs built so far, by (run id, repeat); shared by the copies repeats make of the context.
    _item_logs: dict[tuple[str, int], StoredItemLog] = field(default_factory=dict, repr=False)

    def generation_params(self, max_new_tokens: int, stop: tuple[str, ...] = (), decoding: Decoding = "run") -> GenerationParams:
        """A generation request's parameters: model.sampling, sampled with seed + repeat."""
        seed = self.sampling.seed_for(self.seed, self.repeat)
        return self.sampling.params(max_new_tokens, seed=seed, stop=stop, decoding=decoding)

    # Ports wrapped so that every result is stored as it is computed and a resumed
    # run never recomputes what is stored.
    def _recording(self) -> dict[str, Any]:  # Any: keyword arguments of the recorded ports
        return {"commit_seconds": self.commit_seconds, "run_progress": self.run_progress}

    def scorer(self) -> RecordedScorer:
        return RecordedScorer(self.ports.scorer.get(), self.store, self.run_id, self.progress, self.chunk_size, **self._recording())

    def pseudo_scorer(self) -> RecordedPseudoScorer:
        return RecordedPseudoScorer(
            self.ports.pseudo_scorer.get(), self.store, self.run_id, self.progress, self.chunk_size, **self._recording()
        )

    def generator(self) -> RecordedGenerator:
        return RecordedGenerator(self.ports.generator.get(), self.store, self.run_id, self.progress, self.chunk_size, **self._recording())

    def templater(self) -> ChatTemplater:
        return self.ports.templater.get()

    def judge(self) -> Judge:
        return self.ports.judge.get()

    def items(self) -> ItemLog:
        """The run's per-item audit trail (stage ``items`` of the store), one per repeat: it reads what
        is stored once, not on every call of a service that records its items prompt by prompt."""
        key = (self.run_id, self.repeat)
        if key not in self._item_logs:
            self._item_logs[key] = StoredItemLog(self.store, self.run_id, repeat=self.repeat)
        return self._item_logs[key]
