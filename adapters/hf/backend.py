"""The ``hf`` model backend: transformers + torch, one model loaded lazily and shared by its ports."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from culturebias.adapters.hf.options import HFOptions
from culturebias.adapters.hf.local_backend import LocalBackend
from culturebias.domain.model_options import ModelOptions, own_options

if TYPE_CHECKING:
    from culturebias.adapters.hf.generator import HFGenerator
    from culturebias.adapters.hf.loading import LoadedModel
    from culturebias.adapters.hf.masked import HFMaskedScorer
    from culturebias.adapters.hf.scorer import HFScorer


class HFBackend(LocalBackend):
    name = "hf"

    def __init__(self, options: HFOptions, cache_dir: Path):
        super().__init__(options, cache_dir)
        self._loaded: LoadedModel | None = None
        self._tokenizer_alone: Any = None  # Any: a transformers tokenizer

    def loaded(self) -> LoadedModel:
        """The causal model and tokenizer, loaded on first use."""
        if self._loaded is None:
            from culturebias.adapters.hf.loading import load_causal_lm

            self._loaded = load_causal_lm(self.options, self.cache_dir)
            if self._loaded.options is not None:  # e.g. model.batch_size=auto, now a number
                self._options = self._loaded.options
        return self._loaded

    def _causal_tokenizer(self) -> Any:  # Any: a transformers tokenizer
        return self.loaded().tokenizer

    def tokenizer(self) -> Any:  # Any: a transformers tokenizer
        """The model's tokenizer once loaded; before, the tokenizer alone, as the load makes it (a plan
        counts tokens and renders chats without loading the weights)."""
        if self._loaded is not None or self.options.kind != "causal":
            return self._causal_tokenizer()
        if self._tokenizer_alone is None:
            from culturebias.adapters.hf.chat_templates import install as install_chat_template
            from culturebias.adapters.hf.loading import from_pretrained_options, load_tokenizer, resolve_source

            source = resolve_source(self.options, self.cache_dir)
            tokenizer = load_tokenizer(self.options, source, from_pretrained_options(self.options, source))
            install_chat_template(tokenizer, self.options.chat_template)
            self._tokenizer_alone = tokenizer
        return self._tokenizer_alone

    def _build_scorer(self) -> HFScorer:
        from culturebias.adapters.hf.scorer import HFScorer

        return HFScorer(self.loaded(), self.options)

    def _build_generator(self) -> HFGenerator:
        from culturebias.adapters.hf.generator import HFGenerator

        return HFGenerator(self.loaded(), self.options, self.templater())

    def _build_pseudo_scorer(self) -> HFMaskedScorer:
        from culturebias.adapters.hf.masked import HFMaskedScorer

        return HFMaskedScorer(self.options, self.cache_dir)


def create_backend(options: ModelOptions, cache_dir: Path) -> HFBackend:
    return HFBackend(own_options(options, HFOptions), cache_dir)
