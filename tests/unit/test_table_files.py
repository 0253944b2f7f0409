"""Flat files written whole or not at all: expanded items (JSON Lines) and item-record exports."""

from __future__ import annotations

import json

import pytest

from culturebias.adapters.files.table_files import ItemTables, JsonlRows
from culturebias.domain.errors import ConfigError


def test_rows_are_written_one_json_object_per_line_and_counted(tmp_path):
    out = tmp_path / "deep" / "items.jsonl"
    assert JsonlRows(out)(iter([{"a": 1}, {"b": "二"}])) == 2
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == [{"a": 1}, {"b": "二"}]


def test_a_row_that_fails_leaves_the_previous_file_and_no_partial_one(tmp_path):
    out = tmp_path / "items.jsonl"
    out.write_text('{"old": true}\n', encoding="utf-8")

    def rows():
        yield {"a": 1}
        raise ConfigError("template row 2: bad")

    with pytest.raises(ConfigError):
        JsonlRows(out)(rows())
    assert out.read_text(encoding="utf-8") == '{"old": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["items.jsonl"]


def test_an_unknown_export_format_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ConfigError, match="unknown export format 'xlsx'"):
        ItemTables().write([], tmp_path / "items.xlsx", "xlsx")
    assert list(tmp_path.iterdir()) == []
