"""The knowledge-graph commands over a user's graph: ``sparql``/``spinach`` with ``--rdf FILE…`` and
``--endpoint URL`` (a real ``oxigraph serve`` on 127.0.0.1); bad files and URLs are clear errors."""

from __future__ import annotations

import json

import pytest

from tests.sparql_server import SKIP_REASON, OxigraphServer, oxigraph_binary, write_world
from tui.cli import main

TTL = """\
@prefix ex: <http://example.org/> .
@prefix schema: <http://schema.org/> .
ex:ada schema:name "Ada Lovelace" ; ex:wrote ex:notes .
ex:notes schema:name "Notes on the Analytical Engine" .
"""
MOUNTAINS = (
    "SELECT ?m ?mLabel ?e WHERE { ?m wdt:P31 wd:Q1007 ; wdt:P2044 ?e . "
    'SERVICE wikibase:label { bd:serviceParam wikibase:language "en". } } ORDER BY DESC(?e) ?m LIMIT 3'
)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def world_nt(tmp_path_factory):
    return write_world(tmp_path_factory.mktemp("world") / "world.nt")


@pytest.fixture(scope="module")
def server(world_nt):
    if oxigraph_binary() is None:
        print(f"\nskipping the --endpoint tests: {SKIP_REASON}")
        pytest.skip(SKIP_REASON)
    srv = OxigraphServer.start(world_nt)
    yield srv
    srv.stop()


def test_sparql_over_a_turtle_file(capsys, tmp_path):
    ttl = tmp_path / "my.ttl"
    ttl.write_text(TTL, encoding="utf-8")
    code, out, _ = run(
        capsys, "sparql", "SELECT ?w ?t WHERE { ?w ex:wrote ?x . ?x schema:name ?t }", "--rdf", str(ttl), "--json"
    )
    assert code == 0
    assert json.loads(out)["rows"] == [{"w": "http://example.org/ada", "t": "Notes on the Analytical Engine"}]
    code, out, _ = run(capsys, "sparql", "SELECT ?w WHERE { ?w ex:wrote ?x }", "--rdf", str(ttl), "--store", "memory")
    assert code == 0 and "http://example.org/ada" in out


def test_bad_files_exit_2_without_a_traceback(capsys, tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text('@prefix ex: <http://example.org/> .\nex:a ex:b "unterminated .\n', encoding="utf-8")
    code, out, err = run(capsys, "sparql", "SELECT * WHERE { ?s ?p ?o }", "--rdf", str(bad))
    assert code == 2 and "bad.ttl: syntax error at line 2, column" in err and "Traceback" not in err + out
    code, _, err = run(capsys, "sparql", "SELECT * WHERE { ?s ?p ?o }", "--rdf", str(tmp_path / "missing.nt"))
    assert code == 2 and "missing.nt: no such file" in err
    other = tmp_path / "data.csv"
    other.write_text("a,b\n", encoding="utf-8")
    code, _, err = run(capsys, "sparql", "SELECT * WHERE { ?s ?p ?o }", "--rdf", str(other))
    assert code == 2 and "unknown RDF format '.csv'" in err


def test_bad_endpoint_arguments(capsys):
    code, _, err = run(capsys, "sparql", "SELECT * WHERE { ?s ?p ?o }", "--endpoint", "ftp://example.org/sparql")
    assert code == 2 and "not an endpoint URL" in err
    code, _, err = run(
        capsys, "sparql", "SELECT * WHERE { ?s ?p ?o }", "--endpoint", "http://127.0.0.1:9/q", "--store", "memory"
    )
    assert code == 2 and "--store" in err
    code, _, err = run(capsys, "sparql", "SELECT * WHERE { ?s ?p ?o }", "--timeout", "3")
    assert code == 2 and "--timeout is for --endpoint" in err


def test_an_unreachable_endpoint_is_an_error_feedback(capsys):
    from tests.sparql_server import free_port

    url = f"http://127.0.0.1:{free_port()}/query"
    code, out, _ = run(capsys, "sparql", "SELECT * WHERE { ?s ?p ?o } LIMIT 1", "--endpoint", url, "--json")
    assert code == 1 and "cannot be reached" in json.loads(out)["message"]


def test_sparql_over_the_endpoint_matches_the_builtin_world(capsys, server):
    code, out, _ = run(capsys, "sparql", MOUNTAINS, "--json")
    local = json.loads(out)
    assert code == 0 and len(local["rows"]) == 3
    code, out, _ = run(capsys, "sparql", MOUNTAINS, "--endpoint", server.url, "--json")
    assert code == 0 and json.loads(out) == local
    code, out, err = run(
        capsys, "sparql", "SELECT * WHERE { SERVICE <http://127.0.0.1:1/x> { ?s ?p ?o } }", "--endpoint", server.url
    )
    assert code == 2 and "SERVICE" in err


def test_spinach_over_the_endpoint(capsys, server):
    question = "Where was Rosa Ingram born?"
    code, out, _ = run(capsys, "spinach", question, "--policy", "sim", "--json")
    assert code == 0
    local = json.loads(out)
    code, out, _ = run(capsys, "spinach", question, "--policy", "sim", "--endpoint", server.url, "--json")
    assert code == 0
    far = json.loads(out)
    assert far["finish"] == "stop" and far["final_sparql"] == local["final_sparql"]
    assert far["answer"] == local["answer"]
    code, _, err = run(capsys, "spinach", "--eval", "--endpoint", server.url)
    assert code == 2 and "--eval" in err


# --- the app's Knowledge-graph tab over a user's graph -----------------------------------------------------


def test_the_kg_tab_opens_a_users_graph(tmp_path, server):
    """``cs224v-tui --rdf my.ttl`` (settings.kg_rdf) and ``--endpoint URL`` (settings.kg_endpoint): the console
    and the entity browser of the KG tab run over that graph."""
    import asyncio

    from textual.widgets import Input

    from tests.tui.support import SIZE, make_app, settle
    from tests.tui.support import open_tab as show_tab
    from tui.kg import FeedbackBar, KgResultsTable, SparqlEditor

    ttl = tmp_path / "my.ttl"
    ttl.write_text(TTL, encoding="utf-8")

    async def drive(app, query: str, search: str) -> tuple[str, int, list[str], str]:
        async with app.run_test(size=SIZE) as pilot:
            area = await show_tab(pilot, "kg")
            area.show_view("console")
            await pilot.pause()
            editor = app.query_one("#kg-editor", SparqlEditor)
            editor.text = query
            editor.focus()
            await pilot.press("ctrl+j")
            await settle(pilot)
            feedback, rows = app.query_one(FeedbackBar).feedback, app.query_one("#kg-results", KgResultsTable).row_count
            area.show_view("browser")
            await pilot.pause()
            app.query_one("#kg-search", Input).insert_text_at_cursor(search)
            await settle(pilot)
            hits = [h.id for h in area._hits]
            await pilot.press("enter")
            await settle(pilot)
            return feedback, rows, hits, area._page.label if area._page is not None else ""

    mine = make_app(kg_rdf=(ttl,))
    assert asyncio.run(drive(mine, "SELECT ?w WHERE { ?w ex:wrote ?x }", "ada")) == (
        "rows",
        1,
        ["ex:ada"],
        "Ada Lovelace",
    )
    far = make_app(kg_endpoint=server.url)
    feedback, rows, hits, label = asyncio.run(drive(far, MOUNTAINS, "Ashford"))
    assert (feedback, rows, label) == ("rows", 3, "Ashford") and hits == ["Q1069", "Q1075"]


def test_app_options_are_checked_before_the_app_starts(capsys, tmp_path):
    code, _, err = run(capsys, "--rdf", str(tmp_path / "gone.ttl"))
    assert code == 2 and "gone.ttl: no such file" in err
    code, _, err = run(capsys, "--endpoint", "localhost:7878")
    assert code == 2 and "not an endpoint URL" in err
