"""The SPARQL language as this package reads it: the two errors a query can raise, the dialect a query is read
in (:class:`Dialect`: Wikidata's, or standard SPARQL with a graph's own prefixes) and tree-sitter's SPARQL parser
(:func:`tree_tools`), which both :mod:`engines.kg.dialect` and :mod:`engines.kg.agreement` walk."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engines.errors import EngineError
from engines.jsonable import Jsonable, JsonShape
from engines.kg.prefixes import PREFIXES

__all__ = ["TREE", "WIKIDATA", "WIKIDATA_NATIVE", "Dialect", "SparqlRefused", "SparqlSyntaxError", "tree_tools"]


class SparqlRefused(EngineError):
    """The query asks for something this endpoint does not do (an update, a remote SERVICE, …)."""


class SparqlSyntaxError(EngineError):
    """The query does not parse or plan; the message says where."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Dialect(Jsonable):
    """What a query may assume about the graph it runs on.

    ``prefixes``: the prefixes every query may use without a PREFIX line (Wikidata's for the
    Wikidata dialect; a user's RDF file's own, plus rdf/rdfs/xsd/owl, otherwise).  ``wikidata``:
    the Wikidata Query Service's extensions are handled (the label service, named subqueries,
    hints, Blazegraph's spacing, dates read as midnight UTC); off, a query is standard SPARQL 1.1
    and a ``SERVICE wikibase:label`` is refused like any other SERVICE."""

    prefixes: tuple[tuple[str, str], ...]
    wikidata: bool = True
    native_labels: bool = False  # SERVICE wikibase:label is left for the endpoint (Wikidata's own) to run

    __json__ = JsonShape(renamed={"native_labels": "native"})  # read back by from_json

    @classmethod
    def standard(cls, prefixes: Mapping[str, str]) -> Dialect:
        """Standard SPARQL with ``prefixes`` (rdf, rdfs, xsd and owl are always there)."""
        base = {k: PREFIXES[k] for k in ("rdf", "rdfs", "xsd", "owl")}
        base.update({k: v for k, v in prefixes.items() if isinstance(k, str) and isinstance(v, str)})
        return cls(tuple(base.items()), False)

    @classmethod
    def wikidata_with(cls, prefixes: Mapping[str, str]) -> Dialect:
        """The Wikidata dialect, with a file's own prefixes added (Wikidata's win on a clash)."""
        merged = {k: v for k, v in prefixes.items() if isinstance(k, str) and isinstance(v, str)}
        merged.update(PREFIXES)
        return cls(tuple(merged.items()), True)

    @property
    def namespaces(self) -> dict[str, str]:
        return dict(self.prefixes)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Dialect:
        return cls(tuple((str(k), str(v)) for k, v in doc["prefixes"]), bool(doc["wikidata"]), bool(doc.get("native")))


WIKIDATA = Dialect(tuple(PREFIXES.items()), True)
WIKIDATA_NATIVE = Dialect(tuple(PREFIXES.items()), True, True)  # sent to Wikidata's own endpoint


TREE: dict[str, Any] = {}
SHAPES = """
(bind) @bind
(property . (path_element (path_mod) .)) @zprop
(function_call) @call
(select_clause "*") @star
(select_clause "AS") @as
"""


def tree_tools() -> tuple[Any, Any] | None:
    """tree-sitter's SPARQL parser and the query that finds what must not run fast, or None if not installed."""
    if "parser" not in TREE:
        try:
            import warnings

            import tree_sitter
            import tree_sitter_sparql

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                language = tree_sitter.Language(tree_sitter_sparql.language())
            TREE["parser"] = tree_sitter.Parser(language)
            TREE["forbidden"] = tree_sitter.Query(language, "[(service_graph_pattern) (dataset_clause)] @x")
            TREE["shapes"] = tree_sitter.Query(language, SHAPES)  # what engines.kg.agreement looks at
            TREE["vars"] = tree_sitter.Query(language, "(var) @v")
            TREE["cursor"] = tree_sitter.QueryCursor
        except Exception:  # not installed, or an incompatible version: every query takes rdflib's path
            TREE["parser"] = None
    if TREE["parser"] is None:
        return None
    return TREE["parser"], TREE["forbidden"]
