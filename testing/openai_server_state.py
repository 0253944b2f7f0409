"""The OpenAI test server's state: the faults queued for it, the requests it served, its slots.

``Fault`` is one scripted failure (which requests it hits: ``Fault.hits``), ``Served`` one
recorded request, ``ServerState`` everything the request handler shares across threads
(faults, recorded requests, requests in flight, the one-slot model). The routes it serves
beside the OpenAI surface and the kinds of fault are named here too.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from culturebias.adapters.openai.truth_probe import PROBE_TEXTS
from culturebias.ports.generation import Generator
from culturebias.testing.openai_token_sources import OffsetStyle, TokenSource

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


def wait_for_company(state: ServerState, fault: Fault) -> None:
    """Hold the reply until ``fault.together`` requests are in flight (at most ``delay_s``, a bound, not a timing)."""
    deadline = time.monotonic() + (fault.delay_s or 30.0)
    while not state.stopping.is_set() and time.monotonic() < deadline:
        with state.lock:
            if state.in_flight >= fault.together:
                return
        time.sleep(0.005)
