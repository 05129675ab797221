"""The executor in every mode: IS NOT NULL keeps its negation (the complement of IS NULL), SELECT * shows only the
query's own columns, LIMIT 0 makes no call."""

from __future__ import annotations

import pytest

from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.suql.execute import SuqlEngine
from engines.suql.plan import MODES

ALL_MODES = [*MODES, "B-duckdb"]
IS_NULL = "SELECT _id FROM restaurants WHERE location = 'Palo Alto' AND answer(reviews, 'is it romantic?') IS NULL"


@pytest.fixture(scope="module")
def engine(sandbox):
    return SuqlEngine(sandbox, LLM(SimBackend(seed=224)))


@pytest.mark.parametrize("mode", ALL_MODES)
def test_is_not_null_is_the_complement_of_is_null(engine, world, mode):
    null = {r[0] for r in engine.run(IS_NULL, mode=mode).rows}
    not_null = {r[0] for r in engine.run(IS_NULL.replace("IS NULL", "IS NOT NULL"), mode=mode).rows}
    also = {r[0] for r in engine.run(IS_NULL.replace("IS NULL", "IS NULL = FALSE"), mode=mode).rows}
    palo_alto = {r._id for r in world.rows if r.location == "Palo Alto"}
    assert null and not_null  # the sim knows some, not all
    assert not (null & not_null)
    assert null | not_null <= palo_alto if mode == "F" else null | not_null == palo_alto  # F: the retrieval cap
    assert also == not_null  # the slow path (through DuckDB) agrees


@pytest.mark.parametrize("mode", ALL_MODES)
def test_select_star_shows_only_the_query_columns(engine, sandbox, mode):
    table = sandbox.run("SELECT * FROM restaurants LIMIT 0").columns
    where = "WHERE location = 'Palo Alto' AND answer(reviews, 'is it romantic?') = 'Yes'"
    assert engine.run(f"SELECT * FROM restaurants {where} LIMIT 2", mode=mode).columns == table
    with_summary = engine.run(f"SELECT *, summary(reviews) FROM restaurants {where} LIMIT 1", mode=mode)
    assert with_summary.columns == (*table, "summary(reviews)")
    # a column of the user's own called _k (the values table's key) stays; the internal ones do not
    own = engine.run(
        "SELECT * FROM (SELECT _id, name AS _k, name AS c0, reviews FROM restaurants) s "
        "WHERE answer(s.reviews, 'is it romantic?') = 'Yes' LIMIT 2",
        mode=mode,
    )
    assert own.columns == ("_id", "_k", "c0", "reviews") and own.rows
    assert all(r[1] == r[2] and isinstance(r[1], str) for r in own.rows)  # the names, not row ids or answers


def test_rows_to_verify_hold_no_internal_columns(engine, sandbox):
    table = set(sandbox.run("SELECT * FROM restaurants LIMIT 0").columns)
    for q in [
        "SELECT * FROM restaurants WHERE location = 'Palo Alto' AND answer(reviews, 'is it romantic?') = 'Yes'",
        "SELECT COUNT(*) FROM restaurants WHERE location = 'Palo Alto' AND answer(reviews, 'is it romantic?') = 'Yes'",
    ]:
        result = engine.run(q, mode="C")
        assert result.to_verify
        for rec in result.to_verify:
            assert set(rec) - {"_row", "unknown", "approximate"} == table


@pytest.mark.parametrize("mode", ALL_MODES)
def test_limit_0_makes_no_call(engine, mode):
    for q in [
        "SELECT name FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes' LIMIT 0",
        "SELECT name, summary(reviews) FROM restaurants LIMIT 0",
        "SELECT name, summary(reviews) FROM restaurants WHERE answer(reviews, 'is it quiet?') = 'Yes' "
        "ORDER BY answer(reviews, 'is it cheap?') LIMIT 0 OFFSET 3",
    ]:
        result = engine.run(q, mode=mode)
        assert result.rows == () and result.columns[0] == "name"
        assert result.stats.answer_calls == result.stats.summary_calls == 0, (mode, q)
        if mode != "B-duckdb":
            assert engine.estimate_calls(q, mode) == 0
