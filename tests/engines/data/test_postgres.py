"""A PostgreSQL source against a real PostgreSQL server that the tests start (tests/pg_server.py).

Without PostgreSQL's binaries or psycopg every test here is skipped, with the reason printed.
"""

from __future__ import annotations

import time
from collections import Counter

import pytest

from engines.data.postgres import PostgresSuqlEngine, open_postgres, redact
from engines.data.source import DataSourceError
from engines.events import CallStarted
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.settings import Settings
from engines.sql.sandbox import Sandbox, SqlError, SqlRefused, SqlTimedOut
from engines.suql.execute import SuqlEngine
from tests.pg_server import PgServer, load_restaurants, load_synthetic, pg_server  # noqa: F401 - the fixture
from worlds import restaurants

N_ITEMS = 100_000


@pytest.fixture(scope="module")
def world() -> restaurants.RestaurantWorld:
    return restaurants.build().world


@pytest.fixture(scope="module")
def db(pg_server: PgServer, world) -> str:  # noqa: F811 - the fixture imported above
    url = pg_server.create_database("cs224v_test")
    load_restaurants(url, world)
    load_synthetic(url, N_ITEMS)
    with pg_server.admin("cs224v_test") as con:
        con.execute("CREATE TABLE notes (id integer PRIMARY KEY, kind text, n integer, body text)")
        con.execute(
            "INSERT INTO notes VALUES (1, 'a', 1, 'The staff were friendly and kind.'), "
            "(2, 'a', NULL, 'Friendly people, kind service.'), (3, NULL, 5, 'Rude and slow.'), "
            "(4, 'b', 7, 'Friendly, quick and kind.'), (5, 'a', 9, NULL)"
        )
        con.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
        con.execute(
            "CREATE TABLE typed (id int PRIMARY KEY, j jsonb, u uuid, tz timestamptz, iv interval, d date, ok bool, "
            "f float8, n numeric, n2 numeric(10,2), ch char(3), ia int[], ma mood[], m mood, ip inet, "
            '"Odd ""q"" name" text)'
        )
        con.execute(
            "INSERT INTO typed VALUES (1, '{\"b\": [1, 2]}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', "
            "'2024-05-01 12:00+02', '1 day 2 hours', '2024-05-01', true, 1.5, 12345678901234567890.5, 3.14, 'ab', "
            "'{1,2}', '{sad,happy}', 'ok', '10.0.0.1', 'odd'), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
            "NULL, NULL, NULL, NULL, NULL, NULL, NULL), (3, NULL, NULL, NULL, NULL, '2023-01-01', false, 0.5, 1, 1, "
            "'x', '{3}', '{ok}', 'sad', NULL, 'three')"
        )
        con.execute("CREATE TABLE codes (id integer PRIMARY KEY, code text)")
        con.execute("INSERT INTO codes VALUES (1, '1'), (2, '2'), (3, '30')")
        if pg_server.has_pg_stat_statements:
            con.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        try:  # installed (where the server has it), so refusing it is the gate's doing
            con.execute("CREATE EXTENSION IF NOT EXISTS dblink")
        except Exception:  # psycopg.errors.FeatureNotSupported / UndefinedFile: a server without contrib
            pass
    return url


@pytest.fixture(scope="module")
def source(db):
    src = open_postgres(db, Settings())
    yield src
    src.close()


def variant(source, db: str, **overrides):
    """The source with other settings, sharing its catalog and description (describing again takes a while)."""
    from engines.data.postgres import PostgresGate, PostgresSource
    from engines.data.postgres.connection import _Connection

    settings = Settings(**overrides)
    old = source.sandbox
    gate = PostgresGate(
        _Connection(db, settings.query_timeout_s),
        old.catalog,
        row_cap=settings.row_cap,
        timeout_s=settings.query_timeout_s,
    )
    return PostgresSource(source.name, source.kind, gate, source.schema, settings=settings)


def psql():
    import psycopg  # only once the fixture found psycopg and a server: without them the tests skip, with the reason

    return psycopg


def sim() -> LLM:
    return LLM(SimBackend(seed=224))


def same_to_verify(pg, duck) -> None:
    """The same rows to verify; a PostgreSQL row shows the columns the query read (and the row's id and
    label), a DuckDB world's row all of its table's."""
    assert len(pg) == len(duck)
    for p, d in zip(pg, duck):
        assert set(p) <= set(d) and p == {k: d[k] for k in p}


def answer_calls(events) -> Counter:
    return Counter((e.prompt, e.row_key) for e in events if isinstance(e, CallStarted) and e.function == "answer")


# --- the description ----------------------------------------------------------------------------------------


def test_schema_is_described_from_the_catalog(source):
    s = source.described(["restaurants", "items"])  # described when needed (test_postgres_lazy.py)
    assert source.kind == "postgresql"
    r = s.table("restaurants")
    assert r.rows == 600
    types = {c.name: c.type for c in r.columns}
    assert types["_id"] == "INTEGER" and types["rating"] == "DECIMAL(2,1)" and types["cuisines"] == "VARCHAR[]"
    price = r.column("price")
    assert price.role == "enum" and price.values == ("cheap", "moderate", "expensive", "luxury")  # the type's order
    assert r.column("reviews").role == "list_text"  # what answer() reads
    assert r.column("cuisines").role == "list_enum"
    assert r.column("location").role == "enum" and "Palo Alto" in r.column("location").values
    assert s.table("items").rows == N_ITEMS
    assert s.table("items").column("color").values == ("black", "blue", "green", "red")
    assert "restaurants" in s.render(suql=True)


def test_a_table_too_big_to_count_gets_postgresql_s_estimate(source):
    from engines.data.postgres.describe import _estimated_rows

    assert _estimated_rows(source.sandbox, "items") == N_ITEMS  # ANALYZE-d: the statistics are exact here
    assert _estimated_rows(source.sandbox, "no such table") is None


def test_the_url_shown_has_no_password():
    assert redact("postgresql://alice:s3cret@db.example:5432/x") == "postgresql://alice:***@db.example:5432/x"
    assert redact("postgresql://alice@h/x") == "postgresql://alice@h/x"


def test_an_unreachable_server_is_a_clear_error_without_the_password(pg_server):  # noqa: F811
    with pytest.raises(DataSourceError) as e:
        open_postgres(f"postgresql://postgres:hunter2@127.0.0.1:{pg_server.port}/no_such_db", Settings())
    assert "no_such_db" in str(e.value) and "hunter2" not in str(e.value)


# --- read-only, the gate, the timeout -----------------------------------------------------------------------


def test_every_session_is_read_only_with_a_statement_timeout(source):
    with source.sandbox._conn.transaction() as con:
        assert con.execute("SHOW transaction_read_only").fetchone()[0] == "on"
        assert con.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"
        assert con.execute("SHOW statement_timeout").fetchone()[0] == "5s"
        assert con.execute("SHOW search_path").fetchone()[0] == "pg_catalog, pg_temp"
        with pytest.raises(psql().errors.ReadOnlySqlTransaction):  # even SQL that skipped every check
            con.execute("DELETE FROM public.notes")


HOSTILE = [
    "DELETE FROM notes",
    "UPDATE notes SET body = 'x'",
    "SELECT 1; DROP TABLE notes",
    "DROP TABLE notes",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT pg_ls_dir('.')",
    "COPY notes TO PROGRAM 'id'",
    "COPY (SELECT 1) TO '/tmp/x'",
    "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(x int)",
    "SELECT dblink_exec('dbname=postgres', 'CREATE TABLE x (a int)')",
    "SET statement_timeout = 0",
    "SET default_transaction_read_only = off",
    "SELECT set_config('statement_timeout', '0', false)",
    "SELECT query_to_xml('SELECT * FROM pg_authid', true, false, '')",
    "SELECT * FROM pg_catalog.pg_authid",
    "SELECT usename, passwd FROM pg_shadow",
    "SELECT * FROM information_schema.tables",
    "WITH d AS (DELETE FROM notes RETURNING *) SELECT * FROM d",
    "SELECT * FROM notes FOR UPDATE",
    "SELECT * FROM notes WHERE id = $1",
    "SELECT lo_import('/etc/passwd')",
    "SELECT pg_terminate_backend(1)",
    "TABLE pg_authid",
    "SELECT * FROM restaurants WHERE _id = ANY(SELECT oid::int FROM pg_class)",
    "SELECT pg_catalog.set_config('statement_timeout', '0', false)",
    "SELECT repeat('x', 500000000)",
    "SELECT lpad(name, 200000000) FROM notes",
    "SELECT repeat(body, n) FROM notes",
    "SELECT array_fill(1, ARRAY[100000, 100000])",
]


@pytest.mark.parametrize("sql", HOSTILE)
def test_hostile_queries_are_refused_before_postgresql(source, sql):
    before = list(source.sandbox.statements)
    with pytest.raises(SqlRefused):
        source.sandbox.run(sql)
    assert source.sandbox.statements == before  # nothing was sent


def test_after_the_hostile_queries_the_data_is_intact(source, db):
    for sql in HOSTILE:
        try:
            source.sandbox.run(sql)
        except SqlError:
            pass
    with psql().connect(db) as con:
        assert con.execute("SELECT count(*) FROM notes").fetchone()[0] == 5
        assert con.execute("SELECT count(*) FROM restaurants").fetchone()[0] == 600


def test_a_slow_query_is_cut_by_the_statement_timeout(source, db):
    src = variant(source, db, query_timeout_s=1.0)
    try:
        for sql in ("SELECT pg_sleep(30)", "SELECT count(*) FROM items a, items b WHERE a.score + b.score = -1"):
            started = time.monotonic()
            with pytest.raises(SqlTimedOut) as e:
                src.sandbox.run(sql)
            assert time.monotonic() - started < 10
            assert "statement_timeout" in str(e.value) and "1 s" in str(e.value)
        assert src.sandbox.run("SELECT count(*) FROM notes").rows == ((5,),)  # the session still works
    finally:
        src.close()


def test_postgresql_errors_are_clear_engine_errors(source):
    with pytest.raises(SqlError) as e:
        source.sandbox.run("SELECT no_such_column FROM notes")
    assert "no_such_column" in str(e.value)
    with pytest.raises(SqlRefused) as e:
        source.sandbox.run("SELECT * FROM no_such_table")
    assert "notes" in str(e.value)  # names the tables there are


# --- plain queries run on PostgreSQL --------------------------------------------------------------------------


def test_plain_sql_runs_on_postgresql_with_values_as_parameters(source):
    r = source.sandbox.run(
        "SELECT price, count(*) AS n FROM restaurants WHERE 'thai' = ANY(cuisines) AND name <> 'x''; DROP TABLE notes; --' "
        "GROUP BY price ORDER BY price"
    )
    assert [row[0] for row in r.rows] == sorted(
        {row[0] for row in r.rows}, key=["cheap", "moderate", "expensive", "luxury"].index
    )
    assert "thai" not in r.sql and "DROP" not in r.sql and "$1" in r.sql and "$2" in r.sql
    assert source.sandbox.statements[-1][1] == ("thai", "x'; DROP TABLE notes; --")


def test_bounded_string_builders_still_run(source):
    assert source.sandbox.run("SELECT repeat('ab', 3), lpad('x', 4, '-')").rows == (("ababab", "---x"),)


def test_unquoted_names_are_folded_as_postgresql_folds_them(source):
    assert source.sandbox.run("SELECT COUNT(*) AS N FROM NOTES WHERE Kind = 'a'").rows == ((3,),)
    assert source.sandbox.run('SELECT "Odd ""q"" name" FROM typed WHERE id = 3').rows == (("three",),)


def test_plain_sql_is_capped_through_a_server_side_cursor(source, db):
    src = variant(source, db, row_cap=7)
    try:
        r = src.sandbox.run("SELECT id FROM items ORDER BY id")
        assert r.rows == tuple((i,) for i in range(1, 8)) and r.truncated
        assert src.sandbox.run("SELECT count(*) FROM items").rows == ((N_ITEMS,),)  # aggregated on the server
    finally:
        src.close()


# --- SUQL: the structured part runs on PostgreSQL --------------------------------------------------------------


def test_the_filter_runs_on_postgresql_and_answer_sees_only_filtered_rows(source, pg_server, db):  # noqa: F811
    engine = source.suql_engine(sim())
    assert isinstance(engine, PostgresSuqlEngine)
    events: list = []
    query = (
        "SELECT id FROM items WHERE score < 3 AND color = 'red' AND answer(note, 'is it quiet?') = 'Yes' ORDER BY id"
    )
    result = engine.run(query, mode="C", emit=events.append)
    (load,) = engine.last_loads
    pg = psql()
    with pg.connect(db) as con:
        matching = {r[0] for r in con.execute("SELECT id FROM items WHERE score < 3 AND color = 'red'").fetchall()}
        if pg_server.has_pg_stat_statements:
            sent = [
                q
                for (q,) in con.execute(
                    'SELECT query FROM pg_stat_statements WHERE query LIKE \'%FROM "public"."items" WHERE%\''
                )
            ]
            assert any('"score" < 3' in q and '"color" = $1' in q for q in sent), sent
        with pg.RawCursor(con) as cur:  # the filter is one PostgreSQL can serve from an index
            cur.execute("EXPLAIN " + load.sql, list(load.parameters))
            plan = "\n".join(r[0] for r in cur.fetchall())
        assert "Index Scan on items_score" in plan, plan
    assert 0 < len(matching) < N_ITEMS / 100
    assert load.rows == len(matching)  # only the candidate rows travelled, not 100,000
    assert load.parameters == ("red",) and "red" not in load.sql
    calls = answer_calls(events)
    assert sum(calls.values()) == result.stats.answer_calls == len(matching)
    called = {int(key.split()[0].lstrip("#")) for _, key in calls}
    assert called == matching  # answer() ran on the filtered rows, and only on them
    assert {r[0] for r in result.rows} <= matching


def test_cancelling_stops_the_statement_on_the_server(source, db, pg_server):  # noqa: F811
    import threading

    from engines.errors import Cancelled

    src = variant(source, db, query_timeout_s=60)
    locker = pg_server.admin("cs224v_test")
    try:
        locker.autocommit = False
        locker.execute("LOCK TABLE codes IN ACCESS EXCLUSIVE MODE")  # the candidate query waits on the server
        cancel = threading.Event()
        threading.Timer(0.5, cancel.set).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            src.suql_engine(sim()).run("SELECT id FROM codes WHERE id > 1", mode="C", cancel=cancel)
        assert time.monotonic() - started < 20  # not the 60 s statement timeout
        locker.rollback()
        assert src.sandbox.run("SELECT count(*) FROM codes").rows == ((3,),)  # the session still works
    finally:
        locker.close()
        src.close()


def test_too_many_candidates_is_a_clear_error(source, db):
    src = variant(source, db, postgres_candidate_rows=1_000)
    try:
        with pytest.raises(SqlError) as e:
            src.suql_engine(sim()).run("SELECT id FROM items WHERE score < 500 AND answer(note, 'quiet?') = 'Yes'")
        assert "1,000" in str(e.value) and "items" in str(e.value)
    finally:
        src.close()


def test_suql_refuses_what_the_gate_refuses(source):
    with pytest.raises(SqlError):
        source.suql_engine(sim()).run(
            "SELECT pg_read_file('/etc/passwd') FROM notes WHERE answer(body, 'kind?') = 'Yes'"
        )


# --- differential: the DuckDB world and PostgreSQL give the same rows and the same answer() calls ----------------

DIFFERENTIAL = [
    (
        "C",
        "SELECT name FROM restaurants WHERE rating >= 4.5 AND location = 'Palo Alto' AND answer(reviews, 'is it good for kids?') = 'Yes' ORDER BY name",
    ),
    (
        "D",
        "SELECT name, price FROM restaurants WHERE price <= 'moderate' AND 'thai' = ANY(cuisines) AND answer(reviews, 'is it quiet?') = 'Yes' ORDER BY rating DESC, _id LIMIT 3",
    ),
    (
        "C",
        "SELECT _id FROM restaurants WHERE (rating > 4.6 AND answer(reviews, 'do they have vegan options?') = 'Yes') OR (num_reviews > 2000 AND location = 'Sunnyvale') ORDER BY _id",
    ),
    (
        "C",
        "SELECT location, count(*) FROM restaurants WHERE price = 'cheap' AND NOT answer(reviews, 'is it noisy?') = 'Yes' GROUP BY location ORDER BY location",
    ),
    (
        "E",
        "SELECT name FROM restaurants WHERE 'italian' = ANY(cuisines) AND rating >= 4 AND answer(reviews, 'is there outdoor seating?') = 'Yes' ORDER BY name",
    ),
]


@pytest.mark.parametrize(("mode", "query"), DIFFERENTIAL)
def test_same_rows_and_calls_as_the_duckdb_world(source, world, mode, query):
    with Sandbox.create(world.load) as sandbox:
        duck_events: list = []
        duck = SuqlEngine(sandbox, sim()).run(query, mode=mode, emit=duck_events.append)
    pg_events: list = []
    engine = source.suql_engine(sim())
    pg = engine.run(query, mode=mode, emit=pg_events.append)
    assert pg.columns == duck.columns
    assert [tuple(map(str, r)) for r in pg.rows] == [tuple(map(str, r)) for r in duck.rows]
    assert answer_calls(pg_events) == answer_calls(duck_events)
    same_to_verify(pg.to_verify, duck.to_verify)
    assert engine.last_loads[0].rows < 600  # and PostgreSQL sent fewer rows than the table has


def test_unknown_structured_values_stay_rows_to_verify(source, db):
    """A row whose structured condition is NULL is "to verify" in SUQL: the pushed filter must keep it."""
    query = "SELECT id FROM notes WHERE n > 2 AND kind = 'a' AND answer(body, 'are they kind?') = 'Yes' ORDER BY id"
    with psql().connect(db) as con:
        rows = con.execute("SELECT id, kind, n, body FROM notes ORDER BY id").fetchall()

    def load(con):
        con.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, kind VARCHAR, n INTEGER, body VARCHAR)")
        con.executemany("INSERT INTO notes VALUES (?, ?, ?, ?)", rows)

    with Sandbox.create(load) as sandbox:
        duck_events: list = []
        duck = SuqlEngine(sandbox, sim()).run(query, mode="C", emit=duck_events.append)
    pg_events: list = []
    engine = source.suql_engine(sim())
    pg = engine.run(query, mode="C", emit=pg_events.append, verify="eager")  # as the DuckDB engine's default
    assert pg.rows == duck.rows and pg.to_verify  # rows whose structured part is Unknown
    same_to_verify(pg.to_verify, duck.to_verify)
    assert answer_calls(pg_events) == answer_calls(duck_events)
    assert engine.last_loads[0].rows == 3  # 2 (n NULL), 3 (kind NULL), 5; 1 (n = 1) and 4 (kind 'b') stay behind


def test_a_condition_postgresql_cannot_evaluate_falls_back_to_every_row(source):
    """DuckDB compares a text column with a number by casting the text; PostgreSQL refuses text = integer.
    The local engine decides, so the rows are loaded unfiltered and the answer is DuckDB's."""
    engine = source.suql_engine(sim())
    result = engine.run("SELECT id FROM codes WHERE code = 2", mode="C")
    (load,) = engine.last_loads
    assert result.rows == ((2,),)
    assert load.rows == 3 and "did not run on PostgreSQL" in load.note


def test_column_types_travel_and_push_down_as_duckdb_reads_them(source):
    t = {c.name: c.type for c in source.schema.table("typed").columns}
    assert t["m"] == "ENUM('sad', 'ok', 'happy')" and t["ma"] == "VARCHAR[]" and t["ia"] == "INTEGER[]"
    assert t["n"] == "DOUBLE" and t["n2"] == "DECIMAL(10,2)" and t["tz"] == "TIMESTAMP WITH TIME ZONE"
    engine = source.suql_engine(sim())
    r = engine.run("SELECT * FROM typed WHERE m = 'ok' OR id = 2 ORDER BY id", mode="C")
    (first, second) = r.records()
    assert first["j"] == '{"b": [1, 2]}' and first["u"] == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
    assert (
        first["tz"] == "2024-05-01T10:00:00+00:00" and first["ma"] == ["sad", "happy"] and first["ip"] == "10.0.0.1/32"
    )
    assert first['Odd "q" name'] == "odd" and second["id"] == 2 and second["m"] is None
    query = (
        'SELECT id, "Odd ""q"" name" FROM typed WHERE d > \'2024-01-01\' AND ok AND f > 1 AND \'sad\' = ANY(ma) '
        "AND 2 = ANY(ia) AND n > 5 ORDER BY id"
    )
    assert engine.run(query, mode="C").rows == ((1, "odd"),)
    sql = engine.last_loads[0].sql
    assert 'CAST("n" AS DOUBLE PRECISION) > 5' in sql and 'ANY(CAST("ma" AS TEXT[]))' in sql
    assert engine.last_loads[0].rows == 2  # row 3 (d in 2023, not ok) stayed on the server


def test_naive_modes_keep_their_cost(source):
    """Mode A asks answer() on every row: over PostgreSQL too (the lecture's baseline is not silently improved)."""
    engine = source.suql_engine(sim())
    result = engine.run("SELECT id FROM notes WHERE n > 2 AND answer(body, 'are they kind?') = 'Yes'", mode="A")
    assert engine.last_loads[0].rows == 5
    assert result.stats.answer_calls == 4  # every row with a text


# --- through the entry points the app and the CLI use ----------------------------------------------------------


def test_open_source_and_compose_run_suql_on_postgresql(db):
    from engines.compose import open_source_agent, open_suql
    from engines.data.source import open_source
    from engines.sources import TableSource

    src = open_source(db, Settings())
    assert src.kind == "postgresql" and isinstance(src, TableSource)
    session = open_suql(Settings(), source=src)
    try:
        assert isinstance(session.engine, PostgresSuqlEngine)
        r = session.engine.run(
            "SELECT id FROM notes WHERE kind = 'a' AND answer(body, 'are they kind?') = 'Yes' ORDER BY id"
        )
        assert session.engine.last_loads[0].rows == 4  # kind 'a' or NULL: 1, 2, 3, 5
        assert {row[0] for row in r.rows} <= {1, 2, 3, 5}
    finally:
        session.close()
    agent_session = open_source_agent(db, Settings())
    try:
        from engines.sql.agent import run_sql

        result, sentence = run_sql(
            agent_session.sandbox, "SELECT kind, count(*) FROM notes GROUP BY kind ORDER BY kind"
        )
        assert result.rows == (("a", 3), ("b", 1), (None, 1)) and sentence
    finally:
        agent_session.close()


def test_a_read_only_role_and_another_schema_through_the_url(pg_server):  # noqa: F811
    pg_server.create_database("cs224v_schema")
    with pg_server.admin("cs224v_schema") as con:
        con.execute("CREATE SCHEMA sales")
        con.execute("CREATE TABLE sales.orders (id int PRIMARY KEY, item text)")
        con.execute("INSERT INTO sales.orders VALUES (1, 'tea'), (2, 'cake')")
        con.execute("CREATE ROLE reader LOGIN")
        con.execute("GRANT USAGE ON SCHEMA sales TO reader")
        con.execute("GRANT SELECT ON ALL TABLES IN SCHEMA sales TO reader")
    reader = pg_server.url("cs224v_schema", user="reader")
    src = open_postgres(reader + "?options=-csearch_path%3Dsales", Settings())
    try:
        assert [t.name for t in src.schema.tables] == ["orders"]
        assert src.sandbox.run("SELECT item FROM orders ORDER BY id").rows == (("tea",), ("cake",))
        assert src.suql_engine(sim()).run("SELECT item FROM orders WHERE id = 2", mode="C").rows == (("cake",),)
    finally:
        src.close()
    with pytest.raises(DataSourceError) as e:  # public holds nothing this role may read
        open_postgres(reader, Settings())
    assert "search_path" in str(e.value)


def test_the_modes_compare_the_same_over_postgresql(source, world):
    """compare_modes over PostgreSQL: every mode's calls and rows as on the DuckDB world (mode F's retrieval
    cap keeps the best-scoring candidates, and BM25 here scores only the candidates: not compared)."""
    from engines.suql.compare import compare_modes

    query = "SELECT name FROM restaurants WHERE location = 'Sunnyvale' AND price = 'cheap' AND answer(reviews, 'is it quiet?') = 'Yes' ORDER BY name LIMIT 2"
    modes = ["B", "C", "D", "E"]  # A (answer() on every row) is test_naive_modes_keep_their_cost
    with Sandbox.create(world.load) as sandbox:
        duck = compare_modes(SuqlEngine(sandbox, sim()), query, modes=modes)
    pg = compare_modes(source.suql_engine(sim()), query, modes=modes)
    assert len(pg.modes) == len(duck.modes) == len(modes)
    for d, p in zip(duck.modes, pg.modes):
        assert (p.mode, p.answer_calls, p.rows, p.agrees, p.error) == (
            d.mode,
            d.answer_calls,
            d.rows,
            d.agrees,
            d.error,
        )


def test_the_chosen_ranker_reaches_the_engine_that_runs_locally(db):
    """suql_ranker is not lost on the way through PostgreSQL: the local engine over the loaded rows ranks with it."""
    from engines.compose import open_suql
    from engines.data.source import open_source
    from engines.llm import sentence_vectors

    if sentence_vectors.missing() is not None:
        pytest.skip("the sentence ranker's extra is not installed: pip install 'cs224v-tui[sentence]'")
    settings = Settings(suql_ranker="sentence")
    session = open_suql(settings, source=open_source(db, settings))
    try:
        assert session.engine.ranker == "sentence"
        local_engine, local, _ = session.engine._local(
            "SELECT id FROM notes WHERE kind = 'a'", "E", lambda e: None, None
        )
        try:
            assert local_engine.ranker == "sentence"
        finally:
            local.close()
    finally:
        session.close()


def test_the_gate_names_a_querys_result_columns_and_their_types(source):
    """columns_of (the SqlGate method the SUQL compiler's checks and HybridQA call) runs the query with LIMIT 0 on
    PostgreSQL through the gate.  It called a method that does not exist (``_sent``, found by mypy), and read
    the types psycopg names by PostgreSQL's internal names (``int4``) as VARCHAR."""
    gate = source.sandbox
    columns = gate.columns_of(gate.check("SELECT id, kind, n FROM notes"))
    assert columns == [("id", "INTEGER"), ("kind", "VARCHAR"), ("n", "INTEGER")]
    assert gate.columns_of(gate.check("SELECT id FROM notes UNION SELECT n FROM notes")) == [("id", "INTEGER")]
    typed = dict(gate.columns_of(gate.check("SELECT n, tz, ia FROM typed")))
    assert typed == {"n": "DOUBLE", "tz": "TIMESTAMP WITH TIME ZONE", "ia": "INTEGER[]"}


def test_a_suql_run_on_postgresql_parses_the_query_text_once(source, monkeypatch):
    """The filter PostgreSQL runs and the local engine over its candidates share one reading of the query."""
    from sqlglot import parser as sqlglot_parser

    texts: list[str] = []
    real = sqlglot_parser.Parser.parse

    def parse(self, raw_tokens, sql=None):
        texts.append(sql or "")
        return real(self, raw_tokens, sql)

    monkeypatch.setattr(sqlglot_parser.Parser, "parse", parse)
    engine = source.suql_engine(sim())
    query = "SELECT id FROM items WHERE score < 3 AND color = 'red' AND answer(note, 'is it quiet?') = 'Yes'"
    for mode in ("C", "E"):
        texts.clear()
        engine.run(query, mode=mode)
        assert texts.count(query) == 1, mode
        texts.clear()
        assert engine.estimate_calls(query, mode) >= 0
        assert texts.count(query) == 1, mode
