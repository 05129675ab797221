"""Workarounds for rdflib 7 evaluation bugs that make the memory store disagree with SPARQL 1.1
(and with Oxigraph).  Installed in the SPARQL worker (:mod:`engines.kg.worker`) as rdflib custom
evaluations; each is a no-op for every other part of a plan.

* **A grouped aggregate over no solutions yields one phantom solution.**  ``evalAggregateJoin``
  ends with ``if len(res) == 0: yield FrozenBindings(ctx)``: with ``GROUP BY`` and an empty input
  there are no groups, so SPARQL 1.1 (§11.4, ``Group`` then ``Aggregation``) gives no solution,
  but rdflib gives one empty solution.  At the top level its result iterator drops empty rows, so
  the bug hides; in a subquery the empty solution is compatible with every outer solution, so
  ``?s wdt:P31 ?c . { SELECT ?s (COUNT(*) AS ?n) … GROUP BY ?s }`` over an empty inner pattern
  returns every ``?s`` of the outer pattern with ``?n`` unbound.  Without ``GROUP BY`` there is
  exactly one group (possibly empty), and one solution is right: rdflib does that already.
* **An empty ``VALUES`` block** (``VALUES ?x { }``) translates to ``ToMultiSet([])`` and its
  evaluation fails with ``'list' object has no attribute 'name'``; it is zero solutions.

The third bug — ``Result.__iter__`` drops every solution that binds nothing
(``SELECT (MAX(?x) AS ?m) WHERE { <no match> }`` has one such row) — is worked around where the
worker reads a SELECT's solutions (it reads them from ``evalQuery`` itself), and the fourth — a
constant filter whose value is false in Python (``FILTER(false)``, ``FILTER(0)``) is dropped by
``collectAndRemoveFilters`` — in :func:`engines.kg.dialect.plan`.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from typing import Any

__all__ = ["install", "UPSTREAM_REPORT"]

UPSTREAM_REPORT = """\
Title: evalAggregateJoin yields a phantom empty solution for GROUP BY over no input

rdflib 7.x, rdflib/plugins/sparql/evaluate.py, evalAggregateJoin ends with

    # there were no matches
    if len(res) == 0:
        yield FrozenBindings(ctx)

With a GROUP BY and an empty input there are no groups, and SPARQL 1.1 (section 18.5,
Aggregation over Group) gives no solutions.  With no GROUP BY the code already creates the
single group (res[True]), so this branch only ever runs for a GROUP BY and is always wrong.
At the top level the phantom row is hidden because Result.__iter__ skips empty bindings, but
in a subquery it joins with every outer solution:

    g = Graph(); g.add((EX.a, EX.p, EX.b))
    q = '''SELECT ?s ?n WHERE { ?s ?p ?o .
             { SELECT ?s (COUNT(*) AS ?n) WHERE { ?s <urn:none> ?x } GROUP BY ?s } }'''
    list(g.query(q))   # expected [], got [(rdflib.term.URIRef('http://example.org/a'), None)]

Fix: drop the `if len(res) == 0` branch.  (Related: Result.__iter__ skips solutions that bind
no variable, so SELECT (MAX(?x) AS ?m) WHERE { FILTER(false) ... } loses the one row the
standard gives; and collectAndRemoveFilters returns a Literal false for FILTER(false), which
translateGroupGraphPattern's `if filters:` then treats as no filter at all.)
"""


def _aggregate_join(ctx: Any, part: Any) -> Iterator[Any]:
    from rdflib.plugins.sparql.aggregates import Aggregator
    from rdflib.plugins.sparql.evaluate import evalPart
    from rdflib.plugins.sparql.evalutils import _eval
    from rdflib.plugins.sparql.sparql import FrozenBindings

    groups: dict[Any, Any] = collections.defaultdict(lambda: Aggregator(aggregations=part.A))
    for row in evalPart(ctx, part.p):
        groups[tuple(_eval(e, row, False) for e in part.p.expr)].update(row)
    for aggregator in groups.values():
        yield FrozenBindings(ctx, aggregator.get_bindings())


def _fixes(ctx: Any, part: Any) -> Any:
    name = getattr(part, "name", None)
    if name == "AggregateJoin" and getattr(part.p, "expr", None) is not None:
        return _aggregate_join(ctx, part)
    if name == "ToMultiSet" and isinstance(part.p, list) and not part.p:
        return iter(())
    raise NotImplementedError  # rdflib's CUSTOM_EVALS protocol: "not mine", rdflib evaluates the part itself


def install() -> None:
    """Register the workarounds with rdflib (idempotent)."""
    import rdflib.plugins.sparql as rdflib_sparql

    rdflib_sparql.CUSTOM_EVALS["cs224v_rdflib_fixes"] = _fixes
