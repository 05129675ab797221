"""SPARQL never reaches the network or a file, however the query is spelled; bombs stay in their bounds.

A recording HTTP server on 127.0.0.1 counts every connection, a FIFO counts every open (a reader
blocks until the test's poller opens the other end) and a plain file holds a marker triple; each
of the spellings below runs on both stores with the worker's network namespace switched off, so
the check on the plan and the stores' own switches must hold by themselves.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engines.kg import Endpoint, Feedback, SparqlRefused
from engines.kg.dialect import SparqlSyntaxError, prepare
from worlds import kg as K

MARK = "LEAKED-7f3a"


class _Recorder(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.connections = 0

    def process_request(self, request, client_address):  # every TCP connection, whatever it sends
        self.connections += 1
        super().process_request(request, client_address)


class _Handler(http.server.BaseHTTPRequestHandler):
    def _answer(self) -> None:
        body = json.dumps(
            {
                "head": {"vars": ["s", "p", "o"]},
                "results": {"bindings": [{v: {"type": "literal", "value": MARK} for v in ("s", "p", "o")}]},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args) -> None:
        pass


class _FifoWatch:
    """Counts opens of a FIFO: a blocking open for reading waits until the poller opens the write end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path)
        self.opens = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: nobody is reading
                time.sleep(0.005)
                continue
            self.opens += 1
            try:
                os.write(fd, f'<urn:leak:s> <urn:leak:p> "{MARK}" .\n'.encode())
            except OSError:
                pass
            os.close(fd)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)


@pytest.fixture(scope="module")
def traps(tmp_path_factory):
    server = _Recorder()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    folder = tmp_path_factory.mktemp("sparql-traps")
    leak = folder / "leak.nt"
    leak.write_text(f'<urn:leak:s> <urn:leak:p> "{MARK}" .\n', encoding="utf-8")
    fifo = _FifoWatch(folder / "leak.fifo")
    yield {
        "server": server,
        "url": f"http://127.0.0.1:{server.server_port}/sparql",
        "host": f"127.0.0.1:{server.server_port}",
        "file": leak.as_uri(),
        "dir": folder.as_uri() + "/",
        "fifo": fifo.path.as_uri(),
        "watch": fifo,
    }
    fifo.stop()
    server.shutdown()
    server.server_close()


def _u(ch: str) -> str:
    return "\\u%04X" % ord(ch)


_BODY = "{ ?s ?p ?o }"
_REMOTE = "SELECT * WHERE { SERVICE <{url}> " + _BODY + " }"

# (spelling, expected): "refused" — SparqlRefused; "local" — rows or no rows from the local graph;
# "syntax" — a syntax error (rdflib's memory graph answers GRAPH with a query error, Oxigraph with no
# rows: "local|syntax").  Every one must leave the server, the FIFO and the marker untouched.
SPELLINGS: list[tuple[str, str]] = [
    (_REMOTE, "refused"),
    ("SELECT * WHERE {SERVICE<{url}>{?s ?p ?o}}", "refused"),
    ("select * where { service <{url}> { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { SeRvIcE <{url}> { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { SERVICE SILENT <{url}> { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { SERVICE SILENT<{url}>{ ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE {\n\tSERVICE\n\t<{url}>\n{ ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { SERVICE # a comment\n <{url}> # another\n { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { SERVICE # c\n SILENT # d\n <{url}> { ?s ?p ?o } }", "refused"),
    *[
        (
            "SELECT * WHERE { " + "SERVICE"[:i] + _u("SERVICE"[i]) + "SERVICE"[i + 1 :] + " <{url}> { ?s ?p ?o } }",
            "refused",
        )
        for i in range(7)
    ],
    ("SELECT * WHERE { " + "".join(_u(c) for c in "SERVICE") + " <{url}> { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { " + "".join(_u(c).lower() for c in "service") + " <{url}> { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { \\U00000053ERVICE <{url}> { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { SERVICE \\U0000003C{url}\\U0000003E { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { SERVICE <http\\u003A//{host}/sparql> { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { SERVICE \\u003C{url}\\u003E { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { SERVICE <{url}> \\u007B ?s ?p ?o \\u007D }", "refused"),
    ("SELECT * WHERE { SERVICE " + _u("S") + "ILENT <{url}> { ?s ?p ?o } }", "refused"),
    ("PREFIX ex: <{url}> SELECT * WHERE { SERVICE ex: { ?s ?p ?o } }", "refused"),
    ("PREFIX ex: <http://{host}/> SELECT * WHERE { SERVICE ex:sparql { ?s ?p ?o } }", "refused"),
    ("PREFIX wikibase: <http://{host}/> SELECT * WHERE { SERVICE wikibase:sparql { ?s ?p ?o } }", "refused"),
    ("BASE <{url}> SELECT * WHERE { SERVICE <> { ?s ?p ?o } }", "refused"),
    ("BASE <http://{host}/> SELECT * WHERE { SERVICE <sparql> { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { VALUES ?svc { <{url}> } SERVICE ?svc { ?s ?p ?o } }", "refused"),
    ('SELECT * WHERE { BIND(IRI("{url}") AS ?svc) SERVICE ?svc { ?s ?p ?o } }', "refused"),
    ("SELECT * WHERE { VALUES $svc { <{url}> } SERVICE SILENT $svc { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { ?s ?p ?o OPTIONAL { SERVICE <{url}> { ?s ?p ?x } } } LIMIT 1", "refused"),
    ("SELECT * WHERE { { ?s ?p ?o } UNION { SERVICE <{url}> { ?s ?p ?o } } } LIMIT 1", "refused"),
    ("SELECT * WHERE { ?s ?p ?o MINUS { SERVICE <{url}> { ?s ?p ?o } } } LIMIT 1", "refused"),
    ("SELECT * WHERE { GRAPH ?g { SERVICE <{url}> { ?s ?p ?o } } }", "refused"),
    ("SELECT * WHERE { { SELECT * WHERE { SERVICE <{url}> { ?s ?p ?o } } LIMIT 1 } }", "refused"),
    ("SELECT * WHERE { ?s ?p ?o FILTER EXISTS { SERVICE <{url}> { ?s ?p ?o } } } LIMIT 1", "refused"),
    ("SELECT * WHERE { ?s ?p ?o FILTER NOT EXISTS { SERVICE <{url}> { ?s ?p ?o } } } LIMIT 1", "refused"),
    ("SELECT ?s WITH { SELECT ?s WHERE { SERVICE <{url}> { ?s ?p ?o } } } AS %leak WHERE { INCLUDE %leak }", "refused"),
    (
        "SELECT ?s WITH { SELECT ?s WHERE { SERVICE<{url}>{ ?s ?p ?o } } } AS %a WITH { SELECT ?s WHERE { INCLUDE %a } } AS %b "
        "WHERE { INCLUDE %b }",
        "refused",
    ),
    ("SELECT * WHERE { SERVICE <https://query.wikidata.org/sparql> { SERVICE <{url}> { ?s ?p ?o } } }", "refused"),
    (
        "SELECT * WHERE { ?s rdfs:label ?l . SERVICE <{url}> { ?s ?p ?o } SERVICE wikibase:label { "
        'bd:serviceParam wikibase:language "en" . } }',
        "refused",
    ),
    ("ASK { SERVICE <{url}> { ?s ?p ?o } }", "refused"),
    ("CONSTRUCT { ?s ?p ?o } WHERE { SERVICE <{url}> { ?s ?p ?o } }", "refused"),
    ("DESCRIBE ?s WHERE { SERVICE <{url}> { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { SERVICE <{file}> { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { SERVICE <{fifo}> { ?s ?p ?o } }", "refused"),
    ('SELECT * WHERE { hint:Query hint:optimizer "None" . SERVICE <{url}> { ?s ?p ?o } }', "refused"),
    ('SELECT * WHERE { ?s ?p ?o FILTER(?o != "}{") SERVICE <{url}> { ?s ?p ?o } }', "refused"),
    ("SELECT * WHERE { SERV\\u005Cu0049CE <{url}> { ?s ?p ?o } }", "syntax"),
    ("SELECT * WHERE { SERVICE <http://wikiba.se/ontology\\u0023around> { ?s ?p ?o } }", "refused"),
    ("PREFIX ex: <http://wikiba.se/ontology#> SELECT * WHERE { SERVICE ex:label { ?s ?p ?o } }", "syntax"),
    # local: the label service, this endpoint's own address, and text that only looks like a SERVICE
    ('SELECT * WHERE { ?s ?p "SERVICE <{url}> { ?s ?p ?o }" }', "local"),
    ("SELECT * WHERE { ?s ?p ?o # SERVICE <{url}> { ?s ?p ?o }\n } LIMIT 1", "local"),
    ("SELECT * WHERE { SERVICE <https://query.wikidata.org/sp\\u0061rql> { ?s ?p ?o } } LIMIT 1", "local"),
    ("SELECT * WHERE {SERVICE<https://query.wikidata.org/sparql>{?s ?p ?o}} LIMIT 1", "local"),
    (
        'SELECT ?s ?sLabel WHERE { ?s wdt:P31 wd:Q1007 . SERVICE wikibase:label { bd:serviceParam wikibase:language "en" . '
        "SERVICE <{url}> { ?s ?p ?o } } } LIMIT 1",
        "local",
    ),
    (
        "SELECT ?s ?sLabel WHERE { ?s wdt:P31 wd:Q1007 . "
        + "".join(_u(c) for c in "SERVICE")
        + ' wikibase:label { bd:serviceParam wikibase:language "en" . } } LIMIT 1',
        "local",
    ),
    ("SELECT * WHERE { GRAPH <{url}> { ?s ?p ?o } }", "local|syntax"),
    ("SELECT * WHERE { GRAPH <{file}> { ?s ?p ?o } }", "local|syntax"),
    ("SELECT * WHERE { GRAPH <{fifo}> { ?s ?p ?o } }", "local|syntax"),
    ("DESCRIBE <{url}>", "local"),
    # FROM / FROM NAMED
    ("SELECT * FROM <{url}> WHERE { ?s ?p ?o }", "refused"),
    ("SELECT * FROM<{url}>WHERE { ?s ?p ?o }", "refused"),
    ("select * from named <{url}> where { graph ?g { ?s ?p ?o } }", "refused"),
    ("SELECT * FROM NAMED<{file}> WHERE { GRAPH ?g { ?s ?p ?o } }", "refused"),
    ("SELECT * FR" + _u("O") + "M <{file}> WHERE { ?s ?p ?o }", "refused"),
    ("SELECT * " + _u("F") + "ROM <{fifo}> WHERE { ?s ?p ?o }", "refused"),
    ("SELECT * FROM " + _u("N") + "AMED <{fifo}> WHERE { GRAPH ?g { ?s ?p ?o } }", "refused"),
    ("PREFIX f: <{dir}> SELECT * FROM f:leak.nt WHERE { ?s ?p ?o }", "refused"),
    ("BASE <{dir}> SELECT * FROM <leak.nt> WHERE { ?s ?p ?o }", "refused"),
    ("SELECT * FROM # c\n <{file}> WHERE { ?s ?p ?o }", "refused"),
    ("ASK FROM <{file}> { ?s <urn:leak:p> ?o }", "refused"),
    ("CONSTRUCT { ?s ?p ?o } FROM <{file}> WHERE { ?s ?p ?o }", "refused"),
    ("DESCRIBE <urn:leak:s> FROM <{file}>", "refused"),
    ("SELECT * FROM <{file}> FROM NAMED <{url}> WHERE { ?s ?p ?o }", "refused"),
    # LOAD and updates
    ("LOAD <{url}>", "refused"),
    ("LOAD SILENT <{file}> INTO GRAPH <urn:g>", "refused"),
    ("L" + _u("O") + "AD <{url}>", "refused"),
    ("load<{fifo}>", "refused"),
    ("INSERT DATA { <urn:a> <urn:b> <urn:c> }", "refused"),
    ("DELETE WHERE { ?s ?p ?o }", "refused"),
    ("CLEAR ALL", "refused"),
    ("DROP DEFAULT", "refused"),
    ("ADD <{url}> TO DEFAULT", "refused"),
    ("WITH <{url}> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }", "refused"),
    ("INSERT { ?s ?p ?o } WHERE { SERVICE <{url}> { ?s ?p ?o } }", "refused"),
    ("SELECT * WHERE { ?s ?p ?o } ; LOAD <{url}>", "syntax"),
]


def _fill(q: str, traps: dict) -> str:
    for key in ("url", "host", "file", "dir", "fifo"):
        q = q.replace("{" + key + "}", traps[key])
    return q


def test_there_are_at_least_sixty_spellings():
    assert len(SPELLINGS) >= 60 and len({q for q, _ in SPELLINGS}) == len(SPELLINGS)


@pytest.fixture(scope="module")
def open_endpoints():
    world = K.build().world
    eps = {s: Endpoint.from_world(world, store=s, isolate_network=False, cache_size=0) for s in ("memory", "oxigraph")}
    yield eps
    for ep in eps.values():
        ep.close()


@pytest.mark.parametrize("store", ["memory", "oxigraph"])
def test_no_spelling_reaches_the_network_or_a_file(traps, open_endpoints, store):
    endpoint = open_endpoints[store]
    wrong = []
    for spelling, expected in SPELLINGS:
        query = _fill(spelling, traps)
        try:
            result = endpoint.execute(query)
        except SparqlRefused as e:
            outcome, text = "refused", str(e)
        else:
            outcome = {Feedback.ROWS: "local", Feedback.EMPTY: "local", Feedback.SYNTAX_ERROR: "syntax"}.get(
                result.feedback, "timeout"
            )
            text = json.dumps(result.to_json())
        if outcome not in expected.split("|") or MARK in text:
            wrong.append((spelling, expected, outcome, text[:200]))
    assert traps["server"].connections == 0
    assert traps["watch"].opens == 0
    assert not wrong, wrong


def test_the_plan_holds_no_service_left_to_run(traps):
    """The same spellings, at the dialect: whatever plans holds no SERVICE and no dataset clause."""
    from engines.kg.dialect import _nodes

    for spelling, expected in SPELLINGS:
        query = _fill(spelling, traps)
        try:
            prepared = prepare(query)
        except SparqlRefused:
            assert expected == "refused", spelling
            continue
        except SparqlSyntaxError:
            assert expected == "syntax", spelling
            continue
        expected = expected.split("|")[0]
        if prepared.unsupported:  # the real endpoint's built-in services: refused at execution
            assert expected == "refused", spelling
            continue
        assert expected == "local", spelling
        names = {n.name for n in _nodes(prepared.algebra.algebra)}
        assert "ServiceGraphPattern" not in names and not dict.get(prepared.algebra.algebra, "datasetClause"), spelling


_BACKSTOP = r"""
import json, sys
from engines.kg import worker
info = worker._confine(512, isolate_network=sys.argv[1] == "1")
from rdflib import Dataset, Graph, URIRef
from engines.kg.store import make_graph, oxigraph_store
url, leak = sys.argv[2], sys.argv[3]
out = {"netns": info["network_namespace"]}
g = make_graph([(URIRef("urn:a"), URIRef("urn:b"), URIRef("urn:c"))], "memory")
for name, q in [("service", "SELECT * WHERE { SERVICE <%s> { ?s ?p ?o } }" % url),
                ("file-service", "SELECT * WHERE { SERVICE <%s> { ?s ?p ?o } }" % leak),
                ("from", "SELECT * FROM <%s> WHERE { ?s ?p ?o }" % leak),
                ("from-http", "SELECT * FROM <%s> WHERE { ?s ?p ?o }" % url)]:
    try:
        out[name] = [str(v) for row in g.query(q) for v in row]
    except Exception as e:
        out[name] = "error: " + type(e).__name__
try:
    Graph().parse(leak)
    out["parse"] = "read"
except Exception as e:
    out["parse"] = "error: " + type(e).__name__
if info["network_namespace"]:
    ox = make_graph([(URIRef("urn:a"), URIRef("urn:b"), URIRef("urn:c"))], "oxigraph")
    try:
        out["oxigraph"] = [str(s) for s in oxigraph_store(ox).query("SELECT * WHERE { SERVICE <%s> { ?s ?p ?o } }" % url)]
    except Exception as e:
        out["oxigraph"] = "error: " + type(e).__name__
print(json.dumps(out))
"""


@pytest.mark.parametrize("netns", ["0", "1"])
def test_the_workers_own_switches_hold_without_the_dialect(traps, netns):
    """Straight to the stores inside a confined worker (no dialect check): no connection, no file read."""
    before = traps["server"].connections
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(
        [sys.executable, "-c", _BACKSTOP, netns, traps["url"], traps["file"]],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if netns == "1" and not out["netns"]:
        pytest.skip("this kernel does not allow an unprivileged network namespace")
    assert traps["server"].connections == before
    assert MARK not in done.stdout
    assert out["parse"].startswith("error") and all(
        isinstance(out[k], str) or out[k] == [] for k in ("service", "file-service")
    )
    if netns == "1":
        assert isinstance(out["oxigraph"], str) and out["oxigraph"].startswith("error")


# --- bombs ---------------------------------------------------------------------------------------

_REGEX_BOMB = 'SELECT ?z WHERE { BIND("' + "a" * 40 + 'b" AS ?z) FILTER REGEX(?z, "^(a+)+$") }'


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] not in "ZX"
    except FileNotFoundError:
        return False


def test_a_catastrophic_regex_times_out_and_its_worker_is_gone(world):
    with Endpoint.from_world(world, store="memory", timeout_s=1.0) as ep:
        assert ep.execute("ASK { ?s ?p ?o }").boolean is True  # the worker is up
        pid = ep.worker.pid
        t0 = time.monotonic()
        r = ep.execute(_REGEX_BOMB)
        took = time.monotonic() - t0
        assert r.feedback is Feedback.TIMEOUT and "timed out after 1 s" in r.message
        assert took < 1.0 + 2.0
        assert pid is not None and not _alive(pid)
        assert ep.execute("SELECT ?x WHERE { ?x wdt:P31 wd:Q1007 }").feedback is Feedback.ROWS  # a new worker answers


def test_order_by_over_mixed_terms_on_oxigraph_leaves_the_process_alive(world):
    with Endpoint.from_world(world, store="oxigraph", timeout_s=10.0) as ep:
        r = ep.execute("SELECT * WHERE { ?a ?p ?b } ORDER BY ?b ?a")
        assert r.feedback is Feedback.ROWS or (
            r.feedback is Feedback.SYNTAX_ERROR and "triple store failed" in r.message
        )
        assert ep.execute("ASK { ?s ?p ?o }").boolean is True


def test_a_crashing_worker_becomes_an_error_result(world):
    """A worker that dies mid-query (an abort, as an Oxigraph panic does) is a clear error, not a dead app."""
    with Endpoint.from_world(world, store="oxigraph", timeout_s=30.0) as ep:
        ep.execute("ASK { ?s ?p ?o }")
        pid = ep.worker.pid
        threading.Timer(0.5, os.kill, (pid, signal.SIGABRT)).start()
        r = ep.execute("SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }")
        assert (
            r.feedback is Feedback.SYNTAX_ERROR
            and "SIGABRT" in r.message
            and "next query starts a new worker" in r.message
        )
        assert ep.execute("ASK { ?s ?p ?o }").boolean is True and ep.worker.pid != pid


def test_after_an_oxigraph_timeout_nothing_keeps_burning_cpu(world):
    with Endpoint.from_world(world, store="oxigraph", timeout_s=0.5) as ep:
        ep.execute("ASK { ?s ?p ?o }")
        pid = ep.worker.pid
        t0 = time.monotonic()
        r = ep.execute("SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }")
        assert r.feedback is Feedback.TIMEOUT and time.monotonic() - t0 < 0.5 + 2.0
        assert not _alive(pid)
        assert not [t for t in threading.enumerate() if "oxigraph" in t.name]
        cpu = time.process_time()
        time.sleep(1.0)
        assert time.process_time() - cpu < 0.5  # no thread of ours is still evaluating


def test_the_worker_runs_under_the_memory_cap(world):
    with Endpoint.from_world(world, store="memory", memory_limit_mb=768) as ep:
        ep.execute("ASK { ?s ?p ?o }")
        limits = Path(f"/proc/{ep.worker.pid}/limits").read_text()
        line = next(x for x in limits.splitlines() if x.startswith("Max address space"))
        assert str(768 * 1024 * 1024) in line
    assert ep.worker.pid is None  # closed with the endpoint
