"""Model settings a user gets wrong or leaves to us: dtype, device, batch_size=auto, device_map, a folder without a tokenizer."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from culturebias.adapters.hf import batch_size as auto
from culturebias.adapters.hf.options import HFOptions
from culturebias.adapters.onnx.options import OnnxOptions
from culturebias.domain.model_options import AutoBatch
from culturebias.bootstrap.cli import main
from culturebias.bootstrap.settings import load_settings
from culturebias.domain.errors import ConfigError, ModelLoadError
from culturebias.domain.requests import GenerationParams, GenerationRequest, LoglikelihoodRequest

REQUESTS = [
    LoglikelihoodRequest("問題：", "男生收入高"),
    LoglikelihoodRequest("問題：", "女生收入高"),
    LoglikelihoodRequest("", "hello world"),
]


# ---------------------------------------------------------------- checked before anything loads


def test_a_dtype_typo_is_a_config_error_naming_the_allowed_values_before_torch_is_imported():
    code = (
        "import sys\n"
        "from culturebias.bootstrap.settings import load_settings\n"
        "from culturebias.domain.errors import ConfigError\n"
        "try:\n"
        "    load_settings(assignments=['model.dtype=float23'])\n"
        "except ConfigError as error:\n"
        "    print(error)\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["model.dtype: Input should be 'float32', 'float16' or 'bfloat16'", "False"]
    with pytest.raises(ConfigError, match=r"model\.dtype: Input should be 'float32' or 'float16'"):
        load_settings(assignments=["model.backend=onnx", "model.dtype=bfloat16"])


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "tpu", ""])
def test_a_device_name_that_does_not_exist_is_a_config_error_naming_the_setting(device):
    with pytest.raises(ConfigError, match=rf"model\.device: .*{device!r} is not a device: choose auto, cpu, cuda, cuda:N or mps"):
        load_settings(assignments=[f"model.device={device}"])
    assert OnnxOptions(device="CUDA:1").device == "cuda:1"


def test_the_cli_answers_a_bad_device_with_exit_code_2_and_no_traceback(tmp_path, capsys):
    assert main(["run", "kobbq", "--out", str(tmp_path / "out"), "--set", "model.device=gpu"]) == 2
    err = capsys.readouterr().err
    assert "model.device" in err and "'gpu' is not a device" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("value", "expected"), [("auto", AutoBatch()), ("AUTO", AutoBatch()), ("8", 8), (3, 3), (16, 16)]
)
def test_batch_size_is_a_whole_number_or_the_auto_policy(value, expected):
    assert HFOptions(batch_size=value).batch_size == expected


@pytest.mark.parametrize("value", ["0", "-2", "many", "2.5", ""])
def test_a_bad_batch_size_is_a_config_error(value):
    with pytest.raises(ConfigError, match=r"model\.batch_size: .*is not a batch size: use a whole number >= 1, or auto"):
        load_settings(assignments=[f"model.batch_size={value}"])


@pytest.mark.parametrize("value", [0, True, 2.5, None])
def test_a_bad_batch_size_in_python_is_refused(value):
    with pytest.raises(ValueError, match="is not a batch size"):
        HFOptions(batch_size=value)


def test_device_map_leaves_the_device_to_accelerate():
    assert load_settings(assignments=["model.device_map=auto"]).model.backend_options().device_map == "auto"
    with pytest.raises(ConfigError, match=r"model\.device_map=auto places the model itself: leave model\.device=auto"):
        load_settings(assignments=["model.device_map=auto", "model.device=cpu"])
    with pytest.raises(ConfigError, match="model.device_map is not a setting of backend 'onnx'"):
        load_settings(assignments=["model.backend=onnx", "model.device_map=auto"])


# ---------------------------------------------------------------- model.batch_size=auto: the search


class FakeOutOfMemory(RuntimeError):
    """What torch raises when CUDA runs out of memory (matched by name, as torch.cuda.OutOfMemoryError)."""


FakeOutOfMemory.__name__ = "OutOfMemoryError"


def test_the_largest_fitting_batch_halves_on_out_of_memory_only():
    tried = []

    def fits(batch):
        tried.append(batch)
        if batch > 12:
            raise FakeOutOfMemory("CUDA out of memory. Tried to allocate 2.00 GiB")

    assert auto.largest_fitting(fits, 64) == 8 and tried == [64, 32, 16, 8]
    assert auto.largest_fitting(lambda batch: None, 64) == 64
    with pytest.raises(ValueError, match="not memory"):
        auto.largest_fitting(lambda batch: (_ for _ in ()).throw(ValueError("not memory")), 64)
    with pytest.raises(ModelLoadError, match="model.batch_size=auto: not even one sequence fits"):
        auto.largest_fitting(lambda batch: (_ for _ in ()).throw(MemoryError()), 4)


@pytest.mark.parametrize(
    "error",
    [MemoryError(), RuntimeError("MPS backend out of memory"), RuntimeError("DefaultCPUAllocator: can't allocate memory")],
)
def test_out_of_memory_errors_are_recognised(error):
    assert auto.is_out_of_memory(error)
    assert not auto.is_out_of_memory(RuntimeError("shape mismatch"))


def test_the_probe_runs_the_model_on_batches_of_the_probe_length_until_one_fits():
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM

    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    model = AutoModelForCausalLM.from_pretrained(str(cached_tiny_causal_lm(arch="llama"))).eval()
    shapes = []
    original = model.forward

    def forward(*args, **kwargs):
        shapes.append(tuple(kwargs["input_ids"].shape))
        if kwargs["input_ids"].shape[0] > 5:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        return original(*args, **kwargs)

    model.forward = forward  # what model(...) calls
    # A pretend accelerator (the inputs stay on the CPU): the search runs as it would on a GPU.
    assert auto.auto_batch_size(model, "cuda:0", max_length=12, inputs_on="cpu") == 4
    assert shapes == [(64, 12), (32, 12), (16, 12), (8, 12), (4, 12)]
    assert auto.auto_batch_size(model, "cpu") == AutoBatch().cpu  # nothing probed on the CPU
    assert auto.probe_length(model, None) == min(model.config.max_position_embeddings, auto.PROBE_TOKENS)


# ---------------------------------------------------------------- model.batch_size=auto: the number used is recorded


@pytest.fixture(scope="module")
def tiny_causal() -> str:
    pytest.importorskip("torch")
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    return str(cached_tiny_causal_lm(arch="llama"))


def _backend(path: str, tmp_path: Path, **options):
    from culturebias.adapters.hf.backend import create_backend

    return create_backend(HFOptions(path=path, **options), tmp_path)


def test_auto_batch_size_on_the_cpu_is_the_cap_and_is_what_every_port_uses_and_records(tiny_causal, tmp_path):
    backend = _backend(tiny_causal, tmp_path, batch_size="auto")
    scorer, generator = backend.scorer(), backend.generator()
    assert scorer.provenance.batch_size == scorer._batch_size == generator._batch_size == AutoBatch().cpu
    assert backend.options.batch_size == AutoBatch().cpu
    fixed = _backend(tiny_causal, tmp_path, batch_size=AutoBatch().cpu).scorer()
    assert scorer.loglikelihood(REQUESTS) == fixed.loglikelihood(REQUESTS)


def test_the_batch_size_found_on_a_device_is_the_one_used_and_recorded(tiny_causal, tmp_path, monkeypatch):
    found = []

    def pretend(model, device, policy, **kwargs):
        assert policy == AutoBatch()  # the declared policy reaches the loader, never the string
        found.append(device)
        return 3

    monkeypatch.setattr(auto, "auto_batch_size", pretend)
    backend = _backend(tiny_causal, tmp_path, batch_size="auto")
    scorer = backend.scorer()
    generator = backend.generator()
    assert found == ["cpu"]  # searched once, when the model loaded
    assert scorer.provenance.batch_size == scorer._batch_size == generator._batch_size == 3
    results = generator.generate([GenerationRequest(prompt="問題：", params=GenerationParams(max_new_tokens=2))] * 2)
    assert len(results) == 2


def test_a_run_with_auto_batch_size_records_the_number_in_the_summary(tiny_causal, tmp_path):
    out = tmp_path / "run"
    args = ["run", "cbbq", "--out", str(out), "--set", f"model.path={tiny_causal}", "--set", "model.batch_size=auto"]
    args += ["--set", "run.progress=false", "--set", "protocol.categories=gender", "--set", "protocol.limit=2"]
    args += ["--set", "protocol.mode=likelihood"]  # scored, so the scorer's batch size is used (auto would generate)
    assert main(args) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["config"]["model"]["batch_size"] == "auto"  # what was asked for
    assert summary["model"]["scorer_provenance"]["batch_size"] == AutoBatch().cpu  # what was used


def test_auto_batch_size_of_a_masked_lm(tmp_path):
    pytest.importorskip("torch")
    from culturebias.testing.tiny_models import cached_tiny_masked_lm

    backend = _backend(str(cached_tiny_masked_lm()), tmp_path, kind="masked", batch_size="auto")
    scorer = backend.pseudo_scorer()
    assert scorer.provenance.batch_size == scorer._batch_size == AutoBatch().cpu


# ---------------------------------------------------------------- devices that are not there, placement, tokenizers


def test_a_cuda_device_that_is_not_there_is_a_config_error_naming_the_setting(tiny_causal, tmp_path):
    torch = pytest.importorskip("torch")
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    with pytest.raises(ConfigError, match=r"model\.device='cuda:7' but"):
        _backend(tiny_causal, tmp_path, device=f"cuda:{max(7, count)}").scorer()


def test_device_map_reaches_from_pretrained_and_scores_as_without_it(tiny_causal, tmp_path, monkeypatch):
    pytest.importorskip("accelerate")
    from transformers import AutoModelForCausalLM

    seen = []
    original = AutoModelForCausalLM.from_pretrained.__func__

    def spy(cls, location, *args, **kwargs):
        seen.append(kwargs.get("device_map"))
        return original(cls, location, *args, **kwargs)

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", classmethod(spy))
    placed = _backend(tiny_causal, tmp_path, device_map="auto").scorer()
    plain = _backend(tiny_causal, tmp_path).scorer()
    assert seen == ["auto", None]
    assert placed.provenance.device == "cpu"  # the only device on this machine
    assert placed.loglikelihood(REQUESTS) == plain.loglikelihood(REQUESTS)


def _without_tokenizer(source: str, target: Path) -> Path:
    shutil.copytree(source, target)
    for file in target.iterdir():
        if file.name.startswith(("tokenizer", "vocab", "merges", "chat_template", "special_tokens")):
            file.unlink()
    return target


def test_a_model_folder_without_a_tokenizer_is_a_model_load_error_naming_the_setting(tiny_causal, tmp_path):
    folder = _without_tokenizer(tiny_causal, tmp_path / "weights-only")
    with pytest.raises(ModelLoadError, match=rf"model\.path='{folder}': the model folder has no tokenizer"):
        _backend(str(folder), tmp_path).scorer()


def test_the_cli_answers_a_folder_without_a_tokenizer_with_exit_code_5(tiny_causal, tmp_path, capsys):
    folder = _without_tokenizer(tiny_causal, tmp_path / "weights-only")
    args = ["run", "cbbq", "--out", str(tmp_path / "out"), "--set", f"model.path={folder}", "--set", "run.progress=false"]
    assert main(args) == 5
    err = capsys.readouterr().err
    assert "has no tokenizer" in err and "model.path" in err and "Traceback" not in err
