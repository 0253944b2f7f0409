"""Setting keys read from pydantic models: each field's key, type, default and description.

A field's description is its own (``Field(description=...)``), else the comments its model's
source writes beside it. ``bootstrap/settings_reference.py`` gathers the keys of the settings
and of every registered backend and benchmark; :func:`keys_text` is ``culturebias run --help``'s
listing of them and ``adapters/docs/reference_pages.py`` the docs site's tables.
"""

from __future__ import annotations

import ast
import functools
import inspect
import io
import json
import textwrap
import tokenize
import types
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, SecretBytes, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined


@dataclass(frozen=True)
class SettingKey:
    key: str
    type: str
    default: str
    owner: str = ""  # the backend or benchmark a key belongs to ("" = everyone)
    description: str = ""  # the field's own description, where its model gives one


def _type_name(annotation: Any) -> str:  # Any: a field's annotation, any typing form
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return "|".join(str(a) for a in typing.get_args(annotation))
    if origin is typing.Annotated:
        return _type_name(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return " or ".join(_type_name(a) for a in args)
    if origin in (list, tuple):
        items = typing.get_args(annotation)
        return f"list of {_type_name(items[0])}" if items else "list"
    if origin is dict:
        return "table"
    return getattr(annotation, "__name__", str(annotation))  # a class has a name; a typing form only its text


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        try:
            value = field.default_factory()  # type: ignore[call-arg]  # one that takes the validated data raises TypeError
        except TypeError:
            return "(computed)"
    elif field.default is PydanticUndefined:
        return "(required)"
    else:
        value = field.default
    if isinstance(value, BaseModel):
        return "(section)"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "(empty)"
    if value is None:
        return "(unset)"
    if isinstance(value, (SecretStr, SecretBytes)):
        return "(secret)"
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)


@functools.lru_cache(maxsize=None)
def _class_comments(cls: type) -> dict[str, str]:
    """The comments a class's source writes beside its fields: those on the lines just above a field, then its own."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):  # no source (a class built at run time, a frozen install)
        return {}
    comments = {
        token.start[0]: token.string.lstrip("#").strip()
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    }
    lines = source.splitlines()
    found: dict[str, str] = {}
    classes = [node for node in ast.parse(source).body if isinstance(node, ast.ClassDef)]
    for node in classes[0].body if classes else []:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        above: list[str] = []
        line = node.lineno - 1
        while line >= 1 and line in comments and lines[line - 1].lstrip().startswith("#"):
            above.insert(0, comments[line])
            line -= 1
        own = [comments[n] for n in range(node.lineno, (node.end_lineno or node.lineno) + 1) if n in comments]
        text = " ".join(part for part in above + own if part and not part.startswith(("type:", "noqa", "fmt:")))
        if text:
            found[node.target.id] = text
    return found


def field_comment(model: type[BaseModel], name: str) -> str:
    """A field's description where its model declares none: the comments its source writes beside it."""
    for cls in model.__mro__:
        if isinstance(cls, type) and issubclass(cls, BaseModel) and name in cls.__dict__.get("__annotations__", {}):
            return _class_comments(cls).get(name, "")
    return ""


def model_keys(prefix: str, model: type[BaseModel], owner: str = "", skip: frozenset[str] = frozenset()) -> list[SettingKey]:
    keys = []
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        description = field.description or field_comment(model, name)
        keys.append(SettingKey(f"{prefix}.{name}", _type_name(field.annotation), _default(field), owner, description))
    return keys


def keys_text(keys: Iterable[SettingKey]) -> str:
    """The keys as ``culturebias run --help`` lists them: grouped by owner, one line each."""
    lines = ["setting keys (--set KEY=VALUE; TOML [section] key = value; env CULTUREBIAS_SECTION__KEY):"]
    owner = None
    for key in keys:
        if key.owner != owner:
            owner = key.owner
            lines.append(f"  {'-- ' + owner + ' --' if owner else ''}".rstrip())
        lines.append(f"  {key.key:<36} {key.type:<40} default {key.default}")
    return "\n".join(line for line in lines if line.strip())
