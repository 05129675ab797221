"""Issue 26: PostgreSQL describes tables lazily.  Opening reads the catalogue alone (names, columns, types, the row
estimate), never a table's rows; a table's statistics are read the first time it is needed (the parser's schema for
a question that mentions it, ``describe``) and kept for the session.

What PostgreSQL ran is read from the server itself (pg_stat_statements, where the server has it) and from the
gate's own record of what it sent.  Against a real server the tests start (tests/pg_server.py).
"""

from __future__ import annotations

import json

import pytest

from engines.data.postgres import open_postgres
from engines.settings import Settings
from tests.pg_server import PgServer, pg_server  # noqa: F401 - the fixture

BIG = 200_000  # more than the description's sample (100,000 rows): an enumeration is read from the whole table
DB = "cs224v_lazy"


@pytest.fixture(scope="module")
def db(pg_server: PgServer) -> str:  # noqa: F811
    url = pg_server.create_database(DB)
    with pg_server.admin(DB) as con:
        con.execute(
            "CREATE TABLE flights AS SELECT g AS id, (ARRAY['AA','B6','DL','UA','WN'])[1 + g % 5] AS carrier, "
            f"((g::bigint * 7919) % 300 - 20)::int AS dep_delay FROM generate_series(1, {BIG}) AS g"
        )
        con.execute("CREATE TABLE airlines (carrier text PRIMARY KEY, name text)")
        con.execute(
            "INSERT INTO airlines VALUES ('AA', 'American Airlines'), ('B6', 'JetBlue'), ('DL', 'Delta'), "
            "('UA', 'United'), ('WN', 'Southwest')"
        )
        con.execute("ANALYZE")
        if pg_server.has_pg_stat_statements:
            con.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    return url


def reset(pg_server: PgServer) -> None:  # noqa: F811
    if pg_server.has_pg_stat_statements:
        with pg_server.admin(DB) as con:
            con.execute("SELECT pg_stat_statements_reset()")


def reading(pg_server: PgServer, table: str) -> list[str]:  # noqa: F811
    """The statements this database ran since the last reset that read ``table`` (the catalogue queries name no
    relation of the schema: its name is a parameter there)."""
    if not pg_server.has_pg_stat_statements:
        return []
    with pg_server.admin(DB) as con:
        rows = con.execute(
            "SELECT query FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
            "WHERE d.datname = %s AND s.query LIKE %s AND s.query NOT LIKE %s",
            [DB, f'%"{table}"%', "%pg_stat_statements%"],
        ).fetchall()
    return [q for (q,) in rows]


def test_opening_reads_the_catalogue_alone(db, pg_server):  # noqa: F811
    reset(pg_server)
    source = open_postgres(db, Settings())
    try:
        assert source.sandbox.statements == []  # nothing went through the gate
        assert reading(pg_server, "flights") == [] and reading(pg_server, "airlines") == []
        flights = source.schema.table("flights")
        assert not flights.described and flights.rows == BIG  # PostgreSQL's estimate (ANALYZE-d: exact here)
        assert {c.name: c.type for c in flights.columns} == {
            "id": "INTEGER",
            "carrier": "VARCHAR",
            "dep_delay": "INTEGER",
        }
        # a first `sql` command: still no statistics over any table
        assert source.sandbox.run("SELECT count(*) FROM airlines").rows == ((5,),)
        assert reading(pg_server, "flights") == []
        assert not source.schema.table("flights").described
    finally:
        source.close()


def test_a_table_is_described_when_a_question_needs_it_and_kept(db, pg_server):  # noqa: F811
    from engines.compose import open_source_agent

    reset(pg_server)
    session = open_source_agent(db, Settings())
    source = session.source
    try:
        turn = session.agent.ask("how many airlines are there?")
        assert turn.rows == ((5,),) and not turn.not_understood
        assert source.schema.table("airlines").described
        assert not source.schema.table("flights").described  # not mentioned: not read
        assert reading(pg_server, "flights") == []
        assert all('"flights"' not in sql for sql, _ in source.sandbox.statements)
        turn = session.agent.ask("how many flights had carrier DL?")
        flights = source.schema.table("flights")
        assert flights.described and flights.column("carrier").values == ("AA", "B6", "DL", "UA", "WN")
        assert "'DL'" in (turn.sql or "") and turn.rows == ((BIG // 5,),)
        sent = len(source.sandbox.statements)
        session.agent.ask("how many flights had carrier UA?")
        # kept for the session: the second question about flights reads no statistic again, only its answer
        assert len(source.sandbox.statements) == sent + 1
    finally:
        session.close()


def test_describe_reads_only_the_tables_named(db, pg_server, capsys):  # noqa: F811
    from tui.cli import main

    reset(pg_server)
    code = main(["describe", "airlines", "--db", db, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert [t["name"] for t in data["tables"]] == ["airlines"]
    (airlines,) = data["tables"]
    assert airlines["described"] and airlines["rows"] == 5
    assert {c["name"]: c["type_from"] for c in airlines["columns"]} == {"carrier": "declared", "name": "declared"}
    assert reading(pg_server, "flights") == []
