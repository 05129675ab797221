"""A user's RDF files (--rdf): every format loads into both stores with the same rows; the files' prefixes are
the query's; the Wikidata dialect is on only for a graph in Wikidata's vocabulary; pages and search over a
graph of any vocabulary; bad files are clear errors with line and column."""

from __future__ import annotations

from collections import Counter

import pyoxigraph as ox
import pytest

from engines.kg import Endpoint, Feedback, SparqlRefused, UnknownEntity
from engines.kg.examples import EXAMPLES
from engines.kg.rdf_files import RdfFileError, read_rdf
from tests.sparql_server import write_world
from worlds import kg as K

TURTLE = """\
@prefix ex: <http://example.org/people/> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@prefix schema: <http://schema.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

ex:alice a foaf:Person ; schema:name "Alice Moreau" ; foaf:knows ex:bob, ex:carol ;
    schema:birthDate "1990-04-01"^^xsd:date ; rdfs:comment "A chemist in Lyon."@en ; skos:altLabel "Ali"@en .
ex:bob a foaf:Person ; rdfs:label "Bob Tanaka"@en ; foaf:knows ex:carol ; schema:height 1.80 .
ex:carol a foaf:Person ; skos:prefLabel "Carol Ng" ; schema:address [ schema:addressLocality "Paris" ] .
foaf:knows rdfs:label "knows"@en .
"""

QUERY = "SELECT ?who ?name WHERE { ?who a foaf:Person . OPTIONAL { ?who schema:name ?name } } ORDER BY ?who"


def _bag(result) -> Counter:
    return Counter(tuple(sorted((k, tuple(sorted(v.items()))) for k, v in b.items())) for b in result.bindings)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("rdf")
    ttl = d / "people.ttl"
    ttl.write_text(TURTLE, encoding="utf-8")
    triples = list(ox.parse(path=str(ttl)))
    out = {"ttl": ttl}
    for ext, fmt in (("nt", ox.RdfFormat.N_TRIPLES), ("rdf", ox.RdfFormat.RDF_XML)):
        out[ext] = d / f"people.{ext}"
        ox.serialize([ox.Triple(q.subject, q.predicate, q.object) for q in triples], str(out[ext]), fmt)
    out["nq"] = d / "people.nq"
    graph = ox.NamedNode("http://example.org/graph/1")
    ox.serialize(
        [ox.Quad(q.subject, q.predicate, q.object, graph) for q in triples], str(out["nq"]), ox.RdfFormat.N_QUADS
    )
    return out


@pytest.fixture(scope="module")
def people(files):
    endpoints = {s: Endpoint.from_rdf([files["ttl"]], store=s) for s in ("oxigraph", "memory")}
    yield endpoints
    for e in endpoints.values():
        e.close()


def test_every_format_and_store_gives_the_same_rows(files, people):
    expected = people["oxigraph"].execute(QUERY)
    assert expected.feedback is Feedback.ROWS and len(expected) == 3
    assert [r["name"] for r in expected.records()] == ["Alice Moreau", None, None]
    assert _bag(people["memory"].execute(QUERY)) == _bag(expected)
    full = (
        "SELECT ?who ?name WHERE { ?who a <http://xmlns.com/foaf/0.1/Person> . "
        "OPTIONAL { ?who <http://schema.org/name> ?name } } ORDER BY ?who"
    )
    for ext in ("nt", "nq", "rdf"):
        for store in ("oxigraph", "memory"):
            with Endpoint.from_rdf([files[ext]], store=store) as e:
                if ext in ("nt", "nq"):  # N-Triples and N-Quads declare no prefixes
                    r = e.execute(QUERY)
                    assert r.feedback is Feedback.SYNTAX_ERROR and "unknown prefix" in r.message
                r = e.execute(full)
                assert _bag(r) == _bag(expected), (ext, store)


def test_literals_as_written_in_both_stores(people):
    q = "SELECT ?d ?h WHERE { OPTIONAL { ?a schema:birthDate ?d } OPTIONAL { ?b schema:height ?h } }"
    for e in people.values():
        (row,) = e.execute(q).bindings
        assert row["d"] == {
            "type": "literal",
            "value": "1990-04-01",
            "datatype": "http://www.w3.org/2001/XMLSchema#date",
        }
        assert float(row["h"]["value"]) == 1.8  # Oxigraph keeps a valid decimal in canonical form ("1.8")
    assert people["memory"].execute(q).bindings[0]["h"]["value"] == "1.80"  # the memory store as written


def test_prefixes_come_from_the_file_and_the_dialect_is_standard(files, people):
    found = read_rdf([files["ttl"]])
    assert found.prefixes["foaf"] == "http://xmlns.com/foaf/0.1/" and not found.wikidata and found.statements == 16
    e = people["oxigraph"]
    assert not e.wikidata
    r = e.execute("SELECT ?x WHERE { ?x wdt:P31 wd:Q5 }")  # Wikidata's prefixes are not declared here
    assert r.feedback is Feedback.SYNTAX_ERROR and "unknown prefix" in r.message
    with pytest.raises(SparqlRefused, match="Wikidata dialect"):
        e.execute(
            "SELECT ?x ?xLabel WHERE { ?x a foaf:Person . SERVICE <http://wikiba.se/ontology#label> "
            '{ <http://www.bigdata.com/rdf#serviceParam> <http://wikiba.se/ontology#language> "en" } }'
        )
    with pytest.raises(SparqlRefused):
        e.execute("SELECT * WHERE { SERVICE <http://elsewhere.example.com/sparql> { ?s ?p ?o } }")
    with pytest.raises(SparqlRefused):
        e.execute("DELETE WHERE { ?s ?p ?o }")


def test_a_wikidata_shaped_file_switches_the_dialect_on(tmp_path):
    world, truth = K.build(K.DEFAULT_SEED)
    nt = write_world(tmp_path / "world.nt")
    assert read_rdf([nt]).wikidata
    with Endpoint.from_rdf([nt]) as mine, Endpoint.from_world(world, store="oxigraph") as builtin:
        assert mine.wikidata
        for ex in EXAMPLES:
            if ex.expect in ("rows", "empty"):
                r, b = mine.execute(ex.query), builtin.execute(ex.query)
                assert r.feedback.value == ex.expect and _bag(r) == _bag(b), ex.title
        for q in K.questions(world, truth).forum[::7]:
            assert _bag(mine.execute(q.gold_sparql)) == _bag(builtin.execute(q.gold_sparql)), q.id
        assert mine.page("Q1053") == builtin.page("Q1053")
        assert mine.search("Ashford") == builtin.search("Ashford")


def test_pages_search_and_examples_over_any_vocabulary(people):
    for e in people.values():
        hits = e.search("alice")
        assert [(h.id, h.label, h.description) for h in hits] == [("ex:alice", "Alice Moreau", "A chemist in Lyon.")]
        assert [h.id for h in e.search("Ali")][0] == "ex:alice"  # label prefix before alias
        assert [h.id for h in e.search("carol ng")] == ["ex:carol"]  # skos:prefLabel
        assert [h.id for h in e.search("knows")] == ["foaf:knows"] and e.search("knows")[0].kind == "property"
        page = e.page("ex:alice")
        assert page.label == "Alice Moreau" and page.aliases == ("Ali",)
        lines = page.render().splitlines()
        assert "foaf:knows (knows): Bob Tanaka (ex:bob)" in lines
        assert e.page("<http://example.org/people/alice>") == page
        assert e.page("http://example.org/people/alice") == page
        carol = e.page("ex:carol")
        (address,) = [c for c in carol.claims if c.pid == "schema:address"]
        assert [(q[0], q[2].text) for q in address.qualifiers] == [("schema:addressLocality", "Paris")]
        examples = e.property_examples("foaf:knows")
        assert {(x.subject.id, x.value.id) for x in examples} == {
            ("ex:alice", "ex:bob"),
            ("ex:alice", "ex:carol"),
            ("ex:bob", "ex:carol"),
        }
        assert e.label("ex:bob") == "Bob Tanaka"
        for bad in ("ex:nobody", "nope:alice", "Q42"):
            with pytest.raises(UnknownEntity):
                e.page(bad)


def test_the_agents_tools_work_over_a_users_graph(people):
    from engines.spinach.tools import Tools

    tools = Tools(people["oxigraph"])
    assert "Alice Moreau (ex:alice)" in tools.run("search_wikidata", "alice").observation
    assert "foaf:knows" in tools.run("get_wikidata_entry", "ex:alice").observation
    assert "Bob Tanaka" in tools.run("get_property_examples", "foaf:knows").observation
    out = tools.run("execute_sparql", QUERY)
    assert out.feedback == "rows" and "Alice Moreau" in out.observation


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (
            "broken.ttl",
            '@prefix ex: <http://e/> .\nex:a ex:b "open\nex:c ex:d ex:e .\n',
            r"broken\.ttl: syntax error at line 2, column \d+",
        ),
        (
            "broken.nt",
            "<http://e/a> <http://e/b> <http://e/c> .\n<http://e/a> <http://e/b> .\n",
            r"broken\.nt: syntax error at line 2",
        ),
        (
            "broken.rdf",
            "<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>\n"
            "<rdf:Description rdf:about='http://e/a'><ex:p>1</ex:p></rdf:Description></rdf:RDF>",
            r"broken\.rdf: syntax error",
        ),
        ("undeclared.ttl", "ex:a ex:b ex:c .\n", r"undeclared\.ttl: syntax error at line 1, column 1"),
        ("data.json", "{}", r"unknown RDF format '\.json'.*Turtle \(\.ttl"),
        ("noext", "x", r"unknown RDF format '\(no extension\)'"),
    ],
)
def test_bad_files_are_clear_errors(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(RdfFileError, match=expected):
        read_rdf([path])
    with pytest.raises(RdfFileError):
        Endpoint.from_rdf([path])


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(RdfFileError, match="no such file"):
        read_rdf([tmp_path / "nowhere.ttl"])
    (tmp_path / "dir.ttl").mkdir()
    with pytest.raises(RdfFileError, match="is a directory"):
        read_rdf([tmp_path / "dir.ttl"])
    latin = tmp_path / "latin.nt"
    latin.write_bytes('<http://e/a> <http://e/b> "caf\xe9" .\n'.encode("latin-1"))
    with pytest.raises(RdfFileError, match="latin.nt"):
        read_rdf([latin])
    with pytest.raises(RdfFileError, match="no RDF file"):
        read_rdf([])


def test_several_files_make_one_graph(tmp_path, files):
    extra = tmp_path / "more.ttl"
    extra.write_text(
        "@prefix ex: <http://example.org/people/> .\n@prefix foaf: <http://xmlns.com/foaf/0.1/> .\n"
        'ex:dan a foaf:Person ; <http://schema.org/name> "Dan" .\n',
        encoding="utf-8",
    )
    with Endpoint.from_rdf([files["ttl"], extra]) as e:
        assert len(e.execute(QUERY)) == 4 and e.page("ex:dan").label == "Dan"
