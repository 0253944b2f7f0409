"""CBBQ in the authors' file layout (PROTOCOLS §2), read as it is.

    DIR/{category}/ambiguous/ambiguous.csv
    DIR/{category}/disambiguous/disambiguous.csv
    DIR/{category}/{ambiguous,disambiguous}/templates_generate_{neg,nonneg}.csv

CSV files are UTF-8 with a byte order mark (read through ``csv_table``: any
Unicode with a byte order mark, or UTF-8 without one). A file that cannot be
decoded or parsed, lacks a column, has a header and no rows, or repeats an
example_id is a ``DataError`` naming file and row. Instance columns: example_id,
question_index, question_polarity (neg/non_neg), context_condition, category,
subcategory, bias_targeted_groups, source, context, question, ans0, ans1
(the two groups), ans2 (unknown), label (index of the correct answer).

The biased answer is derived (``domain/cbbq/bias.py``); how each item's
was found, and which stayed unresolved, is reported in ``facts``. Templates
are optional: without them ambiguous items can only resolve through
``bias_targeted_groups``. ``path=None`` reads the four categories bundled
with culturebias (CC BY-SA 4.0, see ``adapters/bundled/cbbq/LICENSE.md``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from culturebias.adapters.datasets.csv_table import read_table
from culturebias.adapters.datasets.unique_ids import note_first_row
from culturebias.domain.cbbq.bias import TwinResolver, derive
from culturebias.domain.bbq.model import BBQDataset, ContextCondition, QAItem
from culturebias.domain.errors import ConfigError, DataError, MissingDataError
from culturebias.domain.fingerprint import fingerprint_bytes
from culturebias.domain.skips import SkippedRow

BUNDLED = Path(__file__).resolve().parents[1] / "bundled" / "cbbq"
CONDITION_FOLDERS: dict[ContextCondition, str] = {"ambiguous": "ambiguous", "disambiguated": "disambiguous"}
INSTANCE_COLUMNS = ("example_id", "question_polarity", "context", "question", "ans0", "ans1", "ans2", "label")
TEMPLATE_COLUMNS = ("question_polarity", "context", "NAME1", "NAME2", "question", "ans0", "ans1", "label")
HOW_TO = (
    "point culturebias at a CBBQ folder in the authors' layout (github.com/YFHuangxxxx/CBBQ): "
    "DIR/{category}/ambiguous/ambiguous.csv and DIR/{category}/disambiguous/disambiguous.csv "
    "(with templates_generate_{neg,nonneg}.csv beside them): --set data.path=DIR"
)


def read_csv(path: Path, required: tuple[str, ...], what: str = "") -> list[tuple[int, dict[str, str]]]:
    """(file row number, row) pairs; header = row 1. With ``what``, a header and no rows is a ``DataError``."""
    table = read_table(path)
    missing = [c for c in required if c not in table.header]
    if missing:
        raise DataError(f"missing column(s) {missing}; found {table.header}", file=str(path), row=1)
    if what:
        table.require_rows(what)
    return table.dicts()


def instance_file(root: Path, category: str, condition: ContextCondition) -> Path:
    folder = CONDITION_FOLDERS[condition]
    return root / category / folder / f"{folder}.csv"


def template_files(root: Path, category: str, condition: ContextCondition) -> list[Path]:
    folder = root / category / CONDITION_FOLDERS[condition]
    return [p for p in (folder / "templates_generate_neg.csv", folder / "templates_generate_nonneg.csv") if p.is_file()]


def read_templates(paths: list[Path]) -> list[dict[str, str]]:
    return [row for path in paths for _, row in read_csv(path, TEMPLATE_COLUMNS, "templates")]


def categories_in(root: Path) -> list[str]:
    return sorted(
        p.name
        for p in root.iterdir()
        if p.is_dir() and any(instance_file(root, p.name, c).is_file() for c in CONDITION_FOLDERS)
    )


LEFT_OUT = "item left out of the run"


def _item(row: dict[str, str], category: str, condition: ContextCondition, file: str, number: int, biased: int | None) -> QAItem | SkippedRow:
    example_id = row["example_id"].strip()
    sample_id = f"{category}-{'amb' if condition == 'ambiguous' else 'dis'}-{example_id}"

    def skip(reason: str, field: str, detail: str) -> SkippedRow:
        return SkippedRow(file=file, row=number, reason=reason, field=field, sample_id=sample_id, detail=detail, effect=LEFT_OUT)

    options = (row["ans0"].strip(), row["ans1"].strip(), row["ans2"].strip())
    if len(set(options)) != 3:
        return skip("options not three distinct", "ans0/ans1/ans2", f"needs three distinct options, got {list(options)}")
    label = row["label"].strip()
    if label not in ("0", "1", "2"):
        return skip("label not an option", "label", f"label {label!r} is not 0, 1 or 2")
    if condition == "ambiguous" and label != "2":
        return skip("label contradicts the context", "label", "an ambiguous item's label must be the unknown option (2)")
    polarity = row["question_polarity"].strip()
    return QAItem(
        sample_id=sample_id,
        category=category,
        template_id=f"{category}-{polarity}-{row.get('question_index', '').strip()}",
        context=row["context"].strip(),
        question=row["question"].strip(),
        options=options,
        answer_index=int(label),
        biased_index=biased,
        unknown_index=2,
        context_condition=condition,
        question_polarity=polarity,
        subcategory=row.get("subcategory", "").strip() or None,
        targeted_group=row.get("bias_targeted_groups", "").strip() or None,
    )


def load_category(root: Path, category: str) -> tuple[list[QAItem], list[SkippedRow], Counter, list[str]]:
    items: list[QAItem] = []
    skips: list[SkippedRow] = []
    methods: Counter = Counter()
    unresolved: list[str] = []
    resolver = None
    amb_templates = template_files(root, category, "ambiguous")
    dis_templates = template_files(root, category, "disambiguated")
    if amb_templates and dis_templates:
        resolver = TwinResolver(read_templates(amb_templates), read_templates(dis_templates))
    for condition in CONDITION_FOLDERS:
        path = instance_file(root, category, condition)
        if not path.is_file():
            continue
        seen: dict[str, int] = {}
        for number, row in read_csv(path, INSTANCE_COLUMNS, "instances"):
            example_id = row["example_id"].strip()
            note_first_row(seen, example_id, "example_id", path, number)
            derivation = derive(row, condition == "ambiguous", resolver, row=number)
            result = _item(row, category, condition, str(path), number, derivation.biased_index)
            if isinstance(result, SkippedRow):
                skips.append(result)
                continue
            methods[derivation.method] += 1
            if derivation.biased_index is None:
                unresolved.append(result.sample_id)
            items.append(result)
    return items, skips, methods, unresolved


class CBBQTemplates:
    """``ports.template_files.CBBQTemplateFiles``: the question templates of the CBBQ folder ``path``, or the bundled ones."""

    conditions: tuple[ContextCondition, ...] = tuple(CONDITION_FOLDERS)

    def __init__(self, path: str | None):
        self.root = BUNDLED if path is None else Path(path).expanduser()
        if not self.root.is_dir():
            raise ConfigError(f"CBBQ folder {self.root} does not exist")

    def categories(self) -> list[str]:
        return categories_in(self.root)

    def rows(self, category: str, condition: ContextCondition) -> tuple[list[dict[str, str]], list[dict[str, str]]] | None:
        files = {p.name: p for p in template_files(self.root, category, condition)}
        if not files:
            return None

        def read(name: str) -> list[dict[str, str]]:
            return [row for _, row in read_csv(files[name], ())] if name in files else []

        return read("templates_generate_neg.csv"), read("templates_generate_nonneg.csv")


class CBBQFiles:
    """DatasetSource of CBBQ: ``CBBQFiles(path)``; ``path=None`` = the four bundled categories.

    ``CBBQFiles.template_files(path)`` reads the templates ``culturebias expand cbbq`` expands.
    """

    template_files = CBBQTemplates

    def __init__(self, path: str | None):
        self.bundled = path is None
        self.root = BUNDLED if path is None else Path(path).expanduser()
        if not self.root.is_dir():
            raise MissingDataError(f"CBBQ data folder {self.root} does not exist: {HOW_TO}")
        self.categories = categories_in(self.root)
        if not self.categories:
            raise MissingDataError(f"no CBBQ category folders in {self.root}: {HOW_TO}")

    def _files(self) -> list[Path]:
        files = []
        for category in self.categories:
            for condition in CONDITION_FOLDERS:
                path = instance_file(self.root, category, condition)
                files += ([path] if path.is_file() else []) + template_files(self.root, category, condition)
        return files

    def describe(self) -> str:
        names = ", ".join(self.categories)
        if self.bundled:
            return f"CBBQ categories bundled with culturebias (CC BY-SA 4.0, Huang & Xiong 2024): {names}"
        return f"CBBQ files at {self.root}: {names}"

    def fingerprint(self) -> str:
        return fingerprint_bytes([(str(p.relative_to(self.root)), p.read_bytes()) for p in self._files()])

    def load(self) -> BBQDataset:
        items: list[QAItem] = []
        skips: list[SkippedRow] = []
        methods: Counter = Counter()
        unresolved: list[str] = []
        instances: dict[str, int] = {}
        for category in self.categories:
            c_items, c_skips, c_methods, c_unresolved = load_category(self.root, category)
            instances[category] = len(c_items) + len(c_skips)
            items += c_items
            skips += c_skips
            methods += c_methods
            unresolved += c_unresolved
        if not items:
            first = f" (first at {skips[0].where()}: {skips[0].detail})" if skips else ""
            raise DataError(f"no usable CBBQ instances: all {len(skips)} were left out{first}", file=str(self.root))
        facts: dict[str, object] = {
            "categories": list(self.categories),
            "biased_answer_derivation": {m: methods.get(m, 0) for m in ("label", "twin", "groups", "unresolved")},
            "biased_answer_unresolved_ids": unresolved,
            "instances_by_category": instances,  # rows of each category's two files (paper Table 4)
        }
        return BBQDataset(items=tuple(items), skips=tuple(skips), facts=facts)
