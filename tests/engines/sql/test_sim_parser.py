"""The simulated parser: a lexicon and a small grammar over the utterance, the history and the schema."""

from __future__ import annotations

import re

import pytest
import sqlglot
from sqlglot import exp

from engines.llm.protocol import Turn
from engines.sql.sim import _question_topic, understands
from engines.sql.sim_parser import frame_from_sql, parse, route, to_sql
from engines.suql.agent import suql_schema
from worlds import restaurants as W

SCHEMA = W.build().world.schema()


def p(utterance: str, history=(), seed: int = 224, drop: float = 0.0) -> str:
    return parse(utterance, list(history), SCHEMA, seed=seed, drop_rate=drop)


@pytest.mark.parametrize(
    "utterance, sql",
    [
        ("Show me restaurants in Menlo Park.", "SELECT * FROM restaurants WHERE location = 'Menlo Park'"),
        (
            "Show me a café in Palo Alto",  # what the user said: no table tells the parser a café is 'coffee'
            "SELECT * FROM restaurants WHERE 'café' = ANY(cuisines) AND location = 'Palo Alto'",
        ),
        (
            "Find inexpensive sushi in SF",
            "SELECT * FROM restaurants WHERE 'sushi' = ANY(cuisines) AND location = 'SF' AND price = 'cheap'",
        ),
        (
            "What's some great Mexican food around Bernal Heights?",
            "SELECT * FROM restaurants WHERE 'mexican' = ANY(cuisines) AND location = 'Bernal Heights' AND rating >= 4.0",
        ),
        (
            "What is the phone number of the most popular cheap Korean restaurant in Sunnyvale?",
            "SELECT name, phone_number FROM restaurants WHERE 'korean' = ANY(cuisines) AND location = 'Sunnyvale' AND price = 'cheap' ORDER BY num_reviews DESC NULLS LAST LIMIT 1",
        ),
        (
            "How many italian places are in Mountain View?",
            "SELECT COUNT(*) FROM restaurants WHERE 'italian' = ANY(cuisines) AND location = 'Mountain View'",
        ),
        (
            "top 3 pizza places in Palo Alto",
            "SELECT * FROM restaurants WHERE 'pizza' = ANY(cuisines) AND location = 'Palo Alto' ORDER BY rating DESC NULLS LAST, num_reviews DESC NULLS LAST LIMIT 3",
        ),
        (
            "italian or pizza in Sunnyvale with at least 4.5 stars",
            "SELECT * FROM restaurants WHERE ('italian' = ANY(cuisines) OR 'pizza' = ANY(cuisines)) AND location = 'Sunnyvale' AND rating >= 4.5",
        ),
        (
            "What is the address of Old Bowl House?",
            "SELECT name, address FROM restaurants WHERE name = 'Old Bowl House'",
        ),
    ],
)
def test_single_turn(utterance, sql):
    assert p(utterance) == sql


def test_good_for_is_not_a_rating():
    assert "rating" not in p("chinese restaurants in Palo Alto that are good for large groups")


def test_the_eight_turn_dialogue_of_section_3_4():
    h: list[Turn] = []

    def turn(u: str, ran: str | None = None) -> str:
        sql = p(u, h)
        h.append(Turn(u, ran or sql))
        return sql

    assert turn("Show me restaurants in Menlo Park.") == "SELECT * FROM restaurants WHERE location = 'Menlo Park'"
    assert (
        turn("What about italian ones?")
        == "SELECT * FROM restaurants WHERE 'italian' = ANY(cuisines) AND location = 'Menlo Park'"
    )
    assert (
        turn("How about in Palo Alto?")
        == "SELECT * FROM restaurants WHERE 'italian' = ANY(cuisines) AND location = 'Palo Alto'"
    )
    assert turn("Which one is the top-rated?").endswith(
        "location = 'Palo Alto' ORDER BY rating DESC NULLS LAST, num_reviews DESC NULLS LAST LIMIT 1"
    )
    # the history holds the SQL that ran, after classify()
    cafe = turn(
        "Show me a café there instead.",
        ran="SELECT * FROM restaurants WHERE 'cafe' = ANY(cuisines) AND location = 'Palo Alto'",
    )
    assert (
        cafe == "SELECT * FROM restaurants WHERE 'café' = ANY(cuisines) AND location = 'Palo Alto'"
    )  # a list again: no ORDER BY
    assert route("What is dim sum?", h, SCHEMA)[0] is False
    assert p("Show me luxury vegan places in Sunnyvale with at least 4.5 stars.", h) == (
        "SELECT * FROM restaurants WHERE 'vegan' = ANY(cuisines) AND location = 'Sunnyvale' AND price = 'luxury' AND rating >= 4.5"
    )
    assert route("Thanks!", h, SCHEMA)[0] is False


def test_same_question_elsewhere_keeps_order_and_columns():
    first = p("What is the phone number of the most popular cheap Korean restaurant in Sunnyvale?")
    again = p("What about in Palo Alto?", [Turn("q", first)])
    assert again == first.replace("Sunnyvale", "Palo Alto")


@pytest.mark.parametrize(
    "utterance",
    [
        "Show me restaurants in Palo Alto",
        "any good sushi?",
        "How many cheap places are there in SF?",
        "Which one is the top-rated?",
    ],
)
def test_route_database(utterance):
    assert route(utterance, [Turn("x", "SELECT * FROM restaurants")], SCHEMA)[0] is True


@pytest.mark.parametrize("utterance", ["What is dim sum?", "Thanks!", "hello", "", "what is ramen?"])
def test_route_no_database(utterance):
    assert route(utterance, [], SCHEMA)[0] is False


def test_seeded_dropped_condition_rate():
    questions = [
        f"cheap {c} places in {loc}"
        for c in ("italian", "thai", "korean", "sushi", "pizza", "vegan", "indian", "french")
        for loc in ("Palo Alto", "Sunnyvale", "Menlo Park", "Mountain View", "SF", "Bernal Heights")
    ]
    for seed in range(5):
        questions += [f"good {q} #{seed}" for q in questions[:48]]
    full = [p(q, drop=0.0) for q in questions]
    noisy = [p(q, drop=0.04) for q in questions]
    dropped = sum(a != b for a, b in zip(full, noisy))
    assert 0 < dropped / len(questions) < 0.10
    assert noisy == [p(q, drop=0.04) for q in questions]  # repeatable


def test_sql_round_trips_through_a_frame():
    sql = "SELECT name, phone_number FROM restaurants WHERE ('coffee & tea' = ANY(cuisines) OR 'cafe' = ANY(cuisines)) AND location IN ('Bernal Heights', 'Mission District') AND price = 'cheap' AND rating >= 4.5 ORDER BY rating DESC NULLS LAST, num_reviews DESC NULLS LAST LIMIT 2"
    assert to_sql(frame_from_sql(sql)) == sql
    assert frame_from_sql("not sql at all").has_any() is False


def test_best_first_puts_unknowns_last():
    """PostgreSQL sorts NULLs first in DESC: "the best" must say NULLS LAST to mean the best known."""
    sql = parse("Which is the top-rated italian place in Palo Alto?", [], W.build().world.schema(), seed=1, drop_rate=0)
    assert "ORDER BY rating DESC NULLS LAST, num_reviews DESC NULLS LAST" in sql
    tree = sqlglot.parse_one(sql, read="postgres")
    assert all(o.args.get("nulls_first") is False for o in tree.args["order"].expressions)


def test_lecture_demos_five_star_and_american_traditional():
    """Lecture 7 §4.2, demo 5: "5-star" is a rating condition (it was ignored, so the no-results reply never came);
    lecture 6 §5.3, demo 3: the enum value "american (traditional)" is written as said."""
    sql = p("Find me a 5-star restaurant in Sunnyvale for kids.")
    assert "rating >= 5.0" in sql and "location = 'Sunnyvale'" in sql
    assert "rating >= 4.0" in p("Any 4 star places in Palo Alto?")
    assert p("Show me american (traditional) restaurants in Mountain View that are good for a date.").startswith(
        "SELECT * FROM restaurants WHERE 'american (traditional)' = ANY(cuisines) AND location = 'Mountain View'"
    )


def test_lecture_7_demo_5_says_no_results():
    from engines.compose import open_suql
    from engines.settings import Settings

    s = open_suql(Settings(cache_enabled=False))
    try:
        turn = s.agent().ask("Show me 5-star restaurants in Sunnyvale that are good for kids.")
        assert "rating >= 5.0" in turn.sql and "answer(reviews, 'is it good for kids?') = 'Yes'" in turn.sql
        assert turn.rows == () and "found no results" in turn.reply
        assert turn.reply.startswith("I searched for restaurants in Sunnyvale rated at least 5.0")
    finally:
        s.close()


def test_a_food_the_lexicon_lacks_is_read_off_the_grammar():
    """No table lists "bbq" or "korean bbq" (they are evaluator phrasings): the request's grammar names them."""
    assert p("Cheap bbq in the Mission District") == (
        "SELECT * FROM restaurants WHERE 'bbq' = ANY(cuisines) AND location = 'Mission District' AND price = 'cheap'"
    )
    assert "'korean bbq' = ANY(cuisines)" in p("I want moderately priced korean bbq in Palo Alto.")
    assert "'cajun soul food' = ANY(cuisines)" in p("Show me cajun soul food places in Menlo Park.")
    assert "'mexican' = ANY(cuisines)" in p("What's some great Mexican food around Bernal Heights?")
    # words that qualify the place or ask a question name no food
    assert p("Show me all the places in Palo Alto with a great view") == (
        "SELECT * FROM restaurants WHERE location = 'Palo Alto'"
    )
    assert p("How about in Palo Alto?") == "SELECT * FROM restaurants WHERE location = 'Palo Alto'"


# --- SUQL: a wish only the reviews can tell is asked in the user's words ------------------------------------------

SUQL_SCHEMA = suql_schema(SCHEMA)


def asked(utterance: str) -> list[tuple[str, str]]:
    """The answer() conditions the SUQL parser writes for one utterance: (column, question)."""
    tree = sqlglot.parse_one(parse(utterance, [], SUQL_SCHEMA, seed=224, drop_rate=0.0), read="postgres")
    return [
        (f.expressions[0].name, f.expressions[1].name)
        for f in tree.find_all(exp.Anonymous)
        if str(f.this).lower() == "answer"
    ]


@pytest.mark.parametrize(
    "utterance, questions",
    [
        # a phrase with no verb before it, after the place: an adjective's phrase
        ("Can you find a place in Mountain View romantic enough for a date?", ["is it romantic enough for a date?"]),
        ("How many restaurants in Sunnyvale are good for large groups?", ["is it good for large groups?"]),
        ("Do the reviews of Honey Oven say it is good for large groups?", ["is it good for large groups?"]),
        ("Can you find a place in Palo Alto with easy parking?", ["does it have easy parking?"]),
        # the verb decides the form; "really spicy food" is the wish, not a dish looked up in popular_dishes
        ("How many restaurants in Sunnyvale serve really spicy food?", ["does it serve really spicy food?"]),
        # an adjective before the noun it qualifies is that adjective; a place noun is "it", a food noun is named
        ("Find me a spicy vegan place in Sunnyvale with a view", ["does it have a view?", "is it spicy?"]),
        ("a quiet place with parking in Menlo Park", ["does it have parking?", "is it quiet?"]),
        ("really spicy food in Palo Alto", ["is the food really spicy?"]),
        # "and" ends a phrase: the verb of the first part carries on unless an adjective's phrase follows
        ("places with a patio and good for kids", ["is it good for kids?", "does it have a patio?"]),
        ("somewhere I can take the little ones", ["can i take the little ones?"]),
        # a relative clause: "that" + its verb; "where" + a clause of its own
        ("places that welcome kids", ["does it welcome kids?"]),
        ("somewhere where kids can play in Palo Alto", ["is it a place where kids can play?"]),
    ],
)
def test_a_wish_is_asked_in_the_users_own_words(utterance, questions):
    assert sorted(asked(utterance)) == sorted(("reviews", q) for q in questions)
    # each is one the simulated reader takes up, not Unknown (quietness is outside its lexicon, as it always was)
    assert all(understands(q) for q in questions if q != "is it quiet?")


def test_every_word_of_the_lab_questions_wishes_is_asked_on_the_same_topic():
    """The Lab's question sets (l6-hybrid's classes, l7-yelp's requests): every word of the wish is in the one
    question the parser asks the reviews, and the reader reads that question on a topic of its lexicon."""
    from engines.lab.hybrid import FEATURE_WORDS
    from engines.lab.yelp import _FEATURES as YELP_FEATURES

    cases = [(f"Can you find a thai place in Mountain View {wish}?", wish) for wish in YELP_FEATURES.values()]
    for w in FEATURE_WORDS.values():
        cases += [
            (f"List all restaurants in Palo Alto {w['rel']}.", w["rel"]),
            (f"What is the top-rated restaurant in Sunnyvale {w['top']}?", w["top"]),
            (f"How many restaurants in Menlo Park {w['pred']}?", w["pred"]),
            (f"Do the reviews of Honey Oven say it {w['one']}?", w["one"]),
        ]
    verbs = {"that", "is", "are", "has", "have", "serve", "serves", "with"}
    for text, wish in cases:
        (question,) = [q for column, q in asked(text) if column == "reviews"]
        for word in re.findall(r"[a-z-]+", wish):
            assert word in verbs or re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", question), (text, question)
        topic, negative = _question_topic(question)
        assert topic is not None and not negative, (text, question)
