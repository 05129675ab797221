"""Never a confident wrong answer on the built-in worlds either (issue 26, item 1): the not-understood check is
on for the restaurants (``ask``, ``ask --suql``, the app's agent) whatever wrote the query — the simulated parser,
or a model on an OpenAI-compatible server on 127.0.0.1 — and in a dialogue it checks what the turn says and what
it carries over.  It stays quiet on right answers: the lecture's dialogue has no mark, and over the question sets
the repo has for the restaurant world (the Lab's lecture-6 sets, the dialogue, this suite's questions) false
alarms stay under 10% of the right answers.

``python -m tests.engines.sql.test_checked_everywhere`` prints the counts over the full-size question sets.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from engines.compose import open_restaurants
from engines.settings import Settings
from engines.sql.dialogue import SAMPLE_DIALOGUE
from tests.engines.llm.openai_stub import StubServer
from tests.engines.llm.openai_stub import ok as openai_ok
from tui.cli import main
from worlds import restaurants as W

BUILT = W.build()
WORLD = BUILT.world


@pytest.fixture(scope="module", params=["sql", "suql"])
def session(request):
    s = open_restaurants(Settings(cache_enabled=False), world=WORLD, suql=request.param == "suql")
    yield s
    s.close()


def run(capsys, *argv: str) -> tuple[int, dict | list]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


# --- the simulated parser -----------------------------------------------------------------------------------


def test_what_the_sim_parser_cannot_read_is_named_on_the_restaurants(capsys):
    """The Text-to-SQL parser has no column for outdoor seating: it drops the wish, and the reply says so instead
    of presenting the Palo Alto italians as the answer."""
    code, out = run(capsys, "ask", "Show me italian restaurants in Palo Alto with outdoor seating", "--json")
    assert code == 0 and isinstance(out, dict)
    italian = sum(1 for r in WORLD.rows if r.location == "Palo Alto" and "italian" in r.cuisines)
    assert out["sql"] == "SELECT * FROM restaurants WHERE 'italian' = ANY(cuisines) AND location = 'Palo Alto'"
    assert out["not_understood"] == ["outdoor seating"]
    assert out["reply"].startswith(
        f"I could not use 'outdoor seating'. Without it the query finds {italian} restaurants; "
        "that is not the answer to your question."
    )
    code, out = run(capsys, "ask", "Show me italian restaurants in Palo Alto", "--json")
    assert out["not_understood"] == [] and not out["reply"].startswith("I could not use")


def test_ask_suql_on_the_built_in_world_names_what_it_could_not_use(capsys):
    """SUQL's parser reads the view and the spice from the reviews; nothing reads a sauna."""
    code, out = run(
        capsys, "ask", "--suql", "Find me a spicy vegan place in Sunnyvale with a view and a sauna", "--json"
    )
    assert code == 0 and isinstance(out, dict)
    assert "answer(reviews, 'does it have a view?')" in out["sql"] and "answer(reviews, 'is it spicy?')" in out["sql"]
    assert out["not_understood"] == ["sauna"]
    assert out["reply"].startswith("I could not use 'sauna'. Without it the query finds")
    code, out = run(capsys, "ask", "--suql", "Find me a spicy vegan place in Sunnyvale with a view", "--json")
    assert out["not_understood"] == []


@pytest.mark.parametrize(
    "question, asked",
    [
        ("How many restaurants in Sunnyvale are good for large groups?", "is it good for large groups?"),
        ("Can you find a place in Mountain View romantic enough for a date?", "is it romantic enough for a date?"),
    ],
)
def test_ask_suql_asks_the_reviews_in_the_users_words_and_no_word_is_flagged(capsys, question, asked):
    """The Lab's phrasings that the SUQL parser used to shorten ('is it good for groups?', 'is it good for a date?'):
    the question it asks keeps "large" and "romantic", so the check has nothing to name — the query uses them."""
    code, out = run(capsys, "ask", "--suql", question, "--json")
    assert code == 0 and isinstance(out, dict)
    assert f"answer(reviews, '{asked}') = 'Yes'" in out["sql"]
    assert out["not_understood"] == []


def test_the_course_assistant_is_checked_too(capsys):
    code, out = run(
        capsys, "ask", "--world", "courses", "Which autumn courses fit my schedule and have 3 credits?", "--json"
    )
    assert code == 0 and isinstance(out, dict)
    assert "NOT EXISTS" in out["sql"] and "credits" not in out["sql"]
    assert out["not_understood"] == ["3 credits"]


# --- the lecture's dialogue, and what a follow-up carries over ---------------------------------------------------


def test_the_eight_turn_dialogue_has_no_mark_and_its_follow_up_is_checked(session):
    """The lecture's eight turns (follow-ups, "top-rated", a café "there instead", "at least 4.5 stars") are all
    understood; a ninth turn's new wish the parser drops is named, and nothing of the earlier turns is."""
    agent = session.agent
    agent.reset()
    marks = [agent.ask(u).not_understood for u in SAMPLE_DIALOGUE]
    assert marks == [()] * len(SAMPLE_DIALOGUE)
    turn = agent.ask("What about ones with a sauna?")
    assert "location = 'Sunnyvale'" in turn.sql and "price = 'luxury'" in turn.sql  # carried over
    assert turn.not_understood == ("sauna",)


@pytest.fixture
def model(tmp_path, monkeypatch) -> Iterator[StubServer]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = StubServer()
    yield server
    server.close()


def _scripted(server: StubServer, queries: dict[str, str]) -> None:
    """The model routes every question to the database and writes, for each, the query ``queries`` gives."""

    def respond(request: dict):
        said = json.dumps(request["messages"])
        if "Decide whether" in said:
            return openai_ok(json.dumps({"needs_database": True, "reason": "a lookup"}))
        if "Translate" in said:
            latest = re.search(r"Latest message from the user: (\".*\")", request["messages"][-1]["content"])
            assert latest is not None, request
            return openai_ok(json.dumps({"sql": queries[json.loads(latest.group(1))]}))
        return openai_ok("Here they are.")

    server.responder = respond


def _ask_model(capsys, server: StubServer, *questions: str) -> list[dict]:
    argv = ["ask", *questions, "--backend", "openai", "--base-url", server.url, "--model", "M", "--no-cache", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    return out if isinstance(out, list) else [out]


def test_a_condition_a_model_drops_is_named_on_the_restaurants(model, capsys):
    question = "Show me cheap italian restaurants in Palo Alto"
    _scripted(model, {question: "SELECT * FROM restaurants WHERE 'italian' = ANY(cuisines) AND location = 'Palo Alto'"})
    (out,) = _ask_model(capsys, model, question)
    assert out["not_understood"] == ["cheap"] and out["reply"].startswith("I could not use 'cheap'.")
    _scripted(
        model,
        {
            question: "SELECT * FROM restaurants WHERE 'italian' = ANY(cuisines) AND location = 'Palo Alto' "
            "AND price = 'cheap'"
        },
    )
    (out,) = _ask_model(capsys, model, question)
    assert out["not_understood"] == [] and out["reply"] == "Here they are."


def test_a_follow_up_that_drops_what_it_carries_over_is_named(model, capsys):
    """ "What about italian ones?" after Menlo Park: a model that forgets Menlo Park answers for every town."""
    first, follow = "Show me restaurants in Menlo Park.", "What about italian ones?"
    menlo = "SELECT * FROM restaurants WHERE location = 'Menlo Park'"
    _scripted(model, {first: menlo, follow: "SELECT * FROM restaurants WHERE 'italian' = ANY(cuisines)"})
    turns = _ask_model(capsys, model, first, follow)
    assert [t["not_understood"] for t in turns] == [[], ["in Menlo Park (from before)"]]
    assert turns[1]["reply"].startswith("I could not use 'in Menlo Park (from before)'.")
    kept = "SELECT * FROM restaurants WHERE 'italian' = ANY(cuisines) AND location = 'Menlo Park'"
    _scripted(model, {first: menlo, follow: kept})
    assert [t["not_understood"] for t in _ask_model(capsys, model, first, follow)] == [[], []]
    # a new question that says everything again carries nothing over: leaving Menlo Park is no mark
    again = "Show me italian restaurants in Palo Alto."
    _scripted(
        model,
        {first: menlo, again: "SELECT * FROM restaurants WHERE 'italian' = ANY(cuisines) AND location = 'Palo Alto'"},
    )
    assert [t["not_understood"] for t in _ask_model(capsys, model, first, again)] == [[], []]


# --- false alarms over the restaurant world's own question sets -----------------------------------------------------

# This suite's questions about the restaurants (tests/engines/sql, its test_sim_parser.py among them, the CLI and
# app tests), each with whether the simulated agent's query keeps every condition of it (judged by hand from the
# query; None: the Text-to-SQL agent has no column for its wish, the SUQL agent reads the reviews for it)
SUITE: tuple[tuple[str, bool | None], ...] = (
    ("Show me a café in Palo Alto", True),
    ("Show me a coffee shop in Palo Alto", True),
    ("Any coffee shop in Mountain View?", True),
    ("Show me restaurants in Palo Alto", True),
    ("Show me restaurants in Cupertino", True),
    ("Show me sushi restaurants in Tokyo", True),
    ("Show me luxury vegan places in Sunnyvale with at least 4.5 stars.", True),
    ("Which is the top-rated italian place in Palo Alto?", True),
    ("Find inexpensive sushi in SF", True),
    ("What's some great Mexican food around Bernal Heights?", True),
    ("What is the phone number of the most popular cheap Korean restaurant in Sunnyvale?", True),
    ("How many italian places are in Mountain View?", True),
    ("top 3 pizza places in Palo Alto", True),
    ("italian or pizza in Sunnyvale with at least 4.5 stars", True),
    ("What is the address of Old Bowl House?", True),
    ("any thai food?", True),
    ("I need a family-friendly restaurant in Palo Alto", None),
    ("Find me a spicy Chinese restaurant in Palo Alto!", None),
    ("Show me all the places in Palo Alto with a great view", None),
    ("Find me a spicy vegan place in Sunnyvale with a view", None),
    ("Show me 5-star restaurants in Sunnyvale that are good for kids.", None),
    ("a quiet place with parking in Menlo Park", None),
)


@dataclass
class Counts:
    """Right or wrong (the evaluator's judgement of the query), flagged or not (the check's)."""

    cells: Counter = field(default_factory=Counter)
    missed: list[tuple[str, str | None]] = field(default_factory=list)  # a dropped condition, not flagged

    def add(self, right: bool, flagged: bool) -> None:
        self.cells[("right" if right else "wrong", "flagged" if flagged else "not flagged")] += 1

    @property
    def right(self) -> int:
        return self.cells["right", "flagged"] + self.cells["right", "not flagged"]

    @property
    def false_alarms(self) -> int:
        return self.cells["right", "flagged"]


def _dropped(m, *, location: str | None, cuisines, price: str | None, rating: float | None, feature: bool) -> bool:
    """The query leaves out a condition the question states (not: it reads one with a wrong value)."""
    return (
        (location is not None and not m.locations)
        or (cuisines is not None and not m.cuisines)
        or (price is not None and not m.prices)
        or (rating is not None and m.rating is None)
        or (feature and not m.texts)
    )


def measure(sizes: dict[str, int]) -> dict[str, Counts]:
    """Each question set of the restaurant world through the agents (the sim backend, as the Lab runs them),
    judged by the evaluator's reading of the query it ran."""
    from engines.lab import annotation
    from engines.lab.hybrid import generate as hybrid_questions
    from engines.lab.judge import meaning
    from engines.lab.lecture6.common import ids_of
    from engines.lab.questions import generate_structured_questions

    sql = open_restaurants(Settings(cache_enabled=False), world=WORLD)
    suql = open_restaurants(Settings(cache_enabled=False), world=WORLD, suql=True)
    out: dict[str, Counts] = {}

    def ask(agent, text: str):
        agent.reset()
        return agent.ask(text)

    def record(name: str, turn, right: bool, dropped: bool) -> None:
        counts = out.setdefault(name, Counts())
        counts.add(right, bool(turn.not_understood))
        if dropped and not turn.not_understood:
            counts.missed.append((turn.utterance, turn.sql))

    try:
        for s in (sql, suql):
            s.agent.diagnose_empty = False
        for q in generate_structured_questions(WORLD.rows, random.Random(33), sizes["exec"]):  # l6-exec-accuracy
            turn = ask(sql.agent, q["question"])
            m = meaning(turn.sql)
            dropped = _dropped(
                m, location=q["location"], cuisines=q["gold"], price=q["price"], rating=q["rating"], feature=False
            )
            record("l6-exec-accuracy", turn, ids_of(sql.sandbox, turn.sql) == q["gold_ids"], dropped)
        intents = annotation.generate(  # l6-eval-metrics / -breakdown / -ties
            WORLD.rows, random.Random(44), sizes["eval"], good_share=0.35, top_share=0.14, colloquial_share=0.3
        )
        for it in intents:
            turn = ask(sql.agent, it.question)
            m = meaning(turn.sql)
            dropped = _dropped(
                m, location=it.location, cuisines=it.cuisines, price=it.price, rating=it.rating, feature=False
            )
            record("l6-eval", turn, annotation.fault(m, it) is None, dropped)
        for name, s in (("dialogue", sql), ("dialogue (SUQL)", suql)):  # l6-dialogue: every query is right
            s.agent.reset()
            for u in SAMPLE_DIALOGUE:
                turn = s.agent.ask(u)
                if turn.needs_database:
                    record(name, turn, True, False)
        for hq in hybrid_questions(WORLD, BUILT.truth, random.Random(55), sizes["hybrid"]):  # l6-hybrid
            location = next((loc for loc in W.LOCATIONS if f"in {loc}" in hq.text), None)
            for name, s in (("l6-hybrid", sql), ("l6-hybrid (SUQL)", suql)):
                turn = ask(s.agent, hq.text)
                m = meaning(turn.sql)
                feature = hq.cls != "db only"
                right = (
                    m.understood and (not feature or bool(m.texts)) and (location is None or m.locations == {location})
                )
                if hq.cls == "db only":
                    right = right and ids_of(s.sandbox, turn.sql) == set(hq.gold_ids)
                if hq.cls == "both: count":
                    right = right and m.count
                dropped = _dropped(m, location=location, cuisines=None, price=None, rating=None, feature=feature)
                record(name, turn, right, dropped)
        for name, s in (("this suite", sql), ("this suite (SUQL)", suql)):
            for text, keeps in SUITE:
                turn = ask(s.agent, text)
                right = keeps if keeps is not None else s is suql
                record(name, turn, right, not right)
    finally:
        sql.close()
        suql.close()
    _measure_yelp(sizes["yelp"], record)
    return out


def _measure_yelp(n: int, record) -> None:
    """l7-yelp-*: the SUQL agent on the Yelp experiment's own world (realistic reviews) and its requests drawn from
    rows (engines.lab.lecture7.YELP_PARAMS).  Right: the query keeps every condition the request states with its
    value — the place, the cuisine (a value classify() gave it), the price, the rating, a text condition for a
    feature or a dish.  "Open late" written as a text comparison of the hours (lecture 7 §4.2's mistake) and
    "near me" (no column holds where the user is) are not right."""
    from engines.lab import yelp
    from engines.lab.judge import meaning
    from engines.lab.lecture7 import YELP_PARAMS
    from worlds.restaurants import DEFAULT_SEED, build

    world, truth = build(DEFAULT_SEED, reviews=YELP_PARAMS["reviews"])
    intents = yelp.generate_from_rows(
        random.Random(YELP_PARAMS["question_seed"]),
        world.rows,
        truth,
        n,
        YELP_PARAMS["hybrid_share"],
        YELP_PARAMS["near_me_share"],
    )
    s = open_restaurants(Settings(cache_enabled=False), world=world, suql=True)
    try:
        s.agent.diagnose_empty = False
        for it in intents:
            s.agent.reset()
            turn = s.agent.ask(it.text)
            m = meaning(turn.sql)
            right = (
                m.understood
                and not it.near_me
                and not it.late
                and m.locations == {it.location}
                and (it.cuisines is None or bool((m.cuisine_values or frozenset()) & it.cuisines))
                and (it.price is None or m.prices == {it.price})
                and (it.rating is None or m.rating_min == it.rating)
                and (not it.hybrid or bool(m.texts))
            )
            dropped = _dropped(
                m,
                location=None if it.near_me else it.location,
                cuisines=it.cuisines,
                price=it.price,
                rating=it.rating,
                feature=it.hybrid,
            )
            record("l7-yelp (SUQL)", turn, right, dropped)
    finally:
        s.close()


SMALL = {"exec": 40, "eval": 60, "hybrid": 4, "yelp": 40}  # the Lab's small sizes (l6-hybrid: 4 a class)
FULL = {"exec": 200, "eval": 200, "hybrid": 20, "yelp": 100}


def test_false_alarms_stay_under_a_tenth_of_the_right_answers_and_no_dropped_condition_passes():
    counts = measure(SMALL)
    right = sum(c.right for c in counts.values())
    false_alarms = sum(c.false_alarms for c in counts.values())
    assert right >= 150
    assert false_alarms < 0.1 * right, {k: dict(c.cells) for k, c in counts.items()}
    assert counts["dialogue"].false_alarms == counts["dialogue (SUQL)"].false_alarms == 0
    # and on every set: the SUQL parser asks the reviews in the user's words ("is it good for large groups?",
    # "is it romantic enough for a date?"), so no right answer is flagged for a word its own question dropped
    for name, c in counts.items():
        assert c.false_alarms < 0.1 * c.right, (name, dict(c.cells))
    assert counts["l6-hybrid (SUQL)"].right >= 15 and counts["l7-yelp (SUQL)"].right >= 30
    # every answer that left a condition out is flagged (there are some: the parser's seeded drops, wishes the
    # Text-to-SQL agent has no column for)
    assert sum(c.cells["wrong", "flagged"] for c in counts.values()) >= 20
    assert [m for c in counts.values() for m in c.missed] == []


if __name__ == "__main__":
    table = measure(FULL)
    print(f"{'question set':<20} {'right':>6} {'right, flagged':>15} {'wrong, flagged':>15} {'wrong, not flagged':>19}")
    for name, c in table.items():
        print(
            f"{name:<20} {c.cells['right', 'not flagged']:>6} {c.cells['right', 'flagged']:>15} "
            f"{c.cells['wrong', 'flagged']:>15} {c.cells['wrong', 'not flagged']:>19}"
            + (f"   dropped, not flagged: {len(c.missed)}" if c.missed else "")
        )
