"""Issue 28 items 1-2, the engines' side of the query editors: what completes a word in SQL, SUQL and SPARQL, the
graph's label lookup on the built-in world, a user's RDF file and a real SPARQL server on 127.0.0.1, and query files
opened and saved within their bounds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engines.completion import Suggestion, ranked
from engines.kg.complete import id_at, label_query, lookup_labels, prefix_suggestions
from engines.kg.sparql import WIKIDATA, Dialect
from engines.query_files import QueryFileError, QueryFileExists, read_query, save_query
from engines.sql.complete import sql_suggestions
from tests.sparql_server import SKIP_REASON, OxigraphServer, oxigraph_binary

TABLES = [("restaurants", ["name", "rating", "my col", "reviews"]), ("hours", ["restaurant_id", "opens"])]


# --- SQL and SUQL --------------------------------------------------------------------------------


def test_sql_offers_the_sources_columns_and_tables_then_keywords_and_functions() -> None:
    assert [s.text for s in sql_suggestions("rat", TABLES, suql=False)] == ["rating"]
    assert [s.text for s in sql_suggestions("hou", TABLES, suql=False)][0] == "hours"
    assert sql_suggestions("sel", TABLES, suql=False)[0] == Suggestion("SELECT", "SELECT", "keyword")
    lowers = [s.text for s in sql_suggestions("lowe", TABLES, suql=False)]
    assert "lower(" in lowers  # DuckDB's own function list
    assert not any(s.text == "DROP" for s in sql_suggestions("dro", TABLES, suql=False))  # the gate refuses it


def test_identifiers_are_quoted_by_sqlglot_only_when_they_must_be() -> None:
    assert [s.text for s in sql_suggestions("my", TABLES, suql=False)] == ['"my col"']
    members = sql_suggestions("restaurants.", TABLES, suql=False)
    assert [s.text for s in members] == [
        "restaurants.name",
        "restaurants.rating",
        'restaurants."my col"',
        "restaurants.reviews",
    ]
    assert [s.text for s in sql_suggestions("hours.op", TABLES, suql=False)] == ["hours.opens"]
    assert sql_suggestions("nowhere.x", TABLES, suql=False) == []


def test_answer_and_summary_come_with_their_argument_shapes_in_suql_only() -> None:
    suql = sql_suggestions("ans", TABLES, suql=True)
    assert suql[0].text == "answer(" and suql[0].label == "answer(column, 'question')"
    assert sql_suggestions("summ", TABLES, suql=True)[0].label == "summary(column)"
    assert not any(s.text.startswith("answer") for s in sql_suggestions("ans", TABLES, suql=False))


def test_ranked_puts_the_exact_match_first_and_keeps_its_bound() -> None:
    items = [Suggestion("names", "names", "c"), Suggestion("name", "name", "c"), Suggestion("name", "name", "t")]
    assert ranked("name", items, limit=5) == [items[1], items[0]]
    assert ranked("", items, limit=5) == [] and ranked("n", items, limit=1) == [items[0]]
    assert ranked("x" * 10_000, items, limit=5) == []


# --- SPARQL --------------------------------------------------------------------------------------


def test_prefixes_come_first_then_keywords() -> None:
    found = prefix_suggestions("wd", WIKIDATA)
    assert found[0].text == "wd:" and {"wdt:", "wds:"} <= {s.text for s in found}
    own = Dialect.standard({"ex": "http://example.org/"})
    assert [s.text for s in prefix_suggestions("ex", own)][0] == "ex:"
    assert prefix_suggestions("sel", own)[0].text == "SELECT"


def test_the_text_searched_is_a_literal_never_pasted() -> None:
    query = label_query('x" } ; DROP ALL ; #', wikidata=True, namespace=None, limit=5)
    assert '"x\\" } ; drop all ; #"' in query and "LIMIT 5" in query
    from rdflib.plugins.sparql import prepareQuery

    prepareQuery(query)  # it parses: the quote stayed inside the literal


def test_the_id_under_the_cursor() -> None:
    line = "?x wdt:P31 wd:Q5 ; <http://www.wikidata.org/entity/Q42> ."
    assert id_at(line, 8) == "P31" and id_at(line, 16) == "Q5" and id_at(line, 30) == "Q42"
    assert id_at(line, 1) is None and id_at("SELECT", 3) is None


@pytest.fixture(scope="module")
def world_graph():
    from engines.compose import open_graph
    from engines.settings import Settings

    graph = open_graph(Settings())
    yield graph
    graph.close()


def test_labels_on_the_built_in_world(world_graph) -> None:
    found = lookup_labels(world_graph, "wdt:inst")
    assert "wdt:P31 — instance of" in [s.label for s in found.suggestions]
    assert all(s.text.startswith("wdt:P") for s in found.suggestions)  # wdt: takes properties only
    items = lookup_labels(world_graph, "human")
    assert items.suggestions[0] == Suggestion("wd:Q1000", "wd:Q1000 — human", "item")
    assert lookup_labels(world_graph, "h").suggestions == ()  # one letter asks nothing
    assert lookup_labels(world_graph, "nope:xy").message == "nope: is not a prefix of this graph"
    assert lookup_labels(world_graph, "human", cancelled=lambda: True).suggestions == ()


TTL = """\
@prefix ex: <http://example.org/lib/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
ex:ada rdfs:label "Ada Lovelace"@en, "Ada Lovelace (comtesse)"@fr ; ex:designed ex:notes .
ex:charles rdfs:label "Charles Babbage" .
ex:computing skos:prefLabel "Computing"@en ; skos:altLabel "Computation"@en .
ex:designed rdfs:label "designed" .
"""


@pytest.fixture(scope="module")
def ttl(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("editor") / "lib.ttl"
    path.write_text(TTL, encoding="utf-8")
    return path


def test_labels_on_a_users_rdf_file(ttl) -> None:
    from engines.compose import open_graph
    from engines.settings import Settings

    graph = open_graph(Settings(), rdf=[ttl])
    try:
        found = lookup_labels(graph, "lovel")
        assert [s.label for s in found.suggestions] == ["ex:ada — Ada Lovelace"]
        assert [s.text for s in lookup_labels(graph, "comput").suggestions] == ["ex:computing"]
        assert [s.text for s in lookup_labels(graph, "ex:char").suggestions] == ["ex:charles"]
    finally:
        graph.close()


def test_labels_on_a_remote_endpoint(ttl) -> None:
    if oxigraph_binary() is None:
        pytest.skip(SKIP_REASON)
    from engines.kg.remote import RemoteEndpoint

    with OxigraphServer.start(ttl) as server, RemoteEndpoint(server.url, timeout_s=20.0) as remote:
        found = lookup_labels(remote, "babb", timeout_s=5.0)
        # the endpoint does not know the file's prefixes: the IRI is written out
        assert [s.text for s in found.suggestions] == ["<http://example.org/lib/charles>"]
        assert found.suggestions[0].label.endswith("— Charles Babbage")
        assert lookup_labels(remote, 'a"b', timeout_s=5.0).suggestions == ()  # a quote is searched, not pasted


# --- query files ---------------------------------------------------------------------------------


def test_open_refuses_a_file_too_large_or_not_utf8(tmp_path) -> None:
    good = tmp_path / "q.sql"
    good.write_bytes(b"\xef\xbb\xbfSELECT 1\r\n")
    assert read_query(str(good), 1024) == "SELECT 1\n"
    big = tmp_path / "big.sql"
    big.write_bytes(b"-- " + b"x" * 2000)
    with pytest.raises(QueryFileError, match="is not opened: it is 2,003 bytes; the most read is 1,024 bytes"):
        read_query(str(big), 1024)
    latin = tmp_path / "latin.sql"
    latin.write_bytes("SELECT 'café'".encode("latin-1"))
    with pytest.raises(QueryFileError, match="is not UTF-8 text"):
        read_query(str(latin), 1024)
    with pytest.raises(QueryFileError, match="Cannot open"):
        read_query(str(tmp_path / "missing.sql"), 1024)


def test_save_writes_only_query_files_never_through_a_link_and_asks_before_replacing(tmp_path) -> None:
    written = save_query(str(tmp_path / "mine"), "SELECT 1", suffixes=(".sql", ".txt"))
    assert written == tmp_path / "mine.sql" and written.read_text() == "SELECT 1"
    with pytest.raises(QueryFileExists):
        save_query(str(written), "SELECT 2", suffixes=(".sql",))
    assert written.read_text() == "SELECT 1"
    save_query(str(written), "SELECT 2", suffixes=(".sql",), overwrite=True)
    assert written.read_text() == "SELECT 2"
    source = tmp_path / "app.py"
    source.write_text("print('keep me')")
    with pytest.raises(QueryFileError, match="another kind of file"):
        save_query(str(source), "SELECT 1", suffixes=(".sql",), overwrite=True)
    assert source.read_text() == "print('keep me')"
    target = tmp_path / "elsewhere.txt"
    target.write_text("theirs")
    link = tmp_path / "link.sql"
    os.symlink(target, link)
    with pytest.raises(QueryFileError, match="symbolic link"):
        save_query(str(link), "SELECT 1", suffixes=(".sql",), overwrite=True)
    assert target.read_text() == "theirs"
