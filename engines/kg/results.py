"""What a SPARQL query told us: one of SPINACH's four feedbacks (§1.5) and the rows, in the SPARQL 1.1 JSON
results format.  Every graph source answers with a :class:`QueryResult` (the local
:class:`~engines.kg.endpoint.Endpoint`, the :class:`~engines.kg.remote.RemoteEndpoint`); the worker process that
runs local queries writes its terms with :func:`term_json`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rdflib import BNode, Literal, URIRef

__all__ = ["Binding", "Feedback", "QueryResult", "columns_of", "results_from_json", "term_json", "tighter_bounds"]

Binding = Mapping[str, Mapping[str, str]]  # {var: {"type", "value", "datatype"? | "xml:lang"?}}


class Feedback(str, Enum):
    ROWS = "rows"
    EMPTY = "empty"
    SYNTAX_ERROR = "syntax_error"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class QueryResult:
    """What executing one query told us."""

    query: str
    feedback: Feedback
    columns: tuple[str, ...] = ()
    bindings: tuple[Binding, ...] = ()  # SPARQL JSON bindings, in result order
    message: str = ""  # the error for syntax_error / timeout
    truncated: bool = False  # stopped at the row cap
    elapsed_s: float = 0.0
    boolean: bool | None = None  # the answer of an ASK query
    notes: tuple[str, ...] = field(default=(), compare=False)  # dialect rewrites applied
    standard: str = field(default="", compare=False, repr=False)  # the standard SPARQL that ran

    @property
    def has_rows(self) -> bool:
        return self.feedback is Feedback.ROWS

    def __len__(self) -> int:
        return len(self.bindings)

    def records(self) -> list[dict[str, str | None]]:
        """One ``{variable: value}`` per row (the plain value; ``None`` when unbound)."""
        return [{c: (b[c]["value"] if c in b else None) for c in self.columns} for b in self.bindings]

    def rows(self) -> list[tuple[str | None, ...]]:
        return [tuple(b[c]["value"] if c in b else None for c in self.columns) for b in self.bindings]

    def sparql_json(self) -> dict[str, Any]:
        """The W3C SPARQL 1.1 JSON results document."""
        if self.boolean is not None:
            return {"head": {}, "boolean": self.boolean}
        return {"head": {"vars": list(self.columns)}, "results": {"bindings": [dict(b) for b in self.bindings]}}

    # Hand-written: the rows as records of plain values, not the bindings the result holds.
    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"feedback": self.feedback.value, "columns": list(self.columns), "rows": self.records()}
        if self.boolean is not None:
            out["boolean"] = self.boolean
        if self.message:
            out["message"] = self.message
        if self.truncated:
            out["truncated"] = True
        return out


def term_json(term: Any) -> dict[str, str]:
    """An rdflib term in the SPARQL JSON results format (lexical forms untouched)."""
    if isinstance(term, URIRef):
        return {"type": "uri", "value": str(term)}
    if isinstance(term, BNode):
        return {"type": "bnode", "value": str(term)}
    if isinstance(term, Literal):
        out = {"type": "literal", "value": str(term)}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype is not None:
            out["datatype"] = str(term.datatype)
        return out
    return {"type": "literal", "value": str(term)}


def results_from_json(doc: Any) -> list[Binding]:
    """The bindings of a SPARQL JSON results document, or of a bare list of bindings."""
    if isinstance(doc, dict) and "results" in doc:
        doc = doc["results"].get("bindings", [])
    if not isinstance(doc, list):
        raise ValueError("expected a list of SPARQL JSON bindings or a SPARQL JSON results document")
    return doc


def columns_of(bindings: Sequence[Binding]) -> tuple[str, ...]:
    cols: list[str] = []
    for b in bindings:
        for k in b:
            if k not in cols:
                cols.append(k)
    return tuple(cols)


def tighter_bounds(
    timeout_s: float, row_cap: int, asked_timeout_s: float | None, asked_row_cap: int | None
) -> tuple[float, int]:
    """The time limit and row cap of one query: those asked for, never looser than the source's own
    (``timeout_s``, ``row_cap``: the settings' bounds).  A bound asked for that is not positive is a ValueError."""
    if asked_timeout_s is not None:
        if not asked_timeout_s > 0:
            raise ValueError(f"a query's time limit must be positive, not {asked_timeout_s!r}")
        timeout_s = min(timeout_s, asked_timeout_s)
    if asked_row_cap is not None:
        if asked_row_cap < 1:
            raise ValueError(f"a query's row cap must be at least 1, not {asked_row_cap!r}")
        row_cap = min(row_cap, asked_row_cap)
    return timeout_s, row_cap
