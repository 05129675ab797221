"""The Text-to-SQL agent end to end: world -> sandbox -> sim LLM -> events -> result."""

from __future__ import annotations

import threading

import pytest

from engines.compose import open_restaurants
from engines.errors import Cancelled
from engines.events import (
    CallFinished,
    CallStarted,
    InputClassified,
    QueryExecuted,
    QueryFailed,
    QueryParsed,
    QueryRewritten,
    ReadBackWritten,
    TurnFinished,
    TurnStarted,
    ValuesClassified,
)
from engines.llm.protocol import Output
from engines.settings import Settings
from engines.sql.agent import run_sql
from engines.sql.dialogue import SAMPLE_DIALOGUE
from engines.sql.sandbox import SqlRefused
from engines.sql.tasks import PARSE
from worlds import restaurants as W

WORLD = W.build().world


@pytest.fixture
def session():
    s = open_restaurants(Settings(cache_enabled=False), world=WORLD)
    yield s
    s.close()


def test_cafe_in_palo_alto_returns_only_palo_alto_cafes(session):
    events: list = []
    turn = session.agent.ask("Show me a café in Palo Alto", emit=events.append)
    assert turn.error is None and turn.rows
    for rec in turn.records():
        assert rec["location"] == "Palo Alto"
        assert "cafe" in rec["cuisines"]
    # every Palo Alto cafe is there (nothing lost by the rewrite; the simulated LLM's word vectors put "coffee & tea"
    # farther from "café" than its margin, so those are missed, as the Lab's l6-classify shows)
    expected = {r._id for r in WORLD.rows if r.location == "Palo Alto" and "cafe" in r.cuisines}
    assert {rec["_id"] for rec in turn.records()} == expected
    kinds = [type(e) for e in events]
    order = [
        TurnStarted,
        InputClassified,
        QueryParsed,
        ValuesClassified,
        QueryRewritten,
        QueryExecuted,
        ReadBackWritten,
        TurnFinished,
    ]
    positions = [kinds.index(k) for k in order]
    assert positions == sorted(positions)
    assert (
        kinds.count(CallStarted) == kinds.count(CallFinished) == len(turn.calls) == 3
    )  # route, parse, respond: 'café' folds to the value 'cafe', an exact match, so classify() asks no LLM
    assert turn.readback == "I searched for restaurants in Palo Alto whose cuisines include cafe."
    assert f"found {len(expected)} results" in turn.reply


def test_the_eight_turn_dialogue_plays_out(session):
    replies = []
    for u in SAMPLE_DIALOGUE:
        replies.append(session.agent.ask(u))
    menlo, italian, palo, top, cafe, dimsum, vegan, thanks = replies
    assert {r["location"] for r in menlo.records()} == {"Menlo Park"} and len(menlo.rows) > 50
    assert 0 < len(italian.rows) < len(menlo.rows)
    assert {r["location"] for r in palo.records()} == {"Palo Alto"} and all(
        "italian" in r["cuisines"] for r in palo.records()
    )
    assert len(top.rows) == 1 and float(top.records()[0]["rating"]) == max(float(r["rating"]) for r in palo.records())
    assert {r["location"] for r in cafe.records()} == {"Palo Alto"} and "ORDER BY" not in (cafe.sql or "")
    assert dimsum.needs_database is False and dimsum.sql is None and "Cantonese" in dimsum.reply
    assert vegan.rows == () and "no results" in vegan.reply and "relax" in vegan.reply
    assert thanks.needs_database is False
    assert len(session.agent.history) == 8


def test_no_results_invents_nothing(session):
    turn = session.agent.ask("Show me luxury vegan places in Sunnyvale with at least 4.5 stars.")
    assert turn.rows == ()
    names = {r.name for r in WORLD.rows}
    assert not any(name in turn.reply for name in names)


def test_an_unknown_place_returns_nothing_rather_than_guessing(session):
    turn = session.agent.ask("Show me restaurants in Cupertino")
    assert turn.rows == () and "Cupertino" in (turn.readback or "")


def test_query_errors_become_part_of_the_turn(session, monkeypatch):
    real = session.llm.backend.run
    hostile = lambda task, input: Output("DROP TABLE restaurants") if task is PARSE else real(task, input)  # noqa: E731
    monkeypatch.setattr(session.llm.backend, "run", hostile)  # a hostile model
    events: list = []
    turn = session.agent.ask("Show me restaurants in Palo Alto", emit=events.append)
    assert turn.error and "DROP" in turn.error and turn.rows == ()
    assert any(isinstance(e, QueryFailed) for e in events)
    assert session.sandbox.run("SELECT count(*) FROM restaurants").rows == ((600,),)


def test_cancel_stops_before_the_next_call(session):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        session.agent.ask("Show me restaurants in Palo Alto", cancel=cancel)


def test_classify_method_is_a_setting():
    s = open_restaurants(Settings(cache_enabled=False, classify_method="exact"), world=WORLD)
    try:
        assert s.agent.ask("Show me a coffee shop in Palo Alto").rows == ()  # exact: 'coffee shop' is no value
    finally:
        s.close()


def test_raw_sql_mode(session):
    result, sentence = run_sql(session.sandbox, "SELECT name FROM restaurants WHERE location = 'Sunnyvale' LIMIT 2")
    assert (
        len(result.rows) == 2
        and sentence == "I searched for restaurants in Sunnyvale, showing name, keeping the first 2."
    )
    with pytest.raises(SqlRefused):
        run_sql(session.sandbox, "DELETE FROM restaurants")
