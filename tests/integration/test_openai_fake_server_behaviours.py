"""The loopback fake server reproduces what real servers do: llama-cpp-python's misaligned prompt log-probabilities, token-count routes.

Character-level test model: the character at position i costs -1.0 when i is even, -1.5 when odd, so a
shift by one position swaps the two costs and is visible in every reply.
"""

from __future__ import annotations

import json
import urllib.request

from culturebias.testing.scripted import ScriptedGenerator, ScriptedScorer
from culturebias.testing.openai_server import CharacterTokenSource, OpenAITestServer


def _cost(context: str, character: str) -> float:
    return -1.0 if len(context) % 2 == 0 else -1.5


def _echo(server: OpenAITestServer, prompt: str) -> list[float | None]:
    body = json.dumps({"model": "m", "prompt": prompt, "echo": True, "max_tokens": 0, "logprobs": 1}).encode()
    request = urllib.request.Request(f"{server.api_base}/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.load(reply)["choices"][0]["logprobs"]["token_logprobs"]


def test_shift_by_one_moves_each_prompt_logprob_one_position_late():
    generator = ScriptedGenerator(lambda request, prompt: "x")
    with OpenAITestServer("m", CharacterTokenSource(ScriptedScorer(_cost)), generator) as server:
        aligned = _echo(server, "abcde")
        server.inject("shift-by-one")
        shifted = _echo(server, "abcde")
        assert [s.fault for s in server.requests()] == [None, "shift-by-one"]
    assert len(shifted) == len(aligned) == 5
    # character i is scored after itself: what the aligned reply gives character i + 1
    assert shifted[1:4] == aligned[2:5]
    assert shifted[1:] != aligned[1:]


def _post(server: OpenAITestServer, path: str, payload: dict) -> dict:
    root = server.api_base.removesuffix("/v1")
    request = urllib.request.Request(f"{root}{path}", data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.load(reply)


def test_tokenize_routes_of_llama_cpp_and_vllm_count_as_the_echo_tokenises():
    generator = ScriptedGenerator(lambda request, prompt: "x")
    with OpenAITestServer("m", CharacterTokenSource(ScriptedScorer(_cost)), generator) as server:
        text = "台灣的 Māori"
        echoed = len(_echo(server, text))
        ids = [ord(c) for c in text]  # the character source's token ids
        assert _post(server, "/extras/tokenize/count", {"input": text}) == {"count": echoed}
        assert _post(server, "/extras/tokenize", {"input": text}) == {"tokens": ids}
        assert _post(server, "/tokenize", {"model": "m", "prompt": text}) == {"count": echoed, "max_model_len": 2048, "tokens": ids}
        assert echoed == len(text)


def _echo_block(server: OpenAITestServer, prompt: str) -> dict:
    body = json.dumps({"model": "m", "prompt": prompt, "echo": True, "max_tokens": 0, "logprobs": 1}).encode()
    request = urllib.request.Request(f"{server.api_base}/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.load(reply)["choices"][0]["logprobs"]


def test_dropped_split_characters_vanish_from_the_token_texts_and_offsets_of_a_cjk_prompt():
    from culturebias.testing.openai_server import HFTokenSource
    from culturebias.testing.tiny_models import cached_tiny_causal_lm

    generator = ScriptedGenerator(lambda request, prompt: "x")
    prompt = "他是護士。"
    with OpenAITestServer("m", HFTokenSource(str(cached_tiny_causal_lm(arch="gpt2"))), generator) as server:
        good = _echo_block(server, prompt)
        server.inject("dropped-split-character")
        bad = _echo_block(server, prompt)
    assert "".join(good["tokens"]) == prompt
    dropped = "".join(bad["tokens"])
    # every character split across byte-level tokens is gone, the others stay in order
    assert len(dropped) < len(prompt) and all(c in prompt for c in dropped)
    assert bad["text_offset"][-1] + len(bad["tokens"][-1]) == len(dropped)
    assert len(bad["tokens"]) == len(good["tokens"]) and bad["token_logprobs"] == good["token_logprobs"]
