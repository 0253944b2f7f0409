"""LIBRA data: a triplet file and a glossary of official definitions, both JSON Lines.

``data.path`` is a folder holding ``triplets.jsonl`` (and optionally
``glossary.jsonl``), or the triplet file itself (a ``glossary.jsonl`` beside it
is read too). Without a path, the embedded New Zealand English fixture under
``adapters/bundled/libra/`` is used: triplets and definitions written for
culturebias (not the LIBRA authors' data), so the pipeline runs out of the box.

Triplet line (UTF-8, or Unicode with a byte order mark, read through
``text_files``; one JSON object per line, blank lines ignored)::

    {"id": "nz-001", "category": "race/ethnicity", "group": "Māori",
     "sentence": "The Māori boys were picked for ...", "target": "Māori",
     "anti_stereotype": "Pākehā", "unrelated": "teaspoon"}

``sentence`` holds the stereotyped sentence S and ``target`` the span ω in it
(its first occurrence, or the one starting at character ``target_start``).
Instead of ``sentence`` a line may give ``left`` and ``right`` (U_left and
U_right, S = left + target + right), as a construction pipeline writes them.
``id`` defaults to ``line-<n>``; other fields are ignored.

Glossary line: ``{"term": "whānau", "definition": "...", "variants": ["whanau"], "source": "..."}``
(``variants`` and ``source`` optional; a term may be a phrase, "tangata whenua").

StereoSet, for the paper's iCAT column: StereoSet's own ``dev.json`` (or test
file) in the same folder, named ``stereoset.json`` (or left as ``dev.json``);
its shape is described in ``stereoset_files``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Iterator

from culturebias.adapters.datasets.jsonl_rows import jsonl_records
from culturebias.adapters.libra.stereoset_files import load_stereoset
from culturebias.adapters.datasets.text_files import decode_text
from culturebias.domain.errors import DataError, MissingDataError
from culturebias.domain.fingerprint import fingerprint_bytes
from culturebias.domain.libra.triplets import GlossaryEntry, LibraDataset, Triplet

TRIPLETS = "triplets.jsonl"
GLOSSARY = "glossary.jsonl"
STEREOSET = ("stereoset.json", "dev.json")  # the first one found beside the triplets is read
BUNDLED_PACKAGE = "culturebias.adapters.bundled"


def _json_lines(name: str, text: str) -> Iterator[tuple[int, dict[str, Any]]]:  # Any: JSON records
    return jsonl_records(text, name)


def _string(fields: dict[str, Any], key: str, *, file: str, row: int, required: bool = True, empty_ok: bool = False) -> str:  # Any: JSON records
    value = fields.get(key)
    if value is None:
        if required:
            raise DataError("missing", file=file, row=row, field=key)
        return ""
    if not isinstance(value, str):
        raise DataError(f"must be a string, got {type(value).__name__}", file=file, row=row, field=key)
    if required and not empty_ok and not value.strip():
        raise DataError("empty", file=file, row=row, field=key)
    return value


def triplet_from_fields(fields: dict[str, Any], *, file: str, row: int) -> Triplet:  # Any: JSON records
    target = _string(fields, "target", file=file, row=row)
    if "sentence" in fields:
        sentence = _string(fields, "sentence", file=file, row=row)
        start = fields.get("target_start")
        if start is None:
            start = sentence.find(target)
            if start < 0:
                raise DataError(f"target {target!r} does not occur in the sentence", file=file, row=row, field="target")
        elif not isinstance(start, int) or isinstance(start, bool) or sentence[start : start + len(target)] != target:
            raise DataError(
                f"the sentence does not hold target {target!r} at {start!r}", file=file, row=row, field="target_start"
            )
        left, right = sentence[:start], sentence[start + len(target) :]
    elif "left" in fields or "right" in fields:
        left = _string(fields, "left", file=file, row=row, empty_ok=True)
        right = _string(fields, "right", file=file, row=row, empty_ok=True)
    else:
        raise DataError("needs either 'sentence' or 'left' and 'right'", file=file, row=row, field="sentence")
    raw_id = fields.get("id")
    if raw_id is not None and not isinstance(raw_id, (str, int)):
        raise DataError("must be a string", file=file, row=row, field="id")
    return Triplet(
        id=str(raw_id) if raw_id is not None and str(raw_id).strip() else f"line-{row}",
        left=left,
        target=target,
        right=right,
        anti_stereotype=_string(fields, "anti_stereotype", file=file, row=row),
        unrelated=_string(fields, "unrelated", file=file, row=row),
        group=_string(fields, "group", file=file, row=row).strip(),
        category=_string(fields, "category", file=file, row=row).strip(),
    )


def glossary_entry_from_fields(fields: dict[str, Any], *, file: str, row: int) -> GlossaryEntry:  # Any: JSON records
    term = _string(fields, "term", file=file, row=row).strip()
    definition = _string(fields, "definition", file=file, row=row).strip()
    variants = fields.get("variants") or []
    if not isinstance(variants, list) or not all(isinstance(v, str) and v.strip() for v in variants):
        raise DataError("must be a list of non-empty strings", file=file, row=row, field="variants")
    source = fields.get("source")
    if source is not None and not isinstance(source, str):
        raise DataError("must be a string", file=file, row=row, field="source")
    return GlossaryEntry(term, definition, tuple(v.strip() for v in variants), source)


def parse_triplets(name: str, text: str) -> list[Triplet]:
    triplets: list[Triplet] = []
    seen: dict[str, int] = {}
    for row, fields in _json_lines(name, text):
        triplet = triplet_from_fields(fields, file=name, row=row)
        if triplet.id in seen:
            raise DataError(f"id {triplet.id!r} already used on row {seen[triplet.id]}", file=name, row=row, field="id")
        seen[triplet.id] = row
        triplets.append(triplet)
    if not triplets:
        raise DataError("no triplets", file=name)
    return triplets


def parse_glossary(name: str, text: str) -> list[GlossaryEntry]:
    entries: list[GlossaryEntry] = []
    seen: dict[str, int] = {}
    for row, fields in _json_lines(name, text):
        entry = glossary_entry_from_fields(fields, file=name, row=row)
        key = entry.term.casefold()
        if key in seen:
            raise DataError(f"term {entry.term!r} already defined on row {seen[key]}", file=name, row=row, field="term")
        seen[key] = row
        entries.append(entry)
    return entries


class LibraFiles:
    def __init__(self, path: str | None):
        self._path = path

    def _files(self) -> list[tuple[str, bytes]]:
        """(name, bytes) of the triplet file, then the glossary and StereoSet where there are."""
        if self._path is None:
            root = resources.files(BUNDLED_PACKAGE) / "libra"
            return [(f"embedded:{name}", (root / name).read_bytes()) for name in (TRIPLETS, GLOSSARY)]
        path = Path(self._path).expanduser()
        if path.is_dir():
            triplets, glossary = path / TRIPLETS, path / GLOSSARY
        elif path.is_file():
            triplets, glossary = path, path.parent / GLOSSARY
        else:
            raise MissingDataError(f"data.path {path} does not exist (a folder with {TRIPLETS}, or a triplet file)")
        if not triplets.is_file():
            raise MissingDataError(f"data.path {path}: no {TRIPLETS} in the folder")
        files = [(str(triplets), triplets.read_bytes())]
        if glossary.is_file() and glossary != triplets:
            files.append((str(glossary), glossary.read_bytes()))
        stereoset = next((triplets.parent / n for n in STEREOSET if (triplets.parent / n).is_file()), None)
        if stereoset is not None:
            files.append((str(stereoset), stereoset.read_bytes()))
        return files

    def describe(self) -> str:
        if self._path is None:
            return "embedded New Zealand English LIBRA fixture (written for culturebias)"
        return f"LIBRA triplets at {Path(self._path).expanduser()}"

    def fingerprint(self) -> str:
        return fingerprint_bytes([(Path(name).name, data) for name, data in self._files()])

    def load(self) -> LibraDataset:
        files = self._files()
        stereoset = [(name, data) for name, data in files if Path(name).name in STEREOSET]
        files = [(name, data) for name, data in files if Path(name).name not in STEREOSET]
        decoded = [(name, decode_text(data, name)) for name, data in files]
        triplets = parse_triplets(*decoded[0])
        glossary = parse_glossary(*decoded[1]) if len(decoded) > 1 else []
        return LibraDataset(
            tuple(triplets),
            tuple(glossary),
            tuple(name for name, _ in files + stereoset),
            stereoset=load_stereoset(*stereoset[0]) if stereoset else None,
        )
