"""Issue 10: the world is read-only to the session, internal statements are built as trees, and
bombs stay inside their bounds (memory, threads, spill space, time)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest
from sqlglot import exp

from engines.settings import Settings
from engines.sql.sandbox import (
    MAX_LIST_ELEMENTS,
    Limits,
    Sandbox,
    SqlError,
    SqlFailed,
    SqlRefused,
    plain_type,
)

REPO = Path(__file__).resolve().parents[3]


def load(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE TABLE items AS SELECT range::INTEGER AS id, 'item ' || range AS name FROM range(600)")
    con.execute("CREATE VIEW cheap AS SELECT * FROM items WHERE id < 10")


@pytest.fixture
def sandbox():
    sb = Sandbox.create(load, timeout_s=5)
    yield sb
    sb.close()


def fingerprint(sb: Sandbox) -> tuple:
    return sb.run("SELECT count(*), sum(hash(name)) FROM items").rows + sb.run("SELECT count(*) FROM cheap").rows


# --- the world is read-only; scratch tables live apart --------------------------------------------

WRITES = [
    "UPDATE items SET name = 'PWNED'",
    "DELETE FROM items",
    "DROP TABLE items",
    "DROP VIEW cheap",
    "INSERT INTO items VALUES (1, 'x')",
    "ALTER TABLE items ADD COLUMN z INTEGER",
    "CREATE TABLE evil (x INTEGER)",
    "CREATE VIEW evil AS SELECT 1",
    "CREATE MACRO lower(x) AS 'PWNED'",
    "CREATE SCHEMA evil",
    "UPDATE world.items SET name = 'PWNED'",
    "ATTACH '/tmp/cs224v-evil.duckdb' AS evil",
    "DETACH world",
    "SET enable_external_access = true",
    "COPY items TO '/tmp/cs224v-evil.csv'",
]


@pytest.mark.parametrize("sql", WRITES)
def test_past_the_gate_the_engine_itself_refuses_to_change_the_world(sandbox, sql):
    """Even a statement that slipped past the gate (run here on a raw cursor) cannot change the world."""
    before = fingerprint(sandbox)
    cursor = sandbox._cursor()
    try:
        with pytest.raises(duckdb.Error):
            cursor.execute(sql)
    finally:
        cursor.close()
    assert fingerprint(sandbox) == before
    assert sandbox.run("SELECT lower('ABC')").rows == (("abc",),)
    assert not os.path.exists("/tmp/cs224v-evil.duckdb") and not os.path.exists("/tmp/cs224v-evil.csv")


def test_the_world_is_attached_read_only_and_scratch_tables_live_apart(sandbox):
    with sandbox.scratch_table([("k", "BIGINT")], [[1], [2]]) as table:
        assert table.sql(dialect="duckdb").startswith('"memory"."scratch"')
        assert sandbox.run_tree(exp.select("count(*)").from_(table)).rows == ((2,),)
    assert "CREATE TABLE items" in sandbox.schema() and "scratch" not in sandbox.schema()


def test_temporary_files_are_removed_on_close():
    sb = Sandbox.create(load)
    workdir = Path(sb._cleanup.peek()[2][0])  # the finalizer's argument: the private folder
    assert (workdir / "world.duckdb").exists()
    sb.close()
    assert not workdir.exists()
    with pytest.raises(SqlFailed):
        sb.run("SELECT 1")


def test_a_loader_error_leaves_no_folder_behind(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))

    def broken(con):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        Sandbox.create(broken)
    assert list(tmp_path.iterdir()) == []


def test_a_user_database_is_opened_read_only(tmp_path):
    path = tmp_path / "mine.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT 1 AS a")
    con.close()
    before = path.read_bytes()
    with Sandbox.open_database(path) as sb:
        assert sb.run("SELECT a FROM t").rows == ((1,),)
        cursor = sb._cursor()
        with pytest.raises(duckdb.Error, match="read-only"):
            cursor.execute("UPDATE t SET a = 2")
        cursor.close()
        with sb.scratch_table([("x", "INTEGER")], [[5]]) as table:  # scratch still works
            assert sb.run_tree(exp.select("x").from_(table)).rows == ((5,),)
    assert path.read_bytes() == before
    with pytest.raises(SqlFailed, match="could not be opened"):
        Sandbox.open_database(tmp_path / "missing" / "x.duckdb")


# --- internal statements are trees -------------------------------------------------------------------

HOSTILE_NAMES = [
    "x\" VARCHAR); UPDATE items SET name = 'PWNED'; --",
    "a\nb",
    "é☃ 名前",
    '"',
    "",
    "  ",
    ";",
    "--",
    'x""y',
]


def test_scratch_columns_may_have_any_name(sandbox):
    names = [n if n.strip() else f"blank{i}" for i, n in enumerate(HOSTILE_NAMES)]
    before = fingerprint(sandbox)
    with sandbox.scratch_table([(n, "VARCHAR") for n in names], [[n for n in names]]) as table:
        result = sandbox.run_tree(exp.select("*").from_(table))
    assert result.columns == tuple(names) and result.rows == (tuple(names),)
    assert fingerprint(sandbox) == before


@pytest.mark.parametrize(
    "typ", ["INT); DROP TABLE items; --", "mood", '"VARCHAR"', "x y", "VARCHAR); --", "STRUCT(a evil)", ""]
)
def test_scratch_column_types_must_be_plain(sandbox, typ):
    before = fingerprint(sandbox)
    with pytest.raises(SqlRefused):
        with sandbox.scratch_table([("a", typ)], [["1"]]):
            pass
    assert fingerprint(sandbox) == before


@pytest.mark.parametrize(
    "typ",
    [
        "INTEGER",
        "VARCHAR[]",
        'STRUCT(a INTEGER, "b c" VARCHAR)',
        "DECIMAL(10,2)",
        "ENUM('a', 'b''c')",
        "MAP(VARCHAR, INTEGER)",
        "TIMESTAMP WITH TIME ZONE",
        "DATE",
        "DOUBLE",
    ],
)
def test_plain_types_round_trip(sandbox, typ):
    built = plain_type(typ)
    with sandbox.scratch_table([("a", typ)], []) as table:
        ((name, duck),) = sandbox.columns_of(exp.select("a").from_(table))
    assert plain_type(duck) == built


def test_a_quoted_type_name_never_reaches_describe(sandbox):
    before = fingerprint(sandbox)
    # duckdb's reading (7 // 2 is DuckDB only) writes the quoted name back unquoted
    sql = 'SELECT CAST(id AS "oid) FROM items; DROP TABLE items; SELECT CAST(1 AS INT") AS c, 7 // 2 AS d FROM items'
    with pytest.raises(SqlRefused, match="type name"):
        sandbox.check(sql)
    with pytest.raises(SqlRefused):
        sandbox.run(sql)
    assert fingerprint(sandbox) == before


# --- limits ------------------------------------------------------------------------------------------


def test_limits_come_from_the_settings():
    settings = Settings(duckdb_memory_limit="512MB", duckdb_threads=1, duckdb_temp_limit="256MB")
    with Sandbox.create(load, limits=Limits.from_settings(settings)) as sb:
        memory, threads, temp, external, locked = sb._con.execute(
            "SELECT current_setting('memory_limit'), current_setting('threads'), current_setting('max_temp_directory_size'), "
            "current_setting('enable_external_access'), current_setting('lock_configuration')"
        ).fetchone()
    assert memory.replace(" ", "") in {"512.0MiB", "488.2MiB", "512MB", "488.2MB"} and threads == 1
    assert temp.replace(" ", "") in {"256.0MiB", "244.1MiB", "256MB", "244.1MB"}
    assert external is False and locked is True


def test_a_bad_limit_is_a_configuration_error():
    from engines.errors import ConfigurationError

    with pytest.raises(ConfigurationError):
        Sandbox.create(load, limits=Limits(memory_limit="lots"))


def test_every_session_applies_the_settings(monkeypatch):
    from engines.compose import open_restaurants, open_suql

    monkeypatch.setenv("CS224V_DUCKDB_MEMORY_LIMIT", "300MB")
    for session in (open_restaurants(Settings()), open_suql(Settings(), world="courses")):
        try:
            ((memory,),) = session.sandbox._con.execute("SELECT current_setting('memory_limit')").fetchall()
            assert memory.replace(" ", "") in {"286.1MiB", "300.0MiB", "300MB", "286.1MB"}
        finally:
            session.close()


# --- values a single call may build ----------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT range(1000000000)",
        "SELECT unnest(range(1000000000))",
        "SELECT len(range(5, 100000005))",
        "SELECT len(range(0, 1000000000, 1))",
        "SELECT len(generate_series(1000000000))",
        "SELECT length(repeat('x', 1000000000))",
        "SELECT len(repeat([1, 2], 100000000))",
        "SELECT length(lpad('x', 1000000000, 'y'))",
        "SELECT length(rpad('x', 1000000000, 'y'))",
        "SELECT len(list_resize([1], 300000000))",
        "SELECT length(bitstring('1', 1000000000))",
        "SELECT length(repeat(name, 1000000)) FROM items",
        "SELECT length(repeat(repeat('x', 1000), 1000))",
        "SELECT * FROM unnest(range(1000000000))",
    ],
)
def test_huge_values_are_stopped_before_they_are_built(sandbox, sql):
    started = time.perf_counter()
    with pytest.raises(SqlError, match="would build"):
        sandbox.run(sql)
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT printf('%1000000000d', 1)",
        "SELECT format('{:>1000000000}', 1)",
        "SELECT printf('%*d', 1000000000, 1)",
        "SELECT printf(name, 1) FROM items",
    ],
)
def test_huge_format_widths_are_refused(sandbox, sql):
    with pytest.raises(SqlRefused, match="format|width"):
        sandbox.run(sql)


def test_ordinary_uses_still_work(sandbox):
    row = sandbox.run(
        "SELECT len(range(5)), range(1, 4), repeat('ab', 3), lpad('x', 3, '-'), rpad('x', 2), "
        "printf('%5.2f', 3.14159), len(list_resize([1], 3)), len(range(10, 0, -1))"
    ).rows[0]
    assert row == (5, [1, 2, 3], "ababab", "--x", "x ", " 3.14", 3, 10)
    assert sandbox.run(f"SELECT len(range({MAX_LIST_ELEMENTS}))").rows == ((MAX_LIST_ELEMENTS,),)
    result = sandbox.run("SELECT * FROM range(1000000000)")  # the table function streams
    assert result.truncated and len(result.rows) == sandbox.row_cap


# --- end to end: a bomb returns within timeout + 2 s and under 2 GB ---------------------------------

BOMBS = [
    "SELECT unnest(range(1000000000))",
    "SELECT range(1000000000)",
    "SELECT length(repeat('x', 2000000000))",
    "SELECT * FROM range(1000000000) a, range(1000000000) b ORDER BY a.range * b.range DESC",
    "SELECT count(*) FROM range(100000) a, range(100000) b, range(100000) c",
    "SELECT string_agg(range::VARCHAR, ',') FROM range(1000000000)",
    "SELECT list(range) FROM range(1000000000)",
    "SELECT max(length(repeat('x', 99000 + range % 2))) FROM range(100000000)",
    "WITH RECURSIVE t(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM t WHERE n < 40) SELECT max(length(s)) FROM t",
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t",
    "SELECT regexp_matches(repeat('a', 50000), '(a*)*b')",
    "SELECT md5(a.range::VARCHAR || b.range::VARCHAR) FROM range(100000) a, range(100000) b ORDER BY 1 LIMIT 1",
    "SELECT * FROM range(1000000000) ORDER BY random()",
]

_RUNNER = textwrap.dedent("""
    import json, sys, time
    from engines.settings import Settings
    from engines.compose import open_restaurants
    session = open_restaurants(Settings())
    out = []
    for sql in json.loads(sys.argv[1]):
        started = time.perf_counter()
        try:
            result = session.sandbox.run(sql)
            outcome = "rows:%d" % len(result.rows)
        except Exception as e:
            outcome = type(e).__name__ + ": " + str(e)[:120]
        out.append([sql, time.perf_counter() - started, outcome])
    print(json.dumps(out))
""")


def test_bombs_stay_within_time_and_memory():
    env = {**os.environ, "CS224V_QUERY_TIMEOUT_S": "1", "CS224V_BACKEND": "sim"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, json.dumps(BOMBS)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    for sql, elapsed, outcome in json.loads(proc.stdout):
        assert elapsed < 1 + 2, (sql, elapsed, outcome)
        assert outcome.split(":")[0] in {"SqlTimedOut", "SqlFailed", "SqlRefused", "rows"}, (sql, outcome)
    assert max(rss_kb, before) < 2 * 1024 * 1024, f"peak RSS {rss_kb / 1024:.0f} MB"


def test_the_cli_answers_a_bomb_with_a_clear_error():
    env = {**os.environ, "CS224V_QUERY_TIMEOUT_S": "1", "CS224V_BACKEND": "sim"}
    started = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from tui.cli import main; sys.exit(main())",
            "sql",
            "SELECT unnest(range(1000000000))",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=60,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "would build a list" in json.loads(proc.stdout)["error"]
    assert time.perf_counter() - started < 30  # start-up included
