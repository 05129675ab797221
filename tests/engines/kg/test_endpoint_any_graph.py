"""Issue 26 item 5: over --endpoint, entity search, entity pages, property examples and SPINACH's tools work on a graph
whose vocabulary is not Wikidata's, and find what --rdf finds on the same file.

A FOAF / SKOS / schema.org graph (written here: labels by rdfs:label, skos:prefLabel and schema:name, an alias by
skos:altLabel, English and French labels, a blank-node value, a declared property, a person named only by foaf:name)
is served by a real ``oxigraph serve`` on 127.0.0.1 and loaded from the same file with --rdf; every answer is compared
with the IRIs written out (the endpoint does not know the file's prefixes, so its IDs are ``<IRI>``s).  Before this,
the endpoint read every graph as Wikidata's: search found nothing, and a page of ``<IRI>`` was refused."""

from __future__ import annotations

import dataclasses
import json

import pytest
from rdflib import Graph

from engines.kg import Endpoint, UnknownEntity, remote_pages
from engines.kg.generic_pages import GenericBrowser
from engines.kg.pages import EntityPage
from engines.kg.remote import RemoteEndpoint
from engines.spinach.tools import Tools
from tests.sparql_server import SKIP_REASON, OxigraphServer, oxigraph_binary

EX = "http://example.org/lib/"
TTL = """\
@prefix ex: <http://example.org/lib/> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix schema: <http://schema.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

ex:ada a foaf:Person ; rdfs:label "Ada Lovelace"@en, "Ada Lovelace (comtesse)"@fr ; foaf:knows ex:charles ;
    rdfs:comment "English mathematician and writer."@en ; ex:designed ex:notes .
ex:charles a foaf:Person ; rdfs:label "Charles Babbage" ; foaf:birthday "1791-12-26" ;
    schema:address [ schema:addressLocality "London" ; schema:addressCountry "GB" ] .
ex:engine a schema:CreativeWork ; schema:name "Analytical Engine" ; schema:creator ex:charles ;
    schema:description "A proposed mechanical general-purpose computer." .
ex:difference a schema:CreativeWork ; schema:name "Difference Engine" ; schema:creator ex:charles .
ex:computing a skos:Concept ; skos:prefLabel "Computing"@en ; skos:altLabel "Computation"@en ;
    skos:narrower ex:algorithms ; skos:definition "The use of computers."@en .
ex:algorithms a skos:Concept ; skos:prefLabel "Algorithms"@en ; skos:broader ex:computing .
ex:notes schema:name "Notes on the Analytical Engine" ; schema:author ex:ada ; schema:about ex:engine ;
    dcterms:subject ex:computing .
ex:designed a owl:ObjectProperty ; rdfs:label "designed" ; rdfs:comment "who designed a work" .
ex:luigi foaf:name "Luigi Menabrea" ; foaf:knows ex:charles .
ex:turin schema:name "Turin" .
ex:luigi schema:homeLocation ex:turin .
ex:ghost schema:about ex:nowhere .
"""

SEARCHES = (
    "Ada Lovelace",  # rdfs:label, English chosen over French
    "analytical engine",  # schema:name, exact then by word
    "Engine",  # a word in three names: exact, prefix and word ranks
    "comput",  # skos:prefLabel by prefix, and an alias (skos:altLabel)
    "computation",  # the alias alone
    "designed",  # a declared property
    "Charles",
)


@pytest.fixture(scope="module")
def ttl(tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "vocab.ttl"
    path.write_text(TTL, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def server(ttl):
    if oxigraph_binary() is None:
        pytest.skip(SKIP_REASON)
    srv = OxigraphServer.start(ttl)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def remote(server):
    endpoint = RemoteEndpoint(server.url, timeout_s=20.0)
    yield endpoint
    endpoint.close()


@pytest.fixture(scope="module")
def local(ttl):
    endpoint = Endpoint.from_rdf([ttl], store="oxigraph", timeout_s=20.0)
    yield endpoint
    endpoint.close()


def _written_out(value, names: GenericBrowser):
    """``value`` with every ID in it (``ex:ada``, ``foaf:knows``, ``<http://…>``) written as ``<IRI>``."""
    if isinstance(value, str):
        try:
            iri = names.expand(value)
        except UnknownEntity:
            return value
        return f"<{iri}>" if names.compact(iri) == value else value
    if isinstance(value, tuple):
        return tuple(_written_out(v, names) for v in value)
    if dataclasses.is_dataclass(value):
        return type(value)(**{f.name: _written_out(getattr(value, f.name), names) for f in dataclasses.fields(value)})
    return value


def _canon(endpoint, value):
    out = _written_out(value, GenericBrowser(Graph(), endpoint.dialect.namespaces))
    if isinstance(out, EntityPage):  # claims are listed by their compact ID: the IRIs' order here
        out = dataclasses.replace(out, claims=tuple(sorted(out.claims, key=lambda c: (c.pid, c.value.text))))
    return out


def test_the_endpoint_knows_the_graph_is_not_wikidata(remote):
    assert remote.wikidata is False and remote.browser.uses_wikidata() is False


@pytest.mark.parametrize("text", SEARCHES)
def test_search_finds_what_rdf_finds(text, remote, local):
    found = remote.search(text)
    assert found and _canon(remote, found) == _canon(local, local.search(text))


def test_search_ranks_exact_then_prefix_then_words(remote, local):
    # the label equal to the text, then every word of the text starting a word of the label
    assert [h.label for h in remote.search("analytical engine")] == [
        "Analytical Engine",
        "Notes on the Analytical Engine",
    ]
    # a word tier in IRI order (ex:difference, ex:engine, ex:notes)
    assert [h.label for h in remote.search("Engine")] == [
        "Difference Engine",
        "Analytical Engine",
        "Notes on the Analytical Engine",
    ]
    assert [h.label for h in remote.search("differ")] == ["Difference Engine"]  # a prefix
    assert [h.id for h in remote.search("comput")] == [f"<{EX}computing>"]  # one entity, by label or alias
    assert remote.search("designed")[0].kind == "property"
    # foaf:name is not a label predicate: neither finds the person named only by it
    for text in ("Luigi Menabrea", "no such thing"):
        assert remote.search(text) == local.search(text) == ()


@pytest.mark.parametrize(
    "iri", ["ada", "charles", "engine", "computing", "notes", "designed", "luigi", "nowhere", "turin"]
)
def test_pages_as_rdf_shows_them(iri, remote, local):
    page = remote.page(f"<{EX}{iri}>")
    assert _canon(remote, page) == _canon(local, local.page(f"ex:{iri}"))


def test_page_details(remote):
    ada = remote.page(f"<{EX}ada>")
    assert (ada.label, ada.description) == ("Ada Lovelace", "English mathematician and writer.")
    assert any(c.value.text == "Charles Babbage" for c in ada.claims)
    charles = remote.page(f"<{EX}charles>")  # a blank-node value, shown through its own statements
    address = next(c for c in charles.claims if c.pid == "schema:address")
    assert {q[2].text for q in address.qualifiers} == {"London", "GB"}
    assert remote.page(f"<{EX}designed>").datatype == "Property"
    assert remote.page("schema:creator").datatype == "Property"  # a property with no statements of its own
    for unknown in (f"<{EX}nobody>", "zz:x"):  # an IRI the graph does not hold; a prefix it does not know
        with pytest.raises(UnknownEntity):
            remote.page(unknown)


@pytest.mark.parametrize("prop", [f"<{EX}designed>", "schema:creator", "schema:name", "rdfs:label"])
def test_property_examples_as_rdf_shows_them(prop, remote, local):
    assert _canon(remote, remote.property_examples(prop)) == _canon(local, local.property_examples(prop))


@pytest.mark.parametrize("bad", ["<http://e/> } DELETE WHERE { ?s ?p ?o }>", "http://e/a b", 'schema:a"b', "<>"])
def test_malformed_ids_are_one_line_errors_and_nothing_is_sent(bad, remote, local):
    """An ID that is no IRI is refused before anything is sent (here and with --rdf, where pyoxigraph raised)."""
    before = remote.requests
    for endpoint in (remote, local):
        with pytest.raises(UnknownEntity, match="is not an IRI") as refused:
            endpoint.page(bad)
        assert "\n" not in str(refused.value)
        with pytest.raises(UnknownEntity, match="is not an IRI"):
            endpoint.property_examples(bad)
    assert remote.requests == before


def test_search_ranks_on_the_endpoint_before_its_limit(monkeypatch, tmp_path):
    """Thirty labels start with the word; the one equal to it has the last IRI.  With room for 3 candidates the
    endpoint still returns it first (ranked before the LIMIT), then the prefix matches in IRI order, as --rdf does."""
    if oxigraph_binary() is None:
        pytest.skip(SKIP_REASON)
    lines = ["@prefix ex: <http://example.org/many/> .", "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> ."]
    lines += [f'ex:a{i:02d} rdfs:label "Lovelace {i}" .' for i in range(30)]
    lines += ['ex:b00 rdfs:label "The Lovelace papers" .', 'ex:zzz rdfs:label "Lovelace" .']
    path = tmp_path / "many.ttl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(remote_pages, "SEARCH_CANDIDATES", 3)
    with OxigraphServer.start(path) as srv, RemoteEndpoint(srv.url, timeout_s=20.0) as far:
        with Endpoint.from_rdf([path], store="oxigraph") as near:
            hits = far.search("lovelace")
            assert [h.id for h in hits] == [
                "<http://example.org/many/zzz>",
                *(f"<http://example.org/many/a{i:02d}>" for i in (0, 1)),
            ]
            assert _canon(far, hits) == _canon(near, near.search("lovelace"))[:3]
            # a word that starts no label's word is ranked below one that does (both contain it)
            assert [h.label for h in far.search("papers")] == ["The Lovelace papers"]


def test_spinach_tools_over_the_endpoint(remote, local):
    far, near = Tools(remote), Tools(local)
    assert far.search_wikidata("Ada Lovelace") == f"Ada Lovelace (<{EX}ada>): English mathematician and writer."
    assert near.search_wikidata("Ada Lovelace") == "Ada Lovelace (ex:ada): English mathematician and writer."
    page = far.get_wikidata_entry(f"<{EX}ada>")
    assert "label: Ada Lovelace" in page and f"Charles Babbage (<{EX}charles>)" in page
    assert "Charles Babbage" in far.get_property_examples("schema:creator")
    assert far.get_wikidata_entry("<http://e/> }>").startswith("'<http://e/> }>' is not an IRI")


def test_a_search_the_endpoint_cannot_answer_is_an_observation(server):
    """The endpoint's timeout (or any error) during a search is said to the policy, not raised through the agent."""
    with RemoteEndpoint(server.url.replace("/query", "/nowhere"), timeout_s=5.0) as broken:
        text = Tools(broken).search_wikidata("Ada")
    assert text.startswith("The endpoint could not answer") and "\n" not in text


def test_spinach_over_the_endpoint_finds_the_entity_and_says_it_cannot_use_the_graph(server, capsys):
    """``spinach --endpoint URL "question"``: the search finds the entity --rdf finds; the simulated policy, which
    knows only Wikidata's vocabulary, says so and stops once, without an answer and without a rollback; no dollar
    figure for the simulated backend."""
    from tui.cli import main

    code = main(["spinach", "--endpoint", server.url, "Who did Ada Lovelace know?", "--json", "--no-cache"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    steps = data["steps"]
    assert [s["action"] for s in steps] == ["search_wikidata", "stop"]
    assert steps[0]["observation"] == f"Ada Lovelace (<{EX}ada>): English mathematician and writer."
    assert data["finish"] == "declined" and data["final_sparql"] is None and data["answer"] == []
    assert data["meta"]["rollbacks"] == 0 and not any(s["rolled_back"] for s in steps)
    assert "not a Wikidata ID" in steps[1]["thought"] and f"<{EX}ada>" in steps[1]["thought"]
    assert data["usage"]["estimated"] is True and data["usage"]["cost_usd"] is None
