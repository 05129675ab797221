"""The read-back: one deterministic sentence, faithful to what runs."""
from __future__ import annotations

import pytest

from engines.sql.readback import readback


@pytest.mark.parametrize(
    "sql, sentence",
    [
        ("SELECT * FROM restaurants", "I searched for restaurants."),
        ("SELECT * FROM restaurants WHERE location = 'Menlo Park'", "I searched for restaurants in Menlo Park."),
        ("SELECT * FROM restaurants WHERE ('coffee & tea' = ANY(cuisines) OR 'cafe' = ANY(cuisines)) AND location = 'Palo Alto'",
         "I searched for restaurants in Palo Alto whose cuisines include coffee & tea or cafe."),
        ("SELECT name, phone_number FROM restaurants WHERE 'korean' = ANY(cuisines) AND location = 'Sunnyvale' AND price = 'cheap' ORDER BY num_reviews DESC LIMIT 1",
         "I searched for restaurants in Sunnyvale whose cuisines include korean and priced cheap, showing name and phone number, "
         "sorted by number of reviews (highest first), keeping the top 1."),
        ("SELECT COUNT(*) FROM restaurants WHERE location IN ('Bernal Heights', 'Mission District') AND rating >= 4",
         "I counted restaurants in Bernal Heights or Mission District rated at least 4.0."),
        ("SELECT name FROM restaurants WHERE opening_hours > '10pm' LIMIT 3",
         "I searched for restaurants whose opening hours come after '10pm' in alphabetical order, showing name, keeping the first 3."),
        ("SELECT name FROM restaurants WHERE NOT 'italian' = ANY(cuisines)",
         "I searched for restaurants whose cuisines do not include italian, showing name."),
        ("SELECT * FROM restaurants WHERE num_reviews > 100 OR rating = 5",
         "I searched for restaurants with more than 100 reviews or rated exactly 5."),
        ("SELECT * FROM restaurants WHERE location = 'SF' AND (rating = 5 OR num_reviews > 100)",
         "I searched for restaurants in SF (rated exactly 5 or with more than 100 reviews)."),
        ("SELECT AVG(rating) FROM restaurants WHERE location = 'SF' GROUP BY price",
         "I searched for restaurants in SF, showing the average rating, grouped by price."),
    ],
)
def test_sentences(sql, sentence):
    assert readback(sql) == sentence


def test_is_deterministic_and_total_on_odd_queries():
    for sql in ["SELECT 1", "SELECT * FROM a JOIN b ON a.x = b.x WHERE a.y LIKE '%z%'", "SELECT x FROM (SELECT * FROM t) s",
                "SELECT * FROM t WHERE x BETWEEN 1 AND 2 AND y IS NULL", "SELECT * FROM t UNION SELECT * FROM u"]:
        assert readback(sql) == readback(sql)
        assert readback(sql).endswith(".")


def test_not_exists_reads_its_subquery_with_each_alias_named_by_its_table():
    """The course assistant's conflict check (note 003), read back without any SQL left in it."""
    sql = ("SELECT o.course_id FROM offerings AS o WHERE o.term = 'autumn' AND NOT EXISTS (SELECT 1 FROM meetings AS m "
           "JOIN busy AS b ON m.day = b.day WHERE m.offering_id = o.id AND m.start_min < b.end_min AND b.start_min < m.end_min)")
    assert readback(sql) == (
        "I searched for offerings whose term is 'autumn' and where there is no row of meetings joined with busy (with the "
        "meetings' offering id equal to the offerings' id, with the meetings' start min below the busy's end min and with "
        "the busy's start min below the meetings' end min), showing course id.")
    assert readback("SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.x = t.x)") == \
        "I searched for t where there is a row of u (with the u's x equal to the t's x)."


def test_the_column_types_decide_how_an_order_reads():
    sql = "SELECT day, start_min FROM meetings ORDER BY day, start_min DESC"
    # by name alone, start_min looks like text; its type says it is a number
    assert readback(sql).endswith("sorted by day (alphabetical order), then start min (reverse alphabetical order).")
    typed = readback(sql, types={"day": "VARCHAR", "start_min": "INTEGER"})
    assert typed.endswith("sorted by day (alphabetical order), then start min (highest first).")
    # a column named like a number but stored as text sorts as text, and the sentence says so
    assert readback("SELECT * FROM t ORDER BY rating", types={"rating": "VARCHAR"}).endswith("sorted by rating (alphabetical order).")


def test_an_unknown_condition_says_what_is_open():
    from engines.sql.readback import unknown_phrase

    assert unknown_phrase("answer(reviews, 'does it have a great view?') = 'Yes'") == "whether it has a great view"
    assert unknown_phrase("answer(r.reviews, 'is it practical?') = 'Yes'") == "whether it is practical"
    # NOT over an unknown is unknown: the open question is the same one
    assert unknown_phrase("NOT (answer(reviews, 'is parking easy?') = 'Yes')") == "what the reviews say to 'is parking easy?'"
    assert unknown_phrase("answer(reviews, 'what cuisine?') = 'thai'") == "what the reviews say to 'what cuisine?'"
    assert unknown_phrase("location = 'x'") == "whether location = 'x' holds"
