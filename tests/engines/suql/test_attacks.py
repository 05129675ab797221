"""SUQL is not a way around the SQL gate (issue 10, item 1).

Every attack runs in every execution mode on a sandbox of its own; afterwards the world's data
must be intact, no file may have appeared, and the outcome is a result or a clear EngineError.
"""

from __future__ import annotations

import pytest

from engines.errors import EngineError
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.sql.sandbox import Sandbox, SqlRefused
from engines.suql.execute import SuqlEngine

MODES = ("A", "B", "C", "D", "E", "F", "B-duckdb")
EVIL_FILE = "/tmp/cs224v-suql-attack.duckdb"


def _alias(payload: str) -> str:
    """A column alias that closes the scratch table's quoted name and appends ``payload``."""
    return '"x"" VARCHAR); ' + payload.replace('"', '""') + '; --"'


def _through_alias(payload: str) -> str:
    return (
        f"SELECT * FROM (SELECT name AS {_alias(payload)}, reviews FROM restaurants WHERE _id < 20) s "
        "WHERE answer(s.reviews, 'is it good?') = 'Yes'"
    )


ALIAS_ATTACKS = {
    "update": "UPDATE restaurants SET name = 'PWNED'",
    "drop": "DROP TABLE restaurants",
    "macro": "CREATE OR REPLACE MACRO lower(x) AS 'PWNED'",
    "attach": f"ATTACH '{EVIL_FILE}' AS evil",
    "delete-newline": "DELETE FROM restaurants\n",
    "insert-unicode": "INSERT INTO restaurants (_id, name) VALUES (9999, 'PWNED é ☃')",
}

ATTACKS = {
    **{f"alias-{k}": _through_alias(v) for k, v in ALIAS_ATTACKS.items()},
    # the alias again, in a CTE and in the SELECT list of a summary
    "cte-alias": (
        "WITH c AS (SELECT name AS " + _alias("UPDATE restaurants SET name = 'PWNED'") + ", reviews FROM restaurants "
        "WHERE _id < 20 AND answer(reviews, 'is it cozy?') = 'Yes') SELECT * FROM c"
    ),
    "newline-alias": (
        'SELECT * FROM (SELECT name AS "a""\n);\nUPDATE restaurants SET name = \'PWNED\';\n--é☃", reviews FROM restaurants WHERE _id < 20) s '
        "WHERE answer(s.reviews, 'good?') = 'Yes'"
    ),
    # a quoted type name that DuckDB's reading writes back unquoted (the duckdb-only 7 // 2 forces that reading):
    # DESCRIBE then ran three statements, the second an UPDATE
    "cast-type": (
        "SELECT CAST(r._id AS \"oid) FROM restaurants r; UPDATE restaurants SET name = 'PWNED'; "
        "SELECT CAST(1 AS INT\") AS c, 7 // 2 AS st FROM restaurants r WHERE r._id < 20 AND answer(r.reviews, 'is it good?') = 'Yes'"
    ),
    "cast-type-drop": (
        'SELECT CAST(r._id AS "oid) FROM restaurants r; DROP TABLE restaurants; SELECT CAST(1 AS INT") AS c, 7 // 2 AS st '
        "FROM restaurants r WHERE r._id < 20 AND answer(r.reviews, 'is it good?') = 'Yes'"
    ),
}


@pytest.fixture(scope="module")
def world():
    from worlds import restaurants

    return restaurants.build().world


def _fingerprint(sandbox: Sandbox) -> tuple:
    return (
        sandbox.run("SELECT count(*), count(DISTINCT name), sum(hash(name)), sum(hash(reviews)) FROM restaurants").rows,
        sandbox.run("SELECT count(*) FROM restaurants WHERE name LIKE '%PWNED%'").rows,
        sandbox.run("SELECT lower('ABC')").rows,
        sandbox.run(
            "SELECT database_name, schema_name, table_name FROM duckdb_tables() WHERE schema_name <> 'scratch' "
            "ORDER BY 1, 2, 3"
        ).rows,
        sandbox.run("SELECT database_name FROM duckdb_databases() ORDER BY 1").rows,
        sandbox.run(
            "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'lower' AND function_type = 'macro'"
        ).rows,
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_no_attack_changes_the_world(world, tmp_path, mode, name):
    import os

    sandbox = Sandbox.create(world.load)
    try:
        before = _fingerprint(sandbox)
        engine = SuqlEngine(sandbox, LLM(SimBackend(seed=224)), cap=5)
        try:
            engine.run(ATTACKS[name], mode=mode)
        except EngineError as e:  # a clear refusal is fine; a traceback is not
            assert str(e).strip()
        assert _fingerprint(sandbox) == before
        assert not os.path.exists(EVIL_FILE)
    finally:
        sandbox.close()


def test_a_quoted_alias_is_kept_as_a_name(world):
    """The alias attack does not run, and the alias is simply a (strange) column name."""
    sandbox = Sandbox.create(world.load)
    try:
        engine = SuqlEngine(sandbox, LLM(SimBackend(seed=224)))
        result = engine.run(ATTACKS["alias-update"], mode="E")
        assert result.columns[:2] == ("x\" VARCHAR); UPDATE restaurants SET name = 'PWNED'; --", "reviews")
        assert all("PWNED" not in str(r[0]) for r in result.rows)
    finally:
        sandbox.close()


@pytest.mark.parametrize("name", ["cast-type", "cast-type-drop"])
def test_a_quoted_type_name_is_refused(world, name):
    sandbox = Sandbox.create(world.load)
    try:
        engine = SuqlEngine(sandbox, LLM(SimBackend(seed=224)))
        with pytest.raises(SqlRefused, match="type"):
            engine.run(ATTACKS[name], mode="B-duckdb")
        with pytest.raises(SqlRefused, match="type"):
            sandbox.run(
                ATTACKS[name]
                .replace("answer(r.reviews, 'is it good?') = 'Yes'", "TRUE")
                .replace("answer(reviews, 'is it good?') = 'Yes'", "TRUE")
            )
    finally:
        sandbox.close()
