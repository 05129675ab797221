"""The SQL gate: what it lets through, what it refuses, and how DuckDB is held."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from engines.errors import ConfigurationError, EngineError
from engines.sql.sandbox import (
    QueryResult,
    Sandbox,
    SqlError,
    SqlFailed,
    SqlRefused,
    SqlTimedOut,
    check,
    connect,
    lock,
    to_jsonable,
    transpile,
    validate,
)

ROWS = 600
REPO = Path(__file__).resolve().parents[3]


def load_items(con: duckdb.DuckDBPyConnection) -> None:
    """600 rows with a list column, a decimal, a date and an enum."""
    con.execute(
        """
        CREATE TABLE items AS
        SELECT i::INTEGER AS id,
               'item ' || i AS name,
               list_slice(['a', 'b', 'c'], 1, (i % 3) + 1) AS tags,
               (i / 8)::DECIMAL(6, 2) AS price,
               DATE '2024-01-01' + (i % 366)::INTEGER AS day,
               ['cheap', 'moderate', 'expensive'][(i % 3) + 1]::ENUM ('cheap', 'moderate', 'expensive') AS tier
        FROM range(?) r(i)
        """,
        [ROWS],
    )


def make(**kwargs) -> tuple[Sandbox, duckdb.DuckDBPyConnection]:
    """A sandbox over the items table, and the raw connection behind it (for checks)."""
    con = connect()
    load_items(con)
    lock(con)
    return Sandbox(con, **kwargs), con


@pytest.fixture(scope="module")
def held() -> tuple[Sandbox, duckdb.DuckDBPyConnection]:
    sandbox, con = make(row_cap=1000, timeout_s=5.0)
    yield sandbox, con
    sandbox.close()


@pytest.fixture(scope="module")
def sandbox(held) -> Sandbox:
    return held[0]


@pytest.fixture(scope="module")
def raw(held) -> duckdb.DuckDBPyConnection:
    return held[1]


def fingerprint(con: duckdb.DuckDBPyConnection) -> tuple:
    """Everything hostile SQL might change: the data, the catalog, the settings."""
    cur = con.cursor()
    try:
        return (
            cur.execute("SELECT count(*), sum(hash(id, name, tags, price, day, tier)) FROM items").fetchall(),
            cur.execute("SELECT database_name, schema_name, table_name FROM duckdb_tables() ORDER BY ALL").fetchall(),
            cur.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY ALL").fetchall(),
            cur.execute("SELECT function_name FROM duckdb_functions() WHERE NOT internal ORDER BY ALL").fetchall(),
            cur.execute("SELECT database_name FROM duckdb_databases() ORDER BY ALL").fetchall(),
            cur.execute(
                "SELECT current_setting('enable_external_access'), current_setting('lock_configuration')"
            ).fetchall(),
        )
    finally:
        cur.close()


# --- the hostile corpus --------------------------------------------------------------------

HOSTILE: list[str] = [
    # DDL and DML, in any case
    "DROP TABLE items",
    "drop table items",
    "DrOp TaBlE IF EXISTS items",
    "  \n\t drop\ttable items",
    "/* a comment first */ DROP TABLE items",
    "DELETE FROM items",
    "delete from items where id > 0",
    "UPDATE items SET name = 'pwned'",
    "INSERT INTO items (id, name) VALUES (9999, 'x')",
    "INSERT INTO items SELECT * FROM items",
    "CREATE TABLE stolen AS SELECT * FROM items",
    "CREATE TEMP TABLE scratch (a INTEGER)",
    "CREATE OR REPLACE TABLE items AS SELECT 1 AS id",
    "CREATE VIEW v AS SELECT 1",
    "CREATE MACRO m(a) AS a + 1",
    "create or replace temp macro m(a) as table select 1",
    "CREATE SECRET s (TYPE s3, KEY_ID 'k', SECRET 'v')",
    "ALTER TABLE items ADD COLUMN z INTEGER",
    "ALTER TABLE items RENAME TO gone",
    "TRUNCATE items",
    "TRUNCATE TABLE items",
    "MERGE INTO items USING items AS s ON items.id = s.id WHEN MATCHED THEN DELETE",
    "WITH d AS (DELETE FROM items RETURNING *) SELECT * FROM d",
    "SELECT * INTO stolen FROM items",
    "select id into temp stolen from items",
    # databases, files, extensions, settings
    "ATTACH 'evil.db' AS evil",
    "ATTACH DATABASE ':memory:' AS mem",
    "DETACH evil",
    "USE evil",
    "COPY items TO '/tmp/items.csv'",
    "COPY items FROM '/etc/passwd'",
    "COPY (SELECT * FROM items) TO '/tmp/out.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '/tmp/dump'",
    "IMPORT DATABASE '/tmp/dump'",
    "INSTALL httpfs",
    "FORCE INSTALL httpfs",
    "LOAD httpfs",
    "LOAD '/tmp/evil.duckdb_extension'",
    "PRAGMA enable_profiling",
    "PRAGMA database_list",
    "SET enable_external_access = true",
    "SET GLOBAL enable_external_access = true",
    "set lock_configuration = false",
    "SET VARIABLE x = 1",
    "RESET enable_external_access",
    "CALL pragma_version()",
    "CHECKPOINT",
    "FORCE CHECKPOINT",
    "VACUUM",
    "BEGIN TRANSACTION",
    "PREPARE p AS DELETE FROM items",
    "EXPLAIN ANALYZE SELECT 1",
    # several statements
    "SELECT 1; SELECT 2",
    "SELECT * FROM items; DROP TABLE items",
    "SELECT 1 /* */; DROP TABLE items",
    "SELECT 1 -- harmless\n; DELETE FROM items",
    "SELECT 1;\nDROP TABLE items;",
    "SELECT 'a;b'; UPDATE items SET id = 0",
    # file, network and SQL-in-a-string readers, anywhere in the tree
    "SELECT * FROM read_csv('/etc/passwd')",
    "select * from READ_CSV_AUTO('/etc/passwd')",
    "SELECT * FROM Read_Text('/etc/hostname')",
    "SELECT * FROM read_blob('/etc/hostname')",
    "SELECT * FROM read_json_auto('x.json')",
    "SELECT * FROM read_ndjson_objects('x.json')",
    "SELECT * FROM read_duckdb('other.duckdb')",
    "SELECT * FROM glob('*')",
    "SELECT * FROM items, LATERAL glob('/home/*') g",
    "SELECT * FROM parquet_scan('x.parquet')",
    "SELECT * FROM parquet_metadata('x.parquet')",
    "SELECT * FROM sniff_csv('/etc/passwd')",
    "SELECT * FROM iceberg_scan('s3://bucket/table')",
    "SELECT * FROM delta_scan('s3://bucket/table')",
    "SELECT * FROM sqlite_scan('x.db', 't')",
    "SELECT * FROM system.main.read_csv('/etc/passwd')",
    "SELECT * FROM \"read_csv\"('/etc/passwd')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM 'data.csv'",
    "SELECT * FROM 'https://example.com/x.parquet'",
    'SELECT * FROM "secrets.parquet"',
    "SELECT * FROM items JOIN '/etc/passwd' p ON true",
    "WITH x AS (SELECT * FROM read_csv('/etc/passwd')) SELECT * FROM x",
    "SELECT * FROM items WHERE id IN (SELECT id FROM read_parquet('x.parquet'))",
    "SELECT (SELECT count(*) FROM read_json('x.json')) AS n",
    "SELECT id FROM items UNION ALL SELECT * FROM read_csv('x.csv')",
    "SELECT * FROM query('SELECT * FROM read_csv(''/etc/passwd'')')",
    "SELECT * FROM query_table('items')",
    "SELECT json_execute_serialized_sql('{}')",
    # environment, configuration, side effects
    "SELECT getenv('HOME')",
    "select GETENV('AWS_SECRET_ACCESS_KEY') AS k",
    "SELECT current_setting('enable_external_access')",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT main.getenv('HOME')",
    "SELECT * FROM checkpoint()",
    "SELECT * FROM which_secret('s3://x', 's3')",
    "SELECT nextval('seq')",
    "SELECT * FROM items WHERE name = (SELECT getenv('USER'))",
]


def test_the_corpus_is_large_and_distinct():
    assert len(HOSTILE) >= 40
    assert len(set(HOSTILE)) == len(HOSTILE)


@pytest.mark.parametrize("sql", HOSTILE)
def test_hostile_sql_is_refused_before_reaching_duckdb(sandbox, monkeypatch, sql):
    def must_not_run(duckdb_sql: str) -> QueryResult:
        raise AssertionError(f"reached DuckDB: {duckdb_sql}")

    monkeypatch.setattr(sandbox, "_execute", must_not_run)
    with pytest.raises(SqlRefused) as refused:
        sandbox.run(sql)
    assert refused.value.message and str(refused.value) == refused.value.message
    with pytest.raises(SqlRefused):
        sandbox.check(sql)


def test_the_data_is_unchanged_after_the_whole_corpus(sandbox, raw):
    before = fingerprint(raw)
    assert before[0][0][0] == ROWS
    for sql in HOSTILE:
        with pytest.raises(SqlError):
            sandbox.run(sql)
    assert fingerprint(raw) == before
    assert sandbox.run("SELECT count(*) AS n FROM items").rows == ((ROWS,),)


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("DROP TABLE items", "DROP TABLE"),
        ("create or replace temp macro m(a) as a", "CREATE MACRO"),
        ("CREATE SECRET s (TYPE s3)", "CREATE SECRET"),
        ("EXPORT DATABASE '/tmp/dump'", "EXPORT DATABASE"),
        ("LOAD httpfs", "LOAD"),
        ("SET enable_external_access = true", "SET"),
        ("PRAGMA version", "PRAGMA"),
        ("CHECKPOINT", "CHECKPOINT"),
        ("WITH d AS (DELETE FROM items RETURNING *) SELECT * FROM d", "DELETE"),
        ("SELECT 1; SELECT 2", "one statement at a time"),
        ("SELECT * INTO stolen FROM items", "INTO"),
        ("SELECT * FROM READ_CSV('/etc/passwd')", "read_csv()"),
        ("SELECT * FROM items WHERE id IN (SELECT 1 FROM glob('*'))", "glob()"),
        ("SELECT getenv('HOME')", "getenv()"),
        ("SELECT * FROM '/etc/passwd'", "/etc/passwd"),
        ("VALUES (1)", "VALUES"),
    ],
)
def test_refusals_name_what_was_refused(sandbox, sql, named):
    with pytest.raises(SqlRefused) as refused:
        sandbox.check(sql)
    assert named in str(refused.value)


def test_refusals_point_at_the_offender():
    with pytest.raises(SqlRefused) as refused:
        check("SELECT id\nFROM items, read_csv('/etc/passwd')")
    assert (refused.value.line, refused.value.column) == (2, 13)
    with pytest.raises(SqlRefused) as refused:
        check("SELECT 1;  DROP TABLE items")
    assert (refused.value.line, refused.value.column) == (1, 12)


def test_a_line_comment_hides_what_follows_it(sandbox, raw):
    before = fingerprint(raw)
    result = sandbox.run("SELECT 1 AS one -- */ ; DROP TABLE items")
    assert result.rows == ((1,),)
    assert "DROP" not in result.sql
    assert fingerprint(raw) == before


def test_validate_is_pure_and_works_on_built_trees():
    validate(exp.select("id").from_("items"))
    with pytest.raises(SqlRefused, match="DELETE"):
        validate(exp.delete("items"))
    with pytest.raises(SqlRefused, match="read_text"):
        validate(exp.select("*").from_(exp.Table(this=exp.Anonymous(this="read_text", expressions=[]))))


# --- what gets through -----------------------------------------------------------------------


def test_any_over_a_list_column(sandbox):
    result = sandbox.run("SELECT count(*) AS n FROM items WHERE 'c' = ANY(tags)")
    assert result.columns == ("n",)
    assert result.rows == ((ROWS // 3,),)


def test_array_containment(sandbox):
    result = sandbox.run("SELECT count(*) FROM items WHERE tags @> ARRAY['a', 'b']")
    assert result.rows == ((2 * ROWS // 3,),)


def test_postgres_casts_ordering_and_set_operations(sandbox):
    result = sandbox.run(
        "WITH recent AS (SELECT * FROM items WHERE day >= '2024-12-01'::date) "
        "SELECT id FROM recent UNION SELECT id FROM items WHERE id < 2 ORDER BY id DESC LIMIT 3"
    )
    assert "NULLS FIRST" in result.sql  # postgres semantics, kept faithfully
    assert [r[0] for r in result.rows] == [365, 364, 363]  # day = 2024-01-01 + id % 366
    assert not result.truncated


def test_duckdb_syntax_is_accepted_when_postgres_cannot_read_it(sandbox):
    assert sandbox.run("SELECT 7 // 2 AS q").rows == ((3,),)
    assert sandbox.run("SELECT * EXCLUDE (name, tags, price, day, tier) FROM items WHERE id = 1").rows == ((1,),)


@pytest.mark.parametrize(
    "sql, dialect, tokenizations",
    [
        ("SELECT name FROM items WHERE 'thai' = ANY(tags)", "postgres", 1),  # was 2: the split's, the parse's
        ("SELECT 7 // 2 AS q", "duckdb", 2),  # PostgreSQL cannot parse it: each dialect tokenizes once (was 3)
        ("SELECT b'12' AS b", None, 2),  # PostgreSQL cannot tokenize it, DuckDB cannot parse it (was 4)
    ],
)
def test_a_query_is_tokenized_once_per_dialect(monkeypatch, sql, dialect, tokenizations):
    """The split on ``;`` and the parse share the tokens: each dialect reads the text at most once, and the
    tree is the one sqlglot's own parse of that dialect gives."""
    import sqlglot
    from sqlglot.tokens import Tokenizer

    expected = sqlglot.parse_one(sql, read=dialect) if dialect else None
    real, calls = Tokenizer.tokenize, []

    def counted(self, text):
        calls.append(text)
        return real(self, text)

    monkeypatch.setattr(Tokenizer, "tokenize", counted)
    if expected is None:
        with pytest.raises(SqlFailed, match="Syntax error"):
            check(sql)
    else:
        assert check(sql) == expected
    assert len(calls) == tokenizations


@pytest.mark.parametrize(
    "sql, readings",
    [
        ("SELECT name FROM items WHERE id > 1 ORDER BY name DESC", 1),  # was 2: the size guards', the re-check's
        ("SELECT lower(name), strftime(day, '%Y') FROM items", 1),  # calls the guards look at but leave alone
        ("SELECT range(1000000000) AS r", 2),  # a guard was added: the text that runs is read again
    ],
)
def test_the_duckdb_text_is_read_once_unless_a_guard_changes_it(monkeypatch, sql, readings):
    """run_tree's DuckDB SQL: transpiled, guarded and re-checked on one reading of the text when the guards
    change nothing; the re-check still refuses what it refused (validate is called on that reading)."""
    from sqlglot.tokens import Tokenizer

    from engines.sql.sandbox import bound
    from engines.sql.sandbox.gate import _remembered_guarded_and_rechecked, runnable

    _remembered_guarded_and_rechecked.cache_clear()  # a text run before in this process is not read again at all
    tree = check(sql)
    expected = bound(transpile(tree))
    real, calls = Tokenizer.tokenize, []

    def counted(self, text):
        calls.append(text)
        return real(self, text)

    monkeypatch.setattr(Tokenizer, "tokenize", counted)
    assert runnable(tree) == expected
    assert sum(1 for text in calls if text.startswith("SELECT")) == readings  # a guard's casts read "DOUBLE"


def test_check_returns_the_tree_without_running(sandbox):
    tree = sandbox.check("SELECT name FROM items WHERE id = 1")
    assert isinstance(tree, exp.Select)
    assert transpile(tree) == "SELECT name FROM items WHERE id = 1"


def test_records_are_json_ready(sandbox):
    result = sandbox.run("SELECT id, name, tags, price, day, tier FROM items WHERE id = 9")
    (record,) = result.records()
    assert record == {"id": 9, "name": "item 9", "tags": ["a"], "price": 1.13, "day": "2024-01-10", "tier": "cheap"}
    assert isinstance(result.rows[0][3], Decimal)  # the rows keep DuckDB's own types
    json.dumps(record)


def test_repeated_column_names_keep_every_value(sandbox):
    result = sandbox.run("SELECT 1 AS a, 2 AS a, 3 AS a_1")
    assert result.records() == [{"a": 1, "a_1": 2, "a_1_1": 3}]


def test_to_jsonable_handles_duckdb_types():
    value = {
        "d": Decimal("1.50"),
        "nan": float("nan"),
        "when": dt.datetime(2024, 1, 2, 3, 4, tzinfo=dt.UTC),
        "t": dt.time(10, 30),
        "span": dt.timedelta(days=3),
        "u": uuid.UUID(int=1),
        "blob": b"ab\xff",
        "map": {1: [dt.date(2024, 1, 1)]},
        "tuple": (1, None, True),
    }
    converted = to_jsonable(value)
    assert converted == {
        "d": 1.5,
        "nan": "nan",
        "when": "2024-01-02T03:04:00+00:00",
        "t": "10:30:00",
        "span": "3 days, 0:00:00",
        "u": "00000000-0000-0000-0000-000000000001",
        "blob": "ab\\xff",
        "map": {"1": ["2024-01-01"]},
        "tuple": [1, None, True],
    }
    json.dumps(converted, allow_nan=False)


def test_schema_shows_the_loaded_tables(sandbox):
    assert sandbox.schema().startswith("CREATE TABLE items(")


# --- row cap and time limit ------------------------------------------------------------------


def test_row_cap_truncates():
    sandbox, _ = make(row_cap=10)
    with sandbox:
        capped = sandbox.run("SELECT id FROM items ORDER BY id")
        assert len(capped.rows) == 10 and capped.truncated
        assert capped.rows[-1] == (9,)
        exact = sandbox.run("SELECT id FROM items LIMIT 10")
        assert len(exact.rows) == 10 and not exact.truncated
        assert not sandbox.run("SELECT id FROM items LIMIT 3").truncated


def test_row_cap_does_not_materialise_huge_results():
    sandbox, _ = make(row_cap=5, timeout_s=2.0)
    with sandbox:
        result = sandbox.run("SELECT * FROM range(10000000000)")
    assert result.truncated and len(result.rows) == 5
    assert result.elapsed_s < 1.0


def test_timeout_interrupts_and_the_connection_survives():
    sandbox, _ = make(timeout_s=0.3)
    with sandbox:
        started = time.perf_counter()
        with pytest.raises(SqlTimedOut, match=r"ran longer than 0\.3 s and was stopped") as timed_out:
            sandbox.run("SELECT sum(a.range * b.range) FROM range(1000000) a, range(1000000) b")
        assert time.perf_counter() - started < 2.5
        assert isinstance(timed_out.value, SqlFailed)
        assert sandbox.run("SELECT count(*) FROM items").rows == ((ROWS,),)


def test_concurrent_queries_from_several_threads():
    sandbox, _ = make(timeout_s=0.5)
    with sandbox:
        outcome: dict[str, object] = {}

        def slow() -> None:
            try:
                sandbox.run("SELECT sum(range) FROM range(1000000000000)")
            except SqlTimedOut as e:
                outcome["slow"] = e

        runner = threading.Thread(target=slow)
        runner.start()

        def quick(i: int) -> tuple:
            return sandbox.run(f"SELECT count(*) FROM items WHERE id % 7 = {i % 7}").rows[0]

        with ThreadPoolExecutor(max_workers=4) as pool:
            counts = list(pool.map(quick, range(40)))
        runner.join(timeout=5)
        expected = [(sum(1 for n in range(ROWS) if n % 7 == i % 7),) for i in range(40)]
        assert counts == expected
        assert isinstance(outcome.get("slow"), SqlTimedOut)  # interrupting one cursor spared the others


# --- errors ------------------------------------------------------------------------------------


def test_syntax_error_has_message_and_position(sandbox):
    with pytest.raises(SqlFailed) as failed:
        sandbox.run("SELECT * FROM items WHERE id = = 2")
    assert (failed.value.line, failed.value.column) == (1, 32)
    assert str(failed.value).startswith("Syntax error at line 1, column 32")
    assert "\x1b[" not in str(failed.value)

    with pytest.raises(SqlFailed) as failed:
        sandbox.check("SELECT id,\n  name FROM items WHERE (id > 1")
    assert failed.value.line == 2


@pytest.mark.parametrize("sql", ["SELECT 'unterminated", "", "  -- only a comment", ";;"])
def test_unreadable_or_empty_text_fails_cleanly(sandbox, sql):
    with pytest.raises(SqlFailed) as failed:
        sandbox.run(sql)
    assert failed.value.message


def test_binder_error_keeps_duckdbs_message_and_position(sandbox):
    with pytest.raises(SqlFailed) as failed:
        sandbox.run("SELECT nosuch FROM items")
    error = failed.value
    assert 'Referenced column "nosuch" not found' in error.message
    assert error.sql == "SELECT nosuch FROM items"
    assert (error.line, error.column) == (1, 8)


def test_position_survives_duckdbs_shortened_lines(sandbox):
    columns = ", ".join(f"{i} AS c{i}" for i in range(60))
    with pytest.raises(SqlFailed) as failed:
        sandbox.run(f"SELECT {columns}, nosuch FROM items")
    error = failed.value
    assert error.line == 1
    assert error.sql[error.column - 1 :].startswith("nosuch")


def test_runtime_error_becomes_sql_failed(sandbox):
    with pytest.raises(SqlFailed, match="Conversion Error"):
        sandbox.run("SELECT 'abc'::int")


def test_errors_are_engine_errors():
    assert issubclass(SqlRefused, EngineError) and issubclass(SqlFailed, EngineError)
    assert not issubclass(SqlRefused, SqlFailed)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "SELECT",
                "FROM",
                "items",
                "WHERE",
                "(",
                ")",
                "'",
                '"',
                ";",
                ",",
                "*",
                "=",
                "id",
                "1",
                "--",
                "/*",
                "*/",
                "read_csv",
                "ANY",
                "tags",
                "@>",
                "::",
                "DROP",
                "INTO",
                "UNION",
                "\n",
            ]
        ),
        max_size=14,
    ).map(" ".join)
    | st.text(max_size=40)
)
def test_run_never_leaks_a_raw_exception(sandbox, sql):
    try:
        sandbox.run(sql)
    except SqlError:
        pass


# --- the connection ------------------------------------------------------------------------------


def test_locked_configuration_holds_even_past_the_gate(raw):
    for statement in (
        "SET enable_external_access = true",
        "SET GLOBAL enable_external_access = true",
        "RESET enable_external_access",
        "SET lock_configuration = false",
    ):
        with pytest.raises(duckdb.Error, match="locked"):
            raw.execute(statement)
    with pytest.raises(duckdb.PermissionException):
        raw.execute("SELECT * FROM read_csv('/etc/passwd')")


def test_create_loads_then_locks():
    with Sandbox.create(load_items, row_cap=3, timeout_s=1.0) as sandbox:
        assert sandbox.run("SELECT count(*) FROM items").rows == ((ROWS,),)
        assert sandbox.run("SELECT value FROM duckdb_settings() WHERE name = 'lock_configuration'").rows == (("true",),)


def test_create_propagates_loader_errors():
    def broken(con: duckdb.DuckDBPyConnection) -> None:
        raise RuntimeError("no data")

    with pytest.raises(RuntimeError, match="no data"):
        Sandbox.create(broken)


def test_an_unlocked_connection_is_not_accepted():
    con = connect()
    try:
        with pytest.raises(ConfigurationError):
            Sandbox(con)
    finally:
        con.close()
    open_con = duckdb.connect()
    try:
        lock(open_con)
        with pytest.raises(ConfigurationError):
            Sandbox(open_con)
    finally:
        open_con.close()


def test_a_closed_sandbox_fails_cleanly():
    sandbox, _ = make()
    sandbox.close()
    with pytest.raises(SqlFailed):
        sandbox.run("SELECT 1")


def test_engines_do_not_import_textual():
    code = "import sys, engines.sql.sandbox; assert 'textual' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


# --- speed without a change in what runs (session 8: CI time) ---------------------------------------------


def test_the_world_database_is_filled_without_waiting_for_the_disk():
    # the filled file is a scratch copy removed with the sandbox: its writes need no fsync
    known = duckdb.connect().execute("SELECT count(*) FROM duckdb_settings() WHERE name = 'fsync_mode'").fetchall()
    if not known[0][0]:
        pytest.skip(f"DuckDB {duckdb.__version__} has no fsync_mode setting")
    seen: list[str] = []

    def loader(con: duckdb.DuckDBPyConnection) -> None:
        seen.append(con.execute("SELECT current_setting('fsync_mode')").fetchall()[0][0])
        load_items(con)

    sb = Sandbox.create(loader)
    try:
        assert [s.upper() for s in seen] == ["NONE"]
        assert sb.run("SELECT count(*) FROM items").rows == ((ROWS,),)
    finally:
        sb.close()


def test_every_cursor_of_a_sandbox_starts_in_its_read_only_world():
    sb = Sandbox.create(load_items)
    try:
        for _ in range(3):  # the USE statement is built and checked once, run on every cursor
            cursor = sb._cursor()
            try:
                assert cursor.execute("SELECT current_database()").fetchall() == [("world",)]
            finally:
                cursor.close()
        assert sb._use_sql == 'USE "world"'
    finally:
        sb.close()


def test_the_gate_remembers_the_sql_it_made_of_a_text_but_never_a_refusal():
    from engines.sql.sandbox import gate

    remembered = gate._remembered_guarded_and_rechecked
    tree = check("SELECT name, repeat('ab', 3) FROM items WHERE id < 3")
    first = gate.runnable(tree)
    hits = remembered.cache_info().hits
    assert gate.runnable(check("SELECT name, repeat('ab', 3) FROM items WHERE id < 3")) == first
    assert remembered.cache_info().hits == hits + 1
    assert "ERROR(" in first  # the size guard is in the remembered text
    refused = "SELECT * FROM read_csv('/etc/passwd')"  # as if a transpiled text came out like this
    size = remembered.cache_info().currsize
    for _ in range(2):
        with pytest.raises(SqlRefused, match="read_csv"):
            remembered(refused)
    assert remembered.cache_info().currsize == size
