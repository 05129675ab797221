"""The remote endpoint (--endpoint): against a real SPARQL server (``oxigraph serve`` on 127.0.0.1, holding the
built-in world), rows compared with the local store; and the protocol's rules (User-Agent, 429 back-off, no
redirects, size and row bounds, refusals before sending) against a recording transport."""

from __future__ import annotations

import json
from collections import Counter

import httpx
import pytest

from engines.kg import Endpoint, Feedback, SparqlRefused, UnknownEntity
from engines.kg.examples import EXAMPLES
from engines.kg.remote import RemoteEndpoint, RemoteError, user_agent
from tests.sparql_server import SKIP_REASON, OxigraphServer, oxigraph_binary, write_world
from worlds import kg as K


def _bag(result) -> Counter:
    return Counter(tuple(sorted((k, tuple(sorted(v.items()))) for k, v in b.items())) for b in result.bindings)


# --- against a real server ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if oxigraph_binary() is None:
        print(f"\nskipping the remote-endpoint tests: {SKIP_REASON}")
        pytest.skip(SKIP_REASON)
    nt = write_world(tmp_path_factory.mktemp("world") / "world.nt")
    srv = OxigraphServer.start(nt)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def remote(server):
    endpoint = RemoteEndpoint(server.url, timeout_s=20.0)
    yield endpoint
    endpoint.close()


@pytest.fixture(scope="module")
def local(world):
    endpoint = Endpoint.from_world(world, store="memory", timeout_s=20.0)
    yield endpoint
    endpoint.close()


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.expect != "timeout"], ids=lambda e: e.title[:40])
def test_console_examples_same_feedback_and_rows(example, remote, local):
    if example.expect == "refused":
        before = remote.requests
        with pytest.raises(SparqlRefused):
            remote.execute(example.query)
        assert remote.requests == before  # refused on the plan: nothing was sent
        return
    r, l = remote.execute(example.query), local.execute(example.query)
    assert r.feedback is l.feedback and r.feedback.value == example.expect
    assert r.columns == l.columns
    assert _bag(r) == _bag(l)


def test_every_gold_query_returns_the_local_rows(built, remote, local):
    questions = K.questions(*built).all()
    assert len(questions) == 96
    for q in questions:
        r, l = remote.execute(q.gold_sparql), local.execute(q.gold_sparql)
        assert r.feedback is l.feedback, (q.id, r.message)
        assert r.columns == l.columns and _bag(r) == _bag(l), q.id


def test_timeout_feedback(server):
    slow = RemoteEndpoint(server.url, timeout_s=0.5, cache_size=0)
    cross = next(e for e in EXAMPLES if e.expect == "timeout").query
    r = slow.execute(cross)
    assert r.feedback is Feedback.TIMEOUT and "0.5 s" in r.message
    assert r.elapsed_s < 5
    slow.close()


def test_row_cap_truncates(server):
    capped = RemoteEndpoint(server.url, row_cap=3)
    r = capped.execute("SELECT ?s WHERE { ?s wdt:P31 ?c }")
    assert r.feedback is Feedback.ROWS and len(r) == 3 and r.truncated
    capped.close()


def test_ask_and_construct(remote, local):
    ask = "ASK { wd:Q1053 wdt:P31 ?c }"
    assert remote.execute(ask).boolean is True and local.execute(ask).boolean is True
    construct = "CONSTRUCT { wd:Q1053 ?p ?o } WHERE { wd:Q1053 ?p ?o }"
    r, l = remote.execute(construct), local.execute(construct)
    assert r.columns == ("subject", "predicate", "object") and _bag(r) == _bag(l) and len(r) > 3


def test_syntax_error_is_found_before_sending(remote):
    before = remote.requests
    r = remote.execute("SELECT ?x WHERE { ?x wdt:P31 ")
    assert r.feedback is Feedback.SYNTAX_ERROR and "line 1" in r.message and remote.requests == before


@pytest.mark.parametrize("entity", ["Q1053", "Q1069", "P31", "P166", "Q1000"])
def test_pages_as_locally(entity, remote, local):
    assert remote.page(entity) == local.page(entity)


@pytest.mark.parametrize("text", ["Ashford", "instance of", "award", "mount", "no such thing at all"])
def test_search_as_locally(text, remote, local):
    assert remote.search(text) == local.search(text)


@pytest.mark.parametrize("pid", ["P166", "P31", "P1303"])
def test_property_examples_as_locally(pid, remote, local):
    assert remote.property_examples(pid) == local.property_examples(pid)


def test_unknown_entities(remote, local):
    for bad in ("Q99999999", "hello"):
        with pytest.raises(UnknownEntity):
            local.page(bad)
        with pytest.raises(UnknownEntity):
            remote.page(bad)
    with pytest.raises(UnknownEntity):
        remote.property_examples("P99999")


def test_the_agent_runs_over_the_endpoint(built, remote, local):
    """The sim policy over --endpoint: the simple questions take the same steps as locally, and every
    answer is the rows its final query returns on the local store."""
    from engines.llm.client import llm_from_settings
    from engines.settings import Settings
    from engines.spinach.agent import SpinachAgent

    llm = llm_from_settings(Settings(backend="sim"))
    sets = K.questions(*built)
    for q in (*sets.simple[:4], *sets.forum[::14]):
        far = SpinachAgent(remote, llm).run(q.question)
        assert far.finish == "stop" and far.final_sparql, q.id
        expected = local.execute(far.final_sparql)
        assert Counter(map(json.dumps, far.answer)) == Counter(map(json.dumps, expected.bindings)), q.id
        if q.set == "simple":
            near = SpinachAgent(local, llm).run(q.question)
            assert [(s.action, s.argument) for s in far.steps] == [(s.action, s.argument) for s in near.steps]


# --- the protocol's rules, on a recording transport ------------------------------------------------------


class Recorder:
    """An httpx transport answering from a list of responses, recording every request."""

    def __init__(self, *responses: httpx.Response) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]


ROWS = {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "uri", "value": "http://e/1"}}]}}


def _endpoint(recorder: Recorder, **kw) -> tuple[RemoteEndpoint, list[float]]:
    slept: list[float] = []
    ep = RemoteEndpoint(
        "https://sparql.example.org/query", transport=httpx.MockTransport(recorder), sleep=slept.append, **kw
    )
    return ep, slept


def test_protocol_request_shape_and_user_agent():
    rec = Recorder(httpx.Response(200, json=ROWS))
    ep, _ = _endpoint(rec)
    r = ep.execute('SELECT ?x WHERE { ?x wdt:P31 wd:Q5 . FILTER(?x != "a\\"b") }')
    assert r.feedback is Feedback.ROWS and r.records() == [{"x": "http://e/1"}]
    (req,) = rec.requests
    assert req.method == "POST" and req.url.host == "sparql.example.org"
    assert req.headers["content-type"] == "application/x-www-form-urlencoded"
    assert req.headers["accept"] == "application/sparql-results+json"
    ua = req.headers["user-agent"]
    assert ua == user_agent() and ua.startswith("cs224v-tui/") and "(https://" in ua
    from urllib.parse import parse_qs

    sent = parse_qs(req.content.decode())["query"][0]
    assert "PREFIX wdt: <http://www.wikidata.org/prop/direct/>" in sent and sent.endswith('"a\\"b") }')


def test_429_honours_retry_after_and_is_bounded():
    rec = Recorder(
        httpx.Response(429, headers={"Retry-After": "2"}),
        httpx.Response(429, headers={"Retry-After": "3"}),
        httpx.Response(200, json=ROWS),
    )
    ep, slept = _endpoint(rec)
    assert ep.execute("SELECT ?x WHERE { ?x ?p ?o }").feedback is Feedback.ROWS
    assert slept == [2.0, 3.0] and len(rec.requests) == 3

    always = Recorder(httpx.Response(429, headers={"Retry-After": "1"}))
    ep, slept = _endpoint(always, retries=2)
    r = ep.execute("SELECT ?x WHERE { ?x ?p ?o }")
    assert r.feedback is Feedback.SYNTAX_ERROR and "rate-limiting" in r.message
    assert slept == [1.0, 1.0] and len(always.requests) == 3

    too_long = Recorder(httpx.Response(429, headers={"Retry-After": "3600"}))
    ep, slept = _endpoint(too_long, max_wait_s=30)
    r = ep.execute("SELECT ?x WHERE { ?x ?p ?o }")
    assert "3600 s" in r.message and slept == [] and len(too_long.requests) == 1


def test_redirects_are_not_followed():
    rec = Recorder(httpx.Response(302, headers={"Location": "https://elsewhere.example.com/sparql"}))
    ep, _ = _endpoint(rec)
    r = ep.execute("SELECT ?x WHERE { ?x ?p ?o }")
    assert r.feedback is Feedback.SYNTAX_ERROR and "elsewhere.example.com" in r.message and "redirect" in r.message
    assert [q.url.host for q in rec.requests] == ["sparql.example.org"]


def test_response_size_is_bounded():
    big = {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "literal", "value": "y" * 5000}}] * 50}}
    ep, _ = _endpoint(Recorder(httpx.Response(200, json=big)), max_response_bytes=10_000)
    r = ep.execute("SELECT ?x WHERE { ?x ?p ?o }")
    assert r.feedback is Feedback.SYNTAX_ERROR and "LIMIT" in r.message


def test_server_errors_become_feedback():
    ep, _ = _endpoint(Recorder(httpx.Response(500, text="java.util.concurrent.TimeoutException\n at ...")))
    assert ep.execute("SELECT ?x WHERE { ?x ?p ?o }").feedback is Feedback.TIMEOUT
    ep, _ = _endpoint(Recorder(httpx.Response(400, text="Parse error: unknown function\n")))
    r = ep.execute("SELECT ?x WHERE { ?x ?p ?o }")
    assert r.feedback is Feedback.SYNTAX_ERROR and "unknown function" in r.message
    ep, _ = _endpoint(Recorder(httpx.Response(200, text="<html>not json</html>")))
    assert "not a SPARQL result" in ep.execute("SELECT ?x WHERE { ?x ?p ?o }").message
    bad_cell = {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "script", "value": "1"}}]}}
    ep, _ = _endpoint(Recorder(httpx.Response(200, json=bad_cell)))
    assert "not a SPARQL result" in ep.execute("SELECT ?x WHERE { ?x ?p ?o }").message


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * WHERE { SERVICE <https://dbpedia.org/sparql> { ?s ?p ?o } }",
        "SELECT * WHERE { SERVICE SILENT <http://127.0.0.1:1/x> { ?s ?p ?o } }",
        "SELECT * WHERE { ?s ?p ?o . SERVICE ?where { ?s ?p ?o } }",
        "SELECT * FROM <http://elsewhere.example.com/g> WHERE { ?s ?p ?o }",
        "INSERT DATA { wd:Q1 rdfs:label 'x' }",
        "LOAD <http://elsewhere.example.com/data.ttl>",
        'SELECT ?item WHERE { SERVICE wikibase:mwapi { bd:serviceParam wikibase:api "EntitySearch" . } }',
    ],
)
def test_refused_before_anything_is_sent(query):
    rec = Recorder(httpx.Response(200, json=ROWS))
    ep, _ = _endpoint(rec)
    with pytest.raises(SparqlRefused):
        ep.execute(query)
    assert rec.requests == []


def test_the_label_service_is_rewritten_not_sent():
    rec = Recorder(httpx.Response(200, json={"head": {"vars": ["x", "xLabel"]}, "results": {"bindings": []}}))
    ep, _ = _endpoint(rec)
    r = ep.execute(
        'SELECT ?x ?xLabel WHERE { ?x wdt:P31 wd:Q5 . SERVICE wikibase:label { bd:serviceParam wikibase:language "en". } }'
    )
    assert r.feedback is Feedback.EMPTY and "emulated SERVICE wikibase:label" in r.notes
    from urllib.parse import parse_qs

    sent = parse_qs(rec.requests[0].content.decode())["query"][0]
    from engines.kg.dialect import Dialect, prepare

    assert "SERVICE" not in prepare(sent, Dialect.standard({})).text.upper().replace("SERVICEPARAM", "")


def test_wikidata_search_goes_to_the_same_address():
    """On Wikidata's own endpoint the search asks its EntitySearch service, through that endpoint only."""
    hit = {"head": {"vars": ["e"]}, "results": {"bindings": [{"e": {"type": "uri", "value": K.WD + "Q42"}}]}}
    rec = Recorder(httpx.Response(200, json=hit))
    ep = RemoteEndpoint("https://query.wikidata.org/sparql", transport=httpx.MockTransport(rec), sleep=lambda s: None)
    ep.search('Douglas "Adams"')
    assert {q.url.host for q in rec.requests} == {"query.wikidata.org"}
    from urllib.parse import parse_qs

    first = parse_qs(rec.requests[0].content.decode())["query"][0]
    assert "wikibase:mwapi" in first and 'mwapi:search "douglas adams"' in first


def test_bad_urls():
    for url in ("ftp://example.org/sparql", "example.org/sparql", "http://user:pw@example.org/sparql", ""):
        with pytest.raises(RemoteError):
            RemoteEndpoint(url)


def test_wikidata_runs_its_own_label_service():
    """To query.wikidata.org the label service goes as written (its own, fast); every other SERVICE is still
    refused on the plan; elsewhere the label service is emulated in standard SPARQL."""
    from urllib.parse import parse_qs

    labelled = 'SELECT ?x ?xLabel WHERE { ?x wdt:P31 wd:Q5 . SERVICE wikibase:label { bd:serviceParam wikibase:language "en". } }'
    empty = {"head": {"vars": ["x", "xLabel"]}, "results": {"bindings": []}}
    rec = Recorder(httpx.Response(200, json=empty))
    wikidata = RemoteEndpoint("https://query.wikidata.org/sparql", transport=httpx.MockTransport(rec))
    r = wikidata.execute(labelled)
    assert r.feedback is Feedback.EMPTY and "SERVICE wikibase:label left to the endpoint" in r.notes
    sent = parse_qs(rec.requests[0].content.decode())["query"][0]
    assert "SERVICE wikibase:label {" in sent and "OPTIONAL" not in sent
    for bad in (
        "SELECT * WHERE { SERVICE <https://dbpedia.org/sparql> { ?s ?p ?o } }",
        "SELECT * WHERE { SERVICE wikibase:label { ?s ?p ?o } SERVICE <http://127.0.0.1:1/> { ?s ?p ?o } }",
    ):
        with pytest.raises(SparqlRefused):
            wikidata.execute(bad)
    assert len(rec.requests) == 1
    other = Recorder(httpx.Response(200, json=empty))
    RemoteEndpoint("https://qlever.example.org/api/wikidata", transport=httpx.MockTransport(other)).execute(labelled)
    sent = parse_qs(other.requests[0].content.decode())["query"][0]
    assert "wikibase:label" not in sent and "OPTIONAL" in sent
