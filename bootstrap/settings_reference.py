"""Every setting key with its type and default, generated from the settings and options models.

``culturebias run --help`` prints it, and the docs site's configuration reference is
generated from it (``culturebias.bootstrap.reference_pages``); so neither can drift
from what the models accept.
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


def setting_keys() -> list[SettingKey]:
    """Every key: common sections, each backend's own model.* keys, each benchmark's protocol.* keys."""
    from culturebias.domain.model_options import ModelOptions
    from culturebias.bootstrap.registry import BackendDescriptor, BenchmarkDescriptor, registry
    from culturebias.bootstrap.settings import Settings

    from culturebias.domain.sampling import SamplingSettings

    keys = model_keys("model", ModelOptions, skip=frozenset({"sampling"})) + model_keys("model.sampling", SamplingSettings)
    common = frozenset(ModelOptions.model_fields)
    for backend in registry().backends.all():
        if isinstance(backend, BackendDescriptor):
            keys += model_keys("model", backend.options_model(), owner=f"backend {backend.name}", skip=common)
    for section in ("judge", "store", "data", "run", "ray"):
        annotation = Settings.model_fields[section].annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys += model_keys(section, annotation)
        if section == "judge":  # the judge's backend options: the model.* keys of judge.backend
            judge_options = (
                "every other option of the judge's backend (judge.api_base, judge.api_key_env, judge.timeout_s, "
                "judge.sampling.*, ...); a judge on the evaluated model's backend inherits the model.* keys it does not set"
            )
            keys.append(SettingKey("judge.<option>", "any model.* key of judge.backend", "model.*, on its backend", "", judge_options))
    for benchmark in registry().benchmarks.all():
        if isinstance(benchmark, BenchmarkDescriptor):
            keys += model_keys("protocol", benchmark.options_model(), owner=f"benchmark {benchmark.name}")
    return keys


def reference_text() -> str:
    lines = ["setting keys (--set KEY=VALUE; TOML [section] key = value; env CULTUREBIAS_SECTION__KEY):"]
    owner = None
    for key in setting_keys():
        if key.owner != owner:
            owner = key.owner
            lines.append(f"  {'-- ' + owner + ' --' if owner else ''}".rstrip())
        lines.append(f"  {key.key:<36} {key.type:<40} default {key.default}")
    return "\n".join(line for line in lines if line.strip())
