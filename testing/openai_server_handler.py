"""The OpenAI test server's HTTP request handler: routes, faults applied, replies written.

``Handler`` serves ``GET /v1/models``, ``POST /v1/completions`` and ``/v1/chat/completions``,
and the tokenize and chat template routes at the server's root, applying the fault the
state hands it (``ServerState.take_fault``). ``StateHTTPServer`` is the threading HTTP
server that carries the state to every handler.
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from culturebias.testing.openai_server_replies import chat, complete, cut_short, spoil
from culturebias.testing.openai_server_state import (
    INVALID_REPLIES,
    TEMPLATE_ROUTES,
    TOKEN_COUNT_ROUTES,
    Served,
    ServerState,
    is_probe,
    wait_for_company,
)


class StateHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    state: ServerState


class Handler(BaseHTTPRequestHandler):
    server: StateHTTPServer
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
                wait_for_company(state, fault)
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
                reply = complete(state, body, late) if endpoint == "completions" else chat(state, body)
        except ValueError as error:
            self._error(400, str(error))
            return
        if fault is not None and fault.kind == "short-logprobs" and endpoint == "completions":
            cut_short(reply, fault.short_by)
        elif fault is not None and fault.kind in INVALID_REPLIES + ("dropped-split-character",):
            spoil(reply, fault.kind)
        elif state.drop_split_characters and endpoint == "completions":
            spoil(reply, "dropped-split-character")
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
