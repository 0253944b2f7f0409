"""What the hf backend offers for each model kind, and its identity and provenance."""

from __future__ import annotations

import subprocess
import sys

import pytest

from culturebias.adapters.hf.options import HFOptions
from culturebias.domain.errors import CapabilityError, ConfigError


def test_importing_the_hf_modules_loads_no_torch_or_transformers():
    modules = ["backend", "loading", "embedded", "tokens", "scorer", "generator", "templater", "masked", "options"]
    code = "; ".join(f"import culturebias.adapters.hf.{m}" for m in modules)
    code += "; import culturebias.adapters.hf.local_backend; import culturebias.testing.tiny_models"
    code += "; import sys; print(sorted(m for m in ('torch', 'transformers', 'tokenizers') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_masked_kind_offers_no_causal_ports(tmp_path):
    from culturebias.adapters.hf.backend import create_backend

    backend = create_backend(HFOptions(path=str(tmp_path), kind="masked"), tmp_path)
    with pytest.raises(CapabilityError, match="continuation log-likelihood"):
        backend.scorer()
    with pytest.raises(CapabilityError, match="text generation"):
        backend.generator()
    assert not backend.templater().has_chat_template


def test_the_local_backends_share_one_capability_check_and_build_each_port_once(tmp_path):
    from culturebias.adapters.hf.backend import create_backend
    from culturebias.adapters.hf.local_backend import LocalBackend
    from culturebias.adapters.onnx.backend import create_backend as create_onnx
    from culturebias.adapters.onnx.options import OnnxOptions

    for backend in (create_backend(HFOptions(kind="masked"), tmp_path), create_onnx(OnnxOptions(kind="masked"), tmp_path)):
        assert isinstance(backend, LocalBackend)
        message = f"backend '{backend.name}' cannot provide continuation log-likelihood: model.kind='masked' is not a causal LM"
        with pytest.raises(CapabilityError) as error:
            backend.scorer()
        assert str(error.value) == message

    class Counting(LocalBackend):
        name = "counting"
        built = 0

        def _build_generator(self):
            self.built += 1
            return object()

    counting = Counting(HFOptions(), tmp_path)
    assert counting.generator() is counting.generator() and counting.built == 1
    with pytest.raises(CapabilityError, match="backend 'counting' cannot provide pseudo-log-likelihood: model.kind='causal': set model.kind=masked"):
        counting.pseudo_scorer()


def test_score_provenance_of_local_scorers():
    from culturebias.adapters.hf.local_backend import score_provenance

    options = HFOptions(dtype="bfloat16", batch_size=3, boundary_rule="authors")
    provenance = score_provenance("onnx", options, device="cuda:0")
    assert provenance.model_dump() == {
        "backend": "onnx",
        "dtype": "bfloat16",
        "device": "cuda:0",
        "batch_size": 3,
        "padding_side": "right",
        "boundary_rule": "authors",
        "boundary_source": None,  # the tokens are in hand: no server to place the boundary
    }
    assert score_provenance("hf", options, device="cpu", dtype="float32", boundary_rule="span").boundary_rule == "span"


def test_causal_kind_offers_no_pseudo_log_likelihood(tmp_path):
    from culturebias.adapters.hf.backend import create_backend

    with pytest.raises(CapabilityError, match="pseudo-log-likelihood"):
        create_backend(HFOptions(path=str(tmp_path)), tmp_path).pseudo_scorer()


def test_identity_and_provenance_of_a_local_model(tmp_path):
    pytest.importorskip("torch")
    from culturebias.adapters.hf.backend import create_backend
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    path = cached_tiny_causal_lm(arch="gpt2")
    scorer = create_backend(HFOptions(path=str(path), batch_size=7, boundary_rule="authors"), tmp_path).scorer()
    identity, provenance = scorer.identity, scorer.provenance
    assert identity.backend == "hf" and identity.kind == "causal" and identity.dtype == "float32"
    assert identity.model == str(path.resolve())
    assert identity.parameters == sum(p.numel() for p in scorer._model.parameters())
    assert len(identity.tokenizer) == 16
    assert (provenance.backend, provenance.device, provenance.batch_size) == ("hf", "cpu", 7)
    assert (provenance.padding_side, provenance.boundary_rule) == ("right", "authors")
    other = create_backend(HFOptions(path=str(cached_tiny_causal_lm(arch="llama"))), tmp_path).scorer()
    assert other.identity.tokenizer != identity.tokenizer  # same vocabulary, different BOS rule
    assert other.identity.cache_key() != identity.cache_key()


def test_bad_dtype_and_device_are_config_errors(tmp_path):
    pytest.importorskip("torch")
    import torch

    from culturebias.adapters.hf.loading import resolve_device, resolve_dtype

    with pytest.raises(ConfigError, match="float32, float16, bfloat16"):
        resolve_dtype("int8")
    assert resolve_dtype("bfloat16") is torch.bfloat16
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="CUDA is not available"):
            resolve_device("cuda:0")


def test_bfloat16_scores_close_to_float32(tmp_path):
    pytest.importorskip("torch")
    from culturebias.adapters.hf.backend import create_backend
    from culturebias.testing.tiny_models import cached_tiny_causal_lm
    from culturebias.domain.requests import LoglikelihoodRequest

    path = str(cached_tiny_causal_lm(arch="llama"))
    requests = [LoglikelihoodRequest("問題：", "男生收入高"), LoglikelihoodRequest("問題：", "女生收入高")]
    full = create_backend(HFOptions(path=path), tmp_path).scorer()
    half = create_backend(HFOptions(path=path, dtype="bfloat16"), tmp_path).scorer()
    assert half.identity.dtype == "bfloat16" and half.identity.cache_key() != full.identity.cache_key()
    for a, b in zip(full.loglikelihood(requests), half.loglikelihood(requests)):
        assert a.n_tokens == b.n_tokens
        assert b.logprob == pytest.approx(a.logprob, rel=0.05)
