"""What a person (or SPINACH) browses besides queries: entity pages, search, property examples.

* :meth:`Browser.page` — an entity's page: label, description, aliases and every statement with
  its qualifiers (``get_wikidata_entry``).  A property's page shows its datatype.
* :meth:`Browser.search` — Wikidata's ``wbsearchentities``: labels and aliases matched exactly,
  then by prefix, then word by word; at most 8 items and 4 properties (``search_wikidata``).
* :meth:`Browser.property_examples` — a few statements that use a property, spread over the
  graph (``get_property_examples``).

Everything is read from the graph itself (any store), never from a world's hidden truth.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rdflib import RDF, RDFS, BNode, Graph, Literal, URIRef

from engines.errors import EngineError
from engines.kg.prefixes import PREFIXES, entity_id
from engines.kg.store import oxigraph_store

__all__ = ["UnknownEntity", "PageValue", "PageClaim", "EntityPage", "SearchHit", "PropertyExample", "Browser"]

WD, P, PS, PQ = PREFIXES["wd"], PREFIXES["p"], PREFIXES["ps"], PREFIXES["pq"]
WIKIBASE = PREFIXES["wikibase"]
SCHEMA_DESCRIPTION = URIRef(PREFIXES["schema"] + "description")
ALT_LABEL = URIRef(PREFIXES["skos"] + "altLabel")
_ID = re.compile(r"^[QP]\d+$")


class UnknownEntity(EngineError):
    """No entity with this ID is in the graph."""


@dataclass(frozen=True)
class PageValue:
    text: str  # the label for an item, the lexical form for a literal
    id: str | None = None  # the QID/PID when the value is an entity

    def render(self) -> str:
        return f"{self.text} ({self.id})" if self.id and self.text != self.id else self.text


@dataclass(frozen=True)
class PageClaim:
    pid: str
    property_label: str
    value: PageValue
    qualifiers: tuple[tuple[str, str, PageValue], ...] = ()  # (pid, label, value)

    def render(self) -> str:
        line = f"{self.pid} ({self.property_label}): {self.value.render()}"
        if self.qualifiers:
            line += " [" + "; ".join(f"{q} ({ql}): {v.render()}" for q, ql, v in self.qualifiers) + "]"
        return line


@dataclass(frozen=True)
class EntityPage:
    id: str
    label: str
    description: str
    aliases: tuple[str, ...] = ()
    claims: tuple[PageClaim, ...] = ()
    datatype: str | None = None  # for properties

    def links(self) -> tuple[str, ...]:
        """The entities this page links to, in page order (for "follow a link")."""
        out: list[str] = []
        for c in self.claims:
            for v in (c.value, *(q[2] for q in c.qualifiers)):
                if v.id and v.id not in out:
                    out.append(v.id)
        return tuple(out)

    def render(self) -> str:
        lines = [f"label: {self.label}", f"description: {self.description}"]
        if self.aliases:
            lines.append("aliases: " + ", ".join(self.aliases))
        if self.datatype:
            lines.append(f"datatype: {self.datatype}")
        lines += [c.render() for c in self.claims]
        return "\n".join(lines)


@dataclass(frozen=True)
class SearchHit:
    id: str
    label: str
    description: str
    kind: str  # item | property
    datatype: str | None = None
    matched: str = ""  # the label or alias that matched

    def render(self) -> str:
        line = f"{self.label} ({self.id}): {self.description}"
        if self.datatype:
            line += f"\tData Type: {self.datatype}"
        return line


@dataclass(frozen=True)
class PropertyExample:
    subject: PageValue
    pid: str
    property_label: str
    value: PageValue
    qualifiers: tuple[tuple[str, str, PageValue], ...] = ()

    def render(self) -> str:
        line = f"{self.subject.render()} -- {self.property_label} ({self.pid}) --> {self.value.render()}"
        if self.qualifiers:
            line += " [" + "; ".join(f"{ql} ({q}): {v.render()}" for q, ql, v in self.qualifiers) + "]"
        return line


def _from_ox(term: Any) -> Any:
    import pyoxigraph as ox

    if isinstance(term, ox.NamedNode):
        return URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return BNode(term.value)
    if isinstance(term, ox.Literal):
        if term.language:
            return Literal(term.value, lang=term.language)
        return Literal(term.value, datatype=URIRef(term.datatype.value), normalize=False)
    return Literal(str(term))


def _words(text: str) -> list[str]:
    return re.findall(r"[\w]+", text.casefold())


def match_names(
    query: str, labels: Mapping[str, str], aliases: Mapping[str, Sequence[str]]
) -> dict[str, tuple[int, str]]:
    """Entities whose label or an alias matches ``query`` (already normalised by :func:`_words`), each with
    its best tier (0 the whole name, 2 a prefix, 4 every query word starts a word; +1 for an alias) and the
    name that matched: wbsearchentities-style ranking, shared by every browser."""
    qwords = query.split()
    found: dict[str, tuple[int, str]] = {}

    def consider(i: str, name: str, is_alias: bool) -> None:
        words = _words(name)
        norm = " ".join(words)
        if norm == query:
            tier = 0
        elif norm.startswith(query):
            tier = 2
        elif all(any(w.startswith(q) for w in words) for q in qwords):
            tier = 4
        else:
            return
        tier += int(is_alias)
        if i not in found or tier < found[i][0]:
            found[i] = (tier, name)

    for i, name in labels.items():
        consider(i, name, False)
    for i, names in aliases.items():
        for name in names:
            consider(i, name, True)
    return found


def _num(i: str) -> tuple[int, int]:
    return (0 if i.startswith("Q") else 1, int(i[1:]) if i[1:].isdigit() else 0)


class Browser:
    """Pages, search and property examples over one rdflib graph."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._lock = threading.Lock()
        self._index: dict[str, Any] | None = None
        self._ox = oxigraph_store(graph)

    def _triples(self, s: Any = None, p: Any = None, o: Any = None) -> Iterator[tuple[Any, Any, Any]]:
        """Triples matching a pattern, literals exactly as stored (oxrdflib would normalise them)."""
        if self._ox is None:
            yield from self.graph.triples((s, p, o))
            return
        import pyoxigraph as ox

        def to_ox(t: Any) -> Any:
            return None if t is None else ox.NamedNode(str(t))

        for q in self._ox.quads_for_pattern(to_ox(s), to_ox(p), to_ox(o), None):
            yield _from_ox(q.subject), _from_ox(q.predicate), _from_ox(q.object)

    def _objects(self, s: Any, p: Any) -> Iterator[Any]:
        for _s, _p, o in self._triples(s, p, None):
            yield o

    # --- the index -------------------------------------------------------------------------

    def _idx(self) -> dict[str, Any]:
        with self._lock:
            if self._index is None:
                self._index = self._build_index()
            return self._index

    def _build_index(self) -> dict[str, Any]:
        g = self
        labels: dict[str, str] = {}
        descriptions: dict[str, str] = {}
        aliases: dict[str, list[str]] = {}
        for s, _p, o in g._triples(None, RDFS.label, None):
            if (
                isinstance(s, URIRef)
                and str(s).startswith(WD)
                and isinstance(o, Literal)
                and (o.language or "en") == "en"
            ):
                labels.setdefault(entity_id(str(s)), str(o))
        for s, _p, o in g._triples(None, SCHEMA_DESCRIPTION, None):
            if isinstance(o, Literal) and (o.language or "en") == "en":
                descriptions.setdefault(entity_id(str(s)), str(o))
        for s, _p, o in g._triples(None, ALT_LABEL, None):
            if isinstance(o, Literal) and (o.language or "en") == "en":
                aliases.setdefault(entity_id(str(s)), []).append(str(o))
        properties: dict[str, str] = {}
        for s, _p, _o in g._triples(None, RDF.type, URIRef(WIKIBASE + "Property")):
            pid = entity_id(str(s))
            dt = next(g._objects(s, URIRef(WIKIBASE + "propertyType")), None)
            properties[pid] = str(dt).rsplit("#", 1)[-1] if dt is not None else "WikibaseItem"
        return {"labels": labels, "descriptions": descriptions, "aliases": aliases, "properties": properties}

    def label(self, id_: str) -> str | None:
        labels: dict[str, str] = self._idx()["labels"]
        return labels.get(id_)

    def value(self, term: Any) -> PageValue:
        if isinstance(term, URIRef):
            s = str(term)
            if s.startswith(WD):
                i = entity_id(s)
                return PageValue(self.label(i) or i, i)
            return PageValue(s)
        return PageValue(str(term))

    # --- pages -------------------------------------------------------------------------------

    def page(self, id_: str) -> EntityPage:
        """The page of an item (``Q…``) or property (``P…``).  Raises UnknownEntity."""
        id_ = id_.strip()
        id_ = entity_id(id_[3:] if id_.startswith("wd:") else id_)
        if not _ID.match(id_):
            raise UnknownEntity(f"{id_!r} is not an entity ID: use a QID such as Q1000 or a PID such as P31.")
        idx = self._idx()
        if id_ not in idx["labels"] and not any(True for _ in self._triples(URIRef(WD + id_))):
            raise UnknownEntity(f"There is no entity {id_} in the graph.")
        subject = URIRef(WD + id_)
        claims: list[tuple[tuple[int, int], int, PageClaim]] = []
        order = 0
        for _s, pred, node in self._triples(subject):
            ps = str(pred)
            if not ps.startswith(P) or ps.startswith(PS) or ps.startswith(PQ) or "/" in ps[len(P) :]:
                continue
            pid = ps[len(P) :]
            value = next(self._objects(node, URIRef(PS + pid)), None)
            if value is None:
                continue
            quals: list[tuple[str, str, PageValue]] = []
            for _n, qp, qv in self._triples(node):
                if str(qp).startswith(PQ):
                    qpid = str(qp)[len(PQ) :]
                    quals.append((qpid, self.label(qpid) or qpid, self.value(qv)))
            quals.sort(key=lambda q: (_num(q[0]), q[2].text))
            claims.append((_num(pid), order, PageClaim(pid, self.label(pid) or pid, self.value(value), tuple(quals))))
            order += 1
        claims.sort(key=lambda c: (c[0], c[2].value.id and _num(c[2].value.id) or (9, 0), c[2].value.text))
        return EntityPage(
            id_,
            idx["labels"].get(id_, id_),
            idx["descriptions"].get(id_, ""),
            tuple(sorted(idx["aliases"].get(id_, ()))),
            tuple(c[2] for c in claims),
            idx["properties"].get(id_),
        )

    # --- search --------------------------------------------------------------------------------

    def search(self, text: str, *, items: int = 8, properties: int = 4) -> tuple[SearchHit, ...]:
        """Items then properties whose label or alias matches ``text`` (wbsearchentities-style)."""
        query = " ".join(_words(text))
        if not query:
            return ()
        idx = self._idx()
        found = match_names(query, idx["labels"], idx["aliases"])
        ranked = sorted(found.items(), key=lambda kv: (kv[1][0], _num(kv[0])))
        out_items = [i for i, _ in ranked if i.startswith("Q")][:items]
        out_props = [i for i, _ in ranked if i.startswith("P") and i in idx["properties"]][:properties]
        return tuple(
            SearchHit(
                i,
                idx["labels"].get(i, i),
                idx["descriptions"].get(i, ""),
                "property" if i.startswith("P") else "item",
                idx["properties"].get(i),
                found[i][1],
            )
            for i in out_items + out_props
        )

    # --- property examples -------------------------------------------------------------------

    def property_examples(self, pid: str, n: int = 5) -> tuple[PropertyExample, ...]:
        """Up to ``n`` statements using ``pid``, spread evenly over its subjects.  Raises UnknownEntity."""
        pid = pid.strip()
        pid = pid.split(":", 1)[1] if ":" in pid else pid
        if not re.fullmatch(r"P\d+", pid):
            raise UnknownEntity(f"{pid!r} is not a property ID: use a PID such as P31.")
        if pid not in self._idx()["properties"]:
            raise UnknownEntity(f"There is no property {pid} in the graph.")
        statements = sorted(
            ((s, node) for s, _p, node in self._triples(None, URIRef(P + pid))),
            key=lambda sn: (_num(entity_id(str(sn[0]))), str(sn[1])),
        )
        if not statements:
            return ()
        step = max(1, len(statements) // n)
        out: list[PropertyExample] = []
        for s, node in statements[::step][:n]:
            value = next(self._objects(node, URIRef(PS + pid)), None)
            if value is None:
                continue
            quals = tuple(
                sorted(
                    (
                        (str(qp)[len(PQ) :], self.label(str(qp)[len(PQ) :]) or "", self.value(qv))
                        for _n, qp, qv in self._triples(node)
                        if str(qp).startswith(PQ)
                    ),
                    key=lambda q: _num(q[0]),
                )
            )
            out.append(PropertyExample(self.value(s), pid, self.label(pid) or pid, self.value(value), quals))
        return tuple(out)
