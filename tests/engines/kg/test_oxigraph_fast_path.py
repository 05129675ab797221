"""The Oxigraph path queries pyoxigraph directly on the rewritten text (issue 16 part 5): the same rows as rdflib's
full path and as the memory store, never rdflib's parse when the syntax tree clears the query, and the full path
(which refuses and explains) for anything the tree does not clear."""

from __future__ import annotations

from collections import Counter

import pytest

from engines.kg import dialect
from engines.kg.dialect import Dialect, fast_prepare
from engines.kg.examples import EXAMPLES
from engines.kg.store import make_graph
from engines.kg.worker import evaluate
from worlds import kg as K

pytestmark = pytest.mark.skipif(dialect.tree_tools() is None, reason="tree-sitter-sparql is not installed")


def _bag(answer: dict) -> Counter:
    return Counter(tuple(sorted((k, tuple(sorted(v.items()))) for k, v in b.items())) for b in answer["bindings"])


@pytest.fixture(scope="module")
def graphs(world):
    triples = list(K.rdf_triples(world))
    return {s: make_graph(triples, s) for s in ("oxigraph", "memory")}


def _queries(built) -> list[str]:
    return [q.gold_sparql for q in K.questions(*built).all()] + [
        e.query for e in EXAMPLES if e.expect in ("rows", "empty")
    ]


def test_the_fast_path_never_parses_with_rdflib(built, graphs, monkeypatch):
    def no_rdflib(*_a, **_k):
        raise AssertionError("rdflib's parse ran")

    monkeypatch.setattr(dialect, "plan", no_rdflib)
    for q in _queries(built):
        answer = evaluate(graphs["oxigraph"], "oxigraph", q, 10.0, 10_000)
        assert answer["kind"] == "ok", q


def test_same_rows_as_the_full_path_and_the_memory_store(built, graphs, monkeypatch):
    fast = {q: evaluate(graphs["oxigraph"], "oxigraph", q, 10.0, 10_000) for q in _queries(built)}
    memory = {q: evaluate(graphs["memory"], "memory", q, 10.0, 10_000) for q in _queries(built)}
    monkeypatch.setattr(dialect, "fast_prepare", lambda *a, **k: None)  # the full path: rdflib's plan first
    for q in _queries(built):
        full = evaluate(graphs["oxigraph"], "oxigraph", q, 10.0, 10_000)
        assert fast[q]["kind"] == full["kind"] == memory[q]["kind"] == "ok"
        assert fast[q]["columns"] == full["columns"] == memory[q]["columns"]
        assert _bag(fast[q]) == _bag(full) == _bag(memory[q]), q
        assert fast[q]["notes"] == full["notes"]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }",
        "select * where { service silent <http://127.0.0.1:1/> { ?s ?p ?o } }",
        "SELECT * WHERE { ?s ?p ?o . FILTER EXISTS { SERVICE <http://127.0.0.1:1/> { ?s ?p ?o } } }",
        "SELECT * WHERE { { SELECT ?s WHERE { SERVICE ?where { ?s ?p ?o } } } }",
        "SELECT * WHERE { ?s ?p ?o # a comment\n SERVICE <http://127.0.0.1:1/> { ?s ?p ?o } }",
        "SELECT * WHERE { ?s ?p ?o . \\u0053ERVICE <http://127.0.0.1:1/> { ?s ?p ?o } }",
        'SELECT * WHERE { ?s ?p "service" }',  # the word anywhere sends it the full way
        "SELECT * FROM <http://127.0.0.1:1/g> WHERE { ?s ?p ?o }",
        "SELECT * FROM NAMED <http://127.0.0.1:1/g> WHERE { GRAPH ?g { ?s ?p ?o } }",
        "INSERT DATA { wd:Q1 rdfs:label 'x' }",
        "LOAD <http://127.0.0.1:1/data.ttl>",
        "ASK { ?s ?p ?o } INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }",
        "SELECT * WHERE { ?s ?p ?o } ; SELECT * WHERE { ?s ?p ?o }",
        "SELECT * WHERE { ?s ?p ?o ",
        "SELECT * WHERE { ?x wdt:P625 ?c . SERVICE wikibase:around { ?x wdt:P625 ?c } }",
        "",
    ],
)
def test_what_the_tree_does_not_clear_takes_the_full_path(query):
    assert fast_prepare(query) is None
    assert fast_prepare(query, Dialect.standard({"wd": K.WD})) is None


def test_wikidata_dates_take_the_full_path():
    """Wikidata reads "1990-01-01"^^xsd:dateTime as midnight UTC: that rewrite needs the plan."""
    query = 'SELECT * WHERE { ?s wdt:P569 ?d FILTER(?d > "1990-01-01"^^xsd:dateTime) }'
    assert fast_prepare(query) is None
    assert fast_prepare(query.replace("wdt:P569", "<http://e/born>"), Dialect.standard({})) is not None


def test_refusals_and_errors_come_from_the_full_path(graphs):
    g = graphs["oxigraph"]
    refused = evaluate(g, "oxigraph", "SELECT * WHERE { SERVICE <http://127.0.0.1:1/> { ?s ?p ?o } }", 5.0, 10)
    assert refused["kind"] == "refused" and "SERVICE" in refused["message"]
    assert evaluate(g, "oxigraph", "DELETE WHERE { ?s ?p ?o }", 5.0, 10)["kind"] == "refused"
    syntax = evaluate(g, "oxigraph", "SELECT ?x WHERE { ?x wdt:P31 ", 5.0, 10)
    assert syntax["kind"] == "syntax" and "line 1" in syntax["message"]
    unknown = evaluate(g, "oxigraph", "SELECT ?x WHERE { ?x foaf:name ?n }", 5.0, 10)
    assert unknown["kind"] == "syntax" and "unknown prefix foaf" in unknown["message"]


def test_the_fast_path_keeps_the_deadline(graphs):
    """Between solutions the fast path checks the deadline, as the full path does (an aggregate that computes
    before its first solution is stopped by the worker's kill instead: tests/engines/kg/test_endpoint.py)."""
    cross = "SELECT * WHERE { ?a ?p ?b . ?c ?q ?d }"
    assert fast_prepare(cross) is not None
    assert evaluate(graphs["oxigraph"], "oxigraph", cross, 0.5, 10**9)["kind"] == "timeout"
