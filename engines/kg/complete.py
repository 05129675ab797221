"""Completion for the SPARQL console: the dialect's prefixes and SPARQL's keywords first, then the current graph's
entities and properties found by label, each with its ID (``wdt:P31 — instance of``, ``wd:Q42 — Douglas Adams``).

    prefix_suggestions("wd", dialect)                     # wd:, wdt:, wds: … (in the dialect), then keywords
    lookup_labels(graph, "douglas", namespace="wd")       # one bounded SPARQL query on any GraphSource
    id_at("?x wdt:P31 wd:Q5 .", 12)                       # 'Q5': the QID or PID under the cursor

The label lookup is one SPARQL query, the same on the built-in world, a user's RDF files and a remote endpoint
(:meth:`GraphSource.query`, under a time limit and a row cap tighter than the console's): the text searched is a
literal written by rdflib (``Literal(text).n3()``), the label predicates IRIs written the same way; nothing typed
is pasted into the query.  ``cancelled`` is asked before the query is sent (the editor asks it after a short
pause, so a key typed meanwhile drops the lookup unsent); a query already sent runs to its bound, and its answer is
then dropped by the caller."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rdflib import Literal, URIRef

from engines.completion import MAX_WORD, Suggestion, ranked
from engines.kg.generic_pages import ALIAS_PREDICATES, LABEL_PREDICATES
from engines.kg.prefixes import PREFIXES, WD, compact
from engines.kg.results import Feedback
from engines.kg.sparql import Dialect
from engines.sources import GraphSource

LOOKUP_LIMIT = 12
"""Entities and properties a label lookup returns at most."""
LOOKUP_TIMEOUT_S = 3.0
"""Seconds a label lookup may take (its query's time limit; a remote endpoint's whole exchange)."""
MIN_LOOKUP_CHARS = 2
"""Characters typed before the graph is asked (one letter matches too much to be useful)."""
MAX_PREFIX_SUGGESTIONS = 30

_SPARQL_KEYWORDS = tuple(
    """SELECT DISTINCT WHERE FILTER OPTIONAL UNION MINUS BIND VALUES ORDER BY ASC DESC GROUP HAVING LIMIT OFFSET
    ASK CONSTRUCT DESCRIBE PREFIX BASE NOT EXISTS IN SERVICE GRAPH AS COUNT SUM MIN MAX AVG SAMPLE GROUP_CONCAT
    STR LANG LANGMATCHES DATATYPE BOUND IRI BNODE STRLEN SUBSTR UCASE LCASE STRSTARTS STRENDS CONTAINS REGEX
    REPLACE YEAR MONTH DAY NOW ISIRI ISLITERAL ISBLANK COALESCE IF""".split()
)

# the predicates the entity browsers read labels and aliases from (Wikidata's; any other graph's)
_WIKIDATA_LABELS = (PREFIXES["rdfs"] + "label", PREFIXES["skos"] + "altLabel")
_GENERIC_LABELS = (*LABEL_PREDICATES, *ALIAS_PREDICATES)
_WIKIDATA_PROPERTY_PREFIXES = ("wdt", "p", "ps", "pq", "psv", "pqv", "wdtn", "prn", "pr")

_ID_TOKEN = re.compile(
    r"(?:\b[A-Za-z][\w-]*:|<http://www\.wikidata\.org/(?:entity|prop/(?:[a-z-]+/)?)/?)?([QP]\d{1,12})\b"
)


@dataclass(frozen=True)
class LabelLookup:
    """What a label lookup found: the suggestions, and why there are none or fewer (a timeout, an error)."""

    suggestions: tuple[Suggestion, ...]
    message: str = ""
    truncated: bool = False


def prefix_suggestions(word: str, dialect: Dialect, *, limit: int = MAX_PREFIX_SUGGESTIONS) -> list[Suggestion]:
    """The dialect's prefixes starting with ``word`` (``wd`` → ``wd:``, ``wdt:`` …; their IRIs shown), then SPARQL's
    keywords and functions."""
    prefixes = [Suggestion(f"{name}:", f"{name}:", ns) for name, ns in sorted(dialect.prefixes) if name]
    keywords = [Suggestion(k, k, "keyword") for k in _SPARQL_KEYWORDS]
    return ranked(word, [*prefixes, *keywords], limit=limit)


def split_word(word: str) -> tuple[str | None, str]:
    """``wdt:inst`` → (``wdt``, ``inst``); ``douglas`` → (None, ``douglas``)."""
    if ":" in word:
        prefix, _, rest = word.partition(":")
        return prefix, rest
    return None, word


def label_query(text: str, *, wikidata: bool, namespace: str | None, limit: int) -> str:
    """The one SPARQL query of a lookup: entities with a label (or alias) whose lower-cased text starts with
    ``text`` or has a word starting with it — the label equal to it first, then the labels starting with it,
    shortest first; only IRIs under ``namespace`` when given.  ``text`` is written as a literal by rdflib."""
    folded = text.strip().lower()[:MAX_WORD]
    predicates = " ".join(URIRef(p).n3() for p in (_WIKIDATA_LABELS if wikidata else _GENERIC_LABELS))
    literal = Literal(folded).n3()
    word_start = Literal(" " + folded).n3()
    within = f"FILTER(STRSTARTS(STR(?e), {Literal(namespace).n3()})) " if namespace else ""
    return (
        f"SELECT ?e ?l WHERE {{ VALUES ?lp {{ {predicates} }} ?e ?lp ?l . "
        f'FILTER(isIRI(?e) && isLiteral(?l) && (LANG(?l) = "" || LANGMATCHES(LANG(?l), "en"))) {within}'
        f"BIND(LCASE(STR(?l)) AS ?n) FILTER(STRSTARTS(?n, {literal}) || CONTAINS(?n, {word_start})) "
        f"BIND(IF(?n = {literal}, 0, IF(STRSTARTS(?n, {literal}), 1, 2)) AS ?t) }} "
        f"ORDER BY ?t STRLEN(?n) STR(?e) LIMIT {int(limit)}"
    )


def _wikidata_id(iri: str) -> str | None:
    if iri.startswith(WD):
        local = iri[len(WD) :]
        if re.fullmatch(r"[QP]\d{1,12}", local):
            return local
    return None


def lookup_labels(
    graph: GraphSource,
    word: str,
    *,
    limit: int = LOOKUP_LIMIT,
    timeout_s: float = LOOKUP_TIMEOUT_S,
    cancelled: Callable[[], bool] | None = None,
) -> LabelLookup:
    """The entities and properties of ``graph`` whose label matches the word typed, as suggestions with their
    IDs.  ``word`` may carry a prefix: on a Wikidata-shaped graph ``wdt:inst`` finds properties (put in as
    ``wdt:P31``), ``wd:doug`` items and properties; a property found from a bare word is put in as ``wdt:P…``, an
    item as ``wd:Q…``.  On another graph the IRI is written with the dialect's prefixes (``<…>`` without one), and
    ``ex:ada`` looks only under the namespace ``ex:`` names.  One query, under ``timeout_s`` and ``limit`` rows."""
    prefix, text = split_word(word[:MAX_WORD])
    if len(text.strip()) < MIN_LOOKUP_CHARS:
        return LabelLookup(())
    dialect = graph.dialect
    namespaces = dialect.namespaces
    wikidata = dialect.wikidata
    namespace: str | None = None
    if prefix is not None:
        if prefix not in namespaces:
            return LabelLookup((), f"{prefix}: is not a prefix of this graph")
        namespace = namespaces[prefix] if not wikidata else None
    if cancelled is not None and cancelled():
        return LabelLookup((), "cancelled")
    # a few more rows than shown: an entity with a label and an alias comes back twice
    query = label_query(text, wikidata=wikidata, namespace=namespace, limit=limit * 3)
    result = graph.query(query, timeout_s=timeout_s, row_cap=limit * 3)
    if result.feedback is Feedback.TIMEOUT:
        return LabelLookup((), f"the label lookup ran out of time ({timeout_s:g} s)")
    if result.feedback is Feedback.SYNTAX_ERROR:
        return LabelLookup((), f"the label lookup failed: {result.message[:200]}")
    out: list[Suggestion] = []
    seen: set[str] = set()
    for record in result.records():
        iri, label = record.get("e"), record.get("l")
        if iri is None or label is None or iri in seen:
            continue
        seen.add(iri)
        shown = label if len(label) <= 80 else label[:79] + "…"
        qid = _wikidata_id(iri) if wikidata else None
        if qid is not None:
            is_property = qid.startswith("P")
            if prefix in _WIKIDATA_PROPERTY_PREFIXES and not is_property:
                continue
            if prefix is not None:
                use = prefix
            else:
                use = "wdt" if is_property else "wd"
            text_in = f"{use}:{qid}"
            kind = "property" if is_property else "item"
        else:
            text_in = compact(iri, namespaces)
            kind = "entity"
        out.append(Suggestion(text_in, f"{text_in} — {shown}", kind))
        if len(out) >= limit:
            break
    return LabelLookup(tuple(out), truncated=result.truncated)


def id_at(line: str, column: int) -> str | None:
    """The Wikidata QID or PID under (or just before) ``column`` of ``line``: ``wd:Q42``, ``wdt:P31``, ``Q42``,
    ``<http://www.wikidata.org/entity/Q42>`` all give its ID; None when the cursor is on none."""
    for m in _ID_TOKEN.finditer(line[:2000]):
        if m.start() <= column <= m.end():
            return m.group(1)
    return None


def label_of(graph: GraphSource, id_: str) -> str | None:
    """The label of a QID or PID in ``graph`` (:meth:`GraphSource.label`: the local index, or one bounded query
    to an endpoint, which keeps what it read)."""
    if not re.fullmatch(r"[QP]\d{1,12}", id_):
        return None
    return graph.label(id_)


__all__ = [
    "LOOKUP_LIMIT",
    "LOOKUP_TIMEOUT_S",
    "MIN_LOOKUP_CHARS",
    "LabelLookup",
    "id_at",
    "label_of",
    "label_query",
    "lookup_labels",
    "prefix_suggestions",
    "split_word",
]
