"""Wikidata's dialect on rdflib: conformance on SPINACH's 155 gold queries, and each rewrite."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engines.kg.dialect import SparqlRefused, SparqlSyntaxError, prepare, rewrite

DEV = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "spinach" / "dev.json"


@pytest.mark.skipif(not DEV.exists(), reason="the SPINACH dev set is not beside the checkout")
def test_at_least_154_of_the_155_gold_queries_are_accepted():
    data = json.loads(DEV.read_text(encoding="utf-8"))
    assert len(data) == 155
    failures = []
    for item in data:
        try:
            prepare(item["sparql"])
        except (SparqlRefused, SparqlSyntaxError) as e:
            failures.append((item["id"], str(e)))
    accepted = len(data) - len(failures)
    assert accepted >= 154, failures


def text(q: str) -> str:
    return rewrite(q)[0]


def test_no_prefix_lines_needed():
    p = prepare(
        "SELECT ?x WHERE { wd:Q1 wdt:P31 ?x . ?s p:P166 ?st . ?st ps:P166 ?a ; pq:P585 ?d . ?x rdfs:label ?l . ?x schema:description ?d2 }"
    )
    assert p.form == "SELECT" and p.algebra is not None


def test_label_service_becomes_optional_bindings():
    q = 'SELECT ?item ?itemLabel ?itemDescription WHERE { ?item wdt:P31 wd:Q5 . SERVICE wikibase:label { bd:serviceParam wikibase:language "fr,en". } }'
    t, _form, notes, _u = rewrite(q)
    assert "SERVICE" not in t and "emulated SERVICE wikibase:label" in notes
    assert t.index('"en"') > t.index('"fr"')  # language order kept
    assert "AS ?itemLabel" in t and "AS ?itemDescription" in t
    prepare(q)


def test_manual_label_service():
    q = 'SELECT ?x ?name WHERE { ?x wdt:P31 wd:Q5 . SERVICE wikibase:label { bd:serviceParam wikibase:language "en" . ?x rdfs:label ?name . } }'
    assert "AS ?name" in text(q)


def test_named_subqueries_are_inlined():
    q = "SELECT ?x WITH { SELECT ?x WHERE { ?x wdt:P31 wd:Q5 } } AS %people WITH { SELECT ?x WHERE { INCLUDE %people ?x wdt:P19 ?b } } AS %born WHERE { INCLUDE %born }"
    t = text(q)
    assert "INCLUDE" not in t and "WITH" not in t and t.count("SELECT") == 3
    prepare(q)
    with pytest.raises(SparqlSyntaxError, match="%nowhere"):
        prepare("SELECT ?x WHERE { INCLUDE %nowhere }")


def test_hints_dropped_and_spacing_quirks_accepted():
    q = 'SELECT ?a?b WHERE { ?a wdt:P31 / wdt:P279 * ?b . hint:Prior hint:gearing "forward" . ?a wdt:P131 + ?c . }'
    t, _f, notes, _u = rewrite(q)
    assert "hint:" not in t and "wdt:P279*" in t and "wdt:P131+" in t and "?a ?b" in t
    assert len(notes) == 3
    prepare(q)


def test_strings_iris_and_comments_are_not_rewritten():
    q = 'SELECT ?x WHERE { ?x rdfs:label "SERVICE wikibase:label { } hint:Query hint:x 1 . ?a?b" . # SERVICE <http://evil/> {\n}'
    t = text(q)
    assert '"SERVICE wikibase:label { } hint:Query hint:x 1 . ?a?b"' in t and "evil" not in t


@pytest.mark.parametrize(
    "query, fragment",
    [
        ("INSERT DATA { wd:Q1 wdt:P31 wd:Q2 }", "read-only"),
        ("DELETE WHERE { ?s ?p ?o }", "read-only"),
        ("PREFIX ex: <http://e/> CLEAR ALL", "read-only"),
        ("LOAD <http://example.org/data.ttl>", "read-only"),
        ("SELECT * FROM <http://example.org/g> WHERE { ?s ?p ?o }", "FROM"),
        ("SELECT * WHERE { SERVICE <http://dbpedia.org/sparql> { ?s ?p ?o } }", "never calls other endpoints"),
        ("SELECT * WHERE { SERVICE SILENT ?endpoint { ?s ?p ?o } }", "never calls other endpoints"),
    ],
)
def test_refused(query, fragment):
    with pytest.raises(SparqlRefused, match=fragment):
        prepare(query)


def test_service_to_the_endpoint_itself_is_inlined():
    t, _f, notes, _u = rewrite("SELECT ?s WHERE { SERVICE <https://query.wikidata.org/sparql> { ?s wdt:P31 wd:Q5 } }")
    assert "SERVICE" not in t and any("inlined SERVICE" in n for n in notes)


def test_geospatial_service_plans_but_is_marked_offline():
    p = prepare(
        "SELECT ?place WHERE { wd:Q1 wdt:P625 ?c . SERVICE wikibase:around { ?place wdt:P625 ?loc . "
        'bd:serviceParam wikibase:center ?c ; wikibase:radius "1" . } }'
    )
    assert p.unsupported and "wikibase:around" in p.unsupported


@pytest.mark.parametrize(
    "query", ["", "   ", "SELECT", "SELECT ?x WHERE { ?x ?p ", "SELEKT * WHERE {}", "SELECT * WHERE { ?s foo:bar ?o }"]
)
def test_syntax_errors_say_where(query):
    with pytest.raises(SparqlSyntaxError) as caught:
        prepare(query)
    assert "Syntax error" in str(caught.value)


# --- what may run is decided on the plan, after escapes are expanded -------------------------------


def test_escapes_are_expanded_before_anything_reads_the_query():
    p = prepare('SELECT ?x WHERE { BIND("caf\\u00E9" AS ?x) }')
    assert "café" in p.text and "\\u" not in p.text
    with pytest.raises(SparqlSyntaxError, match="expands to another escape"):
        prepare("SELECT * WHERE { SERV\\u005Cu0049CE <http://e/> { ?s ?p ?o } }")
    with pytest.raises(SparqlSyntaxError):
        prepare('SELECT * WHERE { ?s ?p "\\UFFFFFFFF" }')


@pytest.mark.parametrize(
    "query, fragment",
    [
        ("SELECT * WHERE { SERV\\u0049CE <http://e/sparql> { ?s ?p ?o } }", "SERVICE <http://e/sparql> is refused"),
        ("SELECT * WHERE {SERVICE<http://e/sparql>{?s ?p ?o}}", "never calls other endpoints"),
        ("SELECT * WHERE { VALUES ?e { <http://e/> } SERVICE ?e { ?s ?p ?o } }", "SERVICE ?e is refused"),
        ("PREFIX x: <http://e/> SELECT * WHERE { SERVICE x:q { ?s ?p ?o } }", "never calls other endpoints"),
        ("SELECT * FR\\u004FM <http://e/g> WHERE { ?s ?p ?o }", "FROM is refused"),
        ("SELECT * FROM NAMED<file:///etc/passwd> WHERE { GRAPH ?g { ?s ?p ?o } }", "FROM NAMED is refused"),
        ("L\\u004FAD <http://e/data.ttl>", "LOAD is refused"),
        ("WITH <http://e/g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }", "read-only"),
    ],
)
def test_refused_on_the_plan_however_spelled(query, fragment):
    with pytest.raises(SparqlRefused, match=re.escape(fragment)):
        prepare(query)


def test_a_service_the_rewrite_did_not_take_is_refused_with_a_hint():
    """A relative IRI that resolves to the label service is not emulated (the rewrite reads the text);
    left in the plan it would be sent to that address, so it is refused."""
    with pytest.raises(SparqlRefused, match=r"SERVICE wikibase:label is refused.*Write it as SERVICE wikibase:label"):
        prepare("BASE <http://wikiba.se/ontology> SELECT * WHERE { SERVICE <#label> { ?s ?p ?o } }")
