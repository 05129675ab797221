"""A real backend on a user's own data: the claude backend (the real SDK client, a stub Messages API on
127.0.0.1) is shown the engine's description of the tables, and what it writes runs through the gate."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from engines.data.source import open_source
from engines.llm.client import LLM
from engines.settings import Settings
from engines.sql.agent import TextToSQLAgent
from tests.engines.data.conftest import hotel_rows
from tests.engines.llm.test_claude_faults import StubAPI, claude_at, ok


def prompt_of(request: dict) -> str:
    content = request["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if isinstance(block, dict))


@pytest.fixture
def stub() -> Iterator[StubAPI]:
    api = StubAPI()
    yield api
    api.close()


def test_the_model_is_shown_the_description_and_its_sql_runs(stub, hotels_csv):
    def respond(request: dict):
        prompt = prompt_of(request)
        if prompt.startswith("Decide whether"):
            return ok(json.dumps({"needs_database": True, "reason": "a lookup"}))
        if prompt.startswith("Translate"):
            return ok(json.dumps({"sql": "SELECT name FROM hotels WHERE city = 'rome' AND price > 100 ORDER BY name"}))
        if "choose every listed value" in prompt.lower():
            return ok(json.dumps({"values": ["Rome"]}))
        return ok("Here are the hotels.")

    stub.responder = respond
    backend = claude_at(stub.url, sleep=[].append)
    source = open_source(str(hotels_csv), Settings())
    try:
        schema = source.schema.render()
        agent = TextToSQLAgent(
            sandbox=source.sandbox,
            llm=LLM(backend),
            schema=schema,
            enum_fields=source.schema.enum_fields,
            classify_method="llm_all",
        )
        turn = agent.ask("expensive hotels in Rome")
        assert turn.error is None
        # classify() mapped the model's 'rome' onto the stored value, asking the model among the real ones
        assert turn.sql == "SELECT name FROM hotels WHERE city = 'Rome' AND price > 100 ORDER BY name"
        expected = sorted(r["name"] for r in hotel_rows() if r["city"] == "Rome" and r["price"] > 100)
        assert [row[0] for row in turn.rows] == expected
        parse_prompt = next(prompt_of(r) for r in stub.requests if prompt_of(r).startswith("Translate"))
        assert "\"city\" TEXT, -- enum: ['Berlin', 'Paris', 'Rome']" in parse_prompt
        assert '"notes" TEXT -- free text · answer()' in parse_prompt
        assert "restaurant" not in schema.lower() and "cuisine" not in schema.lower()
    finally:
        source.close()
        backend.close()
