"""Issue 25's knowledge-graph inputs, pinned beside the fuzz strategies: JSON nested 100,000 deep in a SPARQL
endpoint's reply (a RecursionError: exit 70, "internal error … this is a bug") and a 20 MB literal in an
N-Quads file (pyoxigraph's MemoryError past its 16 MB token: exit 70 too), each with neighbours drawn around
it (other depths and shapes; other sizes past the caps, other formats).  Run through the CLI in the harness's
killable worker: exit 1 or 2 with a message naming the endpoint or the file, no traceback, no hang."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.harness import QUERY_TIMEOUT_S, SLACK_S
from tests.fuzz.properties import assert_cli, fuzz_settings
from tests.loopback_http import LoopbackServer, Reply

START_S = 60.0  # a CLI run opens its endpoint (a SPARQL worker process) before anything is timed
RESULTS = '{"head": {"vars": ["x"]}, "results": {"bindings": ['
SHAPES = {  # how a reply nests `depth` levels
    "lists": lambda depth: "[" * depth + "]" * depth,
    "objects": lambda depth: '{"a":' * depth + "1" + "}" * depth,
    "in-the-bindings": lambda depth: RESULTS + '{"x":' * depth + "1" + "}" * depth + "]}}",
}


class DeepJsonEndpoint(LoopbackServer):
    """A SPARQL endpoint on 127.0.0.1 answering every query with ``body``."""

    name = "deep-json-endpoint"
    body = b"{}"

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        return Reply(self.body, content_type="application/sparql-results+json")


@pytest.fixture(scope="module")
def endpoint():
    server = DeepJsonEndpoint()
    yield server
    server.close()


@fuzz_settings(3)
@given(depth=st.integers(2_000, 200_000), shape=st.sampled_from(sorted(SHAPES)))
@example(depth=100_000, shape="lists")  # issue 25: `[[[[…` 100,000 deep in an endpoint's reply
def test_deep_json_in_an_endpoint_reply(worker, endpoint, depth, shape):
    endpoint.body = SHAPES[shape](depth).encode()
    url = endpoint.url + "/sparql"
    argv = ["sparql", "SELECT ?x WHERE { ?x ?p ?o }", "--endpoint", url, "--json"]
    out = worker.call("cli", argv, limit_s=START_S + QUERY_TIMEOUT_S + SLACK_S).result
    assert_cli(out, argv, as_json=True)
    assert out["code"] == 1 and f"the answer of the endpoint {url} is not a SPARQL result" in out["stdout"], out


def _statement(ext: str, literal: str) -> str:
    triple = f'<http://e/s> <http://e/p> "{literal}"'
    return {
        "nq": f"{triple} <http://e/g> .\n",
        "trig": "<http://e/g> { " + triple + " . }\n",
    }.get(ext, f"{triple} .\n")


@fuzz_settings(2)
@given(size=st.integers((16 << 20) - 64, 24 << 20), ext=st.sampled_from(("nq", "nt", "ttl", "trig")))
@example(size=20 << 20, ext="nq")  # issue 25: a 20 MB literal in N-Quads
def test_a_long_literal_in_an_rdf_file(worker, files, size, ext):
    path = files / f"long.{ext}"
    with path.open("w", encoding="utf-8") as f:
        f.write(_statement(ext, "short"))
        f.write(_statement(ext, "x" * size))
    argv = ["sparql", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", "--rdf", str(path)]
    out = worker.call("cli", argv, limit_s=START_S + QUERY_TIMEOUT_S + SLACK_S).result
    assert_cli(out, argv)
    assert out["code"] == 2 and f"long.{ext}: " in out["stderr"] and "rdf_max_literal_bytes" in out["stderr"], out
