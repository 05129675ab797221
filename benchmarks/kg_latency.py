"""Latency of the forum-set gold queries per store, on the lecture's world and on it scaled up, with raw pyoxigraph beside them.

    python benchmarks/kg_latency.py                  # 2.5k and 250k statements (scales 1 and 100)
    python benchmarks/kg_latency.py --json           # the same figures as JSON
    python benchmarks/kg_latency.py --scale 1 10 --repeat 5 --stores oxigraph

For each scale the world is replicated (``worlds.kg.scaled``: copies of every instance, the classes
shared) and each of the 56 forum-style gold queries runs ``--repeat`` times on:

* ``memory`` — the endpoint over rdflib's memory store (rdflib parses, plans and evaluates);
* ``oxigraph`` — the endpoint over Oxigraph, as the app uses it: the query crosses to the worker
  process, is rewritten once, cleared by its syntax tree and run by pyoxigraph directly
  (``engines.kg.dialect.fast_prepare``); the SPARQL JSON rows come back;
* ``oxigraph_in_process`` — the same evaluation without the worker process (what the process
  boundary costs is the difference);
* ``pyoxigraph_raw`` — pyoxigraph's ``Store.query`` on the already rewritten text, every solution
  read: the limit the oxigraph path is measured against.

With ``oxigraph``, ``worker_round_trip`` is timed beside them: a message the ``oxigraph`` endpoint's
worker answers at once (``QueryWorker.ping``) over the same channel, so the process boundary's own
cost — sending, the other process waking, the answer coming back — apart from any query work.
``oxigraph_in_process`` plus it (per query: its in-process median plus the median round trip) is the
floor of the ``oxigraph`` path on this machine (``floor_ms``).

The stores are timed interleaved: every query is run once on each store untimed, then ``--repeat``
rounds on every store in turn, the order rotated each round, each run timed by this script's clock
around the whole call (for the endpoints: ``Endpoint.execute``, the worker's round trip included).  A
change in the machine's load so falls on all stores alike and their ratios hold on a busy machine.

Reported per store: the load time (the worker's included), the median and the 90th percentile of
the per-query medians, and how many queries timed out; the ratios ``oxigraph / raw``,
``oxigraph_in_process / raw``, ``(oxigraph_in_process + worker_round_trip) / raw`` (the floor) and
``memory / oxigraph``.  No query result is cached anywhere (the endpoints run with ``cache_size=0``)
and no prepared text is kept between runs, so every run does all its work.  Not a test: the numbers
depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engines.kg import Endpoint, Feedback
from worlds import kg

STORES = ("memory", "oxigraph", "oxigraph_in_process", "pyoxigraph_raw")
ROUND_TRIP = "worker_round_trip"  # timed with "oxigraph": the worker's answer to a ping


def _summary(medians: list[float], load: float, timeouts: int) -> dict:
    medians = sorted(medians)
    return {
        "load_s": round(load, 3),
        "median_ms": round(1000 * statistics.median(medians), 3),
        "p90_ms": round(1000 * medians[int(0.9 * (len(medians) - 1))], 3),
        "total_ms": round(1000 * sum(medians), 1),
        "timeouts": timeouts,
    }


class _Runner:
    """One store under test: ``run(query) -> (seconds, timed_out)``, its load time, and how to close it."""

    def __init__(self, run, load: float, close=lambda: None) -> None:
        self.run, self.load, self.close = run, load, close
        self.runs: dict[str, list[float]] = {}
        self.timeouts = 0
        self.gave_up: set[str] = set()


def _endpoint_store(store: str, triples: list, args) -> _Runner:
    t0 = time.perf_counter()
    ep = Endpoint.from_triples(triples, store=store, timeout_s=args.timeout, row_cap=10**7, cache_size=0)
    ep.worker.start()
    load = time.perf_counter() - t0

    def run(q: str) -> tuple[float, bool]:
        t = time.perf_counter()
        r = ep.execute(q)
        return time.perf_counter() - t, r.feedback is Feedback.TIMEOUT

    runner = _Runner(run, load, ep.close)
    runner.endpoint = ep
    return runner


def _round_trip(endpoint) -> _Runner:
    """The ``oxigraph`` endpoint's worker answering a ping (the query is not sent): the round trip alone."""

    def run(_q: str) -> tuple[float, bool]:
        t = time.perf_counter()
        answer = endpoint.worker.ping()
        return time.perf_counter() - t, answer.get("kind") != "pong"

    return _Runner(run, 0.0)


def _in_process(triples: list, args) -> _Runner:
    from engines.kg.store import make_graph
    from engines.kg.worker import evaluate

    t0 = time.perf_counter()
    graph = make_graph(triples, "oxigraph")
    load = time.perf_counter() - t0

    def run(q: str) -> tuple[float, bool]:
        t = time.perf_counter()
        answer = evaluate(graph, "oxigraph", q, args.timeout, 10**7)
        return time.perf_counter() - t, answer["kind"] == "timeout"

    return _Runner(run, load)


def _raw(triples: list, queries: list[str], args) -> _Runner:
    import pyoxigraph as ox

    from engines.kg import dialect
    from engines.kg.prefixes import PREFIXES
    from engines.kg.store import to_oxigraph

    t0 = time.perf_counter()
    store = ox.Store()
    store.bulk_extend(ox.Quad(to_oxigraph(s), to_oxigraph(p), to_oxigraph(o)) for s, p, o in triples)
    load = time.perf_counter() - t0
    texts = {q: dialect.prepare(q).text for q in queries}  # rewritten once, outside the timing
    prefixes = dict(PREFIXES)

    def run(q: str) -> tuple[float, bool]:
        t = time.perf_counter()
        res = store.query(texts[q], prefixes=prefixes, use_default_graph_as_union=True)
        if isinstance(res, ox.QuerySolutions):
            names = [v.value for v in res.variables]
            for solution in res:
                for n in names:
                    term = solution[n]
                    if term is not None:
                        term.value  # noqa: B018 - every value read, as the endpoint reads it
        elif isinstance(res, ox.QueryTriples):
            for _t in res:
                pass
        return time.perf_counter() - t, False

    return _Runner(run, load)


def _time_interleaved(runners: dict[str, _Runner], queries: list[str], repeat: int) -> None:
    """Every query on every store in turn, ``repeat`` rounds, the stores' order rotated each round: a
    change in the machine's load falls on all stores alike, so their ratios hold on a busy machine.
    Each query is run once on every store first, untimed (the stores' own warm-up)."""
    names = list(runners)
    for q in queries:
        for name in names:
            runners[name].run(q)
        for round_ in range(repeat):
            k = round_ % len(names)
            for name in names[k:] + names[:k]:
                r = runners[name]
                if q in r.gave_up:
                    continue
                elapsed, timed_out = r.run(q)
                r.runs.setdefault(q, []).append(elapsed)
                if timed_out:
                    r.timeouts += 1
                    r.gave_up.add(q)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=int, nargs="+", default=[1, 100], help="world sizes, as multiples (default 1 100)")
    p.add_argument("--stores", nargs="+", default=list(STORES), choices=STORES)
    p.add_argument("--repeat", type=int, default=3, help="runs of each query (default 3)")
    p.add_argument("--timeout", type=float, default=60.0, help="per-query timeout in seconds (default 60)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)

    built = kg.build()
    world = built.world
    queries = [q.gold_sparql for q in kg.questions(world, built.truth).forum]
    out: dict = {"queries": len(queries), "repeat": args.repeat, "scales": []}
    if not args.json:
        print(f"{len(queries)} forum-set gold queries, {args.repeat} run(s) each\n")
        print(
            f"{'scale':>6} {'statements':>11} {'store':>20} {'load s':>8} {'median ms':>10} {'p90 ms':>9} "
            f"{'total ms':>9} {'timeouts':>9}"
        )
    for scale in args.scale:
        big = kg.scaled(world, scale) if scale > 1 else world
        triples = list(kg.rdf_triples(big))
        entry: dict = {"scale": scale, "statements": big.statement_count, "triples": len(triples), "stores": {}}
        runners: dict[str, _Runner] = {}
        try:
            for store in args.stores:
                if store in ("memory", "oxigraph"):
                    runners[store] = _endpoint_store(store, triples, args)
                elif store == "oxigraph_in_process":
                    runners[store] = _in_process(triples, args)
                else:
                    runners[store] = _raw(triples, queries, args)
            if "oxigraph" in runners:
                runners[ROUND_TRIP] = _round_trip(runners["oxigraph"].endpoint)
            _time_interleaved(runners, queries, args.repeat)
        finally:
            for r in runners.values():
                r.close()
        for store, r in runners.items():
            figures = _summary([statistics.median(v) for v in r.runs.values()], r.load, r.timeouts)
            if store == ROUND_TRIP:  # not a store: no load, no total
                entry[ROUND_TRIP] = {k: figures[k] for k in ("median_ms", "p90_ms")}
                if not args.json:
                    print(
                        f"{scale:>6} {big.statement_count:>11,} {store:>20} {'':>8} "
                        f"{figures['median_ms']:>10.2f} {figures['p90_ms']:>9.2f}",
                        flush=True,
                    )
                continue
            entry["stores"][store] = figures
            if not args.json:
                print(
                    f"{scale:>6} {big.statement_count:>11,} {store:>20} {figures['load_s']:>8.1f} "
                    f"{figures['median_ms']:>10.2f} {figures['p90_ms']:>9.2f} {figures['total_ms']:>9.0f} "
                    f"{figures['timeouts']:>9}",
                    flush=True,
                )
        s = entry["stores"]
        ratios: dict = {}
        for name, a, b in (
            ("oxigraph_over_raw", "oxigraph", "pyoxigraph_raw"),
            ("in_process_over_raw", "oxigraph_in_process", "pyoxigraph_raw"),
            ("memory_over_oxigraph", "memory", "oxigraph"),
        ):
            if a in s and b in s:
                ratios[name] = {
                    k: round(s[a][f"{k}_ms"] / s[b][f"{k}_ms"], 2) if s[b][f"{k}_ms"] else None
                    for k in ("median", "p90")
                }
        if ROUND_TRIP in runners and "oxigraph_in_process" in runners and "pyoxigraph_raw" in s:
            # the floor of each query: its in-process time plus the round trip (the median of every ping)
            trip = statistics.median(t for v in runners[ROUND_TRIP].runs.values() for t in v)
            floor = _summary([statistics.median(v) + trip for v in runners["oxigraph_in_process"].runs.values()], 0, 0)
            entry["floor_ms"] = {k: floor[k] for k in ("median_ms", "p90_ms")}
            ratios["floor_over_raw"] = {
                k: round(floor[f"{k}_ms"] / s["pyoxigraph_raw"][f"{k}_ms"], 2)
                if s["pyoxigraph_raw"][f"{k}_ms"]
                else None
                for k in ("median", "p90")
            }
        entry["ratios"] = ratios
        out["scales"].append(entry)
        if not args.json:
            for name, r in ratios.items():
                print(f"{'':>6} {'':>11} {name:>20}   median {r['median']}x   p90 {r['p90']}x")
    if args.json:
        print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
