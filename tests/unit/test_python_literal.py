"""Python-literal cells read without ``ast``: what ``ast.literal_eval`` gives, on every row of the data, from many threads."""

from __future__ import annotations

import ast
import glob
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from culturebias.adapters.datasets.csv_table import read_table
from culturebias.adapters.kobbq.files import BUNDLED, KoBBQFiles, parse_choices
from culturebias.adapters.datasets.python_literal import LiteralSyntaxError, parse_literal
from culturebias.adapters.twbias.files import TWBiasFiles
from culturebias.domain.errors import DataError

TRICKY = [
    "['손자', '할머니', '알 수 없음']",
    "[('男生', '3C'), ('女生', None)]",
    "[('女人', '花錢'), ('女人',), 3]",
    '["double", \'single\', "it\'s", \'say "hi"\']',
    r"['\x41\u00e9\N{BULLET}\101\t\\ \q', r'raw\'s', u'u', 'a' 'b']",
    "  [ ( 'a' , ) , ( ) , [ ] , ( 'b' ) , ]  ",
    "[None, True, False, 0, -1, 2.5, .5, 1e3]",
    "[]",
]
BROKEN = ["['손자', '할머니'", "['a' 'b'", "[1 2]", "__import__('os')", "['a']]", "'''x'''", "[1+2]", "['a\nb']", "[" * 40 + "]" * 40]


def same(a, b) -> bool:
    """Equal, with lists and tuples told apart at every depth."""
    return repr(a) == repr(b)


@pytest.mark.parametrize("cell", TRICKY)
def test_each_shape_reads_as_ast_reads_it(cell):
    assert same(parse_literal(cell), ast.literal_eval(cell.strip()))


@pytest.mark.parametrize("cell", BROKEN)
def test_anything_else_is_a_syntax_error_naming_the_position(cell):
    with pytest.raises(LiteralSyntaxError, match="at character [0-9]+"):
        parse_literal(cell)


def _literal_cells() -> list[tuple[str, int, str]]:
    """(file, row, cell) of every Python-literal cell of the bundled data and of the shared copy, where it is."""
    shared = Path(__file__).resolve().parents[2].parent / "shared" / "data"
    cells = []
    for path in [BUNDLED / "KoBBQ_test_samples.tsv", *sorted(shared.glob("kobbq/*samples*.tsv"))]:
        for number, row in read_table(path, delimiter="\t").dicts():
            cells.append((str(path), number, row["choices"]))
    for name in sorted(glob.glob(str(shared / "twbias" / "*" / "label_data_*.csv"))):
        table = read_table(Path(name), file=name)
        at = [h.strip() for h in table.header].index("T-A Combination")
        cells += [(name, line, record[at]) for line, record in table.records if at < len(record) and record[at].strip()]
    return cells


def test_every_row_of_the_data_reads_as_ast_reads_it():
    cells = _literal_cells()
    assert len(cells) >= 2000  # the bundled KoBBQ alone has thousands
    differ = [(f, r) for f, r, cell in cells if not same(parse_literal(cell), ast.literal_eval(cell.strip()))]
    assert differ == []


def test_unreadable_choices_are_a_data_error_naming_file_row_and_field():
    with pytest.raises(DataError) as error:
        parse_choices("['a', 'b'", "samples.tsv", 7)
    assert (error.value.file, error.value.row, error.value.field) == ("samples.tsv", 7, "choices")
    assert "at character 10" in str(error.value)


def test_loading_never_calls_ast(monkeypatch):
    """The CPython 3.11 race made ast.literal_eval raise SystemError under threads: the loaders must not use it."""

    def racing(*args, **kwargs):
        raise SystemError("AST constructor recursion depth mismatch (before=48, after=47)")

    monkeypatch.setattr(ast, "literal_eval", racing)
    monkeypatch.setattr(ast, "parse", racing)
    assert KoBBQFiles(None).load().items
    shared = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "twbias"
    if shared.is_dir():
        assert TWBiasFiles(str(shared)).load().axes


def test_many_threads_load_the_same_items():
    def load(_):
        return [(i.sample_id, i.options) for i in KoBBQFiles(None).load().items]

    with ThreadPoolExecutor(max_workers=16) as pool:
        loaded = list(pool.map(load, range(32)))
    assert all(items == loaded[0] for items in loaded) and loaded[0]
