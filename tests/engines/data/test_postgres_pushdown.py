"""The structured filter pushed down to PostgreSQL: pure tree analysis, no server needed.

Each case checks what must (and must not) be pushed: a filter that is too strong would lose rows, one
that is missing would load the whole table.
"""

from __future__ import annotations

import duckdb
import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.data.postgres_pushdown import candidate_filters, not_false

COLUMNS = {
    "restaurants": ["_id", "name", "cuisines", "price", "rating", "num_reviews", "reviews", "location"],
    "t": ["a", "b"],
}


KINDS = {
    "restaurants": {"_id": "plain", "name": "text", "cuisines": "list", "price": "enum", "rating": "plain",
                    "num_reviews": "plain", "reviews": "list", "location": "text"},
    "t": {"a": "plain", "b": "text"},
}  # fmt: skip


def filters(sql: str):
    return candidate_filters(sqlglot.parse_one(sql, read="postgres"), COLUMNS, kinds=KINDS, always=["_id", "name"])


def pushed(sql: str, table: str = "restaurants") -> str | None:
    p = filters(sql)[table].predicate
    return p.sql(dialect="postgres") if p is not None else None


def test_top_level_structured_conjuncts_are_pushed_and_answer_stays_local():
    p = pushed("SELECT name FROM restaurants WHERE rating > 4 AND answer(reviews, 'kids?') = 'Yes'")
    assert p == '("rating" > 4 OR "rating" IS NULL)'  # Unknown kept: such rows are "to verify"
    assert "answer" not in p


def test_or_of_branches_each_branch_own_conjuncts():
    p = pushed(
        "SELECT name FROM restaurants WHERE (rating > 4 AND answer(reviews, 'x') = 'Yes') "
        "OR (price = 'cheap' AND location = 'Palo Alto')"
    )
    assert '"rating" > 4' in p and 'CAST("price" AS TEXT) = ' in p and '"location" = ' in p and " OR " in p


def test_a_branch_without_structured_conjuncts_means_every_row():
    assert (
        pushed(
            "SELECT name FROM restaurants WHERE rating > 4 AND answer(reviews, 'x') = 'Yes' OR answer(reviews, 'y') = 'Yes'"
        )
        is None
    )


def test_not_over_an_answer_call_is_not_pushed():
    assert pushed("SELECT name FROM restaurants WHERE NOT (rating > 4 AND answer(reviews, 'x') = 'Yes')") is None


def test_null_supplying_side_of_an_outer_join_gets_no_filter():
    f = filters(
        "SELECT r.name FROM restaurants r LEFT JOIN t ON t.a = r._id WHERE t.b IS NULL AND 'thai' = ANY(r.cuisines)"
    )
    assert f["t"].predicate is None  # filtering t would turn anti-join misses into matches
    assert "ANY" in f["restaurants"].predicate.sql(dialect="postgres")


def test_a_table_read_twice_gets_the_or_of_its_occurrences():
    p = pushed(
        "SELECT name FROM restaurants r WHERE rating > 4 AND NOT EXISTS "
        "(SELECT 1 FROM restaurants r2 WHERE r2.name = r.name AND r2.rating < 2)"
    )
    assert '"rating" > 4' in p and '"rating" < 2' in p and " OR " in p
    assert "r.name" not in p.lower() and '"name"' not in p  # the correlated condition is not this table's


def test_a_correlated_outer_column_is_never_pushed_into_the_subquery():
    f = filters("SELECT a FROM t WHERE EXISTS (SELECT 1 FROM restaurants r WHERE r._id = t.a AND t.b = 'x')")
    assert f["restaurants"].predicate is None
    assert f["t"].predicate is None  # t.b = 'x' sits under EXISTS: not a condition on t's rows


def test_unknown_sources_make_unqualified_columns_ambiguous():
    assert pushed("SELECT * FROM restaurants, unnest(cuisines) AS u(c) WHERE c = 'thai' AND rating > 3") is None


def test_where_postgresql_would_read_a_condition_differently_it_is_rewritten_or_kept_local():
    # DuckDB compares an ENUM with a string as strings ('expensive' <= 'moderate'); PostgreSQL by the
    # enum's order and it rejects a string that is no label: the enum is compared as its text
    assert pushed("SELECT name FROM restaurants WHERE price <= 'moderate'") == (
        '(CAST("price" AS TEXT) COLLATE "C" <= \'moderate\' OR "price" IS NULL)'
    )
    assert (
        pushed("SELECT name FROM restaurants WHERE price = 'cheep'")
        == '(CAST("price" AS TEXT) = \'cheep\' OR "price" IS NULL)'
    )
    # text order: DuckDB compares bytes, PostgreSQL its locale's collation
    assert pushed("SELECT name FROM restaurants WHERE name < 'M'") == '("name" COLLATE "C" < \'M\' OR "name" IS NULL)'
    assert (
        pushed("SELECT name FROM restaurants WHERE name = 'M'") == '("name" = \'M\' OR "name" IS NULL)'
    )  # an index serves it
    # functions whose results differ (lower() of non-ASCII in the C locale, casts of columns)
    assert pushed("SELECT name FROM restaurants WHERE lower(name) = 'é'") is None
    assert pushed("SELECT name FROM restaurants WHERE CAST(rating AS INT) = 4") is None
    # a column of a type fetched as text (json, char(n) ...) or not described: never pushed
    assert (
        candidate_filters(sqlglot.parse_one("SELECT a FROM t WHERE b = 'x'"), COLUMNS, kinds={"t": {"a": "plain"}})[
            "t"
        ].predicate
        is None
    )


def test_names_match_without_regard_to_case_as_in_duckdb():
    f = filters("SELECT NAME FROM Restaurants R WHERE R.RATING > 4 AND Location = 'Palo Alto'")["restaurants"]
    assert (
        f.predicate.sql(dialect="postgres")
        == '("rating" > 4 OR "rating" IS NULL) AND ("location" = \'Palo Alto\' OR "location" IS NULL)'
    )
    assert f.columns == ("_id", "name", "rating", "location")


def test_functions_off_the_list_stay_local():
    assert pushed("SELECT name FROM restaurants WHERE md5(name) = 'x'") is None
    assert pushed("SELECT name FROM restaurants WHERE rating > (SELECT avg(rating) FROM restaurants)") is None


def test_columns_needed_and_star():
    f = filters("SELECT name FROM restaurants WHERE rating > 4 AND answer(reviews, 'x') = 'Yes'")["restaurants"]
    assert f.columns == ("_id", "name", "rating", "reviews")
    assert filters("SELECT * FROM restaurants WHERE rating > 4")["restaurants"].columns is None


def test_cte_body_filter_is_pushed():
    p = pushed("WITH x AS (SELECT * FROM restaurants WHERE num_reviews > 100) SELECT name FROM x WHERE rating > 4")
    assert p == '("num_reviews" > 100 OR "num_reviews" IS NULL)'


# not_false(p) must hold exactly where p is TRUE or NULL: checked by DuckDB on every assignment of values.
_ATOMS = ["a > 1", "b = 'x'", "a + 1 < 3", "b LIKE 'x%'", "a IN (1, 2)", "a IS NULL", "a BETWEEN 0 AND 2", "b <> 'y'"]


@st.composite
def formulas(draw, depth=3):
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(_ATOMS))
    op = draw(st.sampled_from(["AND", "OR", "NOT"]))
    if op == "NOT":
        return f"NOT ({draw(formulas(depth - 1))})"
    return f"({draw(formulas(depth - 1))}) {op} ({draw(formulas(depth - 1))})"


@pytest.fixture(scope="module")
def truth_table():
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE v AS SELECT * FROM (VALUES (NULL), (0), (1), (2), (3)) a(a), (VALUES (NULL), ('x'), ('y'), ('xz')) b(b)"
    )
    yield con
    con.close()


@settings(max_examples=150, deadline=None)
@given(formulas())
def test_not_false_is_exactly_true_or_unknown(truth_table, formula):
    tree = sqlglot.parse_one(formula, read="postgres")
    rewritten = not_false(tree).sql(dialect="duckdb")
    wrong = truth_table.execute(
        f"SELECT count(*) FROM v WHERE (({formula}) IS NOT FALSE) IS DISTINCT FROM (({rewritten}) IS TRUE)"
    ).fetchone()[0]
    assert wrong == 0, rewritten


def test_without_a_server_the_postgresql_tests_say_why_they_skip(monkeypatch):
    from tests import pg_server

    monkeypatch.setattr(pg_server, "find_bin_dir", lambda: None)
    reason = pg_server.skip_reason()
    assert reason is not None and "apt-get install -y postgresql" in reason
