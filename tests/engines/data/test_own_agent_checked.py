"""Never a confident wrong answer on a user's own data: whatever wrote the query (the sim, Claude, an
OpenAI-compatible server), a part of the question it does not use is named in ``not_understood``, and the
reply says what the query found without it — never that as the answer."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from engines.compose import open_source_agent
from engines.data.source import open_source
from engines.llm.client import LLM
from engines.settings import Settings
from engines.sql.agent import TextToSQLAgent
from tests.engines.data.conftest import hotel_rows
from tests.engines.data.test_own_agent_claude import prompt_of
from tests.engines.llm.openai_stub import StubServer
from tests.engines.llm.openai_stub import ok as openai_ok
from tests.engines.llm.test_claude_faults import StubAPI, claude_at, ok
from tui.cli import main

ROME = sum(1 for r in hotel_rows() if r["city"] == "Rome")


def test_the_sim_names_what_no_column_holds(hotels_csv):
    session = open_source_agent(str(hotels_csv), Settings())
    try:
        turn = session.agent.ask("how many hotels have a sauna?")
        assert turn.sql == 'SELECT COUNT(*) FROM "hotels"' and turn.rows == ((24,),)
        assert turn.not_understood == ("sauna",)
        assert turn.reply.startswith("I could not use 'sauna'. Without it there are 24 hotels;")
        assert "the answer is" not in turn.reply
        assert turn.to_json()["not_understood"] == ["sauna"]
        session.agent.reset()
        turn = session.agent.ask("how many hotels in Rome?")  # everything used: answered as before
        assert turn.not_understood == () and turn.to_json()["not_understood"] == []
        assert turn.reply == f"I counted hotels whose city is 'Rome': the answer is {ROME}."
    finally:
        session.close()


def test_the_suql_agent_is_checked_too(hotels_csv):
    session = open_source_agent(str(hotels_csv), Settings(), suql=True)
    try:
        turn = session.agent.ask("hotels in Paris with a sauna whose notes mention the pool")
        assert "answer(\"notes\", 'does the text mention pool?')" in turn.sql and "'Paris'" in turn.sql
        assert turn.not_understood == ("sauna",)
        assert turn.reply.startswith("I could not use 'sauna'. Without it the query finds")
    finally:
        session.close()


@pytest.fixture
def claude() -> Iterator[StubAPI]:
    api = StubAPI()
    yield api
    api.close()


def test_a_condition_claude_drops_is_named(claude, hotels_csv):
    """The check does not depend on the parser: a real model that leaves out "in Rome" is caught."""

    def respond(request: dict):
        prompt = prompt_of(request)
        if prompt.startswith("Decide whether"):
            return ok(json.dumps({"needs_database": True, "reason": "a lookup"}))
        if prompt.startswith("Translate"):
            return ok(json.dumps({"sql": "SELECT COUNT(*) FROM hotels WHERE price < 60"}))
        return ok("There are 4 hotels.")  # the reply writer is not asked when a phrase is not understood

    claude.responder = respond
    backend = claude_at(claude.url, sleep=[].append)
    source = open_source(str(hotels_csv), Settings())
    try:
        agent = TextToSQLAgent(
            sandbox=source.sandbox,
            llm=LLM(backend),
            schema=source.schema.render(),
            enum_fields=source.schema.enum_fields,
        )
        turn = agent.ask("how many hotels in Rome have a price under 60?")
        cheap = sum(1 for r in hotel_rows() if r["price"] < 60)
        assert turn.rows == ((cheap,),) and turn.not_understood == ("Rome",)
        assert turn.reply.startswith(f"I could not use 'Rome'. Without it there are {cheap} hotels;")
        asked = [prompt_of(r) for r in claude.requests]
        assert not any("Write your reply" in p for p in asked), "the reply writer was not asked"
    finally:
        source.close()
        backend.close()


@pytest.fixture
def openai(monkeypatch, tmp_path) -> Iterator[StubServer]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CS224V_CACHE_DIR", str(tmp_path / "cache"))
    server = StubServer()
    yield server
    server.close()


def test_ask_json_over_an_openai_compatible_server(openai, hotels_csv, capsys):
    """``ask --json`` end to end: the model's query leaves "under 60" out; the JSON names it; with a query that
    uses it, the list is empty."""
    sql = {"value": "SELECT COUNT(*) FROM hotels WHERE city = 'Rome'"}

    def respond(request: dict):
        text = request["messages"][-1]["content"]
        if "Decide whether" in json.dumps(request["messages"]):
            return openai_ok(json.dumps({"needs_database": True, "reason": "a lookup"}))
        if "Translate" in json.dumps(request["messages"]):
            return openai_ok(json.dumps({"sql": sql["value"]}))
        return openai_ok(f"The answer: {text[:20]}")

    openai.responder = respond
    argv = ["ask", "--db", str(hotels_csv), "--backend", "openai", "--base-url", openai.url, "--model", "M", "--json"]
    question = "how many hotels in Rome have a price under 60?"
    assert main([*argv, "--no-cache", question]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["not_understood"] == ["price under 60"]
    assert out["reply"].startswith(f"I could not use 'price under 60'. Without it there are {ROME} hotels;")
    sql["value"] = "SELECT COUNT(*) FROM hotels WHERE city = 'Rome' AND price < 60"
    assert main([*argv, "--no-cache", question]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["not_understood"] == [] and not out["reply"].startswith("I could not use")
    # the text output marks it beside the read-back
    sql["value"] = "SELECT COUNT(*) FROM hotels WHERE city = 'Rome'"
    assert main([a for a in argv if a != "--json"] + ["--no-cache", question]) == 0
    assert "  not understood: 'price under 60' (the rows below leave it out)" in capsys.readouterr().out
