"""McBE loader: the published spreadsheet layout, JSONL/CSV, the embedded fixture, and bad rows."""

from __future__ import annotations

import io
import re
import json
import zipfile

import pytest

from culturebias.adapters.mcbe.files import McBEFiles, parse_files
from culturebias.adapters.mcbe.xlsx import read_first_sheet
from culturebias.testing.xlsx import write_xlsx
from culturebias.domain.errors import DataError, MissingDataError

HEADER = ["context", "sentence", "words", "subtype", "explanation", "score"]
ROW = ["上下文。", "[PLH]很能干。", "甲，乙，丙", "能力", "解释。", 5]


def test_embedded_fixture_loads_with_worldview():
    source = McBEFiles(None)
    dataset = source.load()
    assert dataset.categories == ["gender", "region", "socioeconomic_status", "worldview"]
    assert dataset.notes == ()  # all four are among the paper's twelve
    assert len(dataset.instances) == 19
    assert [len(dataset.by_category(c)) for c in dataset.categories] == [5, 5, 5, 4]
    first = dataset.instances[0]
    assert (first.source, first.row, first.words, first.score) == ("gender.xlsx", 2, ("男生", "女生"), 6.0)
    assert first.default_sentence == "大家都觉得男生更适合做技术，逻辑思维更强。"
    assert first.scenario("女生") == "公司今年要选一位新的技术主管。大家都觉得女生更适合做技术，逻辑思维更强。"
    assert dataset.subcategories("gender") == ["职业能力", "家庭角色", "性格特征"]
    assert "not McBE data" in source.describe()
    assert source.fingerprint() == McBEFiles(None).fingerprint()


def test_written_workbook_round_trips():
    rows = read_first_sheet(write_xlsx([HEADER, ROW, ["a&b <c>", None, "x"]]))
    assert rows[0] == (1, HEADER)
    assert rows[1] == (2, ["上下文。", "[PLH]很能干。", "甲，乙，丙", "能力", "解释。", "5"])
    assert rows[2] == (3, ["a&b <c>", None, "x"])


def _workbook_with_shared_strings() -> bytes:
    """The layout spreadsheet programs write: shared strings, rich text, phonetic runs, sparse cells."""
    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    shared = (
        f"<sst {ns}>"
        + "".join(f"<si><t>{h}</t></si>" for h in HEADER)
        + "<si><r><t>富</t></r><r><rPr><b/></rPr><t xml:space=\"preserve\">文本 </t></r><rPh sb=\"0\" eb=\"1\"><t>フリガナ</t></rPh></si>"
        + "<si><t>[PLH]在这里_x000D_换行</t></si>"
        + "<si><t>词一，词二</t></si><si><t>子类</t></si><si><t>说明</t></si>"
        + "</sst>"
    )
    header_cells = "".join(f'<c r="{chr(65 + i)}1" t="s"><v>{i}</v></c>' for i in range(6))
    data_cells = (
        '<c r="A3" t="s"><v>6</v></c><c r="B3" t="s"><v>7</v></c><c r="C3" t="s"><v>8</v></c>'
        '<c r="D3" t="s"><v>9</v></c><c r="E3" t="s"><v>10</v></c><c r="F3"><v>7.5</v></c>'
    )
    sheet = f"<worksheet {ns}><sheetData><row r=\"1\">{header_cells}</row><row r=\"2\"/><row r=\"3\">{data_cells}</row></sheetData></worksheet>"
    workbook = f'<workbook {ns} xmlns:r="{rel}"><sheets><sheet name="性别" sheetId="1" r:id="rId7"/></sheets></workbook>'
    rels = (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f'<Relationship Id="rId7" Type="{rel}/worksheet" Target="/xl/worksheets/data.xml"/></Relationships>'
    )
    sheet_type = "application/vnd.openxmlformats-officedocument.spreadsheetml"
    content_types = (
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/xl/workbook.xml" ContentType="{sheet_type}.sheet.main+xml"/>'
        f'<Override PartName="/xl/worksheets/data.xml" ContentType="{sheet_type}.worksheet+xml"/>'
        f'<Override PartName="/xl/sharedStrings.xml" ContentType="{sheet_type}.sharedStrings+xml"/></Types>'
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("[Content_Types].xml", content_types)
        archive.writestr("xl/workbook.xml", workbook)
        archive.writestr("xl/_rels/workbook.xml.rels", rels)
        archive.writestr("xl/sharedStrings.xml", shared)
        archive.writestr("xl/worksheets/data.xml", sheet)
    return buffer.getvalue()


def test_reads_shared_strings_rich_text_and_sparse_rows():
    dataset = parse_files([("性别.xlsx", _workbook_with_shared_strings())])
    [bei] = dataset.instances
    assert bei.category == "gender"  # Chinese file name → canonical key
    assert bei.context == "富文本"  # rich-text runs joined, phonetic run left out, trimmed
    assert bei.sentence == "[PLH]在这里\r换行"
    assert bei.words == ("词一", "词二")
    assert (bei.score, bei.row) == (7.5, 3)
    assert dataset.notes == ("1 blank row(s) skipped",)  # the empty row 2


@pytest.mark.parametrize(
    ("row", "field", "reason"),
    [
        (["c", "没有占位符", "甲，乙", "s", "e", 1], "sentence", "placeholder"),
        (["c", "[PLH]", "", "s", "e", 1], "words", "no substitution"),
        (["c", "[PLH]", "甲，甲", "s", "e", 1], "words", "repeated"),
        (["c", "[PLH]", "甲，乙", "", "e", 1], "subtype", "empty"),
        (["c", "[PLH]", "甲，乙", "s", "", 1], "explanation", "empty"),
        (["c", "[PLH]", "甲，乙", "s", "e", "高"], "score", "not a number"),
        (["c", "[PLH]", "甲，乙", "s", "e", 11], "score", "outside"),
    ],
)
def test_bad_rows_raise_data_error_naming_file_row_field(row, field, reason):
    data = write_xlsx([HEADER, ROW, row])
    with pytest.raises(DataError) as caught:
        parse_files([("region.xlsx", data)])
    assert (caught.value.file, caught.value.row, caught.value.field) == ("region.xlsx", 3, field)
    assert reason in str(caught.value)


def test_missing_column_and_not_a_workbook():
    with pytest.raises(DataError) as caught:
        parse_files([("age.xlsx", write_xlsx([HEADER[:-1], ROW[:-1]]))])
    assert caught.value.field == "score" and caught.value.row == 1
    with pytest.raises(DataError) as caught:
        parse_files([("age.xlsx", b"not a zip")])
    assert caught.value.file == "age.xlsx"


def test_blank_rows_and_trailing_separators_are_counted():
    data = write_xlsx([HEADER, ROW, [None, "", None], ["c", "[PLH]好", "甲，乙，", "s", "e", 0]])
    dataset = parse_files([("age.xlsx", data)])
    assert len(dataset.instances) == 2
    assert dataset.instances[1].words == ("甲", "乙")
    assert dataset.notes == ("1 blank row(s) skipped", "1 empty word entr(y/ies) dropped from 'words' cells (trailing separators)")


def test_jsonl_and_csv_rows(tmp_path):
    jsonl = tmp_path / "religion.jsonl"
    record = dict(zip(HEADER, ROW)) | {"words": ["甲", "乙"], "category": "宗教"}
    jsonl.write_text(json.dumps(record, ensure_ascii=False) + "\n\n", encoding="utf-8")
    csv_file = tmp_path / "Appearance.csv"
    csv_file.write_text(",".join(HEADER) + "\n" + "c,[PLH]好看,甲，乙,外貌,e,2.5\n", encoding="utf-8-sig")
    (tmp_path / "~$lock.xlsx").write_bytes(b"junk")  # spreadsheet lock files are ignored
    dataset = McBEFiles(str(tmp_path)).load()
    assert dataset.categories == ["appearance", "religion"]
    appearance, religion = dataset.instances
    assert (appearance.row, appearance.words, appearance.score) == (2, ("甲", "乙"), 2.5)
    assert (religion.row, religion.words) == (1, ("甲", "乙"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        McBEFiles(str(bad)).load()
    assert (caught.value.file, caught.value.row) == ("bad.jsonl", 1)


def test_missing_data_says_where_to_get_it(tmp_path):
    with pytest.raises(MissingDataError, match="data.path"):
        McBEFiles(str(tmp_path / "nowhere")).load()
    with pytest.raises(MissingDataError, match="Velikaya/McBE"):
        McBEFiles(str(tmp_path)).fingerprint()


def test_fingerprint_follows_content(tmp_path):
    (tmp_path / "age.xlsx").write_bytes(write_xlsx([HEADER, ROW]))
    before = McBEFiles(str(tmp_path)).fingerprint()
    (tmp_path / "age.xlsx").write_bytes(write_xlsx([HEADER, ROW[:-1] + [6]]))
    assert McBEFiles(str(tmp_path)).fingerprint() != before


def test_a_wrong_dimension_record_does_not_cut_the_sheet():
    """Some writers record ``<dimension ref="A1"/>`` whatever the sheet holds; every cell is still read."""
    data = write_xlsx([HEADER, ROW, ["c", "[PLH]好", "甲，乙", "s", "e", 3]])
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in source.namelist():
            payload = source.read(name)
            if name == "xl/worksheets/sheet1.xml":
                # openpyxl writes "<dimension ref=.../>" with or without a space, by whether lxml is installed
                payload, found = re.subn(rb'<dimension ref="A1:F3"\s*/>', b'<dimension ref="A1"/>', payload)
                assert found == 1
            archive.writestr(name, payload)
    rows = read_first_sheet(buffer.getvalue())
    assert [number for number, _ in rows] == [1, 2, 3] and rows[2][1][-1] == "3"
    assert len(parse_files([("age.xlsx", buffer.getvalue())]).instances) == 2


def test_a_zip_that_is_no_workbook_is_a_data_error():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "not a spreadsheet")
    with pytest.raises(DataError, match="malformed workbook") as caught:
        parse_files([("age.xlsx", buffer.getvalue())])
    assert caught.value.file == "age.xlsx"
