"""engines.export: rows to CSV, JSON, JSON Lines and Parquet, read back; clear errors that lose nothing."""

from __future__ import annotations

import csv
import json
from datetime import UTC, date, datetime
from decimal import Decimal

import duckdb
import pytest

from engines.errors import EngineError
from engines.export import ExportError, ExportExists, duckdb_type, export_rows, format_for

COLUMNS = ["id", "name", "score", "cuisines", "opened", "price", "open now", 'it\'s "odd"); DROP TABLE x; --']
ROWS = [
    (1, "Lucky's", 4.5, ["thai", "vegan"], date(2020, 5, 1), Decimal("12.50"), True, None),
    (2, "Ça va", None, None, None, Decimal("8"), False, "x"),
    (3, "Line\nbreak, comma", 3.0, [], date(2021, 1, 31), None, None, "y"),
]


def test_csv_round_trip(tmp_path):
    out = export_rows(tmp_path / "r.csv", COLUMNS, ROWS)
    assert (out.format, out.rows, out.columns) == ("csv", 3, 8)
    with (tmp_path / "r.csv").open(newline="", encoding="utf-8") as f:
        read = list(csv.reader(f))
    assert read[0] == COLUMNS
    assert read[1] == ["1", "Lucky's", "4.5", '["thai", "vegan"]', "2020-05-01", "12.5", "true", ""]
    assert read[3][1] == "Line\nbreak, comma"  # quoted, not split


def test_json_and_jsonl_round_trip(tmp_path):
    export_rows(tmp_path / "r.json", COLUMNS, ROWS)
    objects = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert objects[0] == dict(zip(COLUMNS, [1, "Lucky's", 4.5, ["thai", "vegan"], "2020-05-01", 12.5, True, None]))
    assert objects[1]["score"] is None and objects[1]["name"] == "Ça va"
    export_rows(tmp_path / "r.jsonl", COLUMNS, ROWS)
    lines = (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == objects


def test_parquet_round_trip_keeps_types(tmp_path):
    path = tmp_path / "r.parquet"
    export_rows(path, COLUMNS, ROWS)
    con = duckdb.connect()
    rel = con.read_parquet(str(path))
    assert rel.columns == COLUMNS  # the hostile name is a column name, nothing more
    types = dict(zip(rel.columns, map(str, rel.types)))
    assert types["id"] == "BIGINT" and types["score"] == "DOUBLE" and types["cuisines"] == "VARCHAR[]"
    assert types["opened"] == "DATE" and types["open now"] == "BOOLEAN" and types["price"] == "DOUBLE"
    assert rel.fetchall() == [
        (1, "Lucky's", 4.5, ["thai", "vegan"], date(2020, 5, 1), 12.5, True, None),
        (2, "Ça va", None, None, None, 8.0, False, "x"),
        (3, "Line\nbreak, comma", 3.0, [], date(2021, 1, 31), None, None, "y"),
    ]


def test_parquet_of_no_rows_and_of_mixed_columns(tmp_path):
    export_rows(tmp_path / "empty.parquet", ["a", "b"], [])
    assert duckdb.connect().read_parquet(str(tmp_path / "empty.parquet")).columns == ["a", "b"]
    stamp = datetime(2024, 1, 2, 3, 4, tzinfo=UTC)
    export_rows(tmp_path / "mixed.parquet", ["m", "n", "t", "o"], [(1, 1, stamp, {"k": 1}), ("x", 2.5, None, None)])
    rel = duckdb.connect().read_parquet(str(tmp_path / "mixed.parquet"))
    assert list(map(str, rel.types)) == ["VARCHAR", "DOUBLE", "TIMESTAMP WITH TIME ZONE", "VARCHAR"]
    assert rel.fetchall()[0][0] == "1" and rel.fetchall()[0][3] == '{"k": 1}'
    assert duckdb_type([None, None]) == "VARCHAR" and duckdb_type([1, True]) == "VARCHAR"


def test_duplicate_and_empty_column_names_are_made_unique(tmp_path):
    export_rows(tmp_path / "d.json", ["name", "NAME", ""], [(1, 2, 3)])
    assert json.loads((tmp_path / "d.json").read_text()) == [{"name": 1, "NAME_2": 2, "column_3": 3}]


def test_format_follows_the_extension_and_unknown_ones_are_refused(tmp_path):
    assert [format_for(f"x.{e}") for e in ("csv", "JSON", "jsonl", "ndjson", "Parquet")] == [
        "csv", "json", "jsonl", "jsonl", "parquet",
    ]  # fmt: skip
    for name in ("rows.xlsx", "rows"):
        with pytest.raises(ExportError, match="end the name in one of"):
            export_rows(tmp_path / name, ["a"], [(1,)])
    assert list(tmp_path.iterdir()) == []


def test_an_existing_file_is_kept_unless_overwrite(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("precious", encoding="utf-8")
    with pytest.raises(ExportExists) as caught:
        export_rows(path, ["a"], [(1,)])
    assert caught.value.path == path and "already exists" in str(caught.value)
    assert path.read_text(encoding="utf-8") == "precious"
    export_rows(path, ["a"], [(1,)], overwrite=True)
    assert path.read_text(encoding="utf-8") == "a\n1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.csv"]  # no temporary file left behind


def test_unwritable_paths_and_bad_rows_are_clear_errors(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ExportError, match="Cannot write"):
        export_rows(blocker / "sub" / "r.csv", ["a"], [(1,)])  # a file where a folder should be
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    with pytest.raises(ExportError, match="is a folder"):
        export_rows(folder, ["a"], [(1,)])
    with pytest.raises(ExportError, match="Row 2 has 1 values for 2 columns"):
        export_rows(tmp_path / "r.parquet", ["a", "b"], [(1, 2), (3,)])
    with pytest.raises(ExportError, match="no columns"):
        export_rows(tmp_path / "r.json", [], [])
    assert issubclass(ExportError, EngineError)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder.csv"]


def test_missing_folders_are_created_and_home_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    out = export_rows("~/exports/deep/r.csv", ["a"], [(1,)])
    assert out.path == tmp_path / "exports" / "deep" / "r.csv" and out.path.read_text() == "a\n1\n"
