"""The SUQL executor's row labels and answer() calls: a decided row is labelled by its table's own id (a
derived table's by its id column); answer() reads text only (not a number, a constant or a bare condition)
and a bare answer() in WHERE is refused; a join whose filter matches nothing still runs."""

from __future__ import annotations

import pytest

from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.suql.execute import RowDecided, SuqlEngine
from engines.suql.plan import MODES

ALL_MODES = [*MODES, "B-duckdb"]
ROMANTIC = "answer(reviews, 'is it romantic?') = 'Yes'"


@pytest.fixture(scope="module")
def engine(sandbox):
    return SuqlEngine(sandbox, LLM(SimBackend(seed=224)))


@pytest.mark.parametrize("mode", MODES)  # B-duckdb decides inside DuckDB: it names no row
def test_a_rows_label_is_its_own_id(engine, world, mode):
    """The SUQL tab's '#82' must be the row whose _id is 82 (it was the 0-based rowid: _id 83)."""
    events = []
    result = engine.run(
        f"SELECT _id, name FROM restaurants WHERE location = 'Palo Alto' AND {ROMANTIC}", mode=mode, emit=events.append
    )
    labels = [e.row_key for e in events if isinstance(e, RowDecided)]
    assert labels
    for label in labels:
        number, name = label[1:].split(" ", 1)
        assert world.by_id(int(number)).name == name
    for rec in result.to_verify:
        assert rec["_row"] == rec["_id"]


def test_a_derived_tables_label_is_its_id_column_and_a_join_joins_both(engine, world):
    events = []
    engine.run(
        "SELECT s._id FROM (SELECT _id, name, reviews, location FROM restaurants) s "
        "WHERE s.location = 'Palo Alto' AND answer(s.reviews, 'is it romantic?') = 'Yes'",
        mode="C",
        emit=events.append,
    )
    labels = [e.row_key for e in events if isinstance(e, RowDecided)]
    assert labels and all(world.by_id(int(lab[1:].split(" ", 1)[0])).name == lab.split(" ", 1)[1] for lab in labels)
    events = []
    engine.run(
        "SELECT a._id FROM restaurants a JOIN restaurants b ON a._id = b._id "
        "WHERE a.location = 'Palo Alto' AND answer(a.reviews, 'is it romantic?') = 'Yes'",
        mode="C",
        emit=events.append,
    )
    labels = [e.row_key for e in events if isinstance(e, RowDecided)]
    assert labels
    for label in labels:
        ids, name = label[1:].split(" ", 1)
        left, right = ids.split("|")
        assert left == right and world.by_id(int(left)).name == name


BARE = [
    "SELECT name FROM restaurants WHERE location = 'Palo Alto' AND answer(reviews, 'is it romantic?')",
    "SELECT name FROM restaurants WHERE answer(reviews, 'is it romantic?')",
    "SELECT name FROM restaurants WHERE NOT (answer(reviews, 'is it romantic?')) LIMIT 3",
    "SELECT name FROM restaurants WHERE rating > 4 OR answer(reviews, 'is it romantic?')",
    "SELECT name FROM restaurants WHERE answer(reviews, 'is it romantic?') IS TRUE",
    "SELECT name, CASE WHEN answer(reviews, 'is it romantic?') THEN 1 ELSE 0 END FROM restaurants LIMIT 2",
    "SELECT name FROM restaurants WHERE _id IN (SELECT _id FROM restaurants WHERE answer(reviews, 'is it romantic?'))",
]


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("query", BARE)
def test_a_bare_answer_as_a_condition_is_refused(engine, mode, query):
    """It used to treat 'No' as true (A, C-F) or say answer() does not exist (B)."""
    from engines.suql.language import SuqlError

    with pytest.raises(SuqlError, match=r"used as a condition.*= 'Yes'"):
        engine.run(query, mode=mode)


@pytest.mark.parametrize("mode", ALL_MODES)
def test_a_compared_answer_still_runs(engine, mode):
    ok = engine.run(
        f"SELECT name FROM restaurants WHERE location = 'Palo Alto' AND NOT ({ROMANTIC}) LIMIT 2", mode=mode
    )
    assert ok.columns == ("name",)
    case = engine.run(
        "SELECT name, CASE WHEN answer(reviews, 'is it romantic?') = 'Yes' THEN 1 ELSE 0 END AS r "
        "FROM restaurants WHERE location = 'Palo Alto' LIMIT 2",
        mode=mode,
    )
    assert len(case.rows) == 2


NOT_TEXT = [
    (
        "SELECT name FROM restaurants WHERE location = 'Palo Alto' AND answer(rating, 'is it good?') = 'Yes'",
        "rating is DECIMAL",
    ),
    (
        "SELECT name FROM restaurants WHERE location = 'Palo Alto' AND answer(price, 'is it cheap?') = 'Yes'",
        "price is ENUM",
    ),
    (
        "SELECT name, answer(num_reviews, 'is it popular?') FROM restaurants WHERE location = 'Palo Alto' LIMIT 2",
        "num_reviews is INTEGER",
    ),
    ("SELECT summary(r._id) FROM restaurants r LIMIT 2", r"r\._id is INTEGER"),
    (
        "WITH t AS (SELECT name, rating + 1 AS score FROM restaurants) "
        "SELECT name FROM t WHERE answer(score, 'is it good?') = 'Yes' LIMIT 2",
        "score is DECIMAL",
    ),
]


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("query,says", NOT_TEXT)
def test_answer_over_a_non_text_column_is_refused(engine, mode, query, says):
    from engines.suql.language import SuqlError

    before = dict(engine.llm.counter.counts)
    with pytest.raises(SuqlError, match=rf"reads text: {says}"):
        engine.run(query, mode=mode)
    assert engine.llm.counter.counts == before  # refused before any call


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("constant", ["'cozy and romantic'", "4.5", "NULL", "lower('X')"])
def test_answer_over_a_constant_is_refused(engine, mode, constant):
    from engines.suql.language import SuqlError

    with pytest.raises(SuqlError, match="is a constant"):
        engine.run(
            f"SELECT name FROM restaurants WHERE answer({constant}, 'is it romantic?') = 'Yes' LIMIT 2", mode=mode
        )


@pytest.mark.parametrize("mode", ALL_MODES)
def test_text_a_list_of_text_and_a_cast_are_read(engine, mode):
    """A list of text is read as its items joined with newlines; a CAST makes a number text on purpose."""
    listed = engine.run(
        "SELECT name, answer(popular_dishes, 'what dishes does it serve?') AS d "
        "FROM restaurants WHERE location = 'Palo Alto' LIMIT 2",
        mode=mode,
    )
    assert len(listed.rows) == 2
    joined = engine.run(
        "SELECT name, answer(array_to_string(popular_dishes, chr(10)), 'what dishes does it serve?') AS d "
        "FROM restaurants WHERE location = 'Palo Alto' LIMIT 2",
        mode=mode,
    )
    assert listed.rows == joined.rows
    cast = engine.run(
        "SELECT name, answer(CAST(rating AS VARCHAR), 'is it good?') AS g "
        "FROM restaurants WHERE location = 'Palo Alto' LIMIT 2",
        mode=mode,
    )
    assert len(cast.rows) == 2


NO_MATCH_JOINS = [
    "SELECT a.name, b.name FROM restaurants a JOIN restaurants b ON a._id = b._id "
    "WHERE a.location = 'Nowhere' AND answer(a.reviews, 'is it romantic?') = 'Yes'",
    "SELECT COUNT(*) FROM restaurants a JOIN restaurants b ON a._id = b._id "
    "WHERE a.location = 'Nowhere' AND answer(a.reviews, 'is it romantic?') = 'Yes'",
    "SELECT a.name, summary(b.reviews) FROM restaurants a JOIN restaurants b ON a._id = b._id "
    "WHERE a._id < 4 AND answer(a.reviews, 'is it on the moon?') = 'Yes'",
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query", NO_MATCH_JOINS)
def test_a_join_with_no_matches_runs(engine, mode, query):
    """The empty values table of a join got a BIGINT key against the join's VARCHAR key."""
    got = engine.run(query, mode=mode)
    oracle = engine.run(query, mode="B-duckdb")
    assert got.columns == oracle.columns and sorted(got.rows) == sorted(oracle.rows)
