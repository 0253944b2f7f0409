"""The OpenAI test server's replies: completions (with echo and log-probabilities) and chat, good or spoilt.

``complete`` and ``chat`` build the reply a real server would send from the state's token
source and generator; ``spoil`` and ``cut_short`` turn a good reply into the invalid or
wrong one a fault names.
"""

from __future__ import annotations

from typing import Any, Sequence

from culturebias.domain.requests import ChatMessage, GenerationParams, GenerationRequest
from culturebias.testing.openai_server_state import ServerState
from culturebias.testing.openai_token_sources import Token

def cut_short(reply: dict[str, Any], short_by: int | None) -> None:  # Any: JSON replies and step arguments
    """The reply of a server that computed only the prompt's first tokens, consistent in every part of it."""
    choice = reply["choices"][0]
    block = choice.get("logprobs")
    if not block:
        return
    n = reply["usage"]["prompt_tokens"]
    keep = max(1, n - short_by if short_by is not None else n // 2)
    texts = block["tokens"]
    generated = "".join(texts[n:])
    prompt_length = len(choice["text"]) - len(generated)
    shift = block["text_offset"][n - 1] + len(texts[n - 1]) - prompt_length  # a leading special token's length
    for name in ("tokens", "token_logprobs", "top_logprobs", "text_offset"):
        block[name] = block[name][:keep] + block[name][n:]
    end = block["text_offset"][keep - 1] + len(block["tokens"][keep - 1])
    for i in range(keep, len(block["tokens"])):  # the generated token follows the tokens computed
        block["text_offset"][i] = end
        end += len(block["tokens"][i])
    choice["text"] = choice["text"][: block["text_offset"][keep - 1] + len(block["tokens"][keep - 1]) - shift] + generated
    reply["usage"]["prompt_tokens"] = keep
    reply["usage"]["total_tokens"] = keep + reply["usage"]["completion_tokens"]


def spoil(reply: dict[str, Any], kind: str) -> None:  # Any: request and reply JSON
    """Turn a good reply into the invalid one ``kind`` names (the body stays well-formed JSON)."""
    choice = reply["choices"][0]
    if kind == "null-content":
        choice.setdefault("message", {})["content"] = None
    elif kind == "null-text":
        choice["text"] = None
    elif kind == "no-logprobs":
        choice["logprobs"] = None
    elif choice.get("logprobs"):
        block = choice["logprobs"]
        n = reply["usage"]["prompt_tokens"]
        if kind == "dropped-split-character":
            # llama-cpp-python's server decodes each token alone and drops partial UTF-8 bytes, so a character
            # split across byte-level tokens vanishes from the token texts, and offsets counted from them
            # end short of the prompt
            texts = block["tokens"]
            pending = False
            for i in range(n):
                if texts[i] == "":
                    pending = True
                elif pending:
                    texts[i] = texts[i][1:]  # the character the partial tokens started
                    pending = False
            at = 0
            for i, text in enumerate(texts):
                block["text_offset"][i] = at
                at += len(text)
        elif kind == "truncated-logprobs":
            keep = max(1, n // 2)
            for name in ("tokens", "token_logprobs", "top_logprobs", "text_offset"):
                block[name] = block[name][:keep]
        else:
            block["token_logprobs"][n - 1] = None if kind == "null-logprob" else float("nan")


def _params(body: dict[str, Any]) -> GenerationParams:  # Any: request and reply JSON
    stop = body.get("stop") or ()
    return GenerationParams(
        max_new_tokens=int(body.get("max_tokens") or 16),
        temperature=float(body.get("temperature") or 0.0),
        top_p=float(body.get("top_p") or 1.0),
        seed=int(body.get("seed") or 0),
        stop=tuple([stop] if isinstance(stop, str) else stop),
        top_k=int(body["top_k"]) if body.get("top_k") is not None else None,
        repetition_penalty=float(body["repetition_penalty"]) if body.get("repetition_penalty") is not None else None,
    )


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}


def _logprobs_block(tokens: Sequence[Token], start_offset: int = 0) -> dict[str, Any]:  # Any: request and reply JSON
    offsets, at = [], start_offset
    for token in tokens:
        offsets.append(at)
        at += len(token.text)
    return {
        "tokens": [t.text for t in tokens],
        "token_logprobs": [t.logprob for t in tokens],
        "top_logprobs": [t.top for t in tokens],
        "text_offset": offsets,
    }


def complete(state: ServerState, body: dict[str, Any], late: bool = False) -> dict[str, Any]:  # Any: request and reply JSON
    prompt = body.get("prompt")
    if not isinstance(prompt, str):
        raise ValueError("this test server takes one prompt string per request")
    echo = bool(body.get("echo"))
    want_logprobs = body.get("logprobs") is not None
    if echo:
        if int(body.get("max_tokens") or 0) > 1:
            raise ValueError("with echo this test server generates at most one token")
        served = state.tokens.echo(prompt, state.offsets, late)
        generated = [served.next_token] if int(body.get("max_tokens") or 0) == 1 else []
        tokens = served.prompt + generated
        text = prompt + "".join(t.text for t in generated)
        logprobs = _logprobs_block(tokens) if want_logprobs and state.prompt_logprobs else None
        usage = _usage(len(served.prompt), len(generated))
    else:
        text = state.generator.generate([GenerationRequest(prompt=prompt, params=_params(body))])[0].text
        logprobs = None
        usage = _usage(len(prompt), len(text))
    return {
        "id": f"cmpl-{len(state.served)}",
        "object": "text_completion",
        "created": 0,
        "model": state.model_name,
        "choices": [{"index": 0, "text": text, "logprobs": logprobs, "finish_reason": "length"}],
        "usage": usage,
    }


def chat(state: ServerState, body: dict[str, Any]) -> dict[str, Any]:  # Any: request and reply JSON
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list")
    chat = tuple(ChatMessage(m["role"], m["content"]) for m in messages)
    text = state.generator.generate([GenerationRequest.chat(chat, _params(body))])[0].text
    return {
        "id": f"chatcmpl-{len(state.served)}",
        "object": "chat.completion",
        "created": 0,
        "model": state.model_name,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": _usage(sum(len(m.content) for m in chat), len(text)),
    }
