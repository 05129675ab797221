"""The console's examples on a user's graph: over RDF files and a remote endpoint (a real ``oxigraph serve`` on
127.0.0.1) each gets the feedback it is named for, in both stores; and the Knowledge-graph tab offers them instead of
the built-in world's quirks, which answer nothing on another graph."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest

from engines.kg import Endpoint, SparqlRefused
from engines.kg.examples import EXAMPLES, RDF_EXAMPLES, REMOTE_EXAMPLES, examples_for
from engines.kg.remote import RemoteEndpoint
from tests.sparql_server import SKIP_REASON, OxigraphServer, oxigraph_binary

TTL = """\
@prefix ex: <http://example.org/> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
ex:ada a foaf:Person ; foaf:name "Ada Lovelace" ; foaf:knows ex:charles .
ex:charles a foaf:Person ; foaf:name "Charles Babbage" .
ex:engine a ex:Machine ; ex:designedBy ex:charles .
"""


def _bag(result) -> Counter:
    return Counter(tuple(sorted((k, tuple(sorted(v.items()))) for k, v in b.items())) for b in result.bindings)


@pytest.fixture(scope="module")
def ttl(tmp_path_factory):
    path = tmp_path_factory.mktemp("graph") / "people.ttl"
    path.write_text(TTL, encoding="utf-8")
    return path


def test_the_settings_choose_the_examples(ttl):
    assert examples_for(SimpleNamespace(kg_rdf=(), kg_endpoint=None)) is EXAMPLES
    assert examples_for(SimpleNamespace(kg_rdf=(ttl,), kg_endpoint=None)) is RDF_EXAMPLES
    assert examples_for(SimpleNamespace(kg_rdf=(), kg_endpoint="http://127.0.0.1:1/sparql")) is REMOTE_EXAMPLES
    # none of them names the built-in world's vocabulary (its entities mean nothing on another graph)
    for e in (*RDF_EXAMPLES, *REMOTE_EXAMPLES):
        assert "wd:" not in e.query and "wdt:" not in e.query, e.title
    # a remote server is somebody else's: nothing that scans its whole graph
    assert not any("COUNT" in e.query or "GROUP BY" in e.query for e in REMOTE_EXAMPLES)


@pytest.mark.parametrize("store", ["oxigraph", "memory"])
def test_every_rdf_example_gets_its_feedback_in_both_stores(ttl, store):
    with Endpoint.from_rdf([ttl], store=store, timeout_s=20.0) as e:
        for ex in RDF_EXAMPLES:
            if ex.expect == "refused":
                with pytest.raises(SparqlRefused):
                    e.execute(ex.query)
                continue
            assert e.execute(ex.query).feedback.value == ex.expect, ex.title
        classes = e.execute(RDF_EXAMPLES[0].query)
        assert [(b["class"]["value"], b["instances"]["value"]) for b in classes.bindings][0] == (
            "http://xmlns.com/foaf/0.1/Person",
            "2",
        )


def test_the_stores_agree_on_the_rdf_examples(ttl):
    with Endpoint.from_rdf([ttl], store="oxigraph") as ox, Endpoint.from_rdf([ttl], store="memory") as mem:
        for ex in RDF_EXAMPLES:
            if ex.expect == "rows":
                assert _bag(ox.execute(ex.query)) == _bag(mem.execute(ex.query)), ex.title


def test_every_remote_example_gets_its_feedback_and_refusals_send_nothing(ttl):
    if oxigraph_binary() is None:
        pytest.skip(SKIP_REASON)
    srv = OxigraphServer.start(ttl)
    try:
        remote = RemoteEndpoint(srv.url, timeout_s=20.0)
        try:
            for ex in REMOTE_EXAMPLES:
                before = remote.requests
                if ex.expect == "refused":
                    with pytest.raises(SparqlRefused):
                        remote.execute(ex.query)
                else:
                    assert remote.execute(ex.query).feedback.value == ex.expect, ex.title
                if ex.expect != "rows":  # a syntax error is found here, a refusal on the plan: nothing was sent
                    assert remote.requests == before, ex.title
        finally:
            remote.close()
    finally:
        srv.stop()
