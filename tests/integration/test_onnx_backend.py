"""The onnx backend: provider choice and CPU fallback, the export cache, IO binding wiring, option errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from structlog.testing import capture_logs

pytest.importorskip("onnxruntime")
pytest.importorskip("torch")

from culturebias.testing.tiny_models import cached_tiny_causal_lm  # noqa: E402
from culturebias.testing.tolerance import assert_model_close  # noqa: E402
from culturebias.adapters.onnx import export as onnx_export  # noqa: E402
from culturebias.adapters.onnx import providers  # noqa: E402
from culturebias.adapters.onnx.backend import create_backend  # noqa: E402
from culturebias.adapters.onnx.runtime import SessionRunner  # noqa: E402
from culturebias.adapters.onnx.options import OnnxOptions  # noqa: E402
from culturebias.domain.errors import CapabilityError, ConfigError  # noqa: E402
from culturebias.domain.requests import LoglikelihoodRequest  # noqa: E402

CUDA, CPU = providers.CUDA, providers.CPU


def options(**overrides) -> OnnxOptions:
    values = {"backend": "onnx", "path": str(cached_tiny_causal_lm(arch="llama")), "device": "cpu", "batch_size": 4}
    values.update(overrides)
    return OnnxOptions(**values)


# --------------------------------------------------------------------------- providers


@pytest.mark.parametrize(
    ("device", "available", "wants_cuda", "first"),
    [
        ("auto", [CUDA, CPU], True, CUDA),
        ("auto", [CPU], False, CPU),
        ("cuda", [CPU], False, CPU),
        ("cuda:1", [CUDA, CPU], True, CUDA),
        ("cpu", [CUDA, CPU], False, CPU),
    ],
)
def test_provider_choice(device, available, wants_cuda, first):
    choice = providers.choose_providers(device, available)
    assert choice.wants_cuda is wants_cuda
    head = choice.providers[0]
    assert (head[0] if isinstance(head, tuple) else head) == first
    assert choice.providers[-1] == CPU  # CPU always remains as the last resort
    if device == "cuda:1":
        assert choice.providers[0] == (CUDA, {"device_id": 1})


class FakeSession:
    """Stands in for onnxruntime.InferenceSession: records the providers, reports the ones that started."""

    started: list[str] = [CPU]
    created: list[list] = []

    def __init__(self, path, sess_options=None, providers=None):
        FakeSession.created.append(list(providers))

    def get_providers(self):
        return list(FakeSession.started)


@pytest.fixture
def fake_ort(monkeypatch):
    import onnxruntime

    FakeSession.created = []
    monkeypatch.setattr(onnxruntime, "InferenceSession", FakeSession)
    return monkeypatch


def test_no_gpu_means_cpu_with_a_log_line_naming_the_reason(fake_ort):
    import onnxruntime

    fake_ort.setattr(onnxruntime, "get_available_providers", lambda: [CPU])
    with capture_logs() as logs:
        _, device = providers.open_session("model.onnx", "auto")
    assert device == "cpu"
    assert FakeSession.created == [[CPU]]
    [line] = [entry for entry in logs if entry["event"] == "onnxruntime provider"]
    assert line["provider"] == CPU and line["device"] == "cpu"
    assert "CUDAExecutionProvider" in line["fallback"] and "pip install -e '.[gpu]'" in line["fallback"]


def test_cuda_provider_that_fails_to_start_falls_back_to_cpu_with_a_warning(fake_ort):
    import onnxruntime

    fake_ort.setattr(onnxruntime, "get_available_providers", lambda: [CUDA, CPU])
    FakeSession.started = [CPU]
    with capture_logs() as logs:
        _, device = providers.open_session("model.onnx", "cuda")
    assert device == "cpu"
    assert FakeSession.created == [[(CUDA, {"device_id": 0}), CPU]]
    [line] = [entry for entry in logs if entry["event"] == "onnxruntime provider"]
    assert line["log_level"] == "warning"
    assert "failed to start" in line["fallback"]


def test_cuda_provider_that_starts_is_used(fake_ort):
    import onnxruntime

    fake_ort.setattr(onnxruntime, "get_available_providers", lambda: [CUDA, CPU])
    FakeSession.started = [CUDA, CPU]
    with capture_logs() as logs:
        _, device = providers.open_session("model.onnx", "auto")
    assert device == "cuda:0"
    [line] = [entry for entry in logs if entry["event"] == "onnxruntime provider"]
    assert (line["provider"], line["log_level"]) == (CUDA, "info")


class FakeBinding:
    def __init__(self, outputs):
        self.inputs, self.outputs, self._values = {}, [], outputs

    def bind_ortvalue_input(self, name, value):
        self.inputs[name] = value

    def bind_output(self, name, device_type, device_id):
        self.outputs.append((name, device_type, device_id))

    def copy_outputs_to_cpu(self):
        return [self._values[name] for name, _, _ in self.outputs]


class FakeBoundSession:
    def __init__(self):
        self.binding = FakeBinding({"logits": np.ones((1, 1, 3)), "present.0.key": np.zeros((1, 1, 2, 1))})
        self.ran_bound = False

    def get_outputs(self):
        return [type("O", (), {"name": n}) for n in ("logits", "present.0.key")]

    def io_binding(self):
        return self.binding

    def run_with_iobinding(self, binding):
        self.ran_bound = binding is self.binding

    def run(self, *args):  # pragma: no cover - must not be used on CUDA
        raise AssertionError("plain run on a CUDA session")


def test_cuda_sessions_run_with_io_binding(monkeypatch):
    import onnxruntime

    placed = []
    monkeypatch.setattr(
        onnxruntime.OrtValue, "ortvalue_from_numpy", staticmethod(lambda a, d, i: placed.append((a.shape, d, i)) or ("on", d, i))
    )
    session = FakeBoundSession()
    out = SessionRunner(session, "cuda:1").run({"input_ids": np.zeros((1, 1), np.int64)}, ["logits", "present.0.key"])
    assert session.ran_bound
    assert placed == [((1, 1), "cuda", 1)]
    assert session.binding.outputs == [("logits", "cuda", 1), ("present.0.key", "cuda", 1)]
    assert out["logits"].shape == (1, 1, 3)


# --------------------------------------------------------------------------- export cache


def test_the_export_is_cached_by_model_and_opset_and_reused(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = create_backend(options(), cache)
    results = first.scorer().loglikelihood([LoglikelihoodRequest("The doctor", " said")])
    [folder] = (cache / "onnx").iterdir()
    meta = json.loads((folder / "export.json").read_text(encoding="utf-8"))
    assert (meta["opset"], meta["kind"], meta["n_layers"]) == (onnx_export.OPSET, "causal", 2)
    assert sorted(p.name for p in folder.iterdir()) == ["export.json", "model.onnx"]

    def no_export(*args, **kwargs):
        raise AssertionError("exported again although the cache holds the model")

    monkeypatch.setattr(onnx_export, "_export_causal", no_export)
    again = create_backend(options(), cache)
    assert again.scorer().loglikelihood([LoglikelihoodRequest("The doctor", " said")]) == results
    assert again.scorer().identity.parameters == meta["parameters"] > 0

    source = type("S", (), {"name": "m", "revision": None, "is_local": False, "location": "m"})()
    keys = {onnx_export.export_key(source, "tok", "causal", "float32", opset) for opset in (17, 18)}
    keys.add(onnx_export.export_key(source, "tok", "causal", "float16", 17))
    keys.add(onnx_export.export_key(source, "tok", "masked", "float32", 17))
    assert len(keys) == 4


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_the_graph_scores_tokens_itself_and_agrees_with_its_own_logits(tmp_path, arch):
    """The scoring head inside the graph gives what the full logits give, greedy flags included."""
    from culturebias.adapters.hf.scorer import HFScorer
    from culturebias.adapters.onnx.backend import hf_loaded
    from culturebias.adapters.onnx.runtime import OrtScoringHead

    backend = create_backend(options(path=str(cached_tiny_causal_lm(arch=arch)), batch_size=3), tmp_path)
    scorer = backend.scorer()
    assert isinstance(scorer._head, OrtScoringHead)
    [folder] = (tmp_path / "onnx").iterdir()
    meta = json.loads((folder / "export.json").read_text(encoding="utf-8"))
    assert meta["score_head"] is True
    assert meta["outputs"][:3] == ["logits", "score_logprobs", "score_greedy"]
    session_options = backend.causal().model.runner.session.get_session_options()
    assert session_options.get_session_config_entry("session.intra_op.allow_spinning") == "1"  # torch has nothing to do between runs
    from_logits = HFScorer(hf_loaded(backend.causal(), backend.options), backend.options, split_head=False)
    contexts = ["", "The doctor", "Question: who was late?\nAnswer:"]
    continuations = [" said", " said that she would come", " the nurse", " the nurse was late", "!"]
    requests = [LoglikelihoodRequest(c, t) for c in contexts for t in continuations]
    repeated = [LoglikelihoodRequest("", "a a a a a a a a")]  # a tiny random model's likely greedy run
    got = scorer.loglikelihood(requests + repeated)
    want = from_logits.loglikelihood(requests + repeated)
    for request, a, b in zip(requests + repeated, got, want):
        assert a.n_tokens == b.n_tokens, request
        assert_model_close(a.logprob, b.logprob, what=str(request))
        assert a.is_greedy == b.is_greedy, request


def test_an_export_that_does_not_reproduce_torch_is_refused_and_not_cached(tmp_path, monkeypatch):
    monkeypatch.setattr(onnx_export, "CHECK_TOLERANCE", {"float32": -1.0})
    with pytest.raises(ConfigError, match="does not reproduce the torch model"):
        create_backend(options(), tmp_path).scorer()
    assert not any(p for p in (tmp_path / "onnx").iterdir() if not p.name.startswith("."))


# --------------------------------------------------------------------------- options and capabilities


def test_provenance_and_identity_name_onnx_and_the_device(tmp_path):
    scorer = create_backend(options(), tmp_path).scorer()
    assert (scorer.identity.backend, scorer.identity.kind) == ("onnx", "causal")
    assert (scorer.provenance.backend, scorer.provenance.device) == ("onnx", "cpu")
    assert "ONNX opset" in scorer.identity.description


def test_unsupported_dtypes_are_configuration_errors(tmp_path):
    from culturebias.bootstrap.settings import load_settings

    # Refused by the backend's options model, before anything loads.
    with pytest.raises(ConfigError, match=r"model\.dtype: Input should be 'float32' or 'float16'"):
        load_settings(assignments=["model.backend=onnx", "model.dtype=bfloat16"])
    with pytest.raises(ValueError, match="'float32' or 'float16'"):
        options(dtype="bfloat16")
    with pytest.raises(ConfigError, match="CUDA execution provider"):
        create_backend(options(dtype="float16"), tmp_path).scorer()


def test_ports_the_model_kind_cannot_give_are_capability_errors(tmp_path):
    with pytest.raises(CapabilityError, match="pseudo-log-likelihood"):
        create_backend(options(), tmp_path).pseudo_scorer()
    masked = create_backend(options(kind="masked"), tmp_path)
    with pytest.raises(CapabilityError, match="continuation log-likelihood"):
        masked.scorer()
    with pytest.raises(CapabilityError, match="text generation"):
        masked.generator()
    assert masked.templater().has_chat_template is False


def test_selecting_the_backend_module_loads_no_runtime_until_a_port_is_asked_for():
    code = (
        "import sys\n"
        "from culturebias.adapters.onnx.backend import create_backend\n"
        "from culturebias.adapters.openai.backend import create_backend as remote\n"
        "print(','.join(m for m in ('torch', 'transformers', 'onnxruntime') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
