"""What the local backends (``hf``, ``onnx``) share: ports built once on first use, one capability check, score provenance.

A subclass loads its model its own way and builds the port objects
(``_build_scorer``, ``_build_generator``, ``_build_pseudo_scorer``); this base
decides which ports ``model.kind`` allows and keeps each port once built.
Nothing heavy is imported here: a backend is constructed without loading a model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, ClassVar, Literal, TypeVar

from culturebias.adapters.hf.model_options import LocalModelOptions
from culturebias.domain.errors import CapabilityError
from culturebias.domain.identity import ScoreProvenance
from culturebias.ports.generation import Generator
from culturebias.ports.scoring import LoglikelihoodScorer, PseudoLoglikelihoodScorer
from culturebias.ports.templating import ChatTemplater

PortT = TypeVar("PortT")

ModelKind = Literal["causal", "masked"]

_NEEDS = {
    "causal": "{kind!r} is not a causal LM",
    "masked": "{kind!r}: set model.kind=masked and point model.path at a masked LM",
}


def score_provenance(
    backend: str, options: LocalModelOptions, *, device: str, dtype: str | None = None, boundary_rule: str | None = None
) -> ScoreProvenance:
    """The provenance stored with every score of a local scorer (right padding; ``options``' batch size and rule)."""
    return ScoreProvenance(
        backend=backend,
        dtype=dtype if dtype is not None else options.dtype,
        device=str(device),
        batch_size=options.settled_batch_size(),
        padding_side="right",
        boundary_rule=boundary_rule if boundary_rule is not None else options.boundary_rule,
    )


class LocalBackend:
    """The ports of one locally loaded model, each built lazily and kept."""

    name: ClassVar[str]  # the registered backend name, used in CapabilityError

    def __init__(self, options: LocalModelOptions, cache_dir: Path):
        self._options = options
        self._cache_dir = Path(cache_dir)
        self._ports: dict[str, Any] = {}  # Any: each port by name

    @property
    def options(self) -> LocalModelOptions:
        return self._options

    @property
    def cache_dir(self) -> Path:
        return self._cache_dir

    def _require(self, kind: ModelKind, capability: str) -> None:
        """CapabilityError unless ``model.kind`` is ``kind``."""
        if self._options.kind != kind:
            raise CapabilityError(self.name, capability, "model.kind=" + _NEEDS[kind].format(kind=self._options.kind))

    def _port(self, port: str, build: Callable[[], PortT]) -> PortT:
        if port not in self._ports:
            self._ports[port] = build()
        return self._ports[port]

    # ------------------------------------------------------------------ ports

    def scorer(self) -> LoglikelihoodScorer:
        self._require("causal", "continuation log-likelihood")
        return self._port("scorer", self._build_scorer)

    def generator(self) -> Generator:
        self._require("causal", "text generation")
        return self._port("generator", self._build_generator)

    def pseudo_scorer(self) -> PseudoLoglikelihoodScorer:
        self._require("masked", "pseudo-log-likelihood")
        return self._port("pseudo_scorer", self._build_pseudo_scorer)

    def templater(self) -> ChatTemplater:
        return self._templater(self._causal_tokenizer)

    def plan_templater(self) -> ChatTemplater:
        """The templater on ``tokenizer()``: what a plan renders chats with (a backend's tokenizer may load alone)."""
        return self._templater(self.tokenizer)

    def _templater(self, tokenizer: Callable[[], Any]) -> ChatTemplater:  # Any: a transformers tokenizer
        from culturebias.adapters.hf.templater import HFTemplater

        setting = self._options.chat_template
        if self._options.kind == "masked":
            return HFTemplater(None, enabled=False, backend=self.name)  # masked LMs have no chat template
        source = "the tokenizer of model.path" if setting == "auto" else f"model.chat_template={setting}"
        return HFTemplater(tokenizer(), enabled=setting != "none", backend=self.name, source=source)

    # ------------------------------------------------------------------ for subclasses

    def tokenizer(self) -> Any:  # Any: a transformers tokenizer
        """The evaluated model's tokenizer (a plan counts the requests' tokens with it)."""
        return self._causal_tokenizer()

    def _causal_tokenizer(self) -> Any:  # Any: a transformers tokenizer
        raise NotImplementedError

    def _build_scorer(self) -> LoglikelihoodScorer:
        raise NotImplementedError

    def _build_generator(self) -> Generator:
        raise NotImplementedError

    def _build_pseudo_scorer(self) -> PseudoLoglikelihoodScorer:
        raise NotImplementedError
