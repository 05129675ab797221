"""A user's own data as a source: every format opens, nothing writes to the user's files, bad input
gets a clear error."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sys
from pathlib import Path

import duckdb
import pytest

from engines.data.source import DataSourceError, open_source, table_name
from engines.errors import EngineError
from engines.settings import Settings
from engines.sql.sandbox import Sandbox, SqlError, SqlRefused
from tests.engines.data.conftest import (
    HOSTILE,
    hotel_rows,
    write_csv,
    write_duckdb,
    write_jsonl,
    write_parquet,
)


def digest(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_size


def write_json_array(path: Path, rows: list[dict]) -> Path:
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def write_gzip_csv(path: Path, rows: list[dict]) -> Path:
    plain = write_csv(path.with_name("plain.csv"), rows)
    path.write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    return path


WRITERS = {
    "hotels.csv": write_csv,
    "hotels.tsv": lambda p, r: write_csv(p, r, "\t"),
    "hotels.parquet": write_parquet,
    "hotels.jsonl": write_jsonl,
    "hotels.json": write_json_array,
    "hotels.csv.gz": write_gzip_csv,
}


@pytest.mark.parametrize("filename", list(WRITERS))
def test_every_file_format_becomes_a_table_named_after_the_file(tmp_path, filename):
    path = WRITERS[filename](tmp_path / filename, hotel_rows())
    with open_source(str(path), Settings()) as source:
        assert [t.name for t in source.schema.tables] == ["hotels"]
        r = source.sandbox.run("SELECT city, COUNT(*) AS n FROM hotels GROUP BY city ORDER BY city")
        assert r.rows == (("Berlin", 8), ("Paris", 8), ("Rome", 8))
        r = source.sandbox.run("SELECT MAX(price) FROM hotels")
        assert r.rows[0][0] == 40 + 5 * 23


def test_a_folder_is_one_table_per_file(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    write_csv(folder / "hotels.csv", hotel_rows(6))
    write_jsonl(folder / "guests.jsonl", [{"guest": "Ann", "hotel_id": 1}, {"guest": "Bo", "hotel_id": 2}])
    (folder / "README.txt").write_text("not data")  # other files are left out
    (folder / ".hidden.csv").write_text("a\n1\n")
    (folder / "sub").mkdir()
    with open_source(str(folder), Settings()) as source:
        assert sorted(t.name for t in source.schema.tables) == ["guests", "hotels"]
        r = source.sandbox.run(
            "SELECT g.guest, h.city FROM guests g JOIN hotels h ON h.id = g.hotel_id ORDER BY g.guest"
        )
        assert r.rows == (("Ann", "Rome"), ("Bo", "Berlin"))


def test_a_duckdb_file_is_queried_in_place_with_its_schemas(hotels_duckdb):
    with open_source(str(hotels_duckdb), Settings()) as source:
        assert sorted(t.qualified for t in source.schema.tables) == ["archive.old", "hotels"]
        assert source.sandbox.run("SELECT COUNT(*) FROM hotels").rows == ((24,),)
        assert source.sandbox.run('SELECT what FROM "archive"."old"').rows == (("gone",),)


def test_hostile_file_and_column_names_work(tmp_path):
    path = write_csv(tmp_path / f"{HOSTILE}.csv", [{HOSTILE: 1, "b": "x"}, {HOSTILE: 2, "b": "y"}])
    with open_source(str(path), Settings()) as source:
        (table,) = source.schema.tables
        # the table follows the naming rule (each character that is not a letter, digit or _ becomes _); a
        # column keeps its name, whatever it holds
        assert table.name == "___DROP_TABLE_x____" and [c.name for c in table.columns] == [HOSTILE, "b"]
        quoted = '"' + HOSTILE.replace('"', '""') + '"'
        r = source.sandbox.run(f"SELECT {quoted} FROM ___DROP_TABLE_x____ WHERE b = 'y'")
        assert r.rows == ((2,),)


def test_a_stem_that_looks_like_a_path_gets_a_table_name_the_gate_accepts(tmp_path):
    path = write_csv(tmp_path / "sales.2024.csv", [{"a": 1}])
    assert table_name(str(path)) == "sales_2024"
    assert table_name("x.CSV.gz") == "x"
    with open_source(str(path), Settings()) as source:
        assert source.sandbox.run("SELECT a FROM sales_2024").rows == ((1,),)


HOSTILE_QUERIES = (
    "DROP TABLE hotels",
    "DELETE FROM hotels",
    "UPDATE hotels SET city = 'x'",
    "INSERT INTO hotels (id) VALUES (99)",
    "CREATE TABLE evil AS SELECT 1",
    "COPY hotels TO '{path}'",
    "COPY (SELECT 1) TO '{path}' (FORMAT csv)",
    "ATTACH '{path}' AS mine",
    "SELECT * FROM read_csv('{path}')",
    "SELECT * FROM read_csv('{other}')",
    "SELECT * FROM '{path}'",
    "SELECT * FROM '{other}'",
    "SELECT 1; DROP TABLE hotels",
    "SET enable_external_access = true",
    "PRAGMA enable_checkpoint_on_shutdown",
    "CHECKPOINT",
    "EXPORT DATABASE '{dir}'",
    "INSTALL httpfs",
    "SELECT * FROM glob('{dir}/*')",
    "SELECT * FROM query('DROP TABLE hotels')",
    "WITH d AS (DELETE FROM hotels RETURNING *) SELECT * FROM d",
)


@pytest.mark.parametrize("kind", ["csv", "duckdb"])
def test_no_query_writes_to_the_users_file(tmp_path, kind):
    other = write_csv(tmp_path / "other.csv", [{"secret": 42}])
    path = (
        write_csv(tmp_path / "hotels.csv", hotel_rows())
        if kind == "csv"
        else write_duckdb(tmp_path / "hotels.duckdb", hotel_rows())
    )
    before, other_before = digest(path), digest(other)
    listing = sorted(os.listdir(tmp_path))
    with open_source(str(path), Settings()) as source:
        for template in HOSTILE_QUERIES:
            sql = template.format(path=path, other=other, dir=tmp_path)
            with pytest.raises(SqlError):
                source.sandbox.run(sql)
        # the gate's rules hold for the user's data: still there, unchanged
        assert source.sandbox.run("SELECT COUNT(*) FROM hotels").rows == ((24,),)
    assert digest(path) == before and digest(other) == other_before
    assert sorted(os.listdir(tmp_path)) == listing  # no WAL, no sidecar, no export


def test_reading_another_file_is_refused_by_duckdb_too(tmp_path):
    """Even SQL that slipped past the gate cannot read another file: the connection has no file access."""
    path = write_csv(tmp_path / "hotels.csv", hotel_rows(3))
    other = write_csv(tmp_path / "other.csv", [{"secret": 42}])
    with open_source(str(path), Settings()) as source:
        cursor = source.sandbox._cursor()
        try:
            with pytest.raises(duckdb.Error):
                cursor.execute("SELECT * FROM read_csv(?)", [str(other)]).fetchall()
            with pytest.raises(duckdb.Error):
                cursor.execute("SELECT * FROM read_csv(?)", [str(path)]).fetchall()
        finally:
            cursor.close()


def test_the_loader_may_read_only_the_files_it_was_given(tmp_path):
    allowed = write_csv(tmp_path / "a.csv", [{"x": 1}])
    other = write_csv(tmp_path / "b.csv", [{"x": 2}])

    def load(con):
        con.execute("CREATE TABLE a AS SELECT * FROM read_csv(?)", [str(allowed)])
        con.execute("CREATE TABLE b AS SELECT * FROM read_csv(?)", [str(other)])

    with pytest.raises(duckdb.PermissionException):
        Sandbox.create(load, read_paths=[str(allowed)])


def test_a_closed_source_leaves_no_temporary_files(tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    source = open_source(str(write_csv(tmp_path / "hotels.csv", hotel_rows(3))), Settings())
    assert os.listdir(scratch)  # the private copy lives there while open
    source.close()
    assert os.listdir(scratch) == []


# --- bad input: a clear error, never a traceback ----------------------------------------------------


def bad(spec: str, *words: str) -> None:
    with pytest.raises(DataSourceError) as e:
        open_source(spec, Settings())
    message = str(e.value)
    assert "Traceback" not in message
    for w in words:
        assert w in message, message


def test_a_missing_path(tmp_path):
    bad(str(tmp_path / "nope.csv"), "No such file")


def test_an_empty_file(tmp_path):
    (tmp_path / "empty.csv").write_bytes(b"")
    bad(str(tmp_path / "empty.csv"), "empty")


def test_an_empty_file_in_a_folder(tmp_path):
    write_csv(tmp_path / "a.csv", [{"x": 1}])
    (tmp_path / "b.csv").write_bytes(b"")
    bad(str(tmp_path), "b.csv", "empty")


def test_a_folder_without_data_files(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    bad(str(tmp_path), "holds no CSV")


def test_two_files_that_would_be_the_same_table_get_a_suffix(tmp_path):
    write_csv(tmp_path / "a.csv", [{"x": 1}])
    write_jsonl(tmp_path / "a.jsonl", [{"x": 2}])
    with open_source(str(tmp_path), Settings()) as source:
        assert {t.name: t.file for t in source.schema.tables} == {"a": "a.csv", "a_2": "a.jsonl"}
        assert source.sandbox.run("SELECT a.x, a_2.x FROM a, a_2").rows == ((1, 2),)


def test_a_file_that_is_not_what_its_name_says(tmp_path):
    (tmp_path / "broken.parquet").write_text("this is not parquet")
    bad(str(tmp_path / "broken.parquet"), "broken.parquet", "Parquet")
    (tmp_path / "broken.jsonl").write_text("{not json\n")
    bad(str(tmp_path / "broken.jsonl"), "broken.jsonl", "JSON")


def test_a_file_that_is_not_a_duckdb_database(tmp_path):
    (tmp_path / "fake.duckdb").write_text("hello, I am text")
    bad(str(tmp_path / "fake.duckdb"), "DuckDB")


def test_an_unknown_format(tmp_path):
    (tmp_path / "data.xlsx").write_bytes(b"PK\x03\x04 not a table")
    bad(str(tmp_path / "data.xlsx"), "Cannot tell the format", ".csv")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file(tmp_path):
    path = write_csv(tmp_path / "locked.csv", [{"x": 1}])
    path.chmod(0)
    try:
        bad(str(path), "cannot be read")
    finally:
        path.chmod(0o600)


def test_other_urls_and_nothing(tmp_path):
    bad("https://example.com/data.csv", "not supported")
    bad("   ", "No data source")


def test_postgresql_without_its_module_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "engines.data.postgres", None)  # the import fails
    bad("postgresql://user:secret@127.0.0.1:1/db", "PostgreSQL sources are not available")


def test_a_header_only_csv_is_an_empty_table(tmp_path):
    (tmp_path / "h.csv").write_text("a,b\n")
    with open_source(str(tmp_path / "h.csv"), Settings()) as source:
        assert source.sandbox.run("SELECT COUNT(*) FROM h").rows == ((0,),)


def test_errors_are_engine_errors():
    assert issubclass(DataSourceError, EngineError)
    assert issubclass(SqlRefused, EngineError)


def test_a_duckdb_file_without_tables(tmp_path):
    path = tmp_path / "empty.duckdb"
    duckdb.connect(str(path)).close()
    bad(str(path), "holds no table")
