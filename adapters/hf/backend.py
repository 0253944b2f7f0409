"""The ``hf`` model backend: transformers + torch, one model loaded lazily and shared by its ports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from culturebias.domain.errors import CapabilityError


class HFBackend:
    def __init__(self, settings: Any, cache_dir: Path):
        self._settings = settings
        self._cache_dir = Path(cache_dir)
        self._loaded = None
        self._scorer = None
        self._generator = None
        self._pseudo = None

    @property
    def settings(self) -> Any:
        return self._settings

    def loaded(self):
        """The model and tokenizer, loaded on first use."""
        if self._loaded is None:
            from culturebias.adapters.hf.loading import load_causal_lm

            self._loaded = load_causal_lm(self._settings, self._cache_dir)
        return self._loaded

    def _require_causal(self, capability: str) -> None:
        if self._settings.kind != "causal":
            raise CapabilityError("hf", capability, f"model.kind={self._settings.kind!r} is not a causal LM")

    def scorer(self):
        self._require_causal("continuation log-likelihood")
        if self._scorer is None:
            from culturebias.adapters.hf.scorer import HFScorer

            self._scorer = HFScorer(self.loaded(), self._settings)
        return self._scorer

    def templater(self):
        from culturebias.adapters.hf.templater import HFTemplater

        if self._settings.kind == "masked":
            return HFTemplater(None, enabled=False)  # masked LMs have no chat template
        return HFTemplater(self.loaded().tokenizer, enabled=self._settings.chat_template != "none")

    def generator(self):
        self._require_causal("text generation")
        if self._generator is None:
            from culturebias.adapters.hf.generator import HFGenerator

            self._generator = HFGenerator(self.loaded(), self._settings, self.templater())
        return self._generator

    def pseudo_scorer(self):
        if self._settings.kind != "masked":
            raise CapabilityError("hf", "pseudo-log-likelihood", "set model.kind=masked and point model.path at a masked LM")
        if self._pseudo is None:
            from culturebias.adapters.hf.masked import HFMaskedScorer

            self._pseudo = HFMaskedScorer(self._settings, self._cache_dir)
        return self._pseudo


def create_backend(settings: Any, cache_dir: Path) -> HFBackend:
    return HFBackend(settings, cache_dir)
