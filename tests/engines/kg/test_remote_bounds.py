"""Issue 25, a remote SPARQL endpoint's bytes: a hostile server on 127.0.0.1 answers JSON nested 100,000
deep (a RecursionError, exit 70, before), a compressed bomb (``Content-Encoding: gzip, gzip``: 1.3 KB that
httpx inflated to 512 MB before the 32 MB cap counted a byte), a term longer than pyoxigraph's 16 MB in a
CONSTRUCT's N-Triples (a MemoryError), IRIs that are not IRIs in the replies behind a page (rdflib's bare
Exception).  Each is an error result or message naming the endpoint, the process stays small."""

from __future__ import annotations

import gzip
import json
import struct
import zlib

import pytest

from engines.kg import Feedback, UnknownEntity
from engines.kg.remote import RemoteEndpoint
from tests.loopback_http import LoopbackServer, Reply
from tests.measured import run_measured
from tui.cli import main

SELECT = "SELECT ?x WHERE { ?x ?p ?o } LIMIT 1"


class HostileEndpoint(LoopbackServer):
    """Answers every SPARQL request with ``reply``."""

    name = "hostile-sparql"

    def __init__(self) -> None:
        super().__init__()
        self.reply = Reply({})
        self.largest_request = 0

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        self.largest_request = max(self.largest_request, len(raw))
        return self.reply


@pytest.fixture
def server():
    srv = HostileEndpoint()
    yield srv
    srv.close()


def results_json(reply: bytes) -> Reply:
    return Reply(reply, content_type="application/sparql-results+json")


def gzip_of_zeros(mb: int) -> bytes:
    """A gzip stream of ``mb`` MB of zeros, made in a blink: one fully flushed deflate block repeated."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = deflate.compress(bytes(1 << 20)) + deflate.flush(zlib.Z_FULL_FLUSH)
    end = deflate.flush()
    crc, zero = 0, bytes(1 << 20)
    for _ in range(mb):
        crc = zlib.crc32(zero, crc)
    return (
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + block * mb + end + struct.pack("<II", crc, (mb << 20) % (1 << 32))
    )


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"head": {"vars": ["x"]}, "results": {"bindings": [' + b'{"x":' * 100_000 + b"1" + b"}" * 100_000 + b"]}}",
    ],
    ids=["bare", "in-the-bindings"],
)
def test_deep_json_in_a_reply_is_a_message_naming_the_endpoint(capsys, server, body):
    server.reply = results_json(body)
    code = main(["sparql", SELECT, "--endpoint", server.url + "/sparql", "--json"])
    out = capsys.readouterr()
    assert code == 1 and "Traceback" not in out.err + out.out
    message = json.loads(out.out)["message"]
    assert message == (
        f"Query error: the answer of the endpoint {server.url}/sparql is not a SPARQL result "
        "(JSON nested more deeply than a SPARQL result is)."
    )


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [
        ("gzip, gzip", "answered with Content-Encoding 'gzip,gzip'; only gzip (or none) is accepted."),
        ("gzip", "is larger than 32 MB; add a LIMIT or select fewer variables."),
    ],
)
def test_compressed_bombs_stay_under_the_cap(server, encoding, expected):
    """512 MB of zeros in 1.3 KB (twice gzipped) or in 520 KB (once): the CLI's process stays small."""
    inner = gzip_of_zeros(512)
    server.reply = Reply(
        gzip.compress(inner) if encoding == "gzip, gzip" else inner,
        headers={"content-encoding": encoding},
        content_type="application/sparql-results+json",
    )
    got = run_measured("sparql", SELECT, "--endpoint", server.url + "/sparql", soft_address_space=4 << 30)
    assert got["rss"] < 300 << 20, f"peak RSS {got['rss'] >> 20} MB"  # was 1,076 MB for the twice gzipped
    assert got["code"] == 1 and "Traceback" not in got["stderr"], got
    assert f"the endpoint {server.url}/sparql" in got["stdout"] and expected in got["stdout"]


def test_a_term_over_16_mb_in_a_construct_reply(capsys, server):
    server.reply = Reply(
        b'<http://e/a> <http://e/p> "' + b"x" * ((16 << 20) + 10) + b'" .\n', content_type="application/n-triples"
    )
    code = main(["sparql", "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", "--endpoint", server.url + "/sparql"])
    out = capsys.readouterr()
    assert code == 1 and "Traceback" not in out.err + out.out
    assert (
        f"Query error: the answer of the endpoint {server.url}/sparql is not a SPARQL result "
        "(a term longer than 16 MB)." in out.out
    )


def test_terms_that_cannot_go_into_a_query_are_dropped_from_pages(server):
    """A page's statements, then the labels of what they link to: an endpoint answering an "IRI" that is none
    made rdflib raise a bare Exception when it was written into the labels' query."""
    row = {
        "p": {"type": "uri", "value": "http://www.wikidata.org/prop/direct/P31"},
        "o": {"type": "uri", "value": "http://e/o> . } DROP ALL ; #"},
        "e": {"type": "bnode", "value": "b } } #"},
        "l": {"type": "literal", "value": "x", "xml:lang": "en } #"},
    }
    server.reply = results_json(json.dumps({"head": {"vars": list(row)}, "results": {"bindings": [row]}}).encode())
    with RemoteEndpoint(server.url + "/sparql") as endpoint:
        assert endpoint.execute("SELECT * WHERE { ?s ?p ?o }").feedback is Feedback.ROWS  # a query's rows, as sent
        with pytest.raises(UnknownEntity, match="There is no entity Q1"):
            endpoint.page("Q1")
        assert endpoint.search("anything") == ()


def test_a_literal_as_a_statement_node_is_not_sent_back(server):
    """Property examples ask for the statements' qualifiers with the statement nodes the endpoint named: a 4 MB
    literal there went into that query (seconds of rdflib's parse here, 4 MB sent)."""
    wd, wikibase = "http://www.wikidata.org/entity/", "http://wikiba.se/ontology#"
    row = {
        "p": {"type": "uri", "value": "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"},
        "o": {"type": "uri", "value": wikibase + "Property"},
        "s": {"type": "uri", "value": wd + "Q1"},
        "st": {"type": "literal", "value": "x" * (4 << 20)},
        "q": {"type": "uri", "value": "http://www.wikidata.org/prop/qualifier/P2"},
        "v": {"type": "literal", "value": "v"},
    }
    server.reply = results_json(json.dumps({"head": {"vars": list(row)}, "results": {"bindings": [row]}}).encode())
    with RemoteEndpoint(server.url + "/sparql") as endpoint:
        assert endpoint.property_examples("P31") == ()
    assert 0 < server.largest_request < 64 << 10


def test_qualifier_rows_without_their_qualifier_are_dropped(server):
    """The qualifiers of property examples: a row binding no ?q or ?v was a KeyError (exit 70)."""
    wd, wikibase = "http://www.wikidata.org/entity/", "http://wikiba.se/ontology#"
    row = {
        "p": {"type": "uri", "value": "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"},
        "o": {"type": "uri", "value": wikibase + "Property"},
        "s": {"type": "uri", "value": wd + "Q1"},
        "st": {"type": "uri", "value": "http://www.wikidata.org/entity/statement/Q1-1"},
    }
    server.reply = results_json(json.dumps({"head": {"vars": list(row)}, "results": {"bindings": [row]}}).encode())
    with RemoteEndpoint(server.url + "/sparql") as endpoint:
        assert endpoint.property_examples("P31") == ()
