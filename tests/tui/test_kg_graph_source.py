"""The Knowledge-graph tab's console and browser query a graph source, not an agent session (issue 27 item 1).

Over a graph the user named (``--rdf``, ``--endpoint``) the tab opens that graph alone: the built-in world is never
built (its builder is made to fail here) and no SPINACH session is opened until the agent is asked, which builds it
over the same graph.  On the built-in world the graph is the session's endpoint (one build gives both)."""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from tests.loopback_http import LoopbackServer, Reply
from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.kg import FeedbackBar, KgResultsTable

EX = "http://example.org/"


@pytest.fixture
def no_world(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The built-in world's builders fail (and say so): a graph the user named must not need them."""
    import engines.kg
    import engines.spinach.session  # imported before the patch: it binds open_kg at its import
    import worlds.kg

    calls: list[str] = []

    def refuse(name: str) -> Any:
        def refused(*_args: Any, **_kwargs: Any) -> Any:
            calls.append(name)
            raise AssertionError(f"{name} was called: the built-in world was built")

        return refused

    monkeypatch.setattr(worlds.kg, "build", refuse("worlds.kg.build"))
    monkeypatch.setattr(engines.kg, "open_kg", refuse("engines.kg.open_kg"))
    monkeypatch.setattr(engines.spinach.session, "open_kg", refuse("engines.spinach.session.open_kg"))
    return calls


def _rows(app: Any) -> list[list[str]]:
    table = app.query_one("#kg-results", KgResultsTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


@drive
async def test_over_rdf_files_the_console_runs_and_no_world_or_session_is_built(
    tmp_path: Path, no_world: list[str]
) -> None:
    ttl = tmp_path / "people.ttl"
    ttl.write_text(
        "@prefix ex: <http://example.org/> .\nex:ada a ex:Person ; ex:knows ex:bob .\nex:bob a ex:Person .\n",
        encoding="utf-8",
    )
    app = make_app(kg_rdf=(ttl,))
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "kg")
        runner = area._runner
        assert runner.graph is not None and runner.session is None
        assert area.run_query(f"SELECT ?who WHERE {{ ?who <{EX}knows> <{EX}bob> }}")
        await settle(pilot)
        assert app.query_one(FeedbackBar).feedback == "rows"
        assert _rows(app) == [["ex:ada"]]  # the file's prefix
        area.open_entity(f"{EX}ada")  # the browser reads the same graph
        await settle(pilot)
        assert area._page is not None and area._page.id == "ex:ada" and area._page.claims  # compacted
        assert runner.session is None  # the console and the browser needed no agent
        # the agent asked: its session is built over the graph already open, without a world
        session = runner.current(area.settings)
        assert session.endpoint is runner.graph and session.world is None
    assert no_world == []


class OneRowEndpoint(LoopbackServer):
    """A SPARQL endpoint: the probe for Wikidata's vocabulary finds nothing, any other query one row."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        fields = urllib.parse.parse_qs(raw.decode() if method == "POST" else urllib.parse.urlsplit(path).query)
        query = (fields.get("query") or [""])[0]
        self.queries.append(query)
        rows = [] if "P31" in query else [{"who": {"type": "uri", "value": f"{EX}ada"}}]
        body = {"head": {"vars": ["who"]}, "results": {"bindings": rows}}
        return Reply(body, content_type="application/sparql-results+json")


@drive
async def test_over_a_remote_endpoint_the_console_runs_and_no_world_or_session_is_built(no_world: list[str]) -> None:
    server = OneRowEndpoint()
    try:
        app = make_app(kg_endpoint=f"{server.url}/sparql")
        async with app.run_test(size=SIZE) as pilot:
            area = await open_tab(pilot, "kg")
            assert area._runner.graph is not None and area._runner.session is None
            query = f"SELECT ?who WHERE {{ ?who <{EX}knows> <{EX}bob> }}"
            assert area.run_query(query)
            await settle(pilot)
            assert app.query_one(FeedbackBar).feedback == "rows", app.query_one("#kg-console-error").render()
            assert len(_rows(app)) == 1 and EX + "ada" in _rows(app)[0][0]
            assert any(f"{EX}knows" in q for q in server.queries)  # it went to the endpoint
            assert area._runner.session is None
    finally:
        server.close()
    assert no_world == []


@drive
async def test_on_the_built_in_world_the_graph_is_the_sessions_endpoint() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "kg")
        runner = area._runner
        assert runner.session is not None and runner.graph is runner.session.endpoint
        assert runner.session.world is not None and runner.session.questions.simple
