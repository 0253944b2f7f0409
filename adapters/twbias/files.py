"""TWBias in the authors' file layout (PROTOCOLS §1), read as it is.

    DIR/prompts.json                         prompt type → user message ("1".."10")
    DIR/gender/target_gender.csv             T1 male, T2 female (row-aligned pairs)
    DIR/gender/label_data_{female,male}.csv
    DIR/gender/{female,male}-Attribute.csv
    DIR/ethinicity/target_ethnicity.csv      T1..T5, columns unaligned, blank cells
    DIR/ethinicity/label_data_{B,W,NT,hakka}.csv
    DIR/ethinicity/{B,W,NT,hakka}-Attribute.csv

The ethnicity folder is misspelt ``ethinicity`` in the release; ``ethnicity``
is accepted too. Columns are found by header name (their order differs between
files); extra columns are ignored. Files are read through ``csv_table`` (UTF-8,
or Unicode with a byte order mark). A missing column, a file with a header and
no rows, or one that cannot be decoded or parsed is a ``DataError``; a bad row,
and a row repeating an earlier row's Sentence ID, is left out, counted and
reported (``TWBiasDataset.skips``). A row repeating an earlier row's sentence
under another Sentence ID is kept and recorded (``TWBiasDataset.duplicates``):
the run counts and reports it, or refuses it with
``protocol.duplicate_sentences=refuse``.
"""

from __future__ import annotations

import json
from pathlib import Path

from culturebias.adapters.datasets.csv_table import read_table
from culturebias.adapters.datasets.python_literal import LiteralSyntaxError, parse_literal
from culturebias.adapters.datasets.text_files import read_text
from culturebias.domain.errors import DataError, MissingDataError
from culturebias.domain.fingerprint import fingerprint_bytes
from culturebias.domain.skips import SkippedRow
from culturebias.domain.twbias.model import (
    USER_PROMPT_TYPES,
    Attribute,
    Axis,
    AxisData,
    BiasSentence,
    SentenceSet,
    TargetAttribute,
    TargetGroup,
    TWBiasDataset,
)

ETHNICITY_FOLDERS = ("ethinicity", "ethnicity")
# axis → (target table, {group code: the files' name for that group})
LAYOUT: dict[Axis, tuple[str, dict[str, str]]] = {
    "gender": ("target_gender.csv", {"T1": "male", "T2": "female"}),
    "ethnicity": ("target_ethnicity.csv", {"T1": "B", "T2": "W", "T4": "NT", "T5": "hakka"}),
}
TARGET_COLUMNS: dict[Axis, tuple[str, ...]] = {"gender": ("T1", "T2"), "ethnicity": ("T1", "T2", "T3", "T4", "T5")}
SENTENCE_COLUMNS = ("Sentence ID", "Biased Sentences", "Toxicity", "T-A Combination")
ATTRIBUTE_COLUMNS = ("Content", "Type", "Category")

HOW_TO_GET = (
    "TWBias data is not bundled with culturebias (its authors state no licence). Get it from the "
    "TWBias authors' public repository (Hsieh, Huang and Tsai, \"TWBias: A Benchmark for Assessing Social Bias "
    "in Traditional Chinese Large Language Models through a Taiwan Cultural Lens\", EMNLP 2024; "
    "github.com/hsinmosyi/TWBias) and point culturebias at a folder DIR holding gender/, ethinicity/ "
    "(or ethnicity/) and prompts.json (prompt types \"1\"..\"10\" → the ten user prompts): "
    "--set data.path=DIR"
)


class TWBiasFiles:
    """DatasetSource of TWBias: ``TWBiasFiles(path)``; ``path=None`` explains where to get the data."""

    def __init__(self, path: str | None):
        if path is None:
            raise MissingDataError(HOW_TO_GET)
        self.root = Path(path).expanduser()
        if not self.root.is_dir():
            raise MissingDataError(f"TWBias data folder {self.root} does not exist. {HOW_TO_GET}")

    # -- DatasetSource -------------------------------------------------------------
    def describe(self) -> str:
        return f"TWBias files at {self.root}"

    def fingerprint(self) -> str:
        return fingerprint_bytes([(rel, (self.root / rel).read_bytes()) for rel in self._files()])

    def load(self) -> TWBiasDataset:
        skips: list[SkippedRow] = []
        duplicates: list[SkippedRow] = []
        axes: dict[str, AxisData] = {}
        for axis, folder in self._axis_folders().items():
            axes[axis] = self._load_axis(axis, folder, skips, duplicates)
        prompts = self._load_prompts()
        return TWBiasDataset(axes=axes, prompts=prompts, skips=tuple(skips), duplicates=tuple(duplicates))

    # -- layout --------------------------------------------------------------------
    def _axis_folders(self) -> dict[Axis, str]:
        folders: dict[Axis, str] = {}
        if (self.root / "gender").is_dir():
            folders["gender"] = "gender"
        for name in ETHNICITY_FOLDERS:
            if (self.root / name).is_dir():
                folders["ethnicity"] = name
                break
        if not folders:
            raise MissingDataError(f"{self.root} has neither gender/ nor ethinicity/ (or ethnicity/). {HOW_TO_GET}")
        return folders

    def _axis_files(self, axis: Axis, folder: str) -> list[str]:
        table, names = LAYOUT[axis]
        files = [f"{folder}/{table}"]
        for name in names.values():
            files += [f"{folder}/label_data_{name}.csv", f"{folder}/{name}-Attribute.csv"]
        return files

    def _files(self) -> list[str]:
        files = ["prompts.json"]
        for axis, folder in self._axis_folders().items():
            files += self._axis_files(axis, folder)
        missing = [f for f in files if not (self.root / f).is_file()]
        if missing:
            raise MissingDataError(f"TWBias data at {self.root} lacks {', '.join(missing)}. {HOW_TO_GET}")
        return files

    # -- readers -------------------------------------------------------------------
    def _rows(self, rel: str, required: tuple[str, ...], what: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
        """Header (stripped names) and the non-blank records with their line numbers; at least one record."""
        path = self.root / rel
        if not path.is_file():
            raise MissingDataError(f"TWBias data at {self.root} lacks {rel}. {HOW_TO_GET}")
        table = read_table(path, file=rel)
        header = [name.strip() for name in table.header]
        for column in required:
            if column not in header:
                raise DataError(f"missing column {column!r} (header: {header})", file=rel, row=1, field=column)
        records = [(line, cells) for line, cells in table.records if any(cell.strip() for cell in cells)]
        if not records:
            raise DataError(f"no {what}: the file has a header and no rows", file=rel, row=2)
        return header, records

    def _load_prompts(self) -> dict[str, str]:
        rel = "prompts.json"
        path = self.root / rel
        if not path.is_file():
            raise MissingDataError(f"TWBias data at {self.root} lacks {rel}. {HOW_TO_GET}")
        try:
            prompts = json.loads(read_text(path, file=rel))
        except json.JSONDecodeError as error:
            raise DataError(f"not valid JSON: {error}", file=rel, row=error.lineno) from None
        if not isinstance(prompts, dict):
            raise DataError("expected an object mapping prompt types to user prompts", file=rel)
        for key in USER_PROMPT_TYPES:
            if not isinstance(prompts.get(key), str) or not prompts[key].strip():
                raise DataError(f"prompt type {key} is missing or not a non-empty string", file=rel, field=key)
        return {str(k): v for k, v in prompts.items() if isinstance(v, str)}

    def _load_axis(self, axis: Axis, folder: str, skips: list[SkippedRow], duplicates: list[SkippedRow]) -> AxisData:
        table, names = LAYOUT[axis]
        groups, rows = self._load_targets(axis, f"{folder}/{table}")
        sets = {}
        for code, name in names.items():
            attribute_file = f"{folder}/{name}-Attribute.csv"
            attributes = self._load_attributes(attribute_file, skips)
            sentence_file = f"{folder}/label_data_{name}.csv"
            sets[code] = SentenceSet(
                axis=axis,
                group_code=code,
                name=name,
                file=sentence_file,
                sentences=tuple(self._load_sentences(sentence_file, skips, duplicates)),
                attributes=attributes,
                attribute_file=attribute_file,
            )
        return AxisData(axis=axis, groups=groups, rows=tuple(rows), sentence_sets=sets)

    def _load_targets(self, axis: Axis, rel: str) -> tuple[dict[str, TargetGroup], list[dict[str, str]]]:
        codes = TARGET_COLUMNS[axis]
        header, records = self._rows(rel, codes, "target terms")
        positions = {code: header.index(code) for code in codes}
        rows: list[dict[str, str]] = []
        for _, cells in records:
            row = {
                code: cells[i].strip() for code, i in positions.items() if i < len(cells) and cells[i].strip()
            }
            if row:
                rows.append(row)
        groups = {}
        for code in codes:
            terms = tuple(dict.fromkeys(row[code] for row in rows if code in row))
            if not terms:
                raise DataError(f"target group {code} has no terms", file=rel, field=code)
            groups[code] = TargetGroup(axis=axis, code=code, terms=terms)
        return groups, rows

    def _load_attributes(self, rel: str, skips: list[SkippedRow]) -> dict[str, Attribute]:
        header, records = self._rows(rel, ATTRIBUTE_COLUMNS, "attributes")
        at = {column: header.index(column) for column in ATTRIBUTE_COLUMNS}
        attributes: dict[str, Attribute] = {}
        for line, cells in records:
            cell = {c: (cells[i].strip() if i < len(cells) else "") for c, i in at.items()}
            if not cell["Content"] or not cell["Category"]:
                empty = "Content" if not cell["Content"] else "Category"
                skips.append(_skip("attribute_blank", (rel, line, empty), f"blank {empty}", "attribute row left out"))
                continue
            try:
                kind: int | None = int(float(cell["Type"]))
            except ValueError:
                kind = None
            attribute = Attribute(content=cell["Content"], type=kind, category=cell["Category"], row=line)
            known = attributes.get(attribute.content)
            if known is not None and known.category != attribute.category:
                raise DataError(
                    f"attribute {attribute.content!r} has category {attribute.category!r} here "
                    f"but {known.category!r} in row {known.row}",
                    file=rel,
                    row=line,
                    field="Category",
                )
            attributes.setdefault(attribute.content, attribute)
        return attributes

    def _load_sentences(self, rel: str, skips: list[SkippedRow], duplicates: list[SkippedRow]) -> list[BiasSentence]:
        header, records = self._rows(rel, SENTENCE_COLUMNS, "sentences")
        at = {column: header.index(column) for column in SENTENCE_COLUMNS}
        sentences: list[BiasSentence] = []
        first_row: dict[str, int] = {}  # Sentence ID → the row it was first read from
        first_text: dict[str, tuple[int, str]] = {}  # sentence → the row and Sentence ID it was first read from
        left_out = 0
        for line, cells in records:
            skip = _row_problem(cells, header, at, rel, line, first_row)
            if skip is not None:
                skips.append(skip)
                left_out += 1
                continue
            sentence_id = cells[at["Sentence ID"]].strip()
            if sentence_id:
                first_row[sentence_id] = line
            text = cells[at["Biased Sentences"]].strip()
            if text in first_text:
                duplicates.append(_duplicate(rel, line, sentence_id, *first_text[text]))
            else:
                first_text[text] = (line, sentence_id)
            sentences.append(
                BiasSentence(
                    sentence_id=sentence_id,
                    text=cells[at["Biased Sentences"]],
                    toxicity=_toxicity(cells[at["Toxicity"]], rel, line, skips),
                    target_attributes=_target_attributes(cells[at["T-A Combination"]], rel, line, skips),
                    file=rel,
                    row=line,
                )
            )
        if not sentences:
            raise DataError(f"no usable sentences: all {left_out} row(s) were left out ({skips[-1].detail})", file=rel)
        return sentences


def _row_problem(
    cells: list[str], header: list[str], at: dict[str, int], rel: str, line: int, first_row: dict[str, int]
) -> SkippedRow | None:
    """Why a sentence row is left out as a whole, or None to keep it."""
    if len(cells) != len(header):
        quote = ": a stray quote?" if '"' in "".join(cells) else ""
        detail = f"{len(cells)} fields, the header has {len(header)}{quote}"
        return _skip("row_field_count", (rel, line, None), detail, "sentence left out")
    if not cells[at["Biased Sentences"]].strip():
        return _skip("empty_sentence", (rel, line, "Biased Sentences"), "empty sentence", "sentence left out")
    sentence_id = cells[at["Sentence ID"]].strip()
    if sentence_id in first_row:
        detail = f"Sentence ID {sentence_id} was already read from row {first_row[sentence_id]}"
        effect = "sentence left out (evaluated once, from its first row)"
        return _skip("duplicate_sentence_id", (rel, line, "Sentence ID"), detail, effect, sentence_id)
    return None


def _duplicate(rel: str, line: int, sentence_id: str, first: int, first_id: str) -> SkippedRow:
    detail = f"the sentence of row {first} (Sentence ID {first_id or '-'}) again, under Sentence ID {sentence_id or '-'}"
    effect = "kept: evaluated as a row of its own, as the authors' code does"
    return _skip("duplicate_sentence", (rel, line, "Biased Sentences"), detail, effect, sentence_id or None)


def _toxicity(cell: str, rel: str, line: int, skips: list[SkippedRow]) -> int | None:
    try:
        value = float(cell.strip())
    except ValueError:
        value = float("nan")
    if value in (0.0, 1.0):
        return int(value)
    skips.append(
        _skip(
            "toxicity_invalid", (rel, line, "Toxicity"), f"toxicity {cell!r} is not 0 or 1",
            "sentence left out of the toxicity 0/1 breakdowns (kept in all others)",
        )  # fmt: skip
    )
    return None


def _target_attributes(cell: str, rel: str, line: int, skips: list[SkippedRow]) -> tuple[TargetAttribute, ...] | None:
    """Parse the Python-literal list of (target, attribute-or-None) pairs, never with eval (nor ``ast``)."""
    field = "T-A Combination"
    try:
        parsed = parse_literal(cell)
    except LiteralSyntaxError:
        parsed = None
    if not isinstance(parsed, (list, tuple)):
        skips.append(
            _skip(
                "ta_unparsable", (rel, line, field), f"not a list of (target, attribute) pairs: {cell[:80]!r}",
                "sentence left out of the category breakdown",
            )  # fmt: skip
        )
        return None
    pairs = []
    for item in parsed:
        if (
            isinstance(item, (tuple, list))
            and len(item) == 2
            and isinstance(item[0], str)
            and (item[1] is None or isinstance(item[1], str))
        ):
            attribute = item[1].strip() if isinstance(item[1], str) else None
            pairs.append(TargetAttribute(item[0].strip(), attribute or None))
        else:
            skips.append(
                _skip(
                    "ta_item_malformed", (rel, line, field), f"item {item!r} is not a (target, attribute) pair",
                    "item left out of the category breakdown",
                )  # fmt: skip
            )
    if parsed and not pairs:
        return None  # every item was malformed (reported above): the sentence has no usable pair
    return tuple(pairs)


def _skip(reason: str, at: tuple[str, int, str | None], detail: str, effect: str, sample_id: str | None = None) -> SkippedRow:
    """A row left out: ``at`` is (file, row, the field at fault or None)."""
    file, row, field = at
    return SkippedRow(file=file, row=row, reason=reason, field=field, sample_id=sample_id, detail=detail, effect=effect)
