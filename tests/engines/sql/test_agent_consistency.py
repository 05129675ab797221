"""Both agents' replies agree with the query that ran: what they say was (not) searched, and which condition
emptied an empty result (checked here by running the query without it, independently of the agent)."""

from __future__ import annotations

import re

import pytest
import sqlglot
from sqlglot import exp

from engines.compose import open_restaurants
from engines.settings import Settings
from engines.sql.agent import MAX_VARIANTS, TextToSQLAgent, conjuncts
from engines.sql.sim import TOPICS
from worlds import restaurants as W

WORLD = W.build().world

UTTERANCES = (
    "Show me sushi restaurants in Tokyo",
    "Show me romantic restaurants in Palo Alto",
    "best romantic place",
    "Can you find a place in Mountain View romantic enough for a date?",
    "cheap cozy italian places in San Francisco",
    "a quiet place with parking in Menlo Park",
    "spicy food in Palo Alto",
    "family-friendly mexican restaurants in Sunnyvale with a view",
    "Show me luxury vegan places in Sunnyvale with at least 4.5 stars.",
    "a good place for groups in Oakland",
    "thai restaurants in Cupertino with outdoor seating",
    "Find me a spicy vegan place in Sunnyvale with a view",
)


@pytest.fixture(scope="module", params=["sql", "suql"])
def session(request):
    s = open_restaurants(Settings(cache_enabled=False), world=WORLD, suql=request.param == "suql")
    yield s
    s.close()


def _questions(tree: exp.Expression) -> set[str]:
    """The questions of the answer() calls in a query."""
    return {
        f.expressions[1].name
        for f in tree.find_all(exp.Anonymous)
        if str(f.this).lower() == "answer" and len(f.expressions) > 1 and isinstance(f.expressions[1], exp.Literal)
    }


def _on_topic(word: str, question: str) -> bool:
    """An answer() question asks about the wish ``word`` names: the reader takes both for the same topic."""
    return any(t.question.search(word) and t.question.search(question) for t in TOPICS)


def _not_searched(reply: str) -> set[str]:
    m = re.search(r"no (?:column|condition) for (.+?), so that part", reply)
    return set(re.findall(r"'([^']+)'", m.group(1))) if m else set()


def _rows(session, agent: TextToSQLAgent, tree: exp.Select) -> int:
    if agent.__class__.__name__ == "SuqlAgent":
        probe = tree.copy()
        probe.set("order", None)
        probe.set("limit", None)
        return len(agent.engine.run(probe.sql(dialect="postgres"), mode="E").rows)
    return len(session.sandbox.run(tree.sql(dialect="postgres")).rows)


def _without(tree: exp.Select, sql_of_part: str) -> exp.Select:
    parts = conjuncts(tree.args["where"].this)
    rest = [p.copy() for p in parts if p.sql(dialect="postgres", normalize_functions=False) != sql_of_part]
    assert len(rest) == len(parts) - 1, "the condition the reply names is a top-level condition of the query"
    out = tree.copy()
    out.set("where", exp.Where(this=exp.and_(*rest)) if rest else None)
    return out


@pytest.mark.parametrize("utterance", UTTERANCES)
def test_the_reply_never_contradicts_the_query_it_ran(session, utterance):
    agent = session.agent
    agent.reset()
    turn = agent.ask(utterance)
    assert turn.sql, turn.reply
    tree = sqlglot.parse_one(turn.sql, read="postgres")
    asked = _questions(tree)
    for word in _not_searched(turn.reply):
        # a wish the reply calls unsearched has no condition in the query
        assert not any(_on_topic(word, q) for q in asked), (word, turn.sql, turn.reply)
        assert word not in turn.sql.lower(), (word, turn.sql)
    if turn.rows:
        assert turn.emptied is None
        return
    if "such as the" in turn.reply:
        pytest.fail(f"the reply guesses a condition to relax: {turn.reply}")
    emptied = turn.emptied
    assert emptied is not None and emptied.sentence in turn.reply
    if emptied.condition is None:  # no single condition: leaving out each still finds nothing
        assert "still finds nothing" in turn.reply
        for part in conjuncts(tree.args["where"].this)[:MAX_VARIANTS]:
            assert (
                _rows(session, agent, _without(tree, part.sql(dialect="postgres", normalize_functions=False))) == 0
            ), part.sql()
        return
    assert f"No restaurant {emptied.phrase}" in turn.reply
    again = _rows(session, agent, _without(tree, emptied.condition))
    assert again >= emptied.rows > 0  # without that condition, rows come back
    if emptied.alone_empty:  # "is in this database" is said only of a condition that matches no row at all
        alone = tree.copy()
        alone.set("where", exp.Where(this=sqlglot.parse_one(emptied.condition, read="postgres")))
        alone.set("limit", None)
        assert "is in this database" in turn.reply
        assert _rows(session, agent, alone) == 0


def test_an_empty_result_names_the_condition_that_emptied_it():
    s = open_restaurants(Settings(cache_enabled=False), world=WORLD)
    try:
        turn = s.agent.ask("Show me sushi restaurants in Tokyo")
        e = turn.emptied
        assert turn.rows == () and e is not None and e.condition == "location = 'Tokyo'" and e.alone_empty
        expected = s.sandbox.run("SELECT COUNT(*) FROM restaurants WHERE 'sushi bars' = ANY(cuisines)").rows[0][0]
        assert e.rows == expected > 0 and not e.at_least
        assert (
            f"No restaurant in Tokyo is in this database; without that condition the search finds {expected} restaurants."
            in turn.reply
        )
        assert "cuisine" not in turn.reply.split("found no results.")[1]  # the old reply offered to relax the cuisine
        # the finding is only the finding (ask --json's why_empty); the reply is what offers to relax it
        assert e.sentence.endswith(f"finds {expected} restaurants.") and "?" not in e.sentence
        assert turn.reply.endswith("Would you like me to relax it?")
        assert turn.to_json()["why_empty"] == e.sentence
        # at most MAX_VARIANTS variants: eight conditions, two of which match nothing by themselves
        tree = s.sandbox.check(
            "SELECT name FROM restaurants WHERE location = 'Tokyo' AND location = 'Paris' AND rating > 0.1 "
            "AND rating > 0.2 AND rating > 0.3 AND rating > 0.4 AND rating > 0.5 AND rating > 0.6"
        )
        e = s.agent.explain_empty(tree)
        assert e.condition is None and e.tried == MAX_VARIANTS and e.conditions == 8
        assert "any one of 6 of its 8 conditions still finds nothing" in e.sentence
        assert e.reply_hint == e.sentence  # nothing single to relax: no offer
        assert e.match_nothing == ("location = 'Tokyo'", "location = 'Paris'")
    finally:
        s.close()


def test_suql_leaves_out_structured_conditions_first_and_says_so():
    s = open_restaurants(Settings(cache_enabled=False), world=WORLD, suql=True)
    try:
        turn = s.agent.ask("a quiet place with parking in Menlo Park")
        e = turn.emptied
        assert turn.rows == () and e is not None and e.text and e.tried >= 2  # the location was tried first
        assert "answer(reviews, 'is it quiet?')" in e.condition and e.alone_empty is None  # not checked: it costs calls
        assert "left out the conditions on the table's own columns first" in turn.reply
        assert e.at_least and e.rows == 3  # the variant stops at the query's LIMIT 3
        main_calls = sum(1 for c in turn.calls if c.function == "answer")
        assert main_calls > 0  # the variants' answer() calls are part of the turn's calls
    finally:
        s.close()


def test_the_suql_papers_san_francisco_queries_say_why_they_are_empty():
    from engines.errors import EngineError
    from engines.suql import language
    from engines.suql.examples import paper_queries

    s = open_restaurants(Settings(cache_enabled=False), world=WORLD, suql=True)
    try:
        said = 0
        for ex in [e for e in paper_queries(Settings()) if "'san francisco'" in e.sql.lower()]:
            try:
                r = s.agent.execute(ex.sql, lambda event: None, None)
            except EngineError:  # a query this world cannot serve (a geographic function)
                continue
            assert r.rows == ()
            e = s.agent.explain_empty(language.parse(ex.sql))
            assert "location = 'San Francisco'" in ((e.condition,) + e.match_nothing), (ex.sql, e.sentence)
            assert "No restaurant in San Francisco is in this database" in e.sentence
            said += 1
        assert said >= 40
    finally:
        s.close()
