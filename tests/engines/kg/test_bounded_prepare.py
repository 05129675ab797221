"""Parsing and planning a hostile query is bounded wherever it happens, not only when the query runs.

rdflib's parser and planner take minutes over some texts: 5,000 FILTERs took 149 s in the calling
process before this change.  A remote endpoint's queries, ``check-dialect``'s and
``Endpoint.prepare``'s are now parsed in a SPARQL worker under the query timeout, like the
queries that run locally, and the caller gets a timeout instead of a stalled thread."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
import pytest

from engines.kg.endpoint import Feedback
from engines.kg.remote import RemoteEndpoint
from engines.kg.worker import PrepareFailed, parse_worker, prepared_from

SLOW = "SELECT ?x WHERE { ?x ?p ?o " + " ".join(f"FILTER(?o != {i})" for i in range(5000)) + " }"
GOOD = "SELECT ?x WHERE { ?x wdt:P31 wd:Q5 }"
TIMEOUT_S = 1.0
# the worker is killed at the timeout + 0.75 s; a new one starts for the next query (about a second)
BOUND_S = TIMEOUT_S + 6.0


def test_parse_worker_bounds_a_slow_parse_and_recovers():
    worker = parse_worker()
    t = time.monotonic()
    with pytest.raises(PrepareFailed) as caught:
        prepared_from(worker.prepare(SLOW, TIMEOUT_S), SLOW, TIMEOUT_S)
    assert time.monotonic() - t < BOUND_S
    assert caught.value.timed_out and "parsing and planning" in str(caught.value)
    prepared = prepared_from(worker.prepare(GOOD, 10.0), GOOD, 10.0)  # a fresh worker answers the next one
    assert prepared.form == "SELECT" and "wdt:P31" in prepared.text and prepared.algebra is None


def test_parse_worker_reports_syntax_and_refusals_as_the_dialect_does():
    from engines.kg.dialect import SparqlRefused, SparqlSyntaxError

    worker = parse_worker()
    with pytest.raises(SparqlSyntaxError):
        prepared_from(worker.prepare("SELECT ?x WHERE { ?x", 10.0), "", 10.0)
    with pytest.raises(SparqlRefused):
        prepared_from(worker.prepare("DROP ALL", 10.0), "", 10.0)


def test_remote_endpoint_times_out_a_slow_parse_without_sending_it():
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"head": {"vars": ["x"]}, "results": {"bindings": []}})

    ep = RemoteEndpoint("https://sparql.example.org/query", transport=httpx.MockTransport(answer), timeout_s=TIMEOUT_S)
    t = time.monotonic()
    r = ep.execute(SLOW)
    assert time.monotonic() - t < BOUND_S
    assert r.feedback is Feedback.TIMEOUT and "parsing and planning" in r.message
    assert sent == []  # never reached the network
    assert ep.execute(GOOD).feedback is Feedback.EMPTY and len(sent) == 1
    ep.close()


def test_check_dialect_bounds_each_query(tmp_path):
    path = tmp_path / "set.json"
    path.write_text(json.dumps([{"id": "slow", "sparql": SLOW}, {"id": "ok", "sparql": GOOD}]))
    t = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", "sparql", "--check-dialect", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "CS224V_QUERY_TIMEOUT_S": str(TIMEOUT_S)},
    )
    assert time.monotonic() - t < BOUND_S + 10  # plus the CLI's own start
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["total"] == 2 and report["accepted"] == 1
    (failure,) = report["failures"]
    assert failure["id"] == "slow" and failure["reason"].startswith("Timeout: parsing and planning")
