"""What graph the SPINACH agent queries, as its policy's prompt says it.

SPINACH's prompt (the paper's, ``engines/spinach/prompts/policy.j2``) tells the policy the graph is Wikidata and that
the question is guaranteed to have an answer there.  That holds for the built-in world (the lecture's Wikidata-like
graph) and for Wikidata's own endpoint: for them :func:`describe_graph` is None and the prompt is SPINACH's,
verbatim.  Any other graph (a user's RDF files, ``--rdf``; another SPARQL endpoint, ``--endpoint``) is a
:class:`GraphInfo`: what it is, whether it speaks Wikidata's vocabulary, and the prefixes its queries may use
without declaring them.  The prompt then says so, names the actions for what they do on any graph, and offers
the policy ``no_answer(reason)`` — the question may have no answer there.

What comes from the user (file names, the endpoint's address, the files' prefixes) is bounded before it reaches a
prompt: at most :data:`MAX_NAMES` file names and :data:`MAX_PREFIXES` prefixes are listed (the rest counted), a
prefix whose IRI is longer than :data:`MAX_IRI` or holds what no IRI holds (a space, a line break, ``<``, ``>``:
an RDF/XML namespace can), or whose name is not one a query could write, is counted, not shown, and an address is shown without its query
string or fragment (a token there is not the model's business), cut at :data:`MAX_IRI` characters.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from engines.errors import EngineError

__all__ = ["GraphInfo", "describe_graph", "MAX_NAMES", "MAX_PREFIXES", "MAX_IRI"]

MAX_NAMES = 5  # file names listed in the prompt
MAX_PREFIXES = 40  # prefixes listed in the prompt
MAX_IRI = 200  # characters of a listed prefix IRI or of the endpoint's address
#: Wikidata's own namespaces: on a graph whose vocabulary is not Wikidata's they name nothing, so they are not listed
WIKIDATA_ONLY = (
    "http://www.wikidata.org/",
    "http://wikiba.se/",
    "http://www.bigdata.com/",
    "https://www.mediawiki.org/",
)
_STANDARD = ("rdf", "rdfs", "xsd", "owl")  # predefined in every dialect
_NAME = re.compile(r"(?:[A-Za-z][A-Za-z0-9_.-]{0,63})?", re.ASCII)  # a prefix's name as a query writes it
_NOT_IRI = re.compile(r'[\x00-\x20<>"{}|^`\\]')  # what no IRI holds (an RDF/XML namespace could): not listed


@dataclass(frozen=True)
class GraphInfo:
    """A graph that is not Wikidata, as the policy is told it."""

    what: str  # "your own RDF graph, read from people.ttl (12 statements)" | "the SPARQL endpoint at http://…"
    wikidata: bool  # in Wikidata's vocabulary (QIDs, PIDs, statements with qualifiers; the label service)
    prefixes: tuple[tuple[str, str], ...] = ()  # listed: predefined in every query (Wikidata's own not among them)
    more_prefixes: int = 0  # predefined too, not listed (past MAX_PREFIXES, or an IRI over MAX_IRI)


def describe_graph(endpoint: Any) -> GraphInfo | None:
    """The graph ``endpoint`` queries, for the policy's prompt; None for Wikidata itself (the built-in world, or
    Wikidata's own endpoint), whose prompt is SPINACH's.  A remote endpoint may be asked once whether its graph
    uses Wikidata's vocabulary (:attr:`RemoteEndpoint.wikidata`, cached); when it cannot say, its dialect decides."""
    dialect = getattr(endpoint, "dialect", None)
    dialect_wikidata = bool(getattr(dialect, "wikidata", True))
    found = getattr(endpoint, "rdf_source", None)
    url = getattr(endpoint, "url", None)
    if found is not None:
        names = [os.path.basename(os.fsencode(p).decode("utf-8", "backslashreplace")) for p in found.paths]
        shown = ", ".join(_cut(n) for n in names[:MAX_NAMES])
        if len(names) > MAX_NAMES:
            shown += f" and {len(names) - MAX_NAMES} more files"
        statements = int(found.statements)
        what = f"your own RDF graph, read from {shown} ({statements:,} statement{'' if statements == 1 else 's'})"
        wikidata = bool(found.wikidata)
    elif isinstance(url, str):
        if getattr(endpoint, "is_wikidata", False):
            return None
        try:
            wikidata = bool(endpoint.wikidata)
        except EngineError:
            wikidata = dialect_wikidata
        what = f"the SPARQL endpoint at {_address(url)}"
    elif dialect_wikidata:
        return None  # the built-in world (or a graph of its triples)
    else:
        what, wikidata = "an RDF graph", False
    prefixes, more = _listed(getattr(dialect, "prefixes", ()), wikidata)
    return GraphInfo(what, wikidata, prefixes, more)


def _listed(prefixes: Any, wikidata: bool) -> tuple[tuple[tuple[str, str], ...], int]:
    """The prefixes to list: a Wikidata-vocabulary graph's own (Wikidata's usual ones are named as SPINACH's prompt
    names them), any other graph's without Wikidata's namespaces; at most MAX_PREFIXES, each IRI at most MAX_IRI."""
    from engines.kg.prefixes import PREFIXES

    listed: list[tuple[str, str]] = []
    more = 0
    for name, iri in prefixes:
        name, iri = str(name), str(iri)
        if wikidata and PREFIXES.get(name) == iri:
            continue  # one of the usual Wikidata prefixes, named as a group
        if not wikidata and iri.startswith(WIKIDATA_ONLY):
            continue
        if len(listed) >= MAX_PREFIXES or len(iri) > MAX_IRI or not _NAME.fullmatch(name) or _NOT_IRI.search(iri):
            more += 1
            continue
        listed.append((name, iri))
    # the graph's own first, then the standard ones every dialect has
    listed.sort(key=lambda kv: kv[0] in _STANDARD)
    return tuple(listed), more


def _address(url: str) -> str:
    """An endpoint's address as the prompt shows it: scheme, host, port and path (no query string, no fragment)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a port that is not a number: the endpoint refuses the address before any prompt
        port = ""
    return _cut(f"{parts.scheme}://{host}{port}{parts.path}")


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_IRI else text[: MAX_IRI - 1] + "…"
