"""A hostile PostgreSQL database, on the real server the tests start (tests/pg_server.py).

The database's owner means harm; the user connects as ``reader``, a role that may only read, with the URL's
``search_path`` on the owner's schemas (``shop, public``).  Every trap writes a line into ``public.log`` through
``dblink`` (a second connection, which the read-only transaction does not cover), so a trap that ran leaves a
line there:

* ``public.lower(varchar)`` and an ``=`` operator for ``varchar`` in ``shop``, which PostgreSQL would prefer to
  its own for a varchar column (the CVE-2018-1058 pattern);
* a view calling a writing function (and sleeping);
* writing functions, in ``shop`` and in ``public``;
* a table whose row-level security policy calls one, one whose partial index calls an immutable one (the
  planner folds it), an enum type and a table's row type with a cast to text through one, and a domain whose
  constraint calls one.

Opening and describing the database must run none of them, queries must use PostgreSQL's own ``lower()`` and
``=``, and everything that would run the database's own code is refused with a clear message before anything
is sent.  Without PostgreSQL's binaries, psycopg or the dblink extension every test here is skipped.
"""

from __future__ import annotations

import pytest

from engines.data.postgres import open_postgres
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.settings import Settings
from engines.sql.sandbox import SqlRefused
from tests.pg_server import PgServer, pg_server  # noqa: F401 - the fixture

DB = "cs224v_hostile"
PEOPLE = 20


@pytest.fixture(scope="module")
def hostile(pg_server: PgServer) -> str:  # noqa: F811 - the fixture imported above
    """The reader's URL of the hostile database."""
    pg_server.create_database(DB)
    witness_db = f"dbname={DB} host=127.0.0.1 port={pg_server.port} user=postgres"
    with pg_server.admin(DB) as con:
        try:
            con.execute("CREATE EXTENSION dblink")
        except Exception as e:  # a server without contrib: no way to write past the read-only transaction
            pytest.skip(f"the dblink extension is not available on this PostgreSQL server ({e})")
        con.execute("CREATE TABLE public.log (what text)")
        # the trap's witness: a line in public.log, written on a second connection (as its owner, the superuser)
        con.execute(
            "CREATE FUNCTION public.witness(what text) RETURNS boolean LANGUAGE sql VOLATILE SECURITY DEFINER "
            f"AS $$ SELECT public.dblink_exec('{witness_db}', "
            "'INSERT INTO public.log VALUES (' || pg_catalog.quote_literal(what) || ')') IS NOT NULL $$"
        )
        con.execute("CREATE SCHEMA shop")
        con.execute("CREATE TABLE shop.people (id int PRIMARY KEY, name varchar(40), bio text, kind varchar(10))")
        con.execute(
            "INSERT INTO shop.people SELECT g, 'person ' || g, pg_catalog.repeat('A long and winding life. ', 3), "
            f"(ARRAY['a', 'b'])[1 + g % 2] FROM pg_catalog.generate_series(1, {PEOPLE}) AS g"
        )
        # lower() and = for varchar, preferred to PostgreSQL's own for a varchar argument
        con.execute(
            "CREATE FUNCTION public.lower(varchar) RETURNS text LANGUAGE sql VOLATILE AS "
            "$$ SELECT CASE WHEN public.witness('lower') THEN pg_catalog.lower($1::text) END $$"
        )
        con.execute(
            "CREATE FUNCTION shop.vareq(varchar, varchar) RETURNS boolean LANGUAGE sql VOLATILE AS "
            "$$ SELECT public.witness('=') AND $1::text OPERATOR(pg_catalog.=) $2::text $$"
        )
        con.execute("CREATE OPERATOR shop.= (LEFTARG = varchar, RIGHTARG = varchar, FUNCTION = shop.vareq)")
        # functions that write
        for schema in ("shop", "public"):
            con.execute(
                f"CREATE FUNCTION {schema}.steal(text) RETURNS text LANGUAGE sql VOLATILE AS "
                f"$$ SELECT CASE WHEN public.witness('{schema}.steal') THEN $1 END $$"
            )
        con.execute(
            "CREATE AGGREGATE shop.gather(text) (SFUNC = pg_catalog.textcat, STYPE = text, INITCOND = '', "
            "FINALFUNC = shop.steal)"
        )
        # a slow view that writes, and an honest one
        con.execute(
            "CREATE VIEW shop.slow AS SELECT p.id, p.name, public.witness('view') AS w, "
            "pg_catalog.pg_sleep(0.01) IS NULL AS s FROM shop.people p"
        )
        con.execute("CREATE VIEW shop.people_view AS SELECT p.id, p.bio, p.kind AS category FROM shop.people p")
        # row-level security, a partial index and a cast that call the database's code
        con.execute("CREATE TABLE shop.secrets (id int, body text)")
        con.execute("INSERT INTO shop.secrets VALUES (1, 'x')")
        con.execute("ALTER TABLE shop.secrets ENABLE ROW LEVEL SECURITY")
        con.execute("CREATE POLICY everyone ON shop.secrets USING (public.witness('policy'))")
        con.execute(
            "CREATE FUNCTION shop.folded(int) RETURNS int LANGUAGE sql IMMUTABLE AS "
            "$$ SELECT CASE WHEN public.witness('index') THEN $1 END $$"
        )
        con.execute("CREATE TABLE shop.orders (id int, item text)")
        con.execute("INSERT INTO shop.orders VALUES (1, 'tea')")
        con.execute("CREATE INDEX orders_recent ON shop.orders (id) WHERE id > shop.folded(0)")
        con.execute("CREATE TYPE shop.mood AS ENUM ('sad', 'ok', 'happy')")
        con.execute(
            "CREATE FUNCTION shop.mood_text(shop.mood) RETURNS text LANGUAGE sql AS "
            "$$ SELECT CASE WHEN public.witness('cast') THEN pg_catalog.format('%s', $1) END $$"
        )
        con.execute("CREATE CAST (shop.mood AS text) WITH FUNCTION shop.mood_text(shop.mood) AS IMPLICIT")
        con.execute("CREATE TABLE shop.feelings (id int PRIMARY KEY, m shop.mood, note text)")
        con.execute("INSERT INTO shop.feelings VALUES (1, 'ok', 'fine'), (2, 'sad', 'rain'), (3, 'ok', 'tea')")
        con.execute("CREATE DOMAIN shop.code AS text CHECK (shop.steal(VALUE) IS NOT NULL)")
        con.execute("CREATE TYPE shop.size AS ENUM ('small', 'large')")  # an honest type
        con.execute("CREATE TABLE shop.pairs (a int, b int)")
        con.execute("INSERT INTO shop.pairs VALUES (1, 2)")
        con.execute(
            "CREATE FUNCTION shop.pair_text(shop.pairs) RETURNS text LANGUAGE sql AS "
            "$$ SELECT CASE WHEN public.witness('row cast') THEN pg_catalog.format('%s', $1) END $$"
        )
        con.execute("CREATE CAST (shop.pairs AS text) WITH FUNCTION shop.pair_text(shop.pairs)")
        con.execute("ANALYZE")
        con.execute("CREATE ROLE reader LOGIN")
        con.execute("GRANT USAGE ON SCHEMA shop TO reader")
        con.execute("GRANT SELECT ON ALL TABLES IN SCHEMA shop TO reader")
    return pg_server.url(DB, user="reader") + "?options=-csearch_path%3Dshop,public"


def written(pg_server: PgServer) -> list[str]:  # noqa: F811
    """What the traps wrote (and clear it)."""
    with pg_server.admin(DB) as con:
        lines = [w for (w,) in con.execute("SELECT what FROM public.log ORDER BY what").fetchall()]
        con.execute("DELETE FROM public.log")
    return lines


@pytest.fixture(scope="module")
def source(hostile, pg_server):  # noqa: F811
    written(pg_server)
    src = open_postgres(hostile, Settings())
    yield src
    src.close()


def test_opening_and_describing_writes_nothing_and_runs_no_view(hostile, pg_server):  # noqa: F811
    written(pg_server)
    src = open_postgres(hostile, Settings())
    try:
        assert written(pg_server) == []  # no view, policy, index or cast of the database's ran
        described = src.described()  # every table described (tables are described when needed)
        assert written(pg_server) == []
        slow = described.table("slow")
        assert slow.rows is None and [c.name for c in slow.columns] == ["id", "name", "w", "s"]
        assert any("slow" in n and "without reading it" in n and "public.witness(text)" in n for n in described.notes)
        assert described.table("people").rows == PEOPLE  # a table's stored rows are still read
        feelings = described.table("feelings")  # its enum column described from the type, its rows counted
        assert feelings.rows == 3 and feelings.column("m").values == ("sad", "ok", "happy")
    finally:
        src.close()


def test_a_view_is_described_from_the_catalogue_and_still_answers_queries(source, pg_server):  # noqa: F811
    view = source.described(["people_view"]).table("people_view")  # the table it passes through described first
    assert view.rows is None  # not counted: counting runs the view
    assert view.column("bio").role == "free_text"  # passed through from people.bio, described from its sample
    category = view.column("category")
    assert category.role == "enum" and category.values == ("a", "b")
    assert source.sandbox.run("SELECT count(*) FROM people_view WHERE category = 'a'").rows == ((PEOPLE // 2,),)
    assert written(pg_server) == []


def test_shadowed_lower_and_equals_resolve_to_postgresql_s_own(source, pg_server):  # noqa: F811
    run = source.sandbox.run
    assert run("SELECT id FROM people WHERE lower(name) = 'person 3'").rows == ((3,),)
    assert run("SELECT count(*) FROM people WHERE kind = 'a' AND name <> 'x'").rows == ((PEOPLE // 2,),)
    r = run("SELECT id FROM people WHERE name = 'person 4'")
    assert r.rows == ((4,),)
    assert written(pg_server) == []  # neither public.lower(varchar) nor shop.= ran
    assert '"shop"."people"' in r.sql  # the engine names the schema itself
    engine = source.suql_engine(LLM(SimBackend(seed=224)))
    result = engine.run(
        "SELECT id FROM people WHERE kind = 'b' AND lower(name) <> 'person 1' AND answer(bio, 'is it long?') = 'Yes'",
        mode="C",
    )
    (load,) = engine.last_loads
    assert '"shop"."people"' in load.sql and load.rows == PEOPLE // 2  # kind = 'b' ran on PostgreSQL
    assert {row[0] for row in result.rows} <= set(range(2, PEOPLE + 1, 2))
    assert written(pg_server) == []


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT steal(name) FROM people",
        "SELECT shop.steal(bio) FROM people",
        "SELECT public.steal(bio) FROM people",
        'SELECT "steal"(bio) FROM people',
        "SELECT public.lower(name) FROM people",
        "SELECT gather(bio) FROM people",
        "SELECT id FROM people WHERE name OPERATOR(shop.=) 'person 1'",
        "SELECT * FROM slow",
        "SELECT count(*) FROM (SELECT id FROM slow) AS s",
        "SELECT * FROM secrets",
        "SELECT * FROM orders",
        "SELECT CAST(m AS TEXT) FROM feelings",
        "SELECT id FROM feelings WHERE lower(m) = 'ok'",  # the implicit cast to text
        "SELECT CAST('ok' AS mood)",
        "SELECT CAST('x' AS code)",  # the domain's constraint
        "SELECT CAST(p AS TEXT) FROM pairs AS p",  # the whole row's cast
        "SELECT * FROM (WITH pg_authid AS (SELECT 1 AS a) SELECT * FROM pg_authid) AS q, pg_authid",
    ],
)
def test_the_database_s_own_code_is_refused_before_anything_is_sent(source, pg_server, sql):  # noqa: F811
    before = list(source.sandbox.statements)
    with pytest.raises(SqlRefused) as e:
        source.sandbox.run(sql)
    message = str(e.value)
    assert "\n" not in message
    assert "PostgreSQL's own" in message or "There is no table 'pg_authid'" in message, message
    assert source.sandbox.statements == before  # nothing was sent
    assert written(pg_server) == []


def test_what_does_not_run_the_database_s_code_still_runs(source, pg_server):  # noqa: F811
    run = source.sandbox.run
    assert run("SELECT * FROM feelings ORDER BY id").rows == ((1, "ok", "fine"), (2, "sad", "rain"), (3, "ok", "tea"))
    assert run("WITH people AS (SELECT 7 AS id) SELECT id FROM people").rows == ((7,),)  # a CTE, not the table
    assert run("WITH a AS (SELECT id FROM people), b AS (SELECT id FROM a) SELECT count(*) FROM b").rows == ((PEOPLE,),)
    recursive = "WITH RECURSIVE n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT count(*) FROM n"
    assert run(recursive).rows == ((3,),)
    assert run("SELECT CAST('small' AS size) < 'large'::size").rows == ((True,),)  # named with its schema when sent
    with pytest.raises(SqlRefused) as e:  # the SUQL engine's own candidate query is checked the same way
        source.suql_engine(LLM(SimBackend(seed=224))).run("SELECT id FROM feelings WHERE m = 'ok'", mode="C")
    assert "cast through shop.mood_text" in str(e.value)
    assert written(pg_server) == []
