"""The check of a query against its question (engines/sql/coverage.py): every content word, number and date the
question says maps onto the SQL, or is named as not understood — whatever wrote the SQL.  Tables and questions
here are this file's own (a harbour's boats, a package list), none of the benchmark's."""

from __future__ import annotations

import pytest
import sqlglot

from engines.data.source import open_source
from engines.settings import Settings
from engines.sql.coverage import DataWords, carried_over_dropped, not_understood, schema_names
from tests.engines.data.conftest import write_csv


def boat_rows() -> list[dict]:
    harbours = ("Kiel", "Bergen", "Porto")
    return [
        {
            "name": f"Boat {i}",
            "hull_length_m": 6 + i % 9,
            "weight_kg": 800 + 150 * i,
            "masts": 1 + i % 3,
            "harbour": harbours[i % 3],
            "launched": f"{2001 + i % 12}-{1 + i % 12:02d}-15",
            "licence": None if i % 7 == 0 else f"L-{i:03d}",
        }
        for i in range(30)
    ]


@pytest.fixture(scope="module")
def boats(tmp_path_factory) -> DataWords:
    path = write_csv(tmp_path_factory.mktemp("boats") / "boats.csv", boat_rows())
    source = open_source(str(path), Settings())
    try:
        return schema_names(source.schema.render())
    finally:
        source.close()


def check(question: str, sql: str, data: DataWords) -> tuple[str, ...]:
    return not_understood(question, [sqlglot.parse_one(sql, read="postgres")], data=data)


def test_the_schema_gives_column_words_and_shown_values(boats):
    assert {"hull", "length", "weight", "masts", "harbour", "launched", "licence"} <= boats.columns
    assert boats.values["kiel"] == {"harbour"} and boats.values["porto"] == {"harbour"}
    assert ("hull", "length") in boats.names and ("weight",) in boats.names  # units (m, kg) left out


# (question, a query that leaves a condition out, what is named) and the query that uses all of it
DROPPED = [
    ("how many boats have 3 masts?", "SELECT COUNT(*) FROM boats", "3 masts", "WHERE masts = 3"),
    ("how many boats from Kiel?", "SELECT COUNT(*) FROM boats", "Kiel", "WHERE harbour = 'Kiel'"),
    (
        "how many boats longer than 10 m?",
        "SELECT COUNT(*) FROM boats",
        "longer than 10 m",
        "WHERE hull_length_m > 10",
    ),
    (
        "how many boats are heavier than 2 kg?",  # a unit with a factor of 1,000 is still the number said
        "SELECT COUNT(*) FROM boats",
        "heavier than 2 kg",
        "WHERE weight_kg > 2",
    ),
    ("how many boats have no licence?", "SELECT COUNT(*) FROM boats", "no licence", "WHERE licence IS NULL"),
    (
        "how many boats were launched in 2005?",
        "SELECT COUNT(*) FROM boats",
        "launched in 2005",
        "WHERE EXTRACT(YEAR FROM CAST(launched AS DATE)) = 2005",
    ),
    (
        "how many boats were launched in March 2007?",
        "SELECT COUNT(*) FROM boats WHERE launched >= '2007-01-01' AND launched < '2008-01-01'",
        "March",
        "WHERE launched >= '2007-03-01' AND launched < '2007-04-01'",
    ),
]


@pytest.mark.parametrize("question, dropped, named, where", DROPPED)
def test_a_condition_the_query_leaves_out_is_named(boats, question, dropped, named, where):
    assert named in " / ".join(check(question, dropped, boats))
    assert check(question, f"SELECT COUNT(*) FROM boats {where}", boats) == ()


def test_a_number_must_meet_the_column_said_next_to_it(boats):
    """ "3 masts" compared with another column is not the 3 the question said."""
    assert check("how many boats have 3 masts?", "SELECT COUNT(*) FROM boats WHERE masts = 3", boats) == ()
    assert check("how many boats have 3 masts?", "SELECT COUNT(*) FROM boats WHERE hull_length_m = 3", boats) == (
        "3 masts",
    )


def test_the_direction_of_a_comparison_counts(boats):
    assert check("boats under 9 m long", "SELECT * FROM boats WHERE hull_length_m < 9", boats) == ()
    assert "under" in check("boats under 9 m long", "SELECT * FROM boats WHERE hull_length_m > 9", boats)


def test_aggregates_grouping_order_and_top_n(boats):
    def ok(question: str, sql: str) -> None:
        assert check(question, sql, boats) == (), (question, sql)

    def flagged(question: str, sql: str, phrase: str) -> None:
        assert phrase in check(question, sql, boats), (question, sql)

    ok("what is the average weight of boats in Bergen?", "SELECT AVG(weight_kg) FROM boats WHERE harbour = 'Bergen'")
    flagged("what is the average weight of boats in Bergen?", "SELECT AVG(weight_kg) FROM boats", "Bergen")
    flagged(
        "what is the average weight of boats in Bergen?",
        "SELECT weight_kg FROM boats WHERE harbour = 'Bergen'",
        "average",
    )
    ok("how many boats per harbour?", "SELECT harbour, COUNT(*) FROM boats GROUP BY harbour")
    flagged("how many boats per harbour?", "SELECT COUNT(*) FROM boats", "per harbour")
    ok(
        "which harbour has the most boats?",
        "SELECT harbour, COUNT(*) FROM boats GROUP BY harbour ORDER BY COUNT(*) DESC LIMIT 1",
    )
    flagged("which harbour has the most boats?", "SELECT harbour FROM boats LIMIT 1", "most")
    ok("show the 4 heaviest boats", "SELECT * FROM boats ORDER BY weight_kg DESC LIMIT 4")
    flagged("show the 4 heaviest boats", "SELECT * FROM boats LIMIT 10", "4 heaviest")
    ok("total weight of the boats with 2 masts", "SELECT SUM(weight_kg) FROM boats WHERE masts = 2")


def test_words_no_column_can_express_are_named(boats):
    """What no column holds is named whatever the query: a colour, an owner's name."""
    assert check("how many red boats are there?", "SELECT COUNT(*) FROM boats", boats) == ("red",)
    assert check("how many boats does Mr. Larsen own?", "SELECT COUNT(*) FROM boats", boats) == ("Mr. Larsen own",)


def test_a_value_word_is_not_the_counted_noun(boats):
    """ "how many Kiels" is no question about rows: a value of the data said as the counted noun is not taken
    for the rows (unless the query sets its column to another value)."""
    assert check("how many Kiels are there?", "SELECT COUNT(*) FROM boats", boats) == ("Kiels",)


def test_function_words_cost_nothing_and_a_follow_up_is_read_alone(boats):
    assert check("Show me all the boats, please", "SELECT * FROM boats", boats) == ()
    assert check("what about Porto?", "SELECT * FROM boats WHERE masts = 2 AND harbour = 'Porto'", boats) == ()


def test_quoted_values_dates_and_answer_questions(boats):
    assert check("boats named 'Boat 7'", "SELECT * FROM boats WHERE name = 'Boat 7'", boats) == ()
    assert check("boats named 'Boat 7'", "SELECT * FROM boats", boats) == ("'Boat 7'",)
    assert check("boats launched on 2004-04-15", "SELECT * FROM boats WHERE launched = '2004-04-15'", boats) == ()
    assert check("boats launched on 2004-04-15", "SELECT * FROM boats", boats) == ("launched on 2004-04-15",)
    sql = "SELECT * FROM boats WHERE answer(name, 'does the text mention sails?') = 'Yes'"
    assert check("boats whose name mentions sails", sql, boats) == ()


# --- the issue's three examples, on tables that look like its own -----------------------------------------


@pytest.fixture(scope="module")
def packages(tmp_path_factory) -> DataWords:
    rows = [{"package": f"pkg{i}", "section": ("libs", "admin", "devel")[i % 3], "size_kb": 10 * i} for i in range(30)]
    source = open_source(str(write_csv(tmp_path_factory.mktemp("pk") / "packages.csv", rows)), Settings())
    try:
        return schema_names(source.schema.render())
    finally:
        source.close()


def test_the_issues_examples_are_named(packages):
    assert check("how many packages in the libs section?", "SELECT COUNT(*) FROM packages", packages) == (
        "libs section",
    )
    q = "how many packages in the libs section?"
    assert check(q, "SELECT COUNT(*) FROM packages WHERE section = 'libs'", packages) == ()
    assert check(
        "how many flights from JFK to LAX?", "SELECT COUNT(*) FROM flights WHERE origin = 'JFK'", DataWords()
    ) == ("LAX",)
    assert check("how many flights from JFK to LAX?", "SELECT COUNT(*) FROM flights", DataWords()) == ("JFK to LAX",)


def test_the_rows_may_be_named_by_one_word_the_data_does_not_hold(boats):
    """The rows named by "how many vessels are in Kiel?": the one word left, where the rows are named, in a question whose
    other words map onto the query, names the rows.  Two such words, or nothing else of the data, stay named."""
    kiel = "SELECT COUNT(*) FROM boats WHERE harbour = 'Kiel'"
    assert check("how many vessels are in Kiel?", kiel, boats) == ()
    assert check("how many sailors sailed from Kiel?", kiel, boats) == ("sailors sailed",)
    assert check("how many anchors are there?", "SELECT COUNT(*) FROM boats", boats) == ("anchors",)


def test_the_check_is_bounded_whatever_the_model_writes(boats):
    """A model's query with 20,000 literals and a question of 3,000 characters: the check reads the first 1,000
    literals and 2,000 characters, ends quickly, and what it did not read is not credited."""
    import time

    values = ", ".join(f"'v{i}'" for i in range(20_000))
    tree = sqlglot.parse_one(f"SELECT COUNT(*) FROM boats WHERE harbour IN ({values}, 'Kiel')", read="postgres")
    question = "how many boats from Kiel? " + "and v1 " * 400
    started = time.process_time()
    phrases = not_understood(question, [tree], data=boats)
    assert time.process_time() - started < 10
    assert phrases[0] == "Kiel"  # past the literals read: named, not credited
    assert phrases[-1].startswith("and v1") and phrases[-1].endswith("…")  # past the characters read: named too


def test_a_year_written_as_text_is_the_number_said(boats):
    sql = "SELECT COUNT(*) FROM boats WHERE strftime(CAST(launched AS DATE), '%Y') = '2005'"
    assert check("how many boats were launched in 2005?", sql, boats) == ()


def test_a_model_s_many_literal_words_are_looked_up_not_scanned(boats):
    """1,000 literals of 60 words each and a question of 300 words the query does not hold: every word of the
    question is looked up among the literals' words (by stem, beginning and root), not compared with each of
    them (which took 15 s of CPU); the words are still named."""
    import random
    import time

    rng = random.Random(1)

    def word() -> str:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 9)))

    values = ", ".join("'" + " ".join(word() for _ in range(60)) + "'" for _ in range(1000))
    tree = sqlglot.parse_one(f"SELECT COUNT(*) FROM boats WHERE name IN ({values})", read="postgres")
    question = "how many boats are from Kiel and " + " ".join(word() for _ in range(300))
    started = time.process_time()
    phrases = not_understood(question, [tree], data=boats)
    assert time.process_time() - started < 5
    assert phrases[0].startswith("Kiel")  # no literal says it: named


# --- what a schema tells any reader: the built-in worlds' schemas ---------------------------------------------


@pytest.fixture(scope="module")
def restaurants() -> DataWords:
    from engines.suql.agent import suql_schema
    from worlds import restaurants as W

    return schema_names(suql_schema(W.build().world.schema()))  # SUQL's lines after the table describe no column


def test_a_schema_s_comments_and_enum_types_are_read(restaurants):
    assert restaurants.described["rating"] >= {"stars", "good", "great"}
    assert restaurants.described["cuisines"] == {"food"}
    assert restaurants.tables == {"restaurants": frozenset({"restaurant", "place", "eat"})}
    assert restaurants.values["luxury"] == {"price"} and restaurants.values["cheap"] == {"price"}
    assert "answer" not in restaurants.described.get("reviews", frozenset())
    courses = schema_names(__import__("worlds.courses", fromlist=["build"]).build().schema())
    assert {"schedule", "fits"} <= courses.tables["busy"] and courses.values["autumn"] == {"term"}


def test_stars_places_and_top_rated_are_what_the_schema_says(restaurants):
    four = "SELECT * FROM restaurants WHERE location = 'Sunnyvale' AND rating >= 4"
    assert check("Show me places in Sunnyvale with at least 4 stars", four, restaurants) == ()
    by_reviews = "SELECT * FROM restaurants WHERE location = 'Sunnyvale' AND num_reviews >= 4"
    assert check("Show me places in Sunnyvale with at least 4 stars", by_reviews, restaurants) == ("4 stars",)
    top = "SELECT * FROM restaurants WHERE location = 'Palo Alto' ORDER BY rating DESC LIMIT 1"
    assert check("Which one is the top-rated?", top, restaurants) == ()
    assert check("Which one is the top-rated?", "SELECT * FROM restaurants LIMIT 1", restaurants) == ("top-rated",)
    assert check("Show me good thai food", "SELECT * FROM restaurants WHERE 'thai' = ANY(cuisines)", restaurants) == (
        "good",
    )


def test_a_value_said_once_covers_one_mention(restaurants):
    """ "Mountain View" does not stand for "a view", nor "Menlo Park" for "parking"."""
    mv = "SELECT * FROM restaurants WHERE location = 'Mountain View'"
    assert check("restaurants in Mountain View with a view", mv, restaurants) == ("view",)
    view = mv + " AND answer(reviews, 'does it have a view?') = 'Yes'"
    assert check("restaurants in Mountain View with a view", view, restaurants) == ()
    menlo = "SELECT * FROM restaurants WHERE location = 'Menlo Park'"
    assert check("a place with parking in Menlo Park", menlo, restaurants) == ("parking",)


def test_a_negated_value_and_a_place_said_near_the_user(restaurants):
    cheap = "SELECT * FROM restaurants WHERE price = 'cheap' AND location = 'Palo Alto'"
    assert check("inexpensive places in Palo Alto", cheap, restaurants) == ()
    pricey = "SELECT * FROM restaurants WHERE price = 'expensive' AND location = 'Palo Alto'"
    assert check("inexpensive places in Palo Alto", pricey, restaurants) == ("inexpensive",)
    thai = "SELECT * FROM restaurants WHERE 'thai' = ANY(cuisines)"
    assert check("thai food near me", thai, restaurants) == ("near",)
    assert check("thai food around Palo Alto", thai + " AND location = 'Palo Alto'", restaurants) == ()


def test_a_text_condition_in_the_parser_s_words_stands_for_one_word_left(restaurants):
    """ "good for kids" asked as 'is it family-friendly?': one word left, no value nor cue: the condition's. Two
    words left, or a word of the schema, stay named."""
    kids = (
        "SELECT * FROM restaurants WHERE location = 'Sunnyvale' AND answer(reviews, 'is it family-friendly?') = 'Yes'"
    )
    assert check("places in Sunnyvale for kids", kids, restaurants) == ()
    assert check("places in Sunnyvale for kids with a sauna", kids, restaurants) == ("kids with a sauna",)
    assert check("cheap places in Sunnyvale", kids, restaurants) == ("cheap",)


def test_what_a_follow_up_carries_over():
    def dropped(question: str, before: str, now: str) -> list[str]:
        parse = lambda sql: sqlglot.parse_one(sql, read="postgres")  # noqa: E731
        return [p.sql() for p in carried_over_dropped(question, parse(before), parse(now))]

    menlo = "SELECT * FROM r WHERE location = 'Menlo Park'"
    assert dropped("What about italian ones?", menlo, "SELECT * FROM r WHERE 'italian' = ANY(cuisines)") == [
        "location = 'Menlo Park'"
    ]
    both = "SELECT * FROM r WHERE 'italian' = ANY(cuisines) AND location = 'Menlo Park'"
    assert dropped("What about italian ones?", menlo, both) == []
    assert dropped("How about in Palo Alto?", both, both.replace("Menlo Park", "Palo Alto")) == []  # changed
    # the parser kept a condition the turn does not say (a follow-up), and lost another
    cheap = "SELECT * FROM r WHERE 'italian' = ANY(cuisines) AND price = 'cheap'"
    assert dropped(
        "with at least 4 stars", cheap, "SELECT * FROM r WHERE 'italian' = ANY(cuisines) AND rating >= 4"
    ) == ["price = 'cheap'"]
    # a new question that says everything again carries nothing over
    again = "SELECT * FROM r WHERE 'italian' = ANY(cuisines) AND location = 'Palo Alto'"
    assert dropped("Show me italian places in Palo Alto", cheap, again) == []
    assert dropped("Show me thai places in Palo Alto", both, "SELECT * FROM r WHERE location = 'Palo Alto'") == []
