"""The read-back: one deterministic sentence, faithful to what runs."""

from __future__ import annotations

import pytest
import sqlglot

from engines.sql.readback import readback


@pytest.mark.parametrize(
    "sql, sentence",
    [
        ("SELECT * FROM restaurants", "I searched for restaurants."),
        ("SELECT * FROM restaurants WHERE location = 'Menlo Park'", "I searched for restaurants in Menlo Park."),
        (
            "SELECT * FROM restaurants WHERE ('coffee & tea' = ANY(cuisines) OR 'cafe' = ANY(cuisines)) AND location = 'Palo Alto'",
            "I searched for restaurants in Palo Alto whose cuisines include coffee & tea or cafe.",
        ),
        (
            "SELECT name, phone_number FROM restaurants WHERE 'korean' = ANY(cuisines) AND location = 'Sunnyvale' AND price = 'cheap' ORDER BY num_reviews DESC LIMIT 1",
            "I searched for restaurants in Sunnyvale whose cuisines include korean and priced cheap, showing name and phone number, "
            "sorted by number of reviews (highest first, unknown first), keeping the top 1.",
        ),
        (
            "SELECT COUNT(*) FROM restaurants WHERE location IN ('Bernal Heights', 'Mission District') AND rating >= 4",
            "I counted restaurants in Bernal Heights or Mission District rated at least 4.0.",
        ),
        (
            "SELECT name FROM restaurants WHERE opening_hours > '10pm' LIMIT 3",
            "I searched for restaurants whose opening hours come after '10pm' in alphabetical order, showing name, keeping the first 3.",
        ),
        (
            "SELECT name FROM restaurants WHERE NOT 'italian' = ANY(cuisines)",
            "I searched for restaurants whose cuisines do not include italian, showing name.",
        ),
        (
            "SELECT * FROM restaurants WHERE num_reviews > 100 OR rating = 5",
            "I searched for restaurants with more than 100 reviews or rated exactly 5.",
        ),
        (
            "SELECT * FROM restaurants WHERE location = 'SF' AND (rating = 5 OR num_reviews > 100)",
            "I searched for restaurants in SF (rated exactly 5 or with more than 100 reviews).",
        ),
        (
            "SELECT AVG(rating) FROM restaurants WHERE location = 'SF' GROUP BY price",
            "I searched for restaurants in SF, showing the average rating, grouped by price.",
        ),
    ],
)
def test_sentences(sql, sentence):
    assert readback(sql) == sentence


def test_is_deterministic_and_total_on_odd_queries():
    for sql in [
        "SELECT 1",
        "SELECT * FROM a JOIN b ON a.x = b.x WHERE a.y LIKE '%z%'",
        "SELECT x FROM (SELECT * FROM t) s",
        "SELECT * FROM t WHERE x BETWEEN 1 AND 2 AND y IS NULL",
        "SELECT * FROM t UNION SELECT * FROM u",
    ]:
        text = readback(sql)
        assert text.endswith(".") and len(text) > 10
        assert readback(sqlglot.parse_one(sql).sql()) == text  # the same query written again reads the same


def test_not_exists_reads_its_subquery_with_each_alias_named_by_its_table():
    """The course assistant's conflict check (note 003), read back without any SQL left in it."""
    sql = (
        "SELECT o.course_id FROM offerings AS o WHERE o.term = 'autumn' AND NOT EXISTS (SELECT 1 FROM meetings AS m "
        "JOIN busy AS b ON m.day = b.day WHERE m.offering_id = o.id AND m.start_min < b.end_min AND b.start_min < m.end_min)"
    )
    assert readback(sql) == (
        "I searched for offerings whose term is 'autumn' and where there is no row of meetings joined with busy (with the "
        "meetings' offering id equal to the offerings' id, with the meetings' start min below the busy's end min and with "
        "the busy's start min below the meetings' end min), showing course id."
    )
    assert (
        readback("SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.x = t.x)")
        == "I searched for t where there is a row of u (with the u's x equal to the t's x)."
    )


def test_the_column_types_decide_how_an_order_reads():
    sql = "SELECT day, start_min FROM meetings ORDER BY day, start_min DESC"
    # by name alone the kind of start_min is not known: the sentence says only the direction, never "alphabetical"
    assert readback(sql).endswith(
        "sorted by day (ascending, unknown last), then start min (descending, unknown first)."
    )
    typed = readback(sql, types={"day": "VARCHAR", "start_min": "INTEGER"})
    assert typed.endswith(
        "sorted by day (alphabetical order, unknown last), then start min (highest first, unknown first)."
    )
    # a column named like a number but stored as text sorts as text, and the sentence says so
    assert readback("SELECT * FROM t ORDER BY rating", types={"rating": "VARCHAR"}).endswith(
        "sorted by rating (alphabetical order, unknown last)."
    )


def test_a_numeric_order_reads_as_numeric_and_no_cast_leaks():
    """ORDER BY an ordinal, a SELECT alias, a cast or arithmetic reads as the number it is; CAST never shows."""
    types = {"rating": "DOUBLE", "name": "VARCHAR", "num_reviews": "INTEGER", "term": "term_enum"}
    assert readback("SELECT name, rating FROM restaurants ORDER BY 2 DESC LIMIT 3", types=types).endswith(
        "sorted by rating (highest first, unknown first), keeping the top 3."
    )
    assert readback("SELECT name, rating * 2 AS score FROM restaurants ORDER BY score DESC", types=types).endswith(
        "showing name and score, sorted by score (highest first, unknown first)."
    )
    assert readback("SELECT name FROM restaurants ORDER BY CAST(name AS INT)", types=types).endswith(
        "sorted by name as a number (lowest first, unknown last)."
    )
    sentence = readback(
        "SELECT o.course_id, o.term::VARCHAR AS term FROM offerings AS o JOIN plan AS p ON p.c = o.c "
        "WHERE o.term::VARCHAR = p.term AND CAST(o.year AS INT) > 3 ORDER BY o.term::VARCHAR DESC",
        types=types,
    )
    assert "CAST" not in sentence and "VARCHAR" not in sentence and "::" not in sentence, sentence
    assert "with the offerings' term equal to the plan's term" in sentence and "whose year is above 3" in sentence
    assert sentence.endswith("sorted by term as text (reverse alphabetical order, unknown first).")
    assert "reverse alphabetical" not in readback("SELECT * FROM r ORDER BY num_reviews + 1 DESC")


def test_the_read_back_says_where_unknowns_sort():
    # PostgreSQL: NULLs are larger than every value (last ascending, first descending) unless said otherwise
    assert readback("SELECT * FROM r ORDER BY rating DESC").endswith("(highest first, unknown first).")
    assert readback("SELECT * FROM r ORDER BY rating DESC NULLS LAST").endswith("(highest first, unknown last).")
    assert readback("SELECT * FROM r ORDER BY rating NULLS FIRST").endswith("(lowest first, unknown first).")


def test_an_unknown_condition_says_what_is_open():
    from engines.sql.readback import unknown_phrase

    assert unknown_phrase("answer(reviews, 'does it have a great view?') = 'Yes'") == "whether it has a great view"
    assert unknown_phrase("answer(r.reviews, 'is it practical?') = 'Yes'") == "whether it is practical"
    # NOT over an unknown is unknown: the open question is the same one
    assert (
        unknown_phrase("NOT (answer(reviews, 'is parking easy?') = 'Yes')")
        == "what the reviews say to 'is parking easy?'"
    )
    assert unknown_phrase("answer(reviews, 'what cuisine?') = 'thai'") == "what the reviews say to 'what cuisine?'"
    assert unknown_phrase("location = 'x'") == "whether location = 'x' holds"
