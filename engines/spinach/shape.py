"""The shape of a SPARQL query, read from its parse tree: clauses, columns, properties, paths, entities.

Used to compare an agent's final query with the gold query (:mod:`engines.spinach.error_analysis`, lecture 8
§4.4) and to measure how complex a question set is (§5.1).  The label service is formatting and is left out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from engines.eval.metrics import is_label_column
from engines.kg import dialect
from engines.kg.prefixes import PREFIXES

if TYPE_CHECKING:  # rdflib is imported by the functions that parse, not by importing the module
    from rdflib.term import Variable

_LABEL_SERVICE = re.compile(r"SERVICE\s+wikibase:label\s*\{[^{}]*\}\s*\.?", re.I)
_PREFIX_LINES: str | None = None


def _prefix_lines() -> str:
    global _PREFIX_LINES
    if _PREFIX_LINES is None:
        _PREFIX_LINES = "".join(f"PREFIX {k}: <{v}>\n" for k, v in PREFIXES.items())
    return _PREFIX_LINES


@dataclass(frozen=True)
class Shape:
    """What a query is made of, read from its parse tree (the label service is formatting and left out)."""

    counts: Mapping[
        str, int
    ]  # triples, filter, optional, union, minus, bind, values, subquery, group, having, order, limit, aggregate
    columns: int  # projected variables and expressions, label/description columns left out
    label_only: bool  # every projected column is a label
    properties: frozenset[str]  # PIDs used (any prefix)
    paths: frozenset[str]  # property paths with a modifier or a sequence, as written (e.g. "wdt:P131*/wdt:P17")
    qualifiers: bool  # p: / ps: / pq: statements
    entities: frozenset[str]  # wd: QIDs
    order: str  # "" or "ASC ?x" / "DESC ?x"
    limit: str  # "" or the limit

    CLAUSES = (
        "triples",
        "filter",
        "optional",
        "union",
        "minus",
        "bind",
        "values",
        "subquery",
        "group",
        "having",
        "order",
        "limit",
        "aggregate",
    )

    @property
    def clauses(self) -> int:
        return sum(self.counts.get(k, 0) for k in self.CLAUSES)


def query_shape(query: str) -> Shape:
    """The shape of one (Wikidata-dialect) SELECT query.  Raises on a query that does not parse.

    A pure function of the text, kept per process (rdflib's parse is tens of milliseconds, and the Lab reads the
    same answers' shapes for the action counts, the error analysis and the complexity table); the Shape is
    immutable (its counts a read-only mapping)."""
    return _shape(query)


@lru_cache(maxsize=8192)
def _shape(query: str) -> Shape:
    from pyparsing import ParseResults
    from rdflib.plugins.sparql.parser import parseQuery
    from rdflib.plugins.sparql.parserutils import CompValue
    from rdflib.term import Variable

    text, _form, _notes, _unsupported = dialect.rewrite(_LABEL_SERVICE.sub(" ", query))
    tree = parseQuery(_prefix_lines() + text)
    counts: Counter[str] = Counter()
    props: set[str] = set()
    paths: set[str] = set()
    entities: set[str] = set()
    qualifiers = False

    def pname(node: Any) -> str:
        return (
            f"{node.get('prefix')}:{node.get('localname')}"
            if isinstance(node, CompValue) and node.name == "pname"
            else ""
        )

    def path_text(node: Any) -> str:
        if isinstance(node, CompValue):
            if node.name == "pname":
                return pname(node)
            if node.name == "PathAlternative":
                return "|".join(path_text(p) for p in node["part"])
            if node.name == "PathSequence":
                return "/".join(path_text(p) for p in node["part"])
            if node.name == "PathElt":
                return path_text(node["part"]) + (node["mod"] if "mod" in node else "")
            if node.name == "PathNegatedPropertySet":
                return "!(…)"
        if isinstance(node, Variable):
            return f"?{node}"
        return str(node)

    def walk(node: Any, top: bool) -> None:
        nonlocal qualifiers
        if isinstance(node, CompValue):
            name = node.name
            if name == "TriplesBlock":
                for t in node.get("triples") or []:
                    counts["triples"] += len(t) // 3
            elif name == "Filter":
                counts["filter"] += 1
            elif name == "OptionalGraphPattern":
                counts["optional"] += 1
            elif name == "GroupOrUnionGraphPattern" and len(node.get("graph") or []) > 1:
                counts["union"] += 1
            elif name == "MinusGraphPattern":
                counts["minus"] += 1
            elif name == "Bind":
                counts["bind"] += 1
            elif name == "InlineData":
                counts["values"] += 1
            elif name == "SubSelect":
                counts["subquery"] += 1
            elif name.startswith("Aggregate_"):
                counts["aggregate"] += 1
            elif name == "GroupClause":
                counts["group"] += 1
            elif name == "HavingClause":
                counts["having"] += 1
            elif name == "OrderClause":
                counts["order"] += 1
            elif name == "LimitOffsetClauses":
                counts["limit"] += 1
            elif name == "PathAlternative":
                written = path_text(node)
                if any(ch in written for ch in "*+?/|"):
                    paths.add(written)
            elif name == "pname":
                p = pname(node)
                prefix, local = p.split(":", 1)
                if re.fullmatch(r"P\d+", local) and prefix in ("wdt", "p", "ps", "pq", "wd", "psv", "pqv"):
                    props.add(local)
                    qualifiers = qualifiers or prefix in ("p", "ps", "pq", "psv", "pqv")
                elif re.fullmatch(r"Q\d+", local) and prefix == "wd":
                    entities.add(local)
            for v in node.values():
                walk(v, False)
        elif isinstance(node, (list, tuple, ParseResults)):
            for v in node:
                walk(v, top)

    query_node = tree[1]
    walk(query_node, True)
    columns, labels = 0, 0
    for p in query_node.get("projection") or []:
        var = p.get("evar") if "evar" in p else p.get("var") if "var" in p else None
        if var is None:
            continue
        if is_label_column(str(var)):
            labels += 1
        else:
            columns += 1
    if not (query_node.get("projection") or []):  # SELECT *
        columns = len({str(v) for v in _variables(query_node)})
    order = ""
    oc = query_node.get("orderby") if "orderby" in query_node else None
    if oc is not None:
        conds = oc.get("condition") or []
        parts = []
        for c in conds:
            if isinstance(c, CompValue) and c.name == "OrderCondition":
                parts.append(f"{c.get('order') or 'ASC'} {_expr_text(c.get('expr'))}")
            else:
                parts.append(f"ASC {_expr_text(c)}")
        order = ", ".join(parts)
    limit = ""
    lo = query_node.get("limitoffset") if "limitoffset" in query_node else None
    if lo is not None and "limit" in lo:
        limit = str(lo["limit"])
    return Shape(
        MappingProxyType(dict(counts)),
        columns,
        columns == 0 and labels > 0,
        frozenset(props),
        frozenset(paths),
        qualifiers,
        frozenset(entities),
        order,
        limit,
    )


def _variables(node: Any) -> list[Variable]:
    from pyparsing import ParseResults
    from rdflib.plugins.sparql.parserutils import CompValue
    from rdflib.term import Variable

    out: list[Variable] = []
    if isinstance(node, Variable):
        out.append(node)
    elif isinstance(node, CompValue):
        for v in node.values():
            out.extend(_variables(v))
    elif isinstance(node, (list, tuple, ParseResults)):
        for v in node:
            out.extend(_variables(v))
    return out


def _expr_text(node: Any) -> str:
    vs = _variables(node)
    return " ".join(f"?{v}" for v in vs) if vs else str(node)


__all__ = ["Shape", "query_shape"]
