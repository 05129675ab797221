"""Median latency of the forum-set gold queries, on the lecture's world and on it scaled up, both stores.

    python benchmarks/kg_latency.py                  # scales 1 and 100, memory and oxigraph
    python benchmarks/kg_latency.py --scale 1 10 --repeat 5

For each scale the world is replicated (``worlds.kg.scaled``: copies of every instance, the classes
shared), loaded into rdflib's memory store and into Oxigraph (through oxrdflib), and each of the 56
forum-style gold queries runs ``--repeat`` times; the table shows the load time, the median and the
90th percentile of the per-query median latency, and how many queries timed out.  Not a test: the
numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engines.kg import Endpoint, Feedback
from worlds import kg


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=int, nargs="+", default=[1, 100], help="world sizes, as multiples (default 1 100)")
    p.add_argument("--stores", nargs="+", default=["memory", "oxigraph"], choices=["memory", "oxigraph"])
    p.add_argument("--repeat", type=int, default=3, help="runs of each query (default 3)")
    p.add_argument("--timeout", type=float, default=60.0, help="per-query timeout in seconds (default 60)")
    args = p.parse_args(argv)

    world = kg.build()
    queries = [q for q in kg.questions(world).forum]
    print(f"{len(queries)} forum-set gold queries, {args.repeat} run(s) each\n")
    print(
        f"{'scale':>6} {'statements':>11} {'store':>9} {'load s':>8} {'median ms':>10} {'p90 ms':>9} {'total ms':>9} {'timeouts':>9}"
    )
    for scale in args.scale:
        big = kg.scaled(world, scale) if scale > 1 else world
        triples = list(kg.rdf_triples(big))
        row: dict[str, tuple] = {}
        for store in args.stores:
            t0 = time.perf_counter()
            ep = Endpoint.from_triples(triples, store=store, timeout_s=args.timeout, row_cap=10**7, cache_size=0)
            load = time.perf_counter() - t0
            medians, timeouts = [], 0
            for q in queries:
                runs = []
                for _ in range(args.repeat):
                    r = ep.execute(q.gold_sparql)
                    runs.append(r.elapsed_s)
                    if r.feedback is Feedback.TIMEOUT:
                        timeouts += 1
                        break
                medians.append(statistics.median(runs))
            medians.sort()
            p90 = medians[int(0.9 * (len(medians) - 1))]
            row[store] = (load, statistics.median(medians), p90, sum(medians), timeouts)
            print(
                f"{scale:>6} {big.statement_count:>11,} {store:>9} {load:>8.1f} {1000 * statistics.median(medians):>10.1f} "
                f"{1000 * p90:>9.1f} {1000 * sum(medians):>9.0f} {timeouts:>9}",
                flush=True,
            )
            del ep
        if len(row) == 2:
            ratios = [row["memory"][i] / row["oxigraph"][i] if row["oxigraph"][i] else float("inf") for i in (1, 2, 3)]
            print(f"{'':>6} {'':>11} {'memory/ox':>9} {'':>8} {ratios[0]:>9.1f}x {ratios[1]:>8.1f}x {ratios[2]:>8.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
