"""Checking a data set's SPARQL queries against the dialect: each one parsed and planned, after the dialect's
rewrites, in one SPARQL worker holding no graph (bounded in time per query, in memory, cut off from the network and
the files), and the ones refused or failing listed with the reason (``cs224v-tui sparql --check-dialect FILE``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engines.errors import EngineError
from engines.kg.sparql import Dialect, SparqlRefused, SparqlSyntaxError
from engines.kg.worker import PrepareFailed, WorkerUnavailable, parse_worker, prepared_from

__all__ = ["QUERY_KEYS", "CheckUnavailable", "DialectReport", "check_dialect"]

QUERY_KEYS = ("sparql", "gold_sparql", "query")
"""Where an item of a data set holds its query (SPINACH's files write ``sparql``; ours ``gold_sparql``)."""
MAX_ID_CHARS = 200
"""An item's id as reported: at most this many characters."""


class CheckUnavailable(EngineError):
    """The SPARQL worker that checks the queries could not start."""


@dataclass(frozen=True)
class DialectReport:
    total: int  # the items that hold a query
    failures: tuple[tuple[str, str], ...]  # (id, why) of each query refused or failing
    skipped: int  # the items without a query

    @property
    def accepted(self) -> int:
        return self.total - len(self.failures)

    # Hand-written: the accepted count is computed and each failure becomes an {"id", "reason"} object.
    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "accepted": self.accepted,
            "failures": [{"id": i, "reason": why} for i, why in self.failures],
            "skipped": self.skipped,
        }


def _query_of(item: Any) -> str | None:
    if not isinstance(item, dict):
        return None
    query = next((item[k] for k in QUERY_KEYS if item.get(k)), None)
    return query if isinstance(query, str) else None


def _id_of(item: dict[str, Any], n: int) -> str:
    given = item.get("id", n)
    return given if isinstance(given, str) else json.dumps(given)[:MAX_ID_CHARS]


def check_dialect(items: Sequence[Any], timeout_s: float, dialect: Dialect | None = None) -> DialectReport:
    """Each item's query (:data:`QUERY_KEYS`) parsed and planned in one SPARQL worker, ``timeout_s`` each (as a
    query), in ``dialect`` (default Wikidata's).  Raises :class:`CheckUnavailable` when the worker cannot start."""
    failures: list[tuple[str, str]] = []
    total = skipped = 0
    worker = parse_worker(dialect)
    try:
        worker.start()
    except WorkerUnavailable as e:
        raise CheckUnavailable(f"the SPARQL worker could not start: {e}") from None
    try:
        for n, item in enumerate(items):
            query = _query_of(item)
            if query is None:
                skipped += 1
                continue
            total += 1
            try:
                prepared_from(worker.prepare(query, timeout_s), query, timeout_s)
            except (SparqlRefused, SparqlSyntaxError, PrepareFailed) as e:
                failures.append((_id_of(item, n), str(e)))
            except WorkerUnavailable as e:
                failures.append((_id_of(item, n), f"the SPARQL worker could not start: {e}"))
    finally:
        worker.close()
    return DialectReport(total, tuple(failures), skipped)
