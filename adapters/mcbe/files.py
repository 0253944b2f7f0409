"""McBE data: the published spreadsheets (one .xlsx per category), or the same rows as JSONL/CSV.

Columns: ``context``, ``sentence`` (with ``[PLH]``), ``words`` (separated by the
full-width comma ``，``; in JSONL also a list), ``subtype``, ``explanation``,
``score`` (human severity 0–10). The category is the file name (``gender.xlsx``;
Chinese names such as ``性别.xlsx`` map to the same keys), or an optional
``category`` column. ``data.path`` may be one file or a folder of them.

CSV and JSONL files are read through ``csv_table`` / ``jsonl_rows`` (UTF-8, or
Unicode with a byte order mark). A file that cannot be decoded or parsed, a
file with a header and no rows, a CSV row with more filled cells than the
header, and two files giving rows of one category are ``DataError``s naming
file and row; a row repeating an earlier row's category, context, sentence and
words is left out and counted in the dataset's notes.

With no path, the embedded fixture under ``adapters/bundled/mcbe/`` is used: a few
original sentences per category written for culturebias in the published format
(not McBE data), so the pipeline runs out of the box.
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

from culturebias.adapters.datasets.csv_table import parse_table
from culturebias.adapters.datasets.jsonl_rows import jsonl_records
from culturebias.adapters.datasets.text_files import decode_text
from culturebias.adapters.mcbe.xlsx import XlsxError, read_first_sheet
from culturebias.domain.errors import DataError, MissingDataError
from culturebias.domain.fingerprint import fingerprint_bytes
from culturebias.domain.mcbe.instances import BEI, PLACEHOLDER, McBEDataset, split_words
from culturebias.domain.mcbe.taxonomy import PAPER_CATEGORIES, SEVERITY_MAX, SEVERITY_MIN, canonical_category, legacy_label

REQUIRED_COLUMNS = ("context", "sentence", "words", "subtype", "explanation", "score")
SUFFIXES = (".xlsx", ".jsonl", ".csv")
BUNDLED_PACKAGE = "culturebias.adapters.bundled"


def _text(value: Any) -> str:  # Any: a JSON, CSV or spreadsheet cell
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    return str(value).strip()


def bei_from_fields(fields: dict[str, Any], *, file: str, row: int, category: str) -> tuple[BEI, int]:  # Any: a record's cells (JSON, CSV or spreadsheet)
    """One BEI from a row's fields; also the number of empty word entries dropped. Raises DataError."""
    sentence = _text(fields.get("sentence"))
    if not sentence:
        raise DataError("empty sentence", file=file, row=row, field="sentence")
    if PLACEHOLDER not in sentence:
        raise DataError(f"the sentence has no {PLACEHOLDER} placeholder: {sentence!r}", file=file, row=row, field="sentence")
    raw_words = fields.get("words")
    parts = [_text(w) for w in raw_words] if isinstance(raw_words, list) else split_words(_text(raw_words))
    words = [w for w in parts if w]
    if not words:
        raise DataError("no substitution words", file=file, row=row, field="words")
    duplicates = sorted({w for w in words if words.count(w) > 1})
    if duplicates:
        raise DataError(f"repeated substitution words {duplicates}", file=file, row=row, field="words")
    subtype = _text(fields.get("subtype"))
    if not subtype:
        raise DataError("empty subtype", file=file, row=row, field="subtype")
    explanation = _text(fields.get("explanation"))
    if not explanation:
        raise DataError("empty explanation", file=file, row=row, field="explanation")
    raw_score = fields.get("score")
    try:
        score = float(_text(raw_score)) if not isinstance(raw_score, (int, float)) else float(raw_score)
    except ValueError:
        raise DataError(f"score is not a number: {raw_score!r}", file=file, row=row, field="score") from None
    if not math.isfinite(score) or not SEVERITY_MIN <= score <= SEVERITY_MAX:
        raise DataError(f"score {raw_score!r} is outside [0, 10]", file=file, row=row, field="score")
    own_category = _text(fields.get("category"))
    bei = BEI(
        category=canonical_category(own_category) if own_category else category,
        context=_text(fields.get("context")),
        sentence=sentence,
        words=tuple(words),
        subtype=subtype,
        explanation=explanation,
        score=score,
        source=file,
        row=row,
    )
    return bei, len(parts) - len(words)


def _blank(fields: dict[str, Any]) -> bool:  # Any: a record's cells
    return all(_text(v) == "" for v in fields.values()) if fields else True


def _xlsx_records(data: bytes, file: str) -> Iterator[tuple[int, dict[str, Any]]]:  # Any: spreadsheet cells
    try:
        rows = read_first_sheet(data)
    except XlsxError as error:
        raise DataError(str(error), file=file) from None
    filled = [i for i, (_, cells) in enumerate(rows) if any(_text(c) for c in cells)]
    if not filled:
        raise DataError("the first worksheet is empty", file=file)
    header_row, header_cells = rows[filled[0]]
    header = [_text(h).lower() for h in header_cells]
    _check_columns(header, file, header_row)
    for number, cells in rows[filled[0] + 1 :]:
        yield number, {name: cells[i] if i < len(cells) else None for i, name in enumerate(header) if name}


def _csv_records(data: bytes, file: str) -> Iterator[tuple[int, dict[str, Any]]]:  # Any: CSV cells
    table = parse_table(decode_text(data, file), file)
    header = [h.strip().lower() for h in table.header]
    _check_columns(header, file, 1)
    # rows are numbered by record (header = row 1), not by line: McBE item ids have always been
    for number, (_, cells) in enumerate(table.records, start=2):
        if any(cell.strip() for cell in cells[len(header) :]):
            raise DataError(
                f"{len(cells)} cells, the header has {len(header)}: an unquoted comma in a cell?", file=file, row=number
            )
        yield number, {name: cells[i] if i < len(cells) else None for i, name in enumerate(header)}


def _jsonl_records(data: bytes, file: str) -> Iterator[tuple[int, dict[str, Any]]]:  # Any: JSON records
    for number, record in jsonl_records(decode_text(data, file), file):
        record = {str(k).strip().lower(): v for k, v in record.items()}
        missing = [c for c in REQUIRED_COLUMNS if c not in record]
        if missing:
            raise DataError(f"missing keys {missing}", file=file, row=number, field=missing[0])
        yield number, record


def _check_columns(header: list[str], file: str, row: int) -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise DataError(f"missing columns {missing} (found {header})", file=file, row=row, field=missing[0])


READERS = {".xlsx": _xlsx_records, ".csv": _csv_records, ".jsonl": _jsonl_records}


def parse_files(files: list[tuple[str, bytes]]) -> McBEDataset:
    """BEIs from ``(file name, bytes)`` pairs; the category comes from each file's name."""
    instances: list[BEI] = []
    blank_rows = 0
    dropped_words = 0
    by_id: dict[str, BEI] = {}
    by_content: dict[tuple, BEI] = {}
    repeats: list[tuple[BEI, BEI]] = []  # (left-out row, the earlier row it repeats)
    relabelled: dict[str, None] = {}  # culturebias's earlier category labels read as the paper's
    for name, data in files:
        suffix = Path(name).suffix.lower()
        category = canonical_category(Path(name).stem)
        if legacy_label(Path(name).stem):
            relabelled.setdefault(f"{Path(name).stem} → {category} (file {name})", None)
        rows = 0
        for number, fields in READERS[suffix](data, name):
            if _blank(fields):
                blank_rows += 1
                continue
            rows += 1
            bei, dropped = bei_from_fields(fields, file=name, row=number, category=category)
            cell = _text(fields.get("category"))
            if cell and legacy_label(cell):
                relabelled.setdefault(f"{cell} → {bei.category} (file {name}, column category, first at row {number})", None)
            earlier = by_id.get(bei.item_id)
            if earlier is not None:
                raise DataError(
                    f"item id {bei.item_id} is also {earlier.source} row {earlier.row}: "
                    "two files give rows of one category; keep one file per category",
                    file=name,
                    row=number,
                )
            by_id[bei.item_id] = bei
            same = by_content.setdefault((bei.category, bei.context, bei.sentence, bei.words), bei)
            if same is not bei:
                repeats.append((bei, same))
                continue
            dropped_words += dropped
            instances.append(bei)
        if not rows:
            raise DataError("no BEI rows: the file has a header and no rows", file=name, row=2)
    if not instances:
        raise DataError("no BEI found", file=", ".join(n for n, _ in files) or None)
    notes = []
    if blank_rows:
        notes.append(f"{blank_rows} blank row(s) skipped")
    if repeats:
        left, first = repeats[0]
        notes.append(
            f"{len(repeats)} row(s) repeating an earlier row's category, context, sentence and words left out "
            f"(evaluated once); first: {left.source} row {left.row} repeats {first.source} row {first.row}"
        )
    if dropped_words:
        notes.append(f"{dropped_words} empty word entr(y/ies) dropped from 'words' cells (trailing separators)")
    if relabelled:
        notes.append(
            "category labels of earlier culturebias versions read as the paper's (PROTOCOLS §3): " + "; ".join(relabelled)
        )
    extra = [c for c in dict.fromkeys(b.category for b in instances) if c not in PAPER_CATEGORIES]
    if extra:
        notes.append(
            f"categories outside the paper's twelve, read under their own names: {', '.join(extra)} "
            f"(the twelve: {', '.join(PAPER_CATEGORIES)})"
        )
    return McBEDataset(tuple(instances), tuple(notes))


def _data_file(name: str) -> bool:
    return name.lower().endswith(SUFFIXES) and not name.startswith(("~$", "."))


class McBEFiles:
    """DatasetSource for McBE. ``path=None`` → the embedded fixture."""

    def __init__(self, path: str | None = None):
        self._path = Path(path).expanduser() if path else None
        self._files: list[tuple[str, bytes]] | None = None

    def _read(self) -> list[tuple[str, bytes]]:
        if self._files is not None:
            return self._files
        if self._path is None:
            folder = resources.files(BUNDLED_PACKAGE).joinpath("mcbe")
            files = sorted((e.name, e.read_bytes()) for e in folder.iterdir() if e.is_file() and _data_file(e.name))
        elif self._path.is_file():
            if not _data_file(self._path.name):
                raise MissingDataError(f"{self._path} is not a McBE file (expected {', '.join(SUFFIXES)})")
            files = [(self._path.name, self._path.read_bytes())]
        elif self._path.is_dir():
            files = sorted((p.name, p.read_bytes()) for p in self._path.iterdir() if p.is_file() and _data_file(p.name))
            if not files:
                raise MissingDataError(
                    f"no McBE files (*.xlsx, *.jsonl, *.csv) in {self._path}; download the dataset "
                    "(huggingface.co/datasets/Velikaya/McBE, folder xlsx_files) and point at it with --set data.path=DIR"
                )
        else:
            raise MissingDataError(
                f"McBE data not found at {self._path}; download it from huggingface.co/datasets/Velikaya/McBE "
                "(folder xlsx_files) and point at it with --set data.path=DIR"
            )
        self._files = files
        return files

    def describe(self) -> str:
        if self._path is None:
            names = ", ".join(Path(n).stem for n, _ in self._read())
            return f"embedded McBE-format fixture ({names}; original sentences written for culturebias, not McBE data)"
        return f"McBE files at {self._path} ({len(self._read())} file(s))"

    def fingerprint(self) -> str:
        return fingerprint_bytes(self._read())

    def load(self) -> McBEDataset:
        return parse_files(self._read())
