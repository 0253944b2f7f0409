"""``model.backend=onnx``: the model exported to ONNX once (cached) and run with ONNX Runtime.

Every port reuses the hf adapter's code above the forward pass (tokenisation,
boundary rule, BOS, batching, shared-prefix reuse, masking, templating), with an
ONNX Runtime session standing in for the torch model (see ``runtime.py``). The
same ``model.*`` options apply as for ``hf``; ``model.device=auto`` picks the
CUDA execution provider when ``onnxruntime-gpu`` and a GPU are there, else the
CPU (logged). ``model.dtype``: float32, or float16 on CUDA only.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from culturebias.adapters.hf.scorer import HFScorer
from culturebias.adapters.hf.local_backend import LocalBackend, ModelKind, score_provenance
from culturebias.adapters.hf.model_options import LocalModelOptions
from culturebias.domain.model_options import ModelOptions, own_options
from culturebias.adapters.onnx.model import OnnxModel, settled_options
from culturebias.adapters.onnx.options import OnnxOptions
from culturebias.domain.errors import ConfigError
from culturebias.domain.identity import ModelIdentity
from culturebias.logs import get_logger

if TYPE_CHECKING:
    from culturebias.adapters.hf.generator import HFGenerator
    from culturebias.adapters.hf.loading import LoadedModel
    from culturebias.adapters.onnx.masked import OnnxMaskedScorer

log = get_logger("culturebias.onnx")

DTYPES = ("float32", "float16")


def _torch_dtype(name: str):
    import torch

    return getattr(torch, name)


def load_onnx_model(options: LocalModelOptions, cache_dir: Path, kind: ModelKind) -> OnnxModel:
    import onnxruntime as ort
    from transformers import AutoConfig

    from culturebias.adapters.hf.loading import (
        from_pretrained_options,
        load_tokenizer,
        load_weights,
        resolve_source,
        source_weights,
        tokenizer_fingerprint,
    )
    from culturebias.adapters.onnx.export import OPSET, ensure_exported, export_folder, export_key
    from culturebias.adapters.onnx.providers import choose_providers, open_session
    from culturebias.adapters.onnx.runtime import OrtCausalLM, OrtMaskedLM, SessionRunner

    if options.dtype not in DTYPES:
        raise ConfigError(f"model.backend=onnx supports model.dtype {' or '.join(DTYPES)}, not {options.dtype!r}")
    if options.dtype == "float16" and not choose_providers(options.device, ort.get_available_providers()).wants_cuda:
        raise ConfigError("model.dtype=float16 with model.backend=onnx needs the CUDA execution provider; use float32 on the CPU")
    source = resolve_source(options, Path(cache_dir))
    common = from_pretrained_options(options, source)
    tokenizer = load_tokenizer(options, source, common)
    config = load_weights(AutoConfig, options, source, **common)
    fingerprint = tokenizer_fingerprint(tokenizer)
    folder = export_folder(Path(cache_dir), source, export_key(source, fingerprint, kind, options.dtype))
    if kind == "causal":
        from culturebias.adapters.hf.chat_templates import install as install_chat_template

        # After the export key (a template is no part of the graph), before the identity's fingerprint.
        if install_chat_template(tokenizer, options.chat_template) is not None:
            fingerprint = tokenizer_fingerprint(tokenizer)

    def load_torch_model():
        from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

        auto = AutoModelForCausalLM if kind == "causal" else AutoModelForMaskedLM
        log.info("loading torch model for export", model=source.name, location=source.location, dtype=options.dtype)
        # Eager attention traces to plain MatMul/Softmax; sdpa's export adds NaN guards over every score.
        model = auto.from_pretrained(source.location, dtype=_torch_dtype(options.dtype), attn_implementation="eager", **common)
        return model.eval()

    exported = ensure_exported(folder, kind, load_torch_model)
    # With the scoring head in the graph, little torch work runs between two session runs: threads may spin.
    spin = kind == "causal" and bool(exported.meta.get("score_head"))
    session, device = open_session(str(exported.model_file), options.device, spin=spin)
    runner = SessionRunner(session, device)
    if kind == "causal":
        facade: Any = OrtCausalLM(runner, config, exported.meta, _generation_config(source.location, config, common))  # Any: OrtCausalLM's bases are made at run time
    else:
        facade = OrtMaskedLM(runner, config, exported.meta)
    identity = ModelIdentity(
        backend="onnx",
        model=source.name,
        revision=source.revision,
        tokenizer=fingerprint,
        dtype=options.dtype,
        kind=kind,
        parameters=exported.meta.get("parameters"),
        description=f"{source.description}; ONNX opset {exported.meta.get('opset', OPSET)} on onnxruntime ({device})",
        weights=source_weights(source, Path(cache_dir)),
    )
    return OnnxModel(facade, tokenizer, device, source, identity)


def _generation_config(location: str, config: Any, common: dict[str, Any]):  # Any: a transformers config and from_pretrained arguments
    from transformers import GenerationConfig

    try:
        return GenerationConfig.from_pretrained(location, **common)
    except OSError:
        return GenerationConfig.from_model_config(config)


def hf_loaded(loaded: OnnxModel, options: LocalModelOptions) -> LoadedModel:
    """The hf adapter's ``LoadedModel`` with the ONNX session facade as its model (torch tensors on the CPU)."""
    from culturebias.adapters.hf.loading import LoadedModel

    return LoadedModel(loaded.model, loaded.tokenizer, "cpu", options.dtype, loaded.source, loaded.identity)


class OnnxScorer(HFScorer):
    """The hf scorer's algorithm over an ONNX Runtime session; provenance names onnx and its device."""

    def __init__(self, loaded: OnnxModel, options: LocalModelOptions):
        provenance = score_provenance("onnx", options, device=loaded.device)
        super().__init__(hf_loaded(loaded, options), options, provenance=provenance)


class OnnxBackend(LocalBackend):
    name = "onnx"

    def __init__(self, options: OnnxOptions, cache_dir: Path):
        super().__init__(options, cache_dir)
        self._causal: OnnxModel | None = None

    def causal(self) -> OnnxModel:
        if self._causal is None:
            self._causal = load_onnx_model(self.options, self.cache_dir, "causal")
            self._options = settled_options(self._causal, self.options)
        return self._causal

    def _causal_tokenizer(self) -> Any:  # Any: a transformers tokenizer
        return self.causal().tokenizer

    def _build_scorer(self) -> OnnxScorer:
        return OnnxScorer(self.causal(), self.options)

    def _build_generator(self) -> HFGenerator:
        from culturebias.adapters.hf.generator import HFGenerator

        # The hf generator's code around model.generate; the facade's generate decodes with ONNX Runtime.
        return HFGenerator(hf_loaded(self.causal(), self.options), self.options, self.templater())

    def _build_pseudo_scorer(self) -> OnnxMaskedScorer:
        from culturebias.adapters.onnx.masked import OnnxMaskedScorer

        return OnnxMaskedScorer(load_onnx_model(self.options, self.cache_dir, "masked"), self.options)


def create_backend(options: ModelOptions, cache_dir: Path) -> OnnxBackend:
    return OnnxBackend(own_options(options, OnnxOptions), cache_dir)
