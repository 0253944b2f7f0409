"""Reading a LIBRA build's inputs (corpus, seeds) and writing/reading its review sheet."""

from __future__ import annotations

import csv
import io
import json
import tomllib
from pathlib import Path
from typing import Any, Iterator

from culturebias.adapters.datasets.csv_table import parse_table
from culturebias.adapters.datasets.jsonl_rows import jsonl_records
from culturebias.adapters.libra.files import parse_glossary
from culturebias.adapters.datasets.text_files import decode_text
from culturebias.domain.errors import ConfigError, DataError
from culturebias.domain.libra_build.keywords import SeedGroup

CORPUS_SUFFIXES = (".txt", ".jsonl", ".csv")
SHEET_FIELDS = ("id", "decision", "group", "category", "left", "target", "right", "anti_stereotype", "unrelated")


def _corpus_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise DataError("no such file or folder", file=str(path))
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in CORPUS_SUFFIXES)


def read_corpus(path: str | Path, *, text_field: str = "text") -> list[tuple[str, str]]:
    """(document id, text) for every document: a .txt file is one document, a JSONL line or CSV row is one."""
    root = Path(path)
    documents: list[tuple[str, str]] = []
    for file in _corpus_files(root):
        name = str(file)
        text = decode_text(file.read_bytes(), name)
        label = file.relative_to(root).as_posix() if root.is_dir() else file.name
        suffix = file.suffix.lower()
        if suffix == ".jsonl":
            for row, record in jsonl_records(text, name):
                value = record.get(text_field)
                if not isinstance(value, str):
                    raise DataError("missing or not a string", file=name, row=row, field=text_field)
                documents.append((f"{label}:{row}", value))
        elif suffix == ".csv":
            table = parse_table(text, name)
            if text_field not in table.header:
                raise DataError("no such column", file=name, row=1, field=text_field)
            for row, record in table.dicts():
                documents.append((f"{label}:{row}", record[text_field]))
        else:
            documents.append((label, text))
    documents = [(ident, text) for ident, text in documents if text.strip()]
    if not documents:
        raise DataError("the corpus holds no document with text", file=str(root))
    return documents


def read_seeds(path: str | Path) -> tuple[list[SeedGroup], dict[str, str]]:
    """Seed groups and the antonyms the file gives (a group's ``{"anti": {keyword: term}}``)."""
    file = Path(path)
    name = str(file)
    text = decode_text(file.read_bytes(), name)
    try:
        data: Any = tomllib.loads(text) if file.suffix.lower() == ".toml" else json.loads(text)  # Any: TOML or JSON values
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as error:
        raise DataError(f"not {'TOML' if file.suffix.lower() == '.toml' else 'JSON'}: {error}", file=name) from None
    if not isinstance(data, dict) or not data:
        raise DataError("must map at least one social group to its seed keywords", file=name)
    groups: list[SeedGroup] = []
    antonyms: dict[str, str] = {}
    for group, value in data.items():
        category = counterpart = None
        if isinstance(value, dict):
            category = value.get("category")
            counterpart = value.get("counterpart")
            if counterpart is not None and not isinstance(counterpart, str):
                raise DataError("must be the name of another group", file=name, field=f"{group}.counterpart")
            anti = value.get("anti", {})
            if not isinstance(anti, dict) or not all(isinstance(v, str) for v in anti.values()):
                raise DataError("must map keywords to terms", file=name, field=f"{group}.anti")
            antonyms.update(anti)
            value = value.get("keywords")
        if not isinstance(value, list) or not value or not all(isinstance(k, str) and k.strip() for k in value):
            raise DataError("must be a non-empty list of keywords", file=name, field=str(group))
        if category is not None and not isinstance(category, str):
            raise DataError("must be a string", file=name, field=f"{group}.category")
        groups.append(SeedGroup(group=str(group).strip(), category=category, keywords=tuple(k.strip() for k in value),
                                counterpart=counterpart.strip() if counterpart else None))
    return groups, antonyms


def sheet_text(rows: list[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=SHEET_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def write_xlsx(path: Path, rows: list[dict[str, str]]) -> None:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "review"
    sheet.append(list(SHEET_FIELDS))
    for row in rows:
        sheet.append([row[field] for field in SHEET_FIELDS])
    tmp = path.with_name(f".{path.name}.partial")
    book.save(tmp)
    tmp.replace(path)


def read_sheet(path: str | Path) -> Iterator[tuple[int, dict[str, str]]]:
    """(row number, fields) of an edited review sheet, header = row 1 (CSV or XLSX)."""
    file = Path(path)
    name = str(file)
    if file.suffix.lower() == ".xlsx":
        from openpyxl import load_workbook

        book = load_workbook(file, read_only=True)
        rows = list(book.active.iter_rows(values_only=True))
        header = [str(cell or "") for cell in rows[0]] if rows else []
        records = [
            (n, {h: ("" if c is None else str(c)) for h, c in zip(header, row)}) for n, row in enumerate(rows[1:], 2)
        ]
    else:
        reader = csv.DictReader(io.StringIO(decode_text(file.read_bytes(), name)))
        header = list(reader.fieldnames or [])
        records = [(n, {k: v or "" for k, v in rec.items() if k is not None}) for n, rec in enumerate(reader, 2)]
    missing = [field for field in SHEET_FIELDS if field not in header]
    if missing:
        raise DataError("missing column", file=name, row=1, field=missing[0])
    yield from records


def read_glossary(path: str | Path) -> dict[str, str]:
    """term -> definition of a glossary.jsonl as ``culturebias run libra`` reads it (the user's official definitions)."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigError(f"glossary={path}: no such file")
    entries = parse_glossary(str(file), decode_text(file.read_bytes(), str(file)))
    return {entry.term: entry.definition for entry in entries}


class CorpusFiles:
    """``ports.libra_build_steps.BuildInputs`` on local files."""

    def read_corpus(self, path: str | Path, *, text_field: str = "text") -> list[tuple[str, str]]:
        return read_corpus(path, text_field=text_field)

    def read_seeds(self, path: str | Path) -> tuple[list[SeedGroup], dict[str, str]]:
        return read_seeds(path)

    def read_glossary(self, path: str | Path) -> dict[str, str]:
        return read_glossary(path)
