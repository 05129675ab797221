"""Closing a graph never waits for a query in flight (quitting the app closes it): the worker process is killed at
once, the query ends without an exception, and the next query starts a new worker."""

from __future__ import annotations

import threading
import time

from rdflib import URIRef

from engines.kg import Endpoint

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def test_close_kills_the_worker_under_a_query_in_flight_and_does_not_wait_for_it(monkeypatch) -> None:
    triples = [(URIRef(WD + f"Q{i}"), URIRef(WDT + "P31"), URIRef(WD + "Q5")) for i in range(1, 4)]
    endpoint = Endpoint.from_triples(triples, store="oxigraph", cache_size=0)
    assert endpoint.execute("ASK { ?s ?p ?o }").boolean is True
    worker = endpoint.worker
    pid = worker.pid
    assert pid is not None and _alive(pid)
    in_flight, release = threading.Event(), threading.Event()
    recv = worker._conn.recv

    def held() -> object:  # a query whose answer is long in coming: the worker's lock is held meanwhile
        in_flight.set()
        release.wait(60)
        return recv()

    monkeypatch.setattr(worker._conn, "recv", held)
    answers: list[object] = []
    thread = threading.Thread(target=lambda: answers.append(endpoint.execute("SELECT ?s WHERE { ?s ?p ?o }")))
    thread.start()
    assert in_flight.wait(30)
    start = time.perf_counter()
    endpoint.close()
    assert time.perf_counter() - start < 5  # the query would hold it for 60 s
    for _ in range(200):
        if not _alive(pid):
            break
        time.sleep(0.01)
    assert not _alive(pid)  # killed, not left behind
    release.set()
    thread.join(30)
    # the query ends with a result, no exception (here its answer was already on the socket when the worker died)
    assert not thread.is_alive() and len(answers) == 1 and hasattr(answers[0], "feedback")
    assert endpoint.execute("ASK { ?s ?p ?o }").boolean is True  # the next query starts a new worker
    assert endpoint.worker.pid not in (None, pid)
    endpoint.close()
