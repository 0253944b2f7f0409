"""``model.backend=onnx``: the model exported to ONNX once (cached) and run with ONNX Runtime.

Every port reuses the hf adapter's code above the forward pass (tokenisation,
boundary rule, BOS, batching, shared-prefix reuse, masking, templating), with an
ONNX Runtime session standing in for the torch model (see ``runtime.py``). The
same ``model.*`` settings apply as for ``hf``; ``model.device=auto`` picks the
CUDA execution provider when ``onnxruntime-gpu`` and a GPU are there, else the
CPU (logged). ``model.dtype``: float32, or float16 on CUDA only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from culturebias.domain.errors import CapabilityError, ConfigError
from culturebias.domain.identity import ModelIdentity, ScoreProvenance

log = structlog.get_logger("culturebias.onnx")

DTYPES = ("float32", "float16")


@dataclass
class OnnxModel:
    """A loaded ONNX model: the session facade, tokenizer, where it runs, and who it is."""

    model: Any  # OrtCausalLM or OrtMaskedLM
    tokenizer: Any
    device: str  # the onnxruntime device: "cpu" or "cuda:N"
    source: Any  # culturebias.adapters.hf.loading.ModelSource
    identity: ModelIdentity


def _torch_dtype(name: str):
    import torch

    return getattr(torch, name)


def load_onnx_model(settings: Any, cache_dir: Path, kind: str) -> OnnxModel:
    import onnxruntime as ort
    from transformers import AutoConfig, AutoTokenizer

    from culturebias.adapters.hf.loading import resolve_source, tokenizer_fingerprint
    from culturebias.adapters.onnx.export import OPSET, ensure_exported, export_folder, export_key
    from culturebias.adapters.onnx.providers import choose_providers, open_session
    from culturebias.adapters.onnx.runtime import OrtCausalLM, OrtMaskedLM, SessionRunner

    if settings.dtype not in DTYPES:
        raise ConfigError(f"model.backend=onnx supports model.dtype {' or '.join(DTYPES)}, not {settings.dtype!r}")
    if settings.dtype == "float16" and not choose_providers(settings.device, ort.get_available_providers()).wants_cuda:
        raise ConfigError("model.dtype=float16 with model.backend=onnx needs the CUDA execution provider; use float32 on the CPU")
    source = resolve_source(settings, Path(cache_dir))
    common: dict[str, Any] = {"trust_remote_code": settings.trust_remote_code}
    if settings.revision and not source.is_local:
        common["revision"] = settings.revision
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.location, **common)
        config = AutoConfig.from_pretrained(source.location, **common)
    except OSError as error:
        raise ConfigError(f"cannot load model {source.location!r}: {error}") from None
    fingerprint = tokenizer_fingerprint(tokenizer)
    folder = export_folder(Path(cache_dir), source, export_key(source, fingerprint, kind, settings.dtype))

    def load_torch_model():
        from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

        auto = AutoModelForCausalLM if kind == "causal" else AutoModelForMaskedLM
        log.info("loading torch model for export", model=source.name, location=source.location, dtype=settings.dtype)
        # Eager attention traces to plain MatMul/Softmax; sdpa's export adds NaN guards over every score.
        model = auto.from_pretrained(source.location, dtype=_torch_dtype(settings.dtype), attn_implementation="eager", **common)
        return model.eval()

    exported = ensure_exported(folder, kind, load_torch_model)
    # With the scoring head in the graph, little torch work runs between two session runs: threads may spin.
    spin = kind == "causal" and bool(exported.meta.get("score_head"))
    session, device = open_session(str(exported.model_file), settings.device, spin=spin)
    runner = SessionRunner(session, device)
    if kind == "causal":
        facade: Any = OrtCausalLM(runner, config, exported.meta, _generation_config(source.location, config, common))
    else:
        facade = OrtMaskedLM(runner, config, exported.meta)
    identity = ModelIdentity(
        backend="onnx",
        model=source.name,
        revision=source.revision,
        tokenizer=fingerprint,
        dtype=settings.dtype,
        kind=kind,  # type: ignore[arg-type]
        parameters=exported.meta.get("parameters"),
        description=f"{source.description}; ONNX opset {exported.meta.get('opset', OPSET)} on onnxruntime ({device})",
    )
    return OnnxModel(facade, tokenizer, device, source, identity)


def _generation_config(location: str, config: Any, common: dict[str, Any]):
    from transformers import GenerationConfig

    try:
        return GenerationConfig.from_pretrained(location, **common)
    except OSError:
        return GenerationConfig.from_model_config(config)


def _hf_loaded(loaded: OnnxModel, settings: Any):
    """The hf adapter's ``LoadedModel`` with the ONNX session facade as its model (torch tensors on the CPU)."""
    from culturebias.adapters.hf.loading import LoadedModel

    return LoadedModel(loaded.model, loaded.tokenizer, "cpu", settings.dtype, loaded.source, loaded.identity)


class OnnxScorer:
    """The hf scorer's algorithm over an ONNX Runtime session; provenance names onnx and its device."""

    def __init__(self, loaded: OnnxModel, settings: Any):
        from culturebias.adapters.hf.scorer import HFScorer

        self._inner = HFScorer(_hf_loaded(loaded, settings), settings)
        self._identity = loaded.identity
        self._provenance = ScoreProvenance(
            backend="onnx",
            dtype=settings.dtype,
            device=loaded.device,
            batch_size=settings.batch_size,
            padding_side="right",
            boundary_rule=settings.boundary_rule,
        )

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    @property
    def provenance(self) -> ScoreProvenance:
        return self._provenance

    def check_loglikelihood(self) -> None:
        return None

    def loglikelihood(self, requests, progress=None):
        return self._inner.loglikelihood(requests, progress=progress)


class OnnxBackend:
    def __init__(self, settings: Any, cache_dir: Path):
        self._settings = settings
        self._cache_dir = Path(cache_dir)
        self._causal: OnnxModel | None = None
        self._masked: OnnxModel | None = None
        self._scorer = None
        self._generator = None
        self._pseudo = None

    @property
    def settings(self) -> Any:
        return self._settings

    def causal(self) -> OnnxModel:
        if self._causal is None:
            self._causal = load_onnx_model(self._settings, self._cache_dir, "causal")
        return self._causal

    def _require(self, kind: str, capability: str) -> None:
        if self._settings.kind != kind:
            hint = "set model.kind=masked and point model.path at a masked LM" if kind == "masked" else "is not a causal LM"
            raise CapabilityError("onnx", capability, f"model.kind={self._settings.kind!r}: {hint}")

    def scorer(self) -> OnnxScorer:
        self._require("causal", "continuation log-likelihood")
        if self._scorer is None:
            self._scorer = OnnxScorer(self.causal(), self._settings)
        return self._scorer

    def templater(self):
        from culturebias.adapters.hf.templater import HFTemplater

        if self._settings.kind == "masked":
            return HFTemplater(None, enabled=False)
        return HFTemplater(self.causal().tokenizer, enabled=self._settings.chat_template != "none")

    def generator(self):
        self._require("causal", "text generation")
        if self._generator is None:
            from culturebias.adapters.hf.generator import HFGenerator

            # The hf generator's code around model.generate; the facade's generate decodes with ONNX Runtime.
            self._generator = HFGenerator(_hf_loaded(self.causal(), self._settings), self._settings, self.templater())
        return self._generator

    def pseudo_scorer(self):
        self._require("masked", "pseudo-log-likelihood")
        if self._pseudo is None:
            from culturebias.adapters.onnx.masked import OnnxMaskedScorer

            if self._masked is None:
                self._masked = load_onnx_model(self._settings, self._cache_dir, "masked")
            self._pseudo = OnnxMaskedScorer(self._masked, self._settings)
        return self._pseudo


def create_backend(settings: Any, cache_dir: Path) -> OnnxBackend:
    return OnnxBackend(settings, cache_dir)
