"""Broken, re-encoded and odd copies of every loader's files: a typed DataError naming file and row, or a counted skip.

The copies are made from the real data under ../shared/data (those tests skip
when it is absent) and from the data bundled with culturebias: re-encoded to
UTF-16 (with and without a byte order mark), Big5, GBK or EUC-KR, one byte made
invalid, a 200,000-character field, a stray quote, a header and no rows,
repeated ids. A file with a UTF-16 byte order mark is read like its UTF-8
original; everything else that is not UTF-8 is a ``DataError``. None of them
may end in a raw ``UnicodeDecodeError`` or ``_csv.Error``.
"""

from __future__ import annotations

import codecs
import json
import shutil
from pathlib import Path
from typing import Callable

import pytest

from culturebias.adapters.cbbq.files import BUNDLED as CBBQ_BUNDLED
from culturebias.adapters.cbbq.files import CBBQFiles
from culturebias.adapters.kobbq.files import BUNDLED as KOBBQ_BUNDLED
from culturebias.adapters.kobbq.files import KoBBQFiles
from culturebias.adapters.libra.files import LibraFiles
from culturebias.adapters.mcbe.files import McBEFiles
from culturebias.adapters.replay.backend import AnswerFile
from culturebias.testing.scripted import ScriptedScorer, ScriptedTemplater
from culturebias.adapters.twbias.files import TWBiasFiles
from culturebias.bootstrap.cli import main
from culturebias.domain.errors import DataError
from culturebias.testing.context import run_with_fakes

HUGE = "x" * 200_000

# --- ways to break a copy ----------------------------------------------------------------


def lines_of(path: Path) -> list[bytes]:
    """The file's lines with their endings (\\r\\n stays), so that edits keep the rest byte for byte."""
    return path.read_bytes().split(b"\n")


def reencode(path: Path, encoding: str, bom: bytes = b"") -> None:
    path.write_bytes(bom + path.read_bytes().decode("utf-8-sig").encode(encoding, errors="replace"))


def line_offset(path: Path, line: int) -> int:
    """Byte offset where 1-based ``line`` starts."""
    return sum(len(chunk) + 1 for chunk in lines_of(path)[: line - 1])


def bad_byte(path: Path, line: int) -> int:
    """Replace the first byte of ``line`` with 0xFF, never valid in UTF-8; its byte offset."""
    data = bytearray(path.read_bytes())
    offset = line_offset(path, line)
    data[offset] = 0xFF
    path.write_bytes(bytes(data))
    return offset


def edit_field(path: Path, line: int, field: int, edit: Callable[[bytes], bytes], delimiter: bytes = b",") -> None:
    lines = lines_of(path)
    cells = lines[line - 1].split(delimiter)
    cells[field] = edit(cells[field])
    lines[line - 1] = delimiter.join(cells)
    path.write_bytes(b"\n".join(lines))


def huge_field(path: Path, line: int, field: int, delimiter: bytes = b",") -> None:
    edit_field(path, line, field, lambda cell: cell + HUGE.encode(), delimiter)


def stray_quote(path: Path, line: int, field: int, delimiter: bytes = b",") -> None:
    edit_field(path, line, field, lambda cell: b'"' + cell, delimiter)


def header_only(path: Path) -> None:
    path.write_bytes(lines_of(path)[0] + b"\n")


def repeat_line(path: Path, line: int, after: int) -> None:
    """Insert a copy of ``line`` after line ``after``."""
    lines = lines_of(path)
    lines.insert(after, lines[line - 1])
    path.write_bytes(b"\n".join(lines))


def data_error(load: Callable[[], object], file: str, row: int | None = None, *words: str) -> DataError:
    with pytest.raises(DataError) as caught:
        load()
    error = caught.value
    assert error.file is not None and error.file.endswith(file), error
    if row is not None:
        assert error.row == row, error
    for word in words:
        assert word in str(error), error
    # no raw UnicodeDecodeError or _csv.Error chained into what a user would see
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
    return error


# --- TWBias: the real files ----------------------------------------------------------------


@pytest.fixture
def twbias_copy(tmp_path, twbias_data) -> Path:
    return Path(shutil.copytree(twbias_data, tmp_path / "twbias"))


def twbias(root: Path):
    return TWBiasFiles(str(root)).load()


def sentences(data, axis="gender", code="T2") -> list[tuple[str, str, int | None]]:
    return [(s.sentence_id, s.text, s.row) for s in data.axes[axis].sentence_sets[code].sentences]


@pytest.mark.shared_data
@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_twbias_utf16_with_a_byte_order_mark_reads_like_the_utf8_original(twbias_copy, encoding):
    before = twbias(twbias_copy)
    bom = codecs.BOM_UTF16_LE if encoding.endswith("le") else codecs.BOM_UTF16_BE
    for name in ("gender/label_data_female.csv", "gender/female-Attribute.csv", "prompts.json"):
        reencode(twbias_copy / name, encoding, bom)
    after = twbias(twbias_copy)
    assert sentences(after) == sentences(before) and after.prompts == before.prompts
    assert after.axes["gender"].sentence_sets["T2"].attributes == before.axes["gender"].sentence_sets["T2"].attributes
    assert after.skips == before.skips


@pytest.mark.shared_data
def test_twbias_big5_is_a_data_error_naming_file_line_and_offset(twbias_copy):
    reencode(twbias_copy / "gender/label_data_male.csv", "big5")
    error = data_error(lambda: twbias(twbias_copy), "gender/label_data_male.csv", 2, "not UTF-8", "byte offset", "line 2")
    assert "Big5" in str(error)


@pytest.mark.shared_data
def test_twbias_utf16_without_a_byte_order_mark_is_a_data_error(twbias_copy):
    reencode(twbias_copy / "ethinicity/label_data_B.csv", "utf-16-le")
    data_error(lambda: twbias(twbias_copy), "ethinicity/label_data_B.csv", None, "UTF-16")


@pytest.mark.shared_data
def test_twbias_one_bad_byte_names_its_line_and_offset(twbias_copy):
    path = twbias_copy / "gender/label_data_female.csv"
    offset = bad_byte(path, 100)
    data_error(lambda: twbias(twbias_copy), "gender/label_data_female.csv", 100, f"byte offset {offset}", "ff")


@pytest.mark.shared_data
def test_twbias_prompts_in_gbk_are_a_data_error(twbias_copy):
    reencode(twbias_copy / "prompts.json", "gbk")
    data_error(lambda: twbias(twbias_copy), "prompts.json", None, "not UTF-8")


@pytest.mark.shared_data
def test_twbias_a_200000_character_field_names_file_and_row(twbias_copy):
    huge_field(twbias_copy / "ethinicity/label_data_hakka.csv", 50, 1)
    data_error(lambda: twbias(twbias_copy), "ethinicity/label_data_hakka.csv", 50, "131,072")


@pytest.mark.shared_data
def test_twbias_a_stray_quote_that_joins_lines_names_file_and_row(twbias_copy):
    # female rows end with the Sources column; a quote opening it runs into the next row
    stray_quote(twbias_copy / "gender/label_data_female.csv", 30, -1)
    data_error(lambda: twbias(twbias_copy), "gender/label_data_female.csv", 30, "quote", "line 30")


@pytest.mark.shared_data
def test_twbias_a_stray_quote_within_its_row_is_a_counted_skip(twbias_copy):
    # male rows have the sentence second: the quote closes at the row's own T-A list
    stray_quote(twbias_copy / "gender/label_data_male.csv", 11, 1)
    data = twbias(twbias_copy)
    [skip] = [s for s in data.skips if s.file == "gender/label_data_male.csv"]
    assert (skip.reason, skip.row) == ("row_field_count", 11) and "stray quote" in skip.detail
    assert len(data.axes["gender"].sentence_sets["T1"].sentences) == 577


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("gender/label_data_female.csv", "no sentences"),
        ("ethinicity/W-Attribute.csv", "no attributes"),
        ("gender/target_gender.csv", "no target terms"),
    ],
)
def test_twbias_a_header_and_no_rows_is_a_data_error(twbias_copy, name, what):
    header_only(twbias_copy / name)
    data_error(lambda: twbias(twbias_copy), name, 2, what)


@pytest.mark.shared_data
def test_twbias_duplicate_sentence_ids_are_evaluated_once_and_counted(twbias_copy):
    path = twbias_copy / "gender/label_data_female.csv"
    original = sentences(twbias(twbias_copy))
    repeat_line(path, 3, after=5)  # row 6 repeats row 3's Sentence ID
    data = twbias(twbias_copy)
    assert [(s[0], s[1]) for s in sentences(data)] == [(s[0], s[1]) for s in original]
    [skip] = [s for s in data.skips if s.reason == "duplicate_sentence_id"]
    assert (skip.file, skip.row, skip.field, skip.sample_id) == ("gender/label_data_female.csv", 6, "Sentence ID", original[1][0])
    assert "row 3" in skip.detail


@pytest.mark.shared_data
def test_twbias_duplicate_sentence_ids_reach_the_typed_summary(twbias_copy):
    repeat_line(twbias_copy / "gender/label_data_female.csv", 3, after=5)
    result = run_with_fakes(
        "twbias",
        options={"groups": "gender", "prompt_types": "0", "limit": 10},
        data_path=twbias_copy,
        scorer=ScriptedScorer(lambda context, continuation: -float(len(continuation))),
        templater=ScriptedTemplater,
    )
    summary = result.summary
    assert summary.counts.skipped["duplicate_sentence_id"] == 1
    assert summary.counts.sentences_evaluated == 20
    assert [(s.file, s.row) for s in summary.details.skips if s.reason == "duplicate_sentence_id"] == [
        ("gender/label_data_female.csv", 6)
    ]
    assert any(note.startswith("duplicate_sentence_id: 1 ×") for note in summary.notes)


# --- KoBBQ: the bundled test split, and the real copy for ids ------------------------------

KOBBQ_SAMPLES = "KoBBQ_test_samples.tsv"


@pytest.fixture
def kobbq_copy(tmp_path) -> Path:
    folder = tmp_path / "kobbq"
    folder.mkdir()
    for name in (KOBBQ_SAMPLES, "evaluation_prompts.tsv"):
        shutil.copy(KOBBQ_BUNDLED / name, folder / name)
    return folder


def kobbq(folder: Path):
    return KoBBQFiles(str(folder)).load()


def test_kobbq_utf16_with_a_byte_order_mark_reads_like_the_utf8_original(kobbq_copy):
    reencode(kobbq_copy / KOBBQ_SAMPLES, "utf-16-le", codecs.BOM_UTF16_LE)
    reencode(kobbq_copy / "evaluation_prompts.tsv", "utf-16-be", codecs.BOM_UTF16_BE)
    bundled = KoBBQFiles(None).load()
    copy = kobbq(kobbq_copy)
    assert copy.items == bundled.items and copy.prompts == bundled.prompts


def test_kobbq_euc_kr_is_a_data_error_naming_file_line_and_offset(kobbq_copy):
    reencode(kobbq_copy / KOBBQ_SAMPLES, "cp949")
    data_error(lambda: kobbq(kobbq_copy), KOBBQ_SAMPLES, 2, "not UTF-8", "byte offset")


def test_kobbq_one_bad_byte_in_the_samples_or_the_prompts(kobbq_copy):
    offset = bad_byte(kobbq_copy / KOBBQ_SAMPLES, 500)
    data_error(lambda: kobbq(kobbq_copy), KOBBQ_SAMPLES, 500, f"byte offset {offset}")
    shutil.copy(KOBBQ_BUNDLED / KOBBQ_SAMPLES, kobbq_copy / KOBBQ_SAMPLES)
    bad_byte(kobbq_copy / "evaluation_prompts.tsv", 3)
    data_error(lambda: kobbq(kobbq_copy), "evaluation_prompts.tsv", 3, "not UTF-8")


def test_kobbq_a_200000_character_field_names_file_and_row(kobbq_copy):
    huge_field(kobbq_copy / KOBBQ_SAMPLES, 40, 2, b"\t")
    data_error(lambda: kobbq(kobbq_copy), KOBBQ_SAMPLES, 40, "131,072")


def test_kobbq_a_stray_quote_names_the_row_it_opens_on(kobbq_copy):
    # no other quote follows: the field would swallow the rest of the file
    stray_quote(kobbq_copy / KOBBQ_SAMPLES, 21, 2, b"\t")
    data_error(lambda: kobbq(kobbq_copy), KOBBQ_SAMPLES, 21, "quote", "line 21")


def test_kobbq_a_stray_quote_near_the_end_names_the_row_it_opens_on(kobbq_copy):
    lines = lines_of(kobbq_copy / KOBBQ_SAMPLES)
    last = len([line for line in lines if line.strip()])
    stray_quote(kobbq_copy / KOBBQ_SAMPLES, last - 2, 2, b"\t")
    data_error(lambda: kobbq(kobbq_copy), KOBBQ_SAMPLES, last - 2, "quote")


def test_kobbq_a_header_and_no_rows_is_a_data_error(kobbq_copy):
    header_only(kobbq_copy / KOBBQ_SAMPLES)
    data_error(lambda: kobbq(kobbq_copy), KOBBQ_SAMPLES, 2, "no samples")


def test_kobbq_a_samples_jsonl_with_a_bad_byte_names_its_line(tmp_path):
    items = kobbq_jsonl_rows(5)
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in items), encoding="utf-8")
    assert len(KoBBQFiles(str(path)).load().items) == 5
    offset = bad_byte(path, 4)
    data_error(lambda: KoBBQFiles(str(path)).load(), "samples.jsonl", 4, f"byte offset {offset}")


def kobbq_jsonl_rows(n: int) -> list[dict[str, str]]:
    header, *rows = (KOBBQ_BUNDLED / KOBBQ_SAMPLES).read_text(encoding="utf-8").splitlines()[: n + 1]
    return [dict(zip(header.split("\t"), row.split("\t"))) for row in rows]


@pytest.mark.shared_data
def test_kobbq_real_duplicate_sample_ids_are_a_data_error(tmp_path, kobbq_data):
    folder = Path(shutil.copytree(kobbq_data, tmp_path / "kobbq"))
    repeat_line(folder / KOBBQ_SAMPLES, 10, after=200)
    error = data_error(lambda: kobbq(folder), KOBBQ_SAMPLES, 201, "duplicate sample_id", "first at row 10")
    assert error.field == "sample_id"


# --- CBBQ: one bundled category, and the real copy for ids ---------------------------------


@pytest.fixture
def cbbq_copy(tmp_path) -> Path:
    root = tmp_path / "cbbq"
    shutil.copytree(CBBQ_BUNDLED / "gender", root / "gender")
    return root


AMBIGUOUS = "gender/ambiguous/ambiguous.csv"
DISAMBIGUOUS = "gender/disambiguous/disambiguous.csv"


def cbbq(root: Path):
    return CBBQFiles(str(root)).load()


def test_cbbq_utf16_with_a_byte_order_mark_reads_like_the_utf8_original(cbbq_copy):
    before = cbbq(cbbq_copy)
    reencode(cbbq_copy / AMBIGUOUS, "utf-16-be", codecs.BOM_UTF16_BE)
    reencode(cbbq_copy / "gender/ambiguous/templates_generate_neg.csv", "utf-16-le", codecs.BOM_UTF16_LE)
    after = cbbq(cbbq_copy)
    assert after.items == before.items and after.facts == before.facts


def test_cbbq_gbk_is_a_data_error_naming_file_line_and_offset(cbbq_copy):
    reencode(cbbq_copy / DISAMBIGUOUS, "gbk")
    data_error(lambda: cbbq(cbbq_copy), DISAMBIGUOUS, 2, "not UTF-8", "byte offset")


def test_cbbq_one_bad_byte_in_an_instance_or_a_template_file(cbbq_copy):
    offset = bad_byte(cbbq_copy / AMBIGUOUS, 700)
    data_error(lambda: cbbq(cbbq_copy), AMBIGUOUS, 700, f"byte offset {offset}")
    shutil.copy(CBBQ_BUNDLED / AMBIGUOUS, cbbq_copy / AMBIGUOUS)
    bad_byte(cbbq_copy / "gender/disambiguous/templates_generate_nonneg.csv", 20)
    data_error(lambda: cbbq(cbbq_copy), "templates_generate_nonneg.csv", 20, "not UTF-8")


def test_cbbq_a_200000_character_field_names_file_and_row(cbbq_copy):
    huge_field(cbbq_copy / DISAMBIGUOUS, 1000, 8)
    data_error(lambda: cbbq(cbbq_copy), DISAMBIGUOUS, 1000, "131,072")


def test_cbbq_a_stray_quote_names_the_row_it_opens_on(cbbq_copy):
    # the gender category has no quoted fields: the quote runs to the end of the file
    stray_quote(cbbq_copy / AMBIGUOUS, 77, 8)
    data_error(lambda: cbbq(cbbq_copy), AMBIGUOUS, 77, "quote", "line 77")


@pytest.mark.parametrize(
    ("name", "what"), [(AMBIGUOUS, "no instances"), ("gender/ambiguous/templates_generate_neg.csv", "no templates")]
)
def test_cbbq_a_header_and_no_rows_is_a_data_error(cbbq_copy, name, what):
    header_only(cbbq_copy / name)
    data_error(lambda: cbbq(cbbq_copy), name, 2, what)


@pytest.mark.shared_data
def test_cbbq_real_duplicate_example_ids_are_a_data_error(tmp_path, cbbq_data):
    root = tmp_path / "cbbq"
    shutil.copytree(cbbq_data / "sexual_orientation", root / "sexual_orientation")
    name = "sexual_orientation/disambiguous/disambiguous.csv"
    repeat_line(root / name, 2, after=300)
    error = data_error(lambda: cbbq(root), name, 301, "duplicate example_id", "first at row 2")
    assert error.field == "example_id"


# --- LIBRA: the embedded fixture --------------------------------------------------------------


@pytest.fixture
def libra_copy(tmp_path) -> Path:
    folder = tmp_path / "libra"
    folder.mkdir()
    bundled = Path(__file__).resolve().parents[2] / "adapters" / "bundled" / "libra"
    for name in ("triplets.jsonl", "glossary.jsonl"):
        shutil.copy(bundled / name, folder / name)
    return folder


def libra(folder: Path):
    return LibraFiles(str(folder)).load()


def test_libra_utf16_with_a_byte_order_mark_reads_like_the_utf8_original(libra_copy):
    before = libra(libra_copy)
    reencode(libra_copy / "triplets.jsonl", "utf-16-le", codecs.BOM_UTF16_LE)
    reencode(libra_copy / "glossary.jsonl", "utf-16-be", codecs.BOM_UTF16_BE)
    after = libra(libra_copy)
    assert (after.triplets, after.glossary) == (before.triplets, before.glossary)


@pytest.mark.parametrize("encoding", ["iso8859_4", "utf-16-le"])
def test_libra_a_legacy_or_unmarked_encoding_is_a_data_error(libra_copy, encoding):
    reencode(libra_copy / "triplets.jsonl", encoding)  # iso8859_4 has the macrons of te reo Māori
    data_error(lambda: libra(libra_copy), "triplets.jsonl", None, "byte offset")


def test_libra_one_bad_byte_names_its_line(libra_copy):
    offset = bad_byte(libra_copy / "glossary.jsonl", 3)
    data_error(lambda: libra(libra_copy), "glossary.jsonl", 3, f"byte offset {offset}")


def test_libra_a_repeated_triplet_id_or_no_triplets_is_a_data_error(libra_copy):
    repeat_line(libra_copy / "triplets.jsonl", 2, after=4)
    error = data_error(lambda: libra(libra_copy), "triplets.jsonl", 5, "already used on row 2")
    assert error.field == "id"
    (libra_copy / "triplets.jsonl").write_text("\n\n", encoding="utf-8")
    data_error(lambda: libra(libra_copy), "triplets.jsonl", None, "no triplets")


# --- McBE: CSV and JSONL copies of the embedded fixture ---------------------------------------

MCBE_COLUMNS = ("context", "sentence", "words", "subtype", "explanation", "score")


def mcbe_rows(category: str = "gender") -> list[list[str]]:
    return [
        [b.context, b.sentence, "，".join(b.words), b.subtype, b.explanation, str(b.score)]
        for b in McBEFiles(None).load().by_category(category)
    ]


def write_mcbe_csv(path: Path, rows: list[list[str]], encoding: str = "utf-8", bom: bytes = b"") -> Path:
    text = ",".join(MCBE_COLUMNS) + "\n" + "".join(",".join(row) + "\n" for row in rows)
    path.write_bytes(bom + text.encode(encoding))
    return path


def mcbe(path: Path):
    return McBEFiles(str(path)).load()


def test_mcbe_csv_in_utf16_with_a_byte_order_mark_reads_like_utf8(tmp_path):
    utf8 = mcbe(write_mcbe_csv(tmp_path / "gender.csv", mcbe_rows()))
    utf16 = mcbe(write_mcbe_csv(tmp_path / "gender.csv", mcbe_rows(), "utf-16-le", codecs.BOM_UTF16_LE))
    assert [(b.sentence, b.words, b.row) for b in utf16.instances] == [(b.sentence, b.words, b.row) for b in utf8.instances]
    assert len(utf8.instances) == 5


def test_mcbe_gbk_csv_is_a_data_error_naming_file_line_and_offset(tmp_path):
    path = write_mcbe_csv(tmp_path / "gender.csv", mcbe_rows(), "gbk")
    data_error(lambda: mcbe(path), "gender.csv", 2, "not UTF-8", "byte offset")


def test_mcbe_jsonl_with_a_bad_byte_names_its_line(tmp_path):
    path = tmp_path / "gender.jsonl"
    path.write_text(
        "".join(json.dumps(dict(zip(MCBE_COLUMNS, row)), ensure_ascii=False) + "\n" for row in mcbe_rows()), encoding="utf-8"
    )
    offset = bad_byte(path, 3)
    data_error(lambda: mcbe(path), "gender.jsonl", 3, f"byte offset {offset}")


def test_mcbe_a_200000_character_field_or_a_stray_quote_names_file_and_row(tmp_path):
    rows = mcbe_rows()
    path = write_mcbe_csv(tmp_path / "gender.csv", rows[:2] + [[rows[2][0] + HUGE] + rows[2][1:]] + rows[3:])
    data_error(lambda: mcbe(path), "gender.csv", 4, "131,072")
    path = write_mcbe_csv(tmp_path / "gender.csv", rows[:2] + [['"' + rows[2][0]] + rows[2][1:]] + rows[3:])
    data_error(lambda: mcbe(path), "gender.csv", 4, "quote")


def test_mcbe_a_row_with_more_filled_cells_than_the_header_is_a_data_error(tmp_path):
    rows = mcbe_rows()
    path = write_mcbe_csv(tmp_path / "gender.csv", rows[:1] + [rows[1] + ["extra"]])
    data_error(lambda: mcbe(path), "gender.csv", 3, "7 cells")


def test_mcbe_a_header_and_no_rows_is_a_data_error(tmp_path):
    write_mcbe_csv(tmp_path / "gender.csv", mcbe_rows())
    write_mcbe_csv(tmp_path / "region.csv", [])
    data_error(lambda: mcbe(tmp_path), "region.csv", 2, "no BEI rows")


def test_mcbe_a_repeated_row_is_left_out_and_counted(tmp_path):
    rows = mcbe_rows()
    data = mcbe(write_mcbe_csv(tmp_path / "gender.csv", rows[:3] + [rows[1]] + rows[3:]))
    assert len(data.instances) == 5 and [b.row for b in data.instances] == [2, 3, 4, 6, 7]
    assert any("1 row(s) repeating" in note and "gender.csv row 5 repeats gender.csv row 3" in note for note in data.notes)


def test_mcbe_two_files_of_one_category_are_a_data_error(tmp_path):
    write_mcbe_csv(tmp_path / "gender.csv", mcbe_rows())
    write_mcbe_csv(tmp_path / "性别.csv", mcbe_rows()[:1])
    error = data_error(lambda: mcbe(tmp_path), "性别.csv", 2, "gender.csv row 2", "one file per category")
    assert "gender:2" in str(error)


# --- replay files -----------------------------------------------------------------------------


def replay_records(n: int = 4) -> list[dict]:
    return [{"sample_id": f"s{i}", "prompt_id": 1, "permutation": 0, "raw": f"답 {i}"} for i in range(n)]


def write_replay(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_replay_file_in_utf16_with_a_byte_order_mark_is_read(tmp_path):
    path = write_replay(tmp_path / "answers.jsonl", replay_records())
    reencode(path, "utf-16-le", codecs.BOM_UTF16_LE)
    assert len(AnswerFile(path)) == 4


@pytest.mark.parametrize("break_it", ["euc-kr", "bad byte", "utf-16 without a mark"])
def test_a_broken_replay_file_is_a_data_error_naming_its_line(tmp_path, break_it):
    path = write_replay(tmp_path / "answers.jsonl", replay_records())
    if break_it == "bad byte":
        bad_byte(path, 3)
        row = 3
    else:
        reencode(path, "cp949" if break_it == "euc-kr" else "utf-16-le")
        row = 1
    data_error(lambda: AnswerFile(path), "answers.jsonl", row, "byte offset")


# --- through the command line: exit code 3, one line on stderr, no traceback ------------------


def cli(out: Path, *assignments: str) -> int:
    args = ["run", "kobbq", "--out", str(out), "--set", "run.progress=false"]
    for assignment in assignments:
        args += ["--set", assignment]
    return main(args)


def test_the_cli_reports_a_re_encoded_data_file_in_one_line(tmp_path, kobbq_copy, capsys):
    reencode(kobbq_copy / KOBBQ_SAMPLES, "cp949")
    replay = write_replay(tmp_path / "answers.jsonl", replay_records())
    code = cli(tmp_path / "out", f"data.path={kobbq_copy}", "model.backend=replay", f"model.path={replay}")
    err = capsys.readouterr().err
    assert code == 3
    assert err.count("\n") == 1 and err.startswith("culturebias: error: ")
    assert KOBBQ_SAMPLES in err and "row 2" in err and "byte offset" in err
    assert "Traceback" not in err and "UnicodeDecodeError" not in err


def test_the_cli_reports_a_broken_replay_file_in_one_line(tmp_path, capsys):
    replay = write_replay(tmp_path / "answers.jsonl", replay_records())
    bad_byte(replay, 2)
    code = cli(tmp_path / "out", "model.backend=replay", f"model.path={replay}", "protocol.limit=4", "protocol.prompts=1")
    err = capsys.readouterr().err
    assert code == 3
    # Before it: the run's plan, shown once the run is recorded (run.plan=count). The error is one line.
    error = [line for line in err.splitlines() if line.startswith("culturebias")]
    assert len(error) == 1 and "answers.jsonl" in error[0] and "row 2" in error[0]
    assert err.rstrip("\n").endswith(error[0])
    assert "Traceback" not in err
