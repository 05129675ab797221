"""The agent accepts its own offer (issue 28 item 5): after "No restaurant priced luxury also meets the other
conditions … Would you like me to relax it?", a "yes" runs the previous search without that condition and a "no"
keeps it. The offer is part of the dialogue the route and parse prompts are shown, on the simulated backend and on
a real one (an OpenAI-compatible stub on 127.0.0.1)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from engines.compose import open_restaurants
from engines.settings import Settings
from tests.engines.llm.openai_stub import Reply, StubServer, ok
from worlds import restaurants as W

WORLD = W.build().world
ASK = "Show me luxury vegan places in Sunnyvale with at least 4.5 stars."
OFFERED = "price = 'luxury'"


@pytest.fixture
def agent() -> Iterator[object]:
    s = open_restaurants(Settings(cache_enabled=False), world=WORLD)
    yield s.agent
    s.close()


@pytest.mark.parametrize("yes", ["yes", "Sure!", "ok please", "yes please"])
def test_a_yes_relaxes_the_offered_condition_and_runs(agent, yes):
    first = agent.ask(ASK)
    assert first.rows == () and first.reply.endswith("Would you like me to relax it?")
    assert agent.offered == OFFERED
    turn = agent.ask(yes)
    assert turn.needs_database, turn.route_reason
    assert turn.sql is not None and "luxury" not in turn.sql and "Sunnyvale" in turn.sql and "vegan" in turn.sql
    assert len(turn.rows) == first.emptied.rows  # what the offer said the search would find
    assert turn.not_understood == () and "could not use" not in turn.reply
    assert agent.offered is None  # the offer was taken


def test_a_no_keeps_the_search(agent):
    agent.ask(ASK)
    turn = agent.ask("no")
    assert not turn.needs_database and "declines" in turn.route_reason
    assert "keep the search" in turn.reply
    assert agent.offered is None


def test_a_new_question_after_the_offer_is_a_new_question(agent):
    agent.ask(ASK)
    turn = agent.ask("Show me italian restaurants in Palo Alto")
    assert turn.rows and "italian" in (turn.sql or "") and "luxury" not in (turn.sql or "")


def test_a_yes_without_an_offer_relaxes_nothing(agent):
    agent.ask("Show me italian restaurants in Palo Alto")
    assert agent.offered is None
    turn = agent.ask("yes")
    assert not turn.needs_database


# --- a real backend: the prompts carry the offer ------------------------------------------------------

RELAXED = "SELECT * FROM restaurants WHERE 'vegan' = ANY(cuisines) AND location = 'Sunnyvale' AND rating >= 4.5"


def _responder(request: dict) -> Reply:
    prompt = "\n".join(m["content"] for m in request["messages"] if isinstance(m.get("content"), str))
    if '"needs_database"' in prompt:
        return ok(json.dumps({"needs_database": True, "reason": "a search"}))
    if '{"sql"' in prompt:
        latest = prompt.rsplit("Latest message from the user:", 1)[1]
        if '"yes"' in latest:
            return ok(json.dumps({"sql": RELAXED}))
        return ok(json.dumps({"sql": RELAXED + " AND price = 'luxury'"}))
    if '"values"' in prompt:
        return ok('{"values": []}')
    return ok("Here is what I found.")


def test_a_real_backends_route_and_parse_prompts_carry_the_offer(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    stub = StubServer()
    stub.responder = _responder
    settings = Settings(
        backend="openai", openai_base_url=stub.url, openai_model="m", openai_row_model="m", cache_enabled=False
    )
    s = open_restaurants(settings, world=WORLD)
    try:
        first = s.agent.ask(ASK)
        assert first.rows == () and s.agent.offered == OFFERED
        before = len(stub.requests)
        turn = s.agent.ask("yes")
        prompts = ["\n".join(str(m.get("content")) for m in r["messages"]) for r in stub.requests[before:]]
        route, parse = prompts[0], prompts[1]
        assert "offered to relax" in route and json.dumps(OFFERED) in route
        assert "offered to relax" in parse and json.dumps(OFFERED) in parse
        assert turn.rows and "luxury" not in (turn.sql or "") and turn.not_understood == ()
    finally:
        s.close()
        stub.close()
