"""A small OpenAI-compatible HTTP server for tests: real HTTP on 127.0.0.1, a real test model behind it.

It serves ``/v1/completions`` (with ``echo`` and ``logprobs``), ``/v1/chat/completions``
and ``/v1/models`` from

* a token source, which tokenises a prompt and returns every prompt token's
  log-probability: ``HFTokenSource`` runs a transformers causal LM (one forward
  pass, BOS added as serving engines do), ``CharacterTokenSource`` treats each
  character as a token and asks any ``LoglikelihoodScorer`` port for it;
* any ``Generator`` port, for generated text (chat messages are handed over as
  messages, so the generator applies its own template, as a server does).

Faults are injected per request, first in first out (``inject``); a fault with
``when="text"`` hits only a request whose body holds that text, so a test can
aim at one request of a concurrent batch whatever order the batch arrives in
(``prompt=`` hits only a request whose prompt is exactly that text: a context
echoed alone, not the texts that hold it).
The truth probe's known-answer requests pass faults by unless one says
``probe=True``, and ``requests()`` leaves them out unless asked (``probe=True``).
Transport faults: ``429`` (with ``Retry-After``), any other status code as text
(``"500"``, ``"503"``), ``slow`` (the reply waits ``delay_s``), ``hang`` (no reply
until the server stops: a timeout on any machine, however loaded), ``gate`` (the
reply waits until ``together`` requests are in flight: concurrency shown without
relying on timing) and
``malformed`` (a 200 whose body is not JSON). ``slots=1`` makes a one-slot
server like llama-cpp-python's default: a POST that arrives while the slot is
busy is recorded with fault ``slot-busy``, takes no fault and gets no reply until
the server stops (a real one-slot server queues it; hanging makes the client's
timeout certain on any machine). A request holds its slot from its arrival until
just before its reply is written, so a ``gate`` fault on it keeps the slot busy
until company has arrived (and been turned away), and the client's next request
after a reply finds the slot free. ``state.peak_serving`` records how many
requests were ever being served at once. Invalid replies (a 200 with a
well-formed body that cannot be used): ``truncated-logprobs`` (the token lists
end halfway through the prompt), ``null-logprob`` and ``nan-logprob`` (the last
prompt token's log-probability is null or NaN), ``no-logprobs``
(``logprobs: null``), ``null-content`` (chat ``content: null``) and
``null-text`` (completions ``text: null``); a wrong reply, ``shift-by-one``
(each prompt token scored from the logits one position late, the real
llama-cpp-python bug for models without a BOS; ``state.late_logits`` makes every
echo so), ``short-logprobs`` (the server computed fewer tokens than the prompt
holds and says so consistently: the token lists, their offsets,
``usage.prompt_tokens`` and the echoed text all describe the prompt's first
tokens, followed by the generated one; ``short_by=k`` leaves out the last k
prompt tokens, else half of them), and
``dropped-split-character`` (the last non-ASCII prompt character's token text is
empty and the offsets, counted from the texts, end short of the prompt). ``prompt_logprobs=False`` makes it
omit prompt log-probabilities like a server without that capability, and
``offsets="per-token"`` makes it count offsets from tokens decoded one by one
(replacement characters for partial UTF-8 bytes), like some engines do.

``inject_every(kind, n)`` spoils every n-th request a fault of that kind may hit
(in arrival order) until ``clear_every()``: one reply in five, say, for a whole run.

Every served request is recorded (endpoint, body, Authorization header), so a
test can count requests and check the key was sent.
"""

from __future__ import annotations

import json
import threading
import time
from urllib.parse import urlsplit
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Protocol, Sequence

from culturebias.adapters.openai.truth_probe import PROBE_TEXTS
from culturebias.domain.requests import (
    ChatMessage,
    GenerationParams,
    GenerationRequest,
    LoglikelihoodRequest,
)
from culturebias.ports.generation import Generator
from culturebias.ports.scoring import LoglikelihoodScorer

OffsetStyle = Literal["incremental", "per-token"]


@dataclass(frozen=True)
class Token:
    text: str  # decoded text, "" for a partial UTF-8 byte (incremental offsets)
    logprob: float | None
    top: dict[str, float] | None  # the argmax token and its log-probability


@dataclass(frozen=True)
class Echo:
    prompt: list[Token]
    next_token: Token  # the greedy continuation, for max_tokens >= 1
    ids: list[int] = field(default_factory=list)  # the prompt's token ids, what a tokenize route returns


class TokenSource(Protocol):
    def echo(self, prompt: str, offsets: OffsetStyle, late: bool = False) -> Echo:
        """``late``: every value from the logits one position late, the real llama-cpp-python bug (where it can be made)."""
        ...

    def ids(self, text: str) -> list[int]:
        """The text's token ids as the echo tokenises it."""
        ...


class CharacterTokenSource:
    """Every character one token; its log-probability comes from a scorer port given the text before it."""

    def __init__(self, scorer: LoglikelihoodScorer, greedy_next: str = " "):
        self._scorer = scorer
        self._next = greedy_next

    def echo(self, prompt: str, offsets: OffsetStyle, late: bool = False) -> Echo:
        # ``late``: character i scored after the text up to and including itself, as the buggy server does
        requests = [LoglikelihoodRequest(prompt[: i + 1 if late else i], prompt[i]) for i in range(1, len(prompt))]
        results = self._scorer.loglikelihood(requests) if requests else []
        tokens = [Token(prompt[0], None, None)] if prompt else []
        tokens += [Token(prompt[i + 1], r.logprob, None) for i, r in enumerate(results)]
        return Echo(tokens, Token(self._next, 0.0, None), self.ids(prompt))

    def ids(self, text: str) -> list[int]:
        return [ord(c) for c in text]


class HFTokenSource:
    """A transformers causal LM: one forward pass per prompt, BOS added where the tokenizer adds one."""

    def __init__(self, model_path: str):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self._torch = torch
        self.tokenizer: Any = AutoTokenizer.from_pretrained(model_path)  # Any: transformers types decode(ids) as str | list[str]
        self.model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32).eval()

    def _texts(self, ids: list[int], offsets: OffsetStyle) -> list[str]:
        decode = self.tokenizer.decode
        if offsets == "per-token":
            return [decode([i]) for i in ids]
        texts, previous = [], ""
        for n in range(1, len(ids) + 1):
            text = decode(ids[:n])
            if text.endswith("\ufffd"):  # an incomplete character: held back until complete
                texts.append("")
                continue
            texts.append(text[len(previous) :])
            previous = text
        return texts

    def ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=True)["input_ids"])

    def echo(self, prompt: str, offsets: OffsetStyle, late: bool = False) -> Echo:
        torch = self._torch
        ids = self.tokenizer(prompt, add_special_tokens=True)["input_ids"]
        with torch.no_grad():
            logits = self.model(input_ids=torch.tensor([ids])).logits[0].float()
        logprobs = torch.log_softmax(logits, dim=-1)
        texts = self._texts(ids, offsets)
        best = logprobs.argmax(dim=-1)
        tokens = [Token(texts[0], None, None)]
        for i in range(1, len(ids)):
            # Token i is predicted by the logits after token i-1; ``late`` takes those after token i itself.
            at = i if late else i - 1
            row = logprobs[at]
            top_id = int(best[at])
            tokens.append(Token(texts[i], float(row[ids[i]]), {self.tokenizer.decode([top_id]): float(row[top_id])}))
        next_id = int(best[-1])
        next_text = self._texts(ids + [next_id], offsets)[-1]
        return Echo(tokens, Token(next_text, float(logprobs[-1, next_id]), None), list(ids))


# a silently wrong reply (well-formed, plausible shape): only a known-answer probe can catch it
WRONG_REPLIES = ("shift-by-one", "dropped-split-character", "short-logprobs")
# tokenising beside the OpenAI surface, at the server's root: llama-cpp-python's POST /extras/tokenize
# {"input"} -> {"tokens"} and /extras/tokenize/count {"input"} -> {"count"}; vLLM's POST /tokenize
# {"model", "prompt"} -> {"count", "max_model_len", "tokens"}
TOKEN_COUNT_ROUTES = {"/extras/tokenize/count": "input", "/extras/tokenize": "input", "/tokenize": "prompt"}
# a chat template rendered at the server's root from the token source's HF tokenizer: llama.cpp's
# POST /apply-template {"messages"} -> {"prompt"}; vLLM's POST /tokenize {"model", "messages",
# "add_generation_prompt"} -> {"tokens"} (the template's ids, no specials added) and POST /detokenize
# {"model", "tokens"} -> {"prompt"}; ``state.template_route`` says which server it imitates
TEMPLATE_ROUTES = ("/apply-template", "/detokenize")
TemplateRoute = Literal["apply-template", "tokenize", "none"]
PROBE_PROMPTS = frozenset(p for t in PROBE_TEXTS for p in (t.text, t.context))
INVALID_REPLIES = ("truncated-logprobs", "null-logprob", "nan-logprob", "no-logprobs", "null-content", "null-text")


@dataclass
class Fault:
    kind: str  # a status code ("429", "500", "503", ...), "slow", "hang", "gate", "malformed", or one of INVALID_REPLIES
    retry_after: str | None = None
    delay_s: float = 0.0
    endpoint: str | None = None  # None: any endpoint
    when: str | None = None  # None: any request; else only a request whose body holds this text
    message: str = "injected failure"  # the error message of a status fault
    together: int = 2  # "gate": the reply waits until this many requests are in flight
    probe: bool = False  # True: may hit the truth probe's requests too (else they pass it by)
    short_by: int | None = None  # "short-logprobs": prompt tokens left out at the end (None: half of them)
    prompt: str | None = None  # None: any request; else only one whose prompt (or input) is exactly this text

    def hits(self, endpoint: str, body_text: str, probe: bool = False) -> bool:
        # A tokenize route takes only a fault aimed at it by name: the faults model scoring and generation.
        if self.endpoint is None and (endpoint in TOKEN_COUNT_ROUTES or endpoint in TEMPLATE_ROUTES):
            return False
        if probe and not self.probe:
            return False
        if self.prompt is not None and self.prompt not in _prompt_values(body_text):
            return False
        return (self.endpoint is None or self.endpoint == endpoint) and (self.when is None or self.when in body_text)


@dataclass
class Served:
    endpoint: str
    body: dict[str, Any]  # Any: request and reply JSON
    authorization: str | None
    fault: str | None
    query: str = ""
    probe: bool = False  # one of the truth probe's known-answer requests


@dataclass
class ServerState:
    model_name: str
    tokens: TokenSource
    generator: Generator
    prompt_logprobs: bool = True
    offsets: OffsetStyle = "incremental"
    late_logits: bool = False  # every echo scored from the logits one position late (llama-cpp-python's bug)
    drop_split_characters: bool = False  # every echo as the "dropped-split-character" fault leaves it
    tokenize_routes: bool = True  # False: a server with no tokenize route (404, like most hosted APIs)
    template_route: TemplateRoute = "apply-template"  # the chat template route it has (needs an HF tokenizer)
    faults: list[Fault] = field(default_factory=list)
    # (fault, n): every n-th request the fault may hit gets a copy of it (``inject_every``)
    recurring: list[tuple[Fault, int]] = field(default_factory=list)
    recurring_seen: int = 0
    served: list[Served] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    slots: int | None = None  # requests the model serves at once (None: any number)
    serving: int = 0
    peak_serving: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    model_lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)

    def take_fault(self, endpoint: str, body: Any) -> Fault | None:  # Any: a request's JSON
        text = json.dumps(body, ensure_ascii=False)
        with self.lock:
            for i, fault in enumerate(self.faults):
                if fault.hits(endpoint, text, is_probe(body)):
                    return self.faults.pop(i)
            for fault, every in self.recurring:
                if fault.hits(endpoint, text, is_probe(body)):
                    self.recurring_seen += 1
                    if self.recurring_seen % every == 0:
                        return fault
        return None

    def _take_slot(self) -> bool:
        """Called with ``lock`` held, as the request arrives."""
        if self.slots is not None and self.serving >= self.slots:
            return False
        self.serving += 1
        self.peak_serving = max(self.peak_serving, self.serving)
        return True


class _Handler(BaseHTTPRequestHandler):
    server: "_HTTPServer"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet; Any: http.server's signature
        return None

    def _free_slot(self) -> None:
        if getattr(self, "_holds_slot", False):
            self._holds_slot = False
            with self.server.state.lock:
                self.server.state.serving -= 1

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None, raw: bytes | None = None) -> None:  # Any: a reply's JSON
        self._free_slot()  # before the reply is written: the client's next request finds the slot free
        body = raw if raw is not None else json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        self._send(status, {"error": {"message": message, "type": "invalid_request_error"}}, headers)

    def do_GET(self) -> None:
        state = self.server.state
        if urlsplit(self.path).path.rstrip("/") == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": state.model_name, "object": "model"}]})
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        state = self.server.state
        with state.lock:
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
            self._holds_slot = state._take_slot()
        try:
            self._post(state)
        finally:
            self._free_slot()
            with state.lock:
                state.in_flight -= 1

    def _post(self, state: ServerState) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        # The query (a key in ?api-key=..., an api-version) is no part of the route; it is recorded.
        endpoint = urlsplit(self.path).path.rstrip("/").removeprefix("/v1/")
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._error(400, "request body is not JSON")
            return
        if not self._holds_slot:
            with state.lock:
                state.served.append(
                    Served(endpoint, body, self.headers.get("Authorization"), "slot-busy", urlsplit(self.path).query, is_probe(body))
                )
            state.stopping.wait()  # the slot is busy: this request waits for one it never gets
            return
        fault = state.take_fault(endpoint, body)
        with state.lock:
            state.served.append(
                Served(
                    endpoint, body, self.headers.get("Authorization"), fault.kind if fault else None, urlsplit(self.path).query,
                    is_probe(body),
                )
            )
        if fault is not None:
            if fault.kind == "429":
                self._error(429, "rate limited", {"Retry-After": fault.retry_after} if fault.retry_after else None)
                return
            if fault.kind.isdigit():
                self._error(int(fault.kind), fault.message, {"Retry-After": fault.retry_after} if fault.retry_after else None)
                return
            if fault.kind == "malformed":
                self._send(200, None, raw=b'{"choices": [ {"text": "trunc')
                return
            if fault.kind == "hang":
                state.stopping.wait()
                return
            if fault.kind == "slow":
                time.sleep(fault.delay_s)
            if fault.kind == "gate":
                _wait_for_company(state, fault)
        if endpoint in TEMPLATE_ROUTES or (endpoint == "/tokenize" and "messages" in body):
            self._template(state, body, endpoint)
            return
        if endpoint in TOKEN_COUNT_ROUTES and state.tokenize_routes:
            self._count_tokens(state, body, endpoint)
            return
        if endpoint not in ("completions", "chat/completions"):
            self._error(404, f"no route {self.path}")
            return
        if body.get("model") != state.model_name:
            self._error(404, f"model {body.get('model')!r} does not exist")
            return
        try:
            with state.model_lock:
                late = state.late_logits or (fault is not None and fault.kind == "shift-by-one")
                reply = _complete(state, body, late) if endpoint == "completions" else _chat(state, body)
        except ValueError as error:
            self._error(400, str(error))
            return
        if fault is not None and fault.kind == "short-logprobs" and endpoint == "completions":
            _cut_short(reply, fault.short_by)
        elif fault is not None and fault.kind in INVALID_REPLIES + ("dropped-split-character",):
            _spoil(reply, fault.kind)
        elif state.drop_split_characters and endpoint == "completions":
            _spoil(reply, "dropped-split-character")
        self._send(200, reply)


    def _template(self, state: ServerState, body: dict[str, Any], route: str) -> None:  # Any: request and reply JSON
        """The chat template routes, rendered from the token source's HF tokenizer (404 where it has none)."""
        tokenizer = getattr(state.tokens, "tokenizer", None)
        wanted = "apply-template" if route == "/apply-template" else "tokenize"
        if tokenizer is None or not tokenizer.chat_template or state.template_route != wanted:
            self._error(404, f"no route {self.path}")
            return
        if route == "/detokenize":
            ids = body.get("tokens")
            if not isinstance(ids, list):
                self._error(400, "'tokens' must be a list of ids")
                return
            self._send(200, {"prompt": tokenizer.decode(ids)})
            return
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            self._error(400, "messages must be a non-empty list")
            return
        text = tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=bool(body.get("add_generation_prompt", True))
        )
        if route == "/apply-template":
            # llama.cpp drops the template's leading BOS where the model adds one to every prompt itself
            bos = tokenizer.bos_token
            if bos and text.startswith(bos) and len(tokenizer(bos, add_special_tokens=True)["input_ids"]) == 2:
                text = text[len(bos) :]
            self._send(200, {"prompt": text})
            return
        ids = tokenizer(text, add_special_tokens=bool(body.get("add_special_tokens", False)))["input_ids"]
        self._send(200, {"count": len(ids), "max_model_len": 2048, "tokens": list(ids)})

    def _count_tokens(self, state: ServerState, body: dict[str, Any], route: str) -> None:  # Any: request and reply JSON
        """A text's token ids and count as the echo would tokenise it (BOS included, as both servers count it)."""
        text_field = TOKEN_COUNT_ROUTES[route]
        text = body.get(text_field)
        if not isinstance(text, str):
            self._error(400, f"{text_field!r} must be a string")
            return
        with state.model_lock:
            ids = state.tokens.ids(text)
        if route == "/extras/tokenize":
            self._send(200, {"tokens": ids})
        elif route == "/tokenize":
            self._send(200, {"count": len(ids), "max_model_len": 2048, "tokens": ids})
        else:
            self._send(200, {"count": len(ids)})


def is_probe(body: Any) -> bool:  # Any: a request's JSON
    """Whether a request is one of the truth probe's (its texts, their contexts, or a tokenize of them)."""
    if not isinstance(body, dict):
        return False
    text = next((body[k] for k in ("prompt", "input") if isinstance(body.get(k), str)), None)
    return text is not None and text in PROBE_PROMPTS


def _prompt_values(body_text: str) -> tuple[str, ...]:
    try:
        body = json.loads(body_text)
    except ValueError:
        return ()
    return tuple(body[k] for k in ("prompt", "input") if isinstance(body, dict) and isinstance(body.get(k), str))


def _cut_short(reply: dict[str, Any], short_by: int | None) -> None:  # Any: JSON replies and step arguments
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


def _wait_for_company(state: ServerState, fault: Fault) -> None:
    """Hold the reply until ``fault.together`` requests are in flight (at most ``delay_s``, a bound, not a timing)."""
    deadline = time.monotonic() + (fault.delay_s or 30.0)
    while not state.stopping.is_set() and time.monotonic() < deadline:
        with state.lock:
            if state.in_flight >= fault.together:
                return
        time.sleep(0.005)


def _spoil(reply: dict[str, Any], kind: str) -> None:  # Any: request and reply JSON
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


def _complete(state: ServerState, body: dict[str, Any], late: bool = False) -> dict[str, Any]:  # Any: request and reply JSON
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


def _chat(state: ServerState, body: dict[str, Any]) -> dict[str, Any]:  # Any: request and reply JSON
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


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    state: ServerState


class OpenAITestServer:
    """``with OpenAITestServer(...) as server: server.api_base`` — loopback only, a free port (or ``port``)."""

    def __init__(self, model_name: str, tokens: TokenSource, generator: Generator, slots: int | None = None, port: int = 0):
        self.state = ServerState(model_name, tokens, generator, slots=slots)
        self._httpd = _HTTPServer(("127.0.0.1", port), _Handler)  # port 0: a free one
        self._httpd.state = self.state
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def api_base(self) -> str:
        host, port = self._httpd.server_address[:2]
        assert isinstance(host, str)  # an AF_INET address
        return f"http://{host}:{port}/v1"

    def inject(self, kind: str, times: int = 1, **options: Any) -> None:  # Any: a fault's options
        """Queue ``times`` faults of ``kind`` (options: retry_after, delay_s, endpoint, when, prompt, message, together,
        probe, short_by)."""
        with self.state.lock:
            self.state.faults.extend(Fault(kind, **options) for _ in range(times))

    def inject_every(self, kind: str, every: int, **options: Any) -> None:  # Any: a fault's options
        """Spoil every ``every``-th request the fault may hit (counted in arrival order), until ``clear_every``."""
        with self.state.lock:
            self.state.recurring.append((Fault(kind, **options), every))

    def clear_every(self) -> None:
        with self.state.lock:
            self.state.recurring.clear()
            self.state.recurring_seen = 0

    def pending_faults(self) -> int:
        with self.state.lock:
            return len(self.state.faults)

    def requests(self, endpoint: str | None = None, probe: bool = False) -> list[Served]:
        """Served requests to ``endpoint``, or to the model's endpoints (tokenize routes left out) when None;
        ``probe``: the truth probe's too, else only the run's own."""
        with self.state.lock:
            return [
                s
                for s in self.state.served
                if (
                    s.endpoint == endpoint
                    if endpoint is not None
                    else s.endpoint not in TOKEN_COUNT_ROUTES and s.endpoint not in TEMPLATE_ROUTES
                )
                and (probe or not s.probe)
            ]

    def start(self) -> "OpenAITestServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.state.stopping.set()  # releases hanging replies
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "OpenAITestServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
