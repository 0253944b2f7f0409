"""KoBBQ in the authors' file format (PROTOCOLS §2), read as it is.

    DIR/KoBBQ_test_samples.tsv    (or KoBBQ_all_samples.tsv) one row per sample:
        sample_id, label_annotation, context, question,
        choices (a Python-literal list), biased_answer, answer, [bbq_id, bbq_category, prediction]
    DIR/evaluation_prompts.tsv    (or 0_evaluation_prompts.tsv) prompt_id, instruction,
        context, question, a, b, c, answer, unknown

A folder may also hold ``reference_samples.tsv`` (or ``.jsonl``): a second
data set in the same sample format, e.g. the machine-translated BBQ the paper
compares KoBBQ with (Table 4). Its items are asked in the same run under
sample ids prefixed ``reference/`` and are only used by the Wilcoxon rank-sum
tests per label type; they are never part of the KoBBQ scores.

``path`` may also name a samples file directly (``.tsv``, or the ``.jsonl``
written by ``culturebias expand kobbq``); prompts then come from a prompts
file beside it, else from the bundled copy. ``path=None`` reads the test
split bundled with culturebias (MIT, see ``adapters/bundled/kobbq/NOTICE.md``).

Files are read through ``csv_table`` / ``jsonl_rows`` (UTF-8, or Unicode with a
byte order mark). A malformed file (not decodable, broken quoting, missing
column, a header and no rows, unreadable choices list, duplicate sample id or
prompt id) is a ``DataError`` naming file, row and field. A row
whose choices lack its answer, its biased answer or the unknown option, or
whose sample id cannot be read, is left out and reported as a skip.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from culturebias.domain.kobbq.prompts import DATASET_UNKNOWN, KoBBQDataset, KoBBQPrompt
from culturebias.domain.bbq.model import ContextPolarity, QAItem
from culturebias.adapters.datasets.csv_table import read_table
from culturebias.adapters.datasets.unique_ids import note_first_row
from culturebias.adapters.datasets.jsonl_rows import read_jsonl
from culturebias.adapters.datasets.python_literal import LiteralSyntaxError, parse_literal
from culturebias.domain.errors import DataError, MissingDataError
from culturebias.domain.fingerprint import fingerprint_bytes
from culturebias.domain.skips import SkippedRow

BUNDLED = Path(__file__).resolve().parents[1] / "bundled" / "kobbq"
SAMPLE_FILES = ("KoBBQ_test_samples.tsv", "KoBBQ_all_samples.tsv")
PROMPT_FILES = ("evaluation_prompts.tsv", "0_evaluation_prompts.tsv", "KoBBQ_prompts.tsv")
TEMPLATE_FILE = "KoBBQ_templates.tsv"
REFERENCE_FILES = ("reference_samples.tsv", "reference_samples.jsonl")
REFERENCE_PREFIX = "reference/"
SAMPLE_COLUMNS = ("sample_id", "label_annotation", "context", "question", "choices", "biased_answer", "answer")
PROMPT_COLUMNS = ("prompt_id", "instruction", "context", "question", "a", "b", "c", "answer", "unknown")
VERSIONS: dict[str, ContextPolarity] = {"a": "counter_biased", "b": "biased", "c": "counter_biased", "d": "biased"}


def read_tsv(path: Path, required: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    """(file row number, row) pairs; header = row 1. Quoting as pandas reads these files."""
    table = read_table(path, delimiter="\t")
    missing = [c for c in required if c not in table.header]
    if missing:
        raise DataError(f"missing column(s) {missing}; found {table.header}", file=str(path), row=1)
    return table.dicts()


def read_prompts(path: Path) -> dict[str, KoBBQPrompt]:
    prompts: dict[str, KoBBQPrompt] = {}
    for number, row in read_tsv(path, PROMPT_COLUMNS):
        prompt_id = row["prompt_id"].strip()
        if not prompt_id:
            raise DataError("empty prompt_id", file=str(path), row=number, field="prompt_id")
        if prompt_id in prompts:
            raise DataError(f"duplicate prompt_id {prompt_id}", file=str(path), row=number, field="prompt_id")
        prompt = KoBBQPrompt(
            prompt_id=prompt_id,
            instruction=row["instruction"],
            context_label=row["context"],
            question_label=row["question"],
            option_labels=(row["a"], row["b"], row["c"]),
            answer_label=row["answer"],
            unknown=row["unknown"].strip(),
        )
        try:
            prompt.letters
        except ValueError as error:
            raise DataError(str(error), file=str(path), row=number, field="a/b/c") from None
        prompts[prompt_id] = prompt
    if not prompts:
        raise DataError("no prompts", file=str(path))
    return prompts


def parse_choices(value: object, file: str, row: int) -> list[str]:
    choices: object
    if isinstance(value, list):
        choices = value
    else:
        try:
            choices = parse_literal(str(value))
        except LiteralSyntaxError as error:
            raise DataError(
                f"choices is not a Python-literal list ({error}): {value!r}", file=file, row=row, field="choices"
            ) from None
    if not isinstance(choices, (list, tuple)) or not all(isinstance(c, str) for c in choices):
        raise DataError(f"choices must be a list of strings, got {value!r}", file=file, row=row, field="choices")
    return [c.strip() for c in choices]


LEFT_OUT = "item left out of the run"


def sample_to_item(row: dict, file: str, number: int) -> QAItem | SkippedRow:
    sample_id = str(row["sample_id"]).strip()

    def skip(reason: str, field: str, detail: str) -> SkippedRow:
        return SkippedRow(file=file, row=number, reason=reason, field=field, sample_id=sample_id, detail=detail, effect=LEFT_OUT)

    parts = sample_id.split("-")
    if len(parts) < 5 or parts[3] not in ("amb", "dis") or parts[4] not in ("bsd", "cnt") or not parts[1]:
        return skip(
            "malformed sample_id", "sample_id", "sample_id is not {category}-{template}{version}-{n}-{amb|dis}-{bsd|cnt}"
        )
    category, identity, _, condition, polarity = parts[:5]
    version = identity[-1]
    if version not in VERSIONS:
        return skip("unknown template version", "sample_id", f"template version {version!r} is not one of a, b, c, d")
    choices = parse_choices(row["choices"], file, number)
    if len(choices) != 3 or len(set(choices)) != 3:
        return skip("choices not three distinct", "choices", f"needs three distinct choices, got {choices}")
    answer, biased = str(row["answer"]).strip(), str(row["biased_answer"]).strip()
    for name, value, field in (
        ("answer", answer, "answer"),
        ("biased_answer", biased, "biased_answer"),
        ("unknown option", DATASET_UNKNOWN, "choices"),
    ):
        if value not in choices:
            return skip(f"{name} not among the choices", field, f"{name} {value!r} is not among the choices {choices}")
    unknown_index, answer_index, biased_index = choices.index(DATASET_UNKNOWN), choices.index(answer), choices.index(biased)
    if biased_index == unknown_index:
        return skip("biased answer is the unknown option", "biased_answer", "the biased answer is the unknown option")
    ambiguous = condition == "amb"
    context_polarity = None if ambiguous else VERSIONS[version]
    if ambiguous and answer_index != unknown_index:
        return skip("answer contradicts the context", "answer", "an ambiguous item's answer must be the unknown option")
    if context_polarity == "biased" and answer_index != biased_index:
        return skip(
            "answer contradicts the context",
            "answer",
            f"version {version} disambiguates towards the biased answer, but the answer differs from it",
        )
    if context_polarity == "counter_biased" and answer_index in (biased_index, unknown_index):
        return skip(
            "answer contradicts the context",
            "answer",
            f"version {version} disambiguates against the biased answer, but the answer is not the other group",
        )
    return QAItem(
        sample_id=sample_id,
        category=category,
        template_id=f"{category}-{identity[:-1]}",
        context=str(row["context"]).strip(),
        question=str(row["question"]).strip(),
        options=tuple(choices),
        answer_index=answer_index,
        biased_index=biased_index,
        unknown_index=unknown_index,
        context_condition="ambiguous" if ambiguous else "disambiguated",
        question_polarity=polarity,
        context_polarity=context_polarity,
        label_annotation=str(row.get("label_annotation") or "").strip() or None,
    )


def load_samples(path: Path) -> tuple[list[QAItem], list[SkippedRow]]:
    rows = read_jsonl(path, SAMPLE_COLUMNS) if path.suffix == ".jsonl" else read_tsv(path, SAMPLE_COLUMNS)
    items: list[QAItem] = []
    skips: list[SkippedRow] = []
    first_row: dict[str, int] = {}
    for number, row in rows:
        sample_id = str(row["sample_id"]).strip()
        note_first_row(first_row, sample_id, "sample_id", path, number)
        result = sample_to_item(row, str(path), number)
        if isinstance(result, SkippedRow):
            skips.append(result)
        else:
            items.append(result)
    if not first_row:
        raise DataError("no samples: the file has a header and no rows", file=str(path), row=2)
    if not items:
        raise DataError(
            f"no usable samples: all {len(skips)} were left out (first at row {skips[0].row}: {skips[0].detail})",
            file=str(path),
        )
    return items, skips


def _first(folder: Path, names: tuple[str, ...]) -> Path | None:
    return next((folder / n for n in names if (folder / n).is_file()), None)


HOW_TO = (
    "point culturebias at a folder holding KoBBQ_test_samples.tsv (or KoBBQ_all_samples.tsv) and "
    "evaluation_prompts.tsv in the KoBBQ authors' format (github.com/naver-ai/KoBBQ), or at a samples "
    ".tsv/.jsonl file: --set data.path=DIR_OR_FILE; leave data.path unset for the bundled test split"
)


class KoBBQTemplates:
    """``ports.template_files.KoBBQTemplateFiles``: the templates file at ``path`` (or in that folder), or the bundled one."""

    def __init__(self, path: str | None):
        self.path = templates_path(path)

    def rows(self) -> list[dict[str, str]]:
        return read_templates(self.path)


class KoBBQFiles:
    """DatasetSource of KoBBQ: ``KoBBQFiles(path)``; ``path=None`` = the bundled test split.

    ``KoBBQFiles.template_files(path)`` reads the templates ``culturebias expand kobbq`` expands.
    """

    template_files = KoBBQTemplates

    def __init__(self, path: str | None):
        self.bundled = path is None
        self.reference_path: Path | None = None
        target = BUNDLED if path is None else Path(path).expanduser()
        if target.is_dir():
            samples = _first(target, SAMPLE_FILES)
            if samples is None:
                raise MissingDataError(f"no {' or '.join(SAMPLE_FILES)} in {target}: {HOW_TO}")
            prompts = _first(target, PROMPT_FILES)
            self.reference_path = _first(target, REFERENCE_FILES)
        elif target.is_file():
            samples, prompts = target, _first(target.parent, PROMPT_FILES)
        else:
            raise MissingDataError(f"KoBBQ data {target} does not exist: {HOW_TO}")
        self.samples_path = samples
        self.prompts_path = prompts or BUNDLED / PROMPT_FILES[0]

    def describe(self) -> str:
        if self.bundled:
            return f"KoBBQ test split bundled with culturebias (MIT, NAVER Cloud Corp.): {self.samples_path.name}"
        return f"KoBBQ samples {self.samples_path}, prompts {self.prompts_path}"

    def fingerprint(self) -> str:
        parts = [("samples", self.samples_path.read_bytes()), ("prompts", self.prompts_path.read_bytes())]
        if self.reference_path is not None:
            parts.append(("reference", self.reference_path.read_bytes()))
        return fingerprint_bytes(parts)

    def load(self) -> KoBBQDataset:
        items, skips = load_samples(self.samples_path)
        facts: dict[str, object] = {"samples_file": self.samples_path.name, "prompts_file": self.prompts_path.name}
        reference: list[QAItem] = []
        if self.reference_path is not None:
            found, reference_skips = load_samples(self.reference_path)
            reference = [replace(item, sample_id=REFERENCE_PREFIX + item.sample_id) for item in found]
            facts["reference_file"] = self.reference_path.name
            facts["reference_skipped"] = len(reference_skips)
        return KoBBQDataset(
            items=tuple(items),
            skips=tuple(skips),
            prompts=read_prompts(self.prompts_path),
            facts=facts,
            reference=tuple(reference),
        )


def templates_path(path: str | None) -> Path:
    """KoBBQ_templates.tsv in ``path`` (a folder or the file itself), or the bundled copy."""
    if path is None:
        return BUNDLED / TEMPLATE_FILE
    target = Path(path).expanduser()
    if target.is_dir():
        target = target / TEMPLATE_FILE
    if not target.is_file():
        raise MissingDataError(f"KoBBQ templates {target} do not exist; give a folder holding {TEMPLATE_FILE} or the file")
    return target


def read_templates(path: Path) -> list[dict[str, str]]:
    return [row for _, row in read_tsv(path, ("Category", "ID", "version", "Names"))]

