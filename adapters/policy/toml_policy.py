"""A policy written in TOML: ``[[criterion]]`` tables (docs/gating.md).

Errors name the file, the line and what was expected: a TOML syntax error
its line and column, a bad criterion the line of its key (or of its
``[[criterion]]`` header) with the keys a criterion takes.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from culturebias.adapters.policy.files import policy_text
from culturebias.domain.errors import PolicyError
from culturebias.domain.policy.model import Criterion, Policy

TOP_LEVEL = ("name", "criterion")
# Keys the TOML form does not take: Gherkin sets them, or the reader does.
NOT_IN_TOML = ("run", "baseline", "source")
TOML_KEYS = tuple(name for name in Criterion.model_fields if name not in NOT_IN_TOML)
_HEADER = re.compile(r"^\s*\[\[\s*criterion\s*\]\]")
_LINE = re.compile(r"\(at line (\d+), column (\d+)\)")


def _headers(text: str) -> list[int]:
    return [number for number, line in enumerate(text.splitlines(), start=1) if _HEADER.match(line)]


def _key_line(text: str, start: int, key: str) -> int:
    """The line of ``key = ...`` in the criterion table starting at line ``start`` (else the header's)."""
    lines = text.splitlines()
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
    for number in range(start, len(lines) + 1):
        if number > start and _HEADER.match(lines[number - 1]):
            break
        if pattern.match(lines[number - 1]):
            return number
    return start


def read_toml_policy(path: str | Path) -> Policy:
    return parse_toml_policy(policy_text(path), str(path))


def parse_toml_policy(text: str, file: str = "<policy>") -> Policy:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        found = _LINE.search(str(error))
        line = int(found.group(1)) if found else None
        raise PolicyError(f"not valid TOML: {_LINE.sub('', str(error)).strip()}", file=file, line=line) from None
    return policy_from_mapping(data, file, text)


def policy_from_mapping(data: Mapping[str, Any], file: str = "<policy>", text: str = "") -> Policy:  # Any: TOML values
    """A policy from the TOML form's data (``{"name": ..., "criterion": [{...}, ...]}``); ``text`` locates errors."""
    unknown = [key for key in data if key not in TOP_LEVEL]
    if unknown:
        raise PolicyError(f"unknown key {unknown[0]!r}; a policy holds 'name' and [[criterion]] tables", file=file,
                          line=_key_line(text, 1, unknown[0]))
    tables = data.get("criterion")
    if not isinstance(tables, list) or not tables:
        raise PolicyError("no criterion: expected one or more [[criterion]] tables", file=file, line=1)
    headers = _headers(text)
    if any(not isinstance(table, Mapping) for table in tables):
        raise PolicyError("each criterion is a table of keys ([[criterion]])", file=file, line=headers[0] if headers else 1)
    criteria = [_criterion(table, i, headers[i] if i < len(headers) else 1, text, file) for i, table in enumerate(tables)]
    name = data.get("name", Path(file).stem)
    try:
        return Policy(name=str(name), source=file, criteria=criteria)
    except ValidationError as error:
        line = headers[0] if headers else 1
        raise PolicyError(str(error.errors()[0]["msg"]).removeprefix("Value error, "), file=file, line=line) from None


def _criterion(table: Any, index: int, header: int, text: str, file: str) -> Criterion:  # Any: TOML values
    label = f"criterion {index + 1}" + (f" ({table.get('name')!r})" if isinstance(table, dict) and table.get("name") else "")
    for key in table:
        if key not in TOML_KEYS:
            raise PolicyError(f"{label}: unknown key {key!r}; expected one of: {', '.join(TOML_KEYS)}",
                              file=file, line=_key_line(text, header, key))
    try:
        return Criterion.model_validate({**table, "source": f"{file}:{header}"})
    except ValidationError as error:
        first = error.errors()[0]
        key = str(first["loc"][0]) if first["loc"] else None
        what = str(first["msg"]).removeprefix("Value error, ")
        if first["type"] == "missing":
            what = f"the key {key!r} is missing"
        elif key is not None:
            what = f"{key}: {what} (got {first.get('input')!r})"
        line = _key_line(text, header, key) if key and first["type"] != "missing" else header
        raise PolicyError(f"{label}: {what}", file=file, line=line) from None
