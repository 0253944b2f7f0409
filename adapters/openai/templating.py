"""Chat templates of a served model (``model.backend=openai``): one rule for where each rendering happens.

- **Generation** from chat messages always goes to ``/v1/chat/completions``: the server applies its
  own template to the same messages the local backends render (``model.chat_template=auto``).
- **Scored templated text** (TWBias prompt types 1-10, KoBBQ/CBBQ ``protocol.mode=likelihood`` with a
  template) is sent to ``/v1/completions`` as text, so it must be rendered before it is sent:

  1. here, from ``model.tokenizer=HUB_ID_OR_DIR`` (the served model's tokenizer files, no weights),
     with the hf backend's own templater: the text the hf backend renders;
  2. else by the server's template endpoint, probed once at the first render: llama.cpp's
     ``POST /apply-template {"messages"} -> {"prompt"}``, else vLLM's
     ``POST /tokenize {"model", "messages", "add_generation_prompt"} -> {"tokens"}`` then
     ``POST /detokenize {"model", "tokens"} -> {"prompt"}`` (both at the server's root, not under /v1);
  3. else the run is refused in preflight (``check_render``) with ``render_refusal``'s one error.

- ``model.chat_template=none``: no template anywhere (plain text everywhere; ``NoChatTemplate``).

A completions server tokenises the text it is sent and adds its model's BOS itself, so a rendered
text that starts with BOS would be scored after two. The leading BOS is removed before the text is
sent when the server adds one:

- from ``model.tokenizer``: the text starts with the tokenizer's ``bos_token`` and the server adds a
  BOS: its tokenize route (llama-cpp-python ``/extras/tokenize``, vLLM ``/tokenize``, which tokenise
  as the completions endpoint does) gives two ids for the BOS text alone (one it added, one it
  read); a server without a tokenize route is taken to do what the tokenizer does
  (``tokenizer(bos_token)`` gives two ids), as an engine serving that tokenizer does;
- from vLLM's ``/tokenize``: the rendered ids start with the id ``/tokenize`` of ``""`` gives (the
  BOS the server adds to every prompt): that first id is dropped before ``/detokenize``;
- llama.cpp's ``/apply-template`` removes it itself (``common_chat_template`` strips a leading
  ``bos_token`` when the model adds one).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from culturebias.adapters.hf.templater import HFTemplater
from culturebias.adapters.openai.client import ApiClient, ApiError, InvalidReply
from culturebias.adapters.openai.token_ids import ABSENT_STATUS, find_tokenize_route, is_token_ids
from culturebias.domain.chat_template_use import ChatTemplateUse, TextRendering
from culturebias.domain.errors import CapabilityError, ConfigError
from culturebias.domain.requests import ChatMessage, message_dicts

RENDER_CAPABILITY = "chat-templated text for scoring"
NO_TEMPLATE_CAPABILITY = "a chat template"
SERVER_APPLIES = "applied by the server (not visible here)"


def render_refusal(server: str) -> CapabilityError:
    """The one error of a run that scores templated text on a server whose template cannot be rendered here."""
    return CapabilityError(
        "openai",
        RENDER_CAPABILITY,
        f"{server} applies the model's chat template to /v1/chat/completions but offers no template endpoint "
        "(llama.cpp's POST /apply-template, vLLM's POST /tokenize with messages), and scored text is sent to "
        "/v1/completions already rendered; give the served model's tokenizer files "
        "(--set model.tokenizer=HUB_ID_OR_DIR, no weights needed), or run what needs no rendered text: "
        "--set protocol.prompt_types=0 (TWBias), --set protocol.mode=generate (KoBBQ, CBBQ)",
    )


class NoChatTemplate:
    """``model.chat_template=none``: the caller said no template is to be rendered, here or by the server."""

    @property
    def has_chat_template(self) -> bool:
        return False

    @property
    def template_use(self) -> ChatTemplateUse | None:
        return None

    def check_render(self) -> None:
        raise CapabilityError("openai", NO_TEMPLATE_CAPABILITY, "disabled by model.chat_template=none")

    def render(self, messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
        self.check_render()
        raise AssertionError("unreachable")


def load_tokenizer(name: str) -> Any:  # Any: a transformers tokenizer
    """``model.tokenizer``: tokenizer files only, from this machine (a folder or the hub cache); never weights."""
    try:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(name, local_files_only=True)
    except Exception as error:  # noqa: BLE001 - whatever transformers raises, the setting is what to fix
        raise ConfigError(
            f"model.tokenizer={name}: cannot load a tokenizer from it (tokenizer files of the served model, "
            f"a local folder or a hub id already downloaded; nothing is downloaded here): {type(error).__name__}: {error}"
        ) from None
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(f"model.tokenizer={name}: the tokenizer has no chat template, so it cannot render the served one")
    return tokenizer


@dataclass(frozen=True)
class _Rendering:
    render: Callable[[Sequence[ChatMessage], bool], str]
    rendered_text: TextRendering
    source: str


class ServedTemplater:
    """``model.chat_template=auto`` on a served model: the server's template, rendered here where possible."""

    def __init__(
        self,
        root: ApiClient,
        model: str,
        tokenizer_name: str | None = None,
        tokenizer_loader: Callable[[str], Any] = load_tokenizer,  # Any: a transformers tokenizer
    ):
        self._root = root  # the client addressed at the server's root (template and tokenize routes)
        self._model = model
        self._tokenizer_name = tokenizer_name
        self._load = tokenizer_loader
        self._rendering: _Rendering | None = None
        self._probed = False
        self._lock = threading.Lock()
        self._rendered: dict[tuple[tuple[ChatMessage, ...], bool], str] = {}

    @property
    def has_chat_template(self) -> bool:
        return True  # /v1/chat/completions applies it

    @property
    def template_use(self) -> ChatTemplateUse:
        rendering = self._rendering
        if rendering is None:
            return ChatTemplateUse(messages=SERVER_APPLIES, rendered_text="not rendered")
        return ChatTemplateUse(messages=SERVER_APPLIES, rendered_text=rendering.rendered_text, source=rendering.source)

    def check_render(self) -> None:
        if self._find() is None:
            raise render_refusal(self._root.public_base)

    def render(self, messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
        rendering = self._find()
        if rendering is None:
            raise render_refusal(self._root.public_base)
        key = (tuple(messages), add_generation_prompt)
        if key not in self._rendered:
            self._rendered[key] = rendering.render(messages, add_generation_prompt)
        return self._rendered[key]

    # -- finding how to render (once, at the first need) ----------------------------------
    def _find(self) -> _Rendering | None:
        with self._lock:
            if not self._probed:
                self._rendering = self._from_tokenizer() if self._tokenizer_name else self._from_server()
                self._probed = True
            return self._rendering

    def _from_tokenizer(self) -> _Rendering:
        assert self._tokenizer_name is not None
        tokenizer = self._load(self._tokenizer_name)
        local = HFTemplater(tokenizer, backend="openai", source=f"model.tokenizer={self._tokenizer_name}")
        bos = getattr(tokenizer, "bos_token", None) or ""
        strip = bool(bos) and self._server_adds(bos, tokenizer)

        def render(messages: Sequence[ChatMessage], add_generation_prompt: bool) -> str:
            text = local.render(messages, add_generation_prompt=add_generation_prompt)
            return text[len(bos) :] if strip and text.startswith(bos) else text

        return _Rendering(render, "rendered here", f"model.tokenizer={self._tokenizer_name}")

    def _server_adds(self, bos: str, tokenizer: Any) -> bool:  # Any: a transformers tokenizer
        """Whether the completions server adds a BOS of its own to the text ``bos`` (two ids for it)."""
        route = find_tokenize_route(self._root, self._model, bos)
        ids = route.of([bos]).get(bos, []) if route is not None else list(tokenizer(bos, add_special_tokens=True)["input_ids"])
        return len(ids) >= 2 and ids[0] == ids[1]

    def _from_server(self) -> _Rendering | None:
        for find in (self._apply_template, self._vllm_tokenize):
            rendering = find()
            if rendering is not None:
                return rendering
        return None

    def _try(self, path: str, body: dict[str, Any], field: str) -> Any:  # Any: JSON request bodies and replies of the OpenAI-compatible API
        """The reply's ``field``; None when the route is absent or answers something else."""
        try:
            reply = self._root.post(path, body)
        except ApiError as error:
            if error.status in ABSENT_STATUS:
                return None
            raise
        return reply.get(field) if isinstance(reply, dict) else None

    def _apply_template(self) -> _Rendering | None:
        where = f"POST /apply-template at {self._root.public_base}"

        def render(messages: Sequence[ChatMessage], add_generation_prompt: bool) -> str:
            # llama.cpp reads add_generation_prompt (default true, as its chat endpoint renders)
            body: dict[str, Any] = {"messages": message_dicts(messages), "add_generation_prompt": add_generation_prompt}  # Any: JSON request bodies and replies of the OpenAI-compatible API
            prompt = self._try("apply-template", body, "prompt")
            if not isinstance(prompt, str):
                raise InvalidReply(f"{where} did not answer with a rendered prompt")
            return prompt

        probe = [ChatMessage("user", "hello")]
        if not isinstance(self._try("apply-template", {"messages": message_dicts(probe)}, "prompt"), str):
            return None
        return _Rendering(render, "rendered by the server's template endpoint", where)

    def _vllm_tokenize(self) -> _Rendering | None:
        where = f"POST /tokenize and /detokenize at {self._root.public_base}"

        def ids_of(messages: Sequence[ChatMessage], add_generation_prompt: bool) -> Any:  # Any: JSON request bodies and replies of the OpenAI-compatible API
            body = {"model": self._model, "messages": message_dicts(messages), "add_generation_prompt": add_generation_prompt}
            return self._try("tokenize", body, "tokens")

        def render(messages: Sequence[ChatMessage], add_generation_prompt: bool) -> str:
            ids = ids_of(messages, add_generation_prompt)
            if not is_token_ids(ids):
                raise InvalidReply(f"{where}: no token ids for the messages")
            if is_token_ids(added) and added and ids[:1] == added[:1]:
                ids = ids[1:]  # the BOS the server adds to the completions prompt itself
            prompt = self._try("detokenize", {"model": self._model, "tokens": ids}, "prompt")
            if not isinstance(prompt, str):
                raise InvalidReply(f"{where}: /detokenize did not answer with text")
            return prompt

        if not is_token_ids(ids_of([ChatMessage("user", "hello")], True)):
            return None
        added = self._try("tokenize", {"model": self._model, "prompt": ""}, "tokens")  # what the server adds to any prompt
        return _Rendering(render, "rendered by the server's template endpoint", where)

