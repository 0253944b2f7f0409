"""``model.chat_template``: the model's own template, none, a built-in, or a Jinja file (PROTOCOLS §0.4, §1).

Values: ``auto`` (the tokenizer's own template), ``none`` (no template: protocols
run only what needs none), a built-in name (``twbias-plain``, ``twbias-inst``: the
TWBias paper's Table 10 templates), or the path of a
Jinja chat template file in the Hugging Face format (``messages``,
``add_generation_prompt``, ``bos_token``/``eos_token``). A built-in or a file
replaces the tokenizer's template before the tokenizer is fingerprinted, so the
template enters the model identity and with it every cache key (the rendered
prompt text is part of each scoring request's key as well).

A file that does not render one user turn is a ``ChatTemplateError`` naming the
file, the template line and Jinja's message.
"""

from __future__ import annotations

import hashlib
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from culturebias.domain.errors import DataError

SETTING = "model.chat_template"
KEYWORDS = ("auto", "none")

# The TWBias paper renders models without a template of their own with a plain one (Table 10); this is the
# USER:/ASSISTANT: form of the authors' released prompt templates (prompt_template_speaking/twllm_2.json:
# "USER: 你想說什麼？ ASSISTANT:", and "USER: ASSISTANT:" for the empty user turn), the response following
# "ASSISTANT:" directly. BOS first, as the authors' tokenizer call adds it.
TWBIAS_PLAIN = (
    "{% if bos_token %}{{ bos_token }}{% endif %}"
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'system' -%}{{ message['content'] }}{{ ' ' }}"
    "{%- elif message['role'] == 'user' -%}USER:{% if message['content'] %} {{ message['content'] }}{% endif %}{{ ' ' }}"
    "{%- elif message['role'] == 'assistant' -%}ASSISTANT: {{ message['content'] }}{% if eos_token %}{{ eos_token }}{% endif %}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}ASSISTANT:{%- endif -%}"
)
# Table 10's other template, for Breeze and TAIDE: "[INST] {user prompt} [/INST] {bias sentence}", as the authors'
# prompt_template_speaking/llama2.json writes it ("[INST] 你想說什麼？ [/INST]", "[INST] [/INST]" for the empty user
# turn), the response following "[/INST]" directly. BOS first, as above.
TWBIAS_INST = (
    "{% if bos_token %}{{ bos_token }}{% endif %}"
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'system' -%}{{ message['content'] }}{{ ' ' }}"
    "{%- elif message['role'] == 'user' -%}[INST]{% if message['content'] %} {{ message['content'] }}{% endif %} [/INST]"
    "{%- elif message['role'] == 'assistant' -%}{{ ' ' }}{{ message['content'] }}{% if eos_token %}{{ eos_token }}{% endif %}"
    "{%- endif -%}"
    "{%- endfor -%}"
)
BUILTIN: dict[str, str] = {"twbias-plain": TWBIAS_PLAIN, "twbias-inst": TWBIAS_INST}

# What every template must render: one user turn, the assistant's reply to follow (PROTOCOLS §0.4).
PROBES = ([{"role": "user", "content": "你想說什麼？"}], [{"role": "user", "content": ""}])


class ChatTemplateError(DataError):
    """A chat template file (``model.chat_template``) that does not load or render: file, line, Jinja's message."""


@dataclass(frozen=True)
class ChatTemplate:
    name: str  # the built-in's name or the file's path
    text: str

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]


def validate_setting(value: str) -> str:
    """The option's value, checked without loading anything: a keyword, a built-in, or an existing file."""
    value = value.strip()
    if value in KEYWORDS or value in BUILTIN:
        return value
    path = Path(value).expanduser()
    if not path.is_file():
        choices = ", ".join([*KEYWORDS, *BUILTIN])
        raise ValueError(f"{value!r} is neither {choices} nor an existing Jinja chat template file")
    return value


def resolve(value: str) -> ChatTemplate | None:
    """The template a setting names; None for ``auto`` and ``none`` (the tokenizer's own, or none at all)."""
    if value in KEYWORDS:
        return None
    if value in BUILTIN:
        return ChatTemplate(value, BUILTIN[value])
    path = Path(value).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ChatTemplateError(f"cannot read the chat template: {error}", file=str(path), field=SETTING) from None
    if not text.strip():
        raise ChatTemplateError("the chat template file is empty", file=str(path), row=1, field=SETTING)
    return ChatTemplate(str(path), text)


def install(tokenizer: Any, value: str) -> ChatTemplate | None:  # Any: a transformers tokenizer
    """Put the named template on ``tokenizer`` (before it is fingerprinted) once it renders a user turn."""
    template = resolve(value)
    if template is None:
        return None
    check_renders(tokenizer, template)
    tokenizer.chat_template = template.text
    return template


def check_renders(tokenizer: Any, template: ChatTemplate) -> None:  # Any: a transformers tokenizer
    """ChatTemplateError naming the file and the template line where Jinja fails (syntax or rendering)."""
    for messages in PROBES:
        try:
            rendered = tokenizer.apply_chat_template(
                messages, chat_template=template.text, tokenize=False, add_generation_prompt=True
            )
        except Exception as error:  # noqa: BLE001 - any failure inside a user's template is reported as its error
            line = _template_line(error)
            raise ChatTemplateError(
                (f"template line {line}: " if line is not None else "")
                + f"the chat template does not render a user turn: {type(error).__name__}: {_message(error)}",
                file=template.name,
                row=line,
                field=SETTING,
            ) from None
        if not isinstance(rendered, str):
            raise ChatTemplateError(
                f"the chat template rendered {type(rendered).__name__}, not text", file=template.name, field=SETTING
            )


def _message(error: Exception) -> str:
    message = getattr(error, "message", None) or str(error)
    return message.strip().splitlines()[0] if message.strip() else "(no message)"


def _template_line(error: Exception) -> int | None:
    """The template's line: a syntax error carries it; a rendering error's traceback has a ``<template>`` frame."""
    lineno = getattr(error, "lineno", None)
    if isinstance(lineno, int):
        return lineno
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == "<template>"]
    return frames[-1].lineno if frames else None
