"""Scripted scorer, templater and generator: test doubles of the model ports, no model behind them.

They pass the same contract suites as ``hf`` and let the Gherkin features specify metric
behaviour with given numbers.

``ScriptedScorer(rule)`` calls ``rule(context, continuation) -> float`` for the
log-probability of each request; token counts are character counts (each
character one "token"), so PPL = exp(-logprob / len(continuation)).
"""

from __future__ import annotations

from typing import Callable, Sequence

from culturebias.adapters.hf.identified import Identified
from culturebias.domain.errors import CapabilityError
from culturebias.domain.identity import ModelIdentity, ScoreProvenance
from culturebias.domain.requests import (
    ChatMessage,
    GenerationRequest,
    GenerationResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    PseudoLoglikelihoodRequest,
    PseudoLoglikelihoodResult,
)

LogprobRule = Callable[[str, str], float]
ReplyRule = Callable[[GenerationRequest, str], str]


class ScriptedTemplater:
    """A ChatML-like template with an explicit BOS marker."""

    BOS = "<s>"

    @property
    def has_chat_template(self) -> bool:
        return True

    def check_render(self) -> None:
        if not self.has_chat_template:
            raise CapabilityError("scripted", "a chat template", "this scripted model has none")

    def render(self, messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
        text = self.BOS + "".join(f"<|{m.role}|>{m.content}<|end|>" for m in messages)
        return text + ("<|assistant|>" if add_generation_prompt else "")


class _Scripted(Identified):
    """A scripted backend: its identity (set by each) and its provenance (float64, unbatched)."""

    _provenance = ScoreProvenance(backend="scripted", dtype="float64", batch_size=0, padding_side="none")


class ScriptedScorer(_Scripted):
    def __init__(self, rule: LogprobRule, name: str = "scripted"):
        self._rule = rule
        self._identity = ModelIdentity(backend="scripted", model=name, kind="scripted")
        self.calls: list[int] = []  # batch sizes seen, for tests

    def check_loglikelihood(self) -> None:
        return None

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], progress=None) -> list[LoglikelihoodResult]:
        self.calls.append(len(requests))
        results = []
        for request in requests:
            logprob = float(self._rule(request.context, request.continuation))
            results.append(LoglikelihoodResult(logprob, max(1, len(request.continuation)), False))
        if progress is not None:
            progress.advance(len(requests))
        return results


class ScriptedPseudoScorer(_Scripted):
    def __init__(self, rule: Callable[[str, int, int], float], name: str = "scripted-masked"):
        self._rule = rule
        self._identity = ModelIdentity(backend="scripted", model=name, kind="scripted")

    def pseudo_loglikelihood(self, requests: Sequence[PseudoLoglikelihoodRequest], progress=None) -> list[PseudoLoglikelihoodResult]:
        out = [
            PseudoLoglikelihoodResult(float(self._rule(r.text, r.span_start, r.span_end)), max(1, r.span_end - r.span_start))
            for r in requests
        ]
        if progress is not None:
            progress.advance(len(requests))
        return out


class ScriptedGenerator:
    """Replies with ``rule(request, rendered_prompt)``."""

    def __init__(self, rule: ReplyRule, name: str = "scripted-generator"):
        self._rule = rule
        self._templater = ScriptedTemplater()
        self._identity = ModelIdentity(backend="scripted", model=name, kind="scripted")

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    def generate(self, requests: Sequence[GenerationRequest], progress=None) -> list[GenerationResult]:
        out = []
        for request in requests:
            prompt = request.prompt if request.prompt is not None else self._templater.render(request.messages or ())
            out.append(GenerationResult(_cut_at_stop(self._rule(request, prompt), request.params.stop)))
        if progress is not None:
            progress.advance(len(requests))
        return out


def _cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """Like a real backend: the reply ends before the first stop string."""
    cut = min((text.find(s) for s in stop if s and s in text), default=-1)
    return text[:cut] if cut >= 0 else text
