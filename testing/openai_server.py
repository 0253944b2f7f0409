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

The parts: ``openai_token_sources.py`` (where tokens and log-probabilities come from),
``openai_server_state.py`` (faults, recorded requests, slots), ``openai_server_replies.py``
(the replies, good or spoilt), ``openai_server_handler.py`` (the HTTP routes). This module
starts and stops the server; ``openai_server_process.py`` runs one as a process of its own.
"""

from __future__ import annotations

import threading
from typing import Any

from culturebias.ports.generation import Generator
from culturebias.testing.openai_server_handler import Handler, StateHTTPServer
from culturebias.testing.openai_server_state import TEMPLATE_ROUTES, TOKEN_COUNT_ROUTES, Fault, Served, ServerState

# The token sources are re-exported here: the tests build a server and its token source in one import.
from culturebias.testing.openai_token_sources import CharacterTokenSource, HFTokenSource, TokenSource

__all__ = ["CharacterTokenSource", "HFTokenSource", "OpenAITestServer", "TokenSource"]


class OpenAITestServer:
    """``with OpenAITestServer(...) as server: server.api_base`` — loopback only, a free port (or ``port``)."""

    def __init__(self, model_name: str, tokens: TokenSource, generator: Generator, slots: int | None = None, port: int = 0):
        self.state = ServerState(model_name, tokens, generator, slots=slots)
        self._httpd = StateHTTPServer(("127.0.0.1", port), Handler)  # port 0: a free one
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
