"""Wikidata's SPARQL dialect, rewritten into standard SPARQL 1.1 that rdflib and Oxigraph run.

The Wikidata Query Service (Blazegraph) accepts more than the standard: its prefixes need no
PREFIX lines, ``SERVICE wikibase:label`` fills ``?xLabel`` and ``?xDescription``, named
subqueries (``WITH { … } AS %x`` … ``INCLUDE %x``) and query hints (``hint:Prior hint:… .``)
are Blazegraph extensions, and its parser forgives spacing that the standard's does not
(``wdt:P279 *``, ``?a?b``).  :func:`prepare` handles each of these with a small rewrite on the
query text, then parses and plans the result with rdflib (``parseQuery`` + ``translateQuery``)
and decides what may run on that plan (:func:`check`), never on the text:

* ``\\uXXXX`` / ``\\UXXXXXXXX`` escapes are expanded first, over the whole query, as SPARQL
  specifies (and rdflib does): every rewrite, the plan and both stores see the same text;
* comments are dropped; strings and IRIs are masked first, so no rewrite ever touches them;
* ``hint:`` triples are dropped;
* ``wdt:P279 *`` becomes ``wdt:P279*`` and ``?a?b`` becomes ``?a ?b``;
* every ``INCLUDE %x`` is replaced by the ``WITH`` block it names, as a subquery;
* ``SERVICE wikibase:label`` becomes, at the end of the group it stands in, an ``OPTIONAL``
  per language for each label variable and a ``BIND(COALESCE(…))`` with the bare ID as the
  last resort (the service's documented behaviour);
* a ``SERVICE`` addressed to the Wikidata endpoint itself is inlined;
* ``bd:sample`` / ``bd:slice`` services are inlined (without sampling, noted);
* the geospatial and MediaWiki-API services (``wikibase:around``, ``wikibase:box``,
  ``wikibase:mwapi``, ``gas:service``) are part of the real endpoint: a query using them parses
  and plans, but cannot run offline and says so;
* on tree-sitter's syntax tree of the result (:mod:`engines.kg.agreement`, before rdflib parses it): a
  variable bound again runs as Wikidata runs it (two shapes) or is refused, ``SELECT *``'s columns get the
  order of first appearance, and the functions called are listed — so that both stores answer alike;
* on the plan: any other ``SERVICE`` left in it (a remote endpoint, a variable, a spelling of the
  label service the rewrite did not take), ``FROM`` / ``FROM NAMED``, and every update (``LOAD``,
  ``INSERT`` … — the text parses as an update, not a query) are refused.

Errors: :class:`SparqlRefused` (the policy says no) and :class:`SparqlSyntaxError` (the query
does not parse or plan), both :class:`~engines.errors.EngineError` with a message for a person.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from engines.kg.prefixes import PREFIXES
from engines.kg.sparql import TREE, WIKIDATA, WIKIDATA_NATIVE, Dialect, SparqlRefused, SparqlSyntaxError, tree_tools

__all__ = [
    "Dialect",
    "WIKIDATA",
    "WIKIDATA_NATIVE",
    "Prepared",
    "SparqlRefused",
    "SparqlSyntaxError",
    "prepare",
    "fast_prepare",
    "rewrite",
    "plan",
    "check",
    "expand_escapes",
]


class _RdflibLiteralNoise(logging.Filter):
    """rdflib logs a traceback for every ill-formed typed literal (Wikidata writes dates such as
    ``1900-00-00``); the lexical form is kept as written, so the warning is only noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Failed to convert Literal lexical form" not in record.getMessage()


logging.getLogger("rdflib.term").addFilter(_RdflibLiteralNoise())


@dataclass(frozen=True)
class Prepared:
    """A query after dialect handling."""

    original: str
    text: str  # standard SPARQL 1.1; the built-in prefixes are supplied separately (no PREFIX lines added)
    form: str  # SELECT | ASK | CONSTRUCT | DESCRIBE
    notes: tuple[str, ...] = ()  # what was rewritten, for people
    unsupported: str | None = None  # why the query cannot run offline although it plans
    algebra: Any = None  # rdflib's planned query (rdflib.plugins.sparql.sparql.Query)
    star: tuple[str, ...] | None = None  # SELECT *: its variables in order of first appearance (the columns' order)


# --- masking: strings, IRIs and comments --------------------------------------------------

_LEXEME = re.compile(
    r"""(?P<long>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\")
      |(?P<string>'(?:[^'\\\n\r]|\\.)*'|"(?:[^"\\\n\r]|\\.)*")
      |(?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
      |(?P<comment>\#[^\n]*)""",
    re.X,
)
_LEXEME_START = re.compile(r"['\"<#]")  # where a _LEXEME can begin
_OPEN, _CLOSE = "\ue000", "\ue001"
_SLOT = re.compile(_OPEN + r"(\d+)" + _CLOSE)


class _Masked:
    """The query with every string and IRI replaced by a numbered slot and comments removed."""

    def __init__(self, text: str) -> None:
        self.slots: list[str] = []
        out: list[str] = []
        pos = 0
        # What _LEXEME.finditer(text) finds, faster: a lexeme can only start at one of its opening
        # characters, so only there is it tried (finditer tries every position in Python's regex loop).
        find, match = _LEXEME_START.search, _LEXEME.match
        at = find(text)
        while at is not None:
            m = match(text, at.start())
            if m is None:  # a '<' that opens no IRI, a quote that closes nowhere: go on after it
                at = find(text, at.start() + 1)
                continue
            out.append(text[pos : m.start()])
            if m.lastgroup == "comment":
                out.append(" ")
            else:
                out.append(f"{_OPEN}{len(self.slots)}{_CLOSE}")
                self.slots.append(m.group())
            pos = m.end()
            at = find(text, pos)
        out.append(text[pos:])
        self.code = "".join(out)

    def slot(self, token: str) -> str | None:
        m = _SLOT.fullmatch(token)
        return self.slots[int(m.group(1))] if m else None

    def restore(self, code: str) -> str:
        return _SLOT.sub(lambda m: self.slots[int(m.group(1))], code)


def _match_brace(code: str, open_at: int) -> int:
    """Index of the ``}`` closing the ``{`` at ``open_at``."""
    depth = 0
    for i in range(open_at, len(code)):
        ch = code[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
    raise SparqlSyntaxError("Syntax error: a '{' is never closed (missing '}').")


def _enclosing_group(code: str, at: int) -> tuple[int, int] | None:
    """The ``{``…``}`` span of the innermost group containing position ``at``."""
    depth = 0
    for i in range(at - 1, -1, -1):
        ch = code[i]
        if ch == "}":
            depth += 1
        elif ch == "{":
            if depth == 0:
                return i, _match_brace(code, i)
            depth -= 1
    return None


# --- the rewrites ---------------------------------------------------------------------------

_PROLOGUE = re.compile(r"^\s*(?:(?:BASE\s+\S+|PREFIX\s+[\w.-]*:\s*\S+)\s*)*", re.I)
_FIRST_WORD = re.compile(r"[A-Za-z]+")
_HINT = re.compile(r"hint:\w+\s+hint:\w+\s+(?:" + _OPEN + r"\d+" + _CLOSE + r"|[^\s.;}]+)\s*\.?")
_PATH_MOD_SPACE = re.compile(r"(\b[A-Za-z][\w-]*:[\w-]+|" + _CLOSE + r")(\s+)([*+])(?=\s)")
_ADJACENT_VARS = re.compile(r"([?$][A-Za-z_]\w*)(?=[?$][A-Za-z_])")
_WITH = re.compile(r"\bWITH\s*\{", re.I)
_AS_NAME = re.compile(r"\s*AS\s+%([\w-]+)", re.I)
_INCLUDE = re.compile(r"\bINCLUDE\s+%([\w-]+)", re.I)
_SERVICE = re.compile(r"\bSERVICE\s*(SILENT\s*)?(\S+?)\s*\{", re.I)
_SPACED_PATH_MOD = re.compile(r"\s[*+]\s")  # what every match of _PATH_MOD_SPACE holds
_WORD_THEN_VAR = re.compile(r"[?$](?<=\w[?$])")  # a word character, then ? or $: in every match of _ADJACENT_VARS
# The non-ASCII letters re.IGNORECASE matches to ASCII ones (İ ı ſ and the Kelvin sign), so that
# where none occurs, a keyword the case-blind patterns above could find is in the text's lower().
_CASE_BLIND_EXTRAS = ("\u0130", "\u0131", "\u017f", "\u212a")


def _folded(code: str) -> str | None:
    """``code.lower()``, in which every word _WITH, _INCLUDE and _SERVICE match is found as a
    substring — or None when the text holds a letter for which that would not hold."""
    if not code.isascii() and any(c in code for c in _CASE_BLIND_EXTRAS):
        return None
    return code.lower()


_LABEL_VAR = re.compile(r"[?$]([A-Za-z_]\w*?)(Label|Description|AltLabel)\b")

_SELF_ENDPOINTS = (
    "<https://query.wikidata.org/sparql>",
    "<https://query.wikidata.org/bigdata/namespace/wdq/sparql>",
    "<http://query.wikidata.org/sparql>",
)
_INLINED_SERVICES = {
    "bd:sample": "bd:sample (returned every solution, not a sample)",
    "bd:slice": "bd:slice (returned every solution)",
}
_OFFLINE_SERVICES = {
    "wikibase:around": "geospatial search (SERVICE wikibase:around)",
    "wikibase:box": "geospatial search (SERVICE wikibase:box)",
    "wikibase:mwapi": "the MediaWiki API service (SERVICE wikibase:mwapi)",
    "gas:service": "the graph-analytics service (SERVICE gas:service)",
}
_LABEL_SERVICES = ("wikibase:label", "<http://wikiba.se/ontology#label>")


def expand_escapes(query: str) -> str:
    """The query with its ``\\u`` / ``\\U`` escapes expanded (SPARQL 1.1 §19.2, done before parsing).

    Expansion is a single pass, as in rdflib; a query whose expansion still holds escapes
    (``\\u005Cu0053``) would read differently to a store that expands again, so it is refused."""
    if "\\" not in query:  # an escape starts with a backslash: nothing to expand
        return query
    from rdflib.plugins.sparql.parser import expandUnicodeEscapes

    try:
        text = expandUnicodeEscapes(query)
        again = expandUnicodeEscapes(text)
    except ValueError as e:
        raise SparqlSyntaxError(f"Syntax error: {e}.") from None
    if again != text:
        raise SparqlSyntaxError("Syntax error: a \\u escape expands to another escape; write the character itself.")
    return text


def rewrite(query: str, *, native_labels: bool = False) -> tuple[str, str, tuple[str, ...], str | None]:
    """Dialect handling on the text: ``(standard text, form, notes, unsupported)``.

    Only rewrites: what may run is decided on the plan of the result (:func:`check`).  ``form``
    is the query's first keyword, ``unsupported`` the offline service the text names, if any
    (:func:`prepare` takes both from the plan instead).
    """
    if not isinstance(query, str) or not query.strip():
        raise SparqlSyntaxError("Syntax error: the query is empty.")
    masked = _Masked(expand_escapes(query))
    code = masked.code
    notes: list[str] = []
    unsupported: str | None = None

    body_start = _PROLOGUE.match(code).end()  # type: ignore[union-attr]
    first = _FIRST_WORD.match(code, body_start)
    word = first.group().upper() if first else ""
    form = word if word in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE") else word or "?"

    code, n = _HINT.subn(" ", code)
    if n:
        notes.append(f"dropped {n} query hint{'s' if n > 1 else ''} (hint:)")
    if _SPACED_PATH_MOD.search(code):  # else _PATH_MOD_SPACE cannot match (it is slow to find nothing)
        code, n = _PATH_MOD_SPACE.subn(lambda m: m.group(1) + m.group(3), code)
        if n:
            notes.append("joined a property path and its * or + (Blazegraph accepts the space)")
    if _WORD_THEN_VAR.search(code):  # else _ADJACENT_VARS cannot match
        code, n = _ADJACENT_VARS.subn(lambda m: m.group(1) + " ", code)
        if n:
            notes.append("separated adjacent variables (?a?b)")
    folded = _folded(code)
    if folded is None or "with" in folded or "include" in folded:
        code = _inline_named_subqueries(code, notes)
    if folded is None or "service" in folded:
        code, unsupported = _handle_services(code, masked, notes, native_labels)
    return masked.restore(code), form, tuple(notes), unsupported


def _inline_named_subqueries(code: str, notes: list[str]) -> str:
    named: dict[str, str] = {}
    while (m := _WITH.search(code)) is not None:
        close = _match_brace(code, m.end() - 1)
        as_name = _AS_NAME.match(code, close + 1)
        if as_name is None:
            raise SparqlSyntaxError("Syntax error: a named subquery WITH { … } must be followed by AS %name.")
        named[as_name.group(1)] = code[m.end() : close].strip()
        code = code[: m.start()] + " " + code[as_name.end() :]
    if not named:
        include = _INCLUDE.search(code)
        if include is not None:
            raise SparqlSyntaxError(f"Syntax error: INCLUDE %{include.group(1)} names no WITH {{ … }} AS %… block.")
        return code
    for _ in range(len(named) + 1):
        if not _INCLUDE.search(code):
            break

        def expand(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in named:
                raise SparqlSyntaxError(f"Syntax error: INCLUDE %{name} names no WITH {{ … }} AS %{name} block.")
            return "{ " + named[name] + " }"

        code = _INCLUDE.sub(expand, code)
    if _INCLUDE.search(code):
        raise SparqlSyntaxError("Syntax error: named subqueries include each other in a cycle.")
    notes.append(f"inlined named subquer{'ies' if len(named) > 1 else 'y'} " + ", ".join(f"%{n}" for n in named))
    return code


def _handle_services(
    code: str, masked: _Masked, notes: list[str], native_labels: bool = False
) -> tuple[str, str | None]:
    unsupported: str | None = None
    search_from = 0
    label_n = 0
    while (m := _SERVICE.search(code, search_from)) is not None:
        target = m.group(2)
        iri = masked.slot(target)
        name = iri if iri is not None else target
        close = _match_brace(code, m.end() - 1)
        body = code[m.end() : close]
        if name in _LABEL_SERVICES and native_labels:  # Wikidata's endpoint runs its own label service
            search_from = close + 1
            if "SERVICE wikibase:label left to the endpoint" not in notes:
                notes.append("SERVICE wikibase:label left to the endpoint")
        elif name in _LABEL_SERVICES:
            group = _enclosing_group(code, m.start())
            end = close + 1
            dot = re.match(r"\s*\.", code[end:])  # the service's own trailing '.' goes with it
            end += dot.end() if dot else 0
            without = code[: m.start()] + " " + code[end:]
            if group is None:
                code = without
                continue
            g_open, g_close = group[0], group[1] - (end - m.start()) + 1
            bindings = _label_bindings(code, body, without[g_open:g_close], masked, label_n)
            label_n += 1
            code = without[:g_close] + bindings + without[g_close:]
            if "emulated SERVICE wikibase:label" not in notes:
                notes.append("emulated SERVICE wikibase:label")
        elif name in _SELF_ENDPOINTS:
            code = code[: m.start()] + "{" + body + "}" + code[close + 1 :]
            notes.append(f"inlined SERVICE {name} (this endpoint itself)")
        elif name in _INLINED_SERVICES:
            inner = re.sub(r"bd:serviceParam\s+\S+\s+\S+\s*[.;]?", " ", body)
            code = code[: m.start()] + "{" + inner + "}" + code[close + 1 :]
            notes.append(f"inlined SERVICE {_INLINED_SERVICES[name]}")
        elif name in _OFFLINE_SERVICES:
            unsupported = unsupported or (
                f"This query uses {_OFFLINE_SERVICES[name]}, which the real Wikidata endpoint provides "
                "but this offline endpoint cannot run."
            )
            search_from = close + 1
        else:  # left in place: the plan's check refuses it, however it is spelled
            search_from = close + 1
    return code, unsupported


_WD = PREFIXES["wd"]
_LABEL_TOKEN = re.compile(_OPEN + r"\d+" + _CLOSE + r"|[?$][A-Za-z_]\w*|[^\s.;,]+|[.;,]")
_PNAME = re.compile(r"[A-Za-z][\w.-]*:[\w-]+")
_LANG_TAG = re.compile(r"[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*")
_UNBOUND = "<urn:x-cs224v:unbound>"  # names no node: the label lookup of an unbound variable finds nothing
_LABEL_PREDICATES = {
    "rdfs:label": "Label",
    "<http://www.w3.org/2000/01/rdf-schema#label>": "Label",
    "schema:description": "Description",
    "<http://schema.org/description>": "Description",
    "skos:altLabel": "AltLabel",
    "<http://www.w3.org/2004/02/skos/core#altLabel>": "AltLabel",
}
_LABEL_IRIS = {
    "Label": "<http://www.w3.org/2000/01/rdf-schema#label>",
    "Description": "<http://schema.org/description>",
    "AltLabel": "<http://www.w3.org/2004/02/skos/core#altLabel>",
}


def _string_value(token: str) -> str:
    """The value of a SPARQL string token (escapes read as rdflib's parser reads them)."""
    from pyparsing import ParseException
    from rdflib.plugins.sparql.parser import String

    try:
        return str(String.parse_string(token, parse_all=True)[0])
    except ParseException:
        raise SparqlSyntaxError(f"Syntax error: {token[:40]} is not a string.") from None


def _service_triples(body: str, masked: _Masked) -> list[tuple[str, str, str]]:
    """The triples written inside a label service's braces, as (subject, predicate, object)
    tokens (``;`` and ``,`` lists expanded; strings and IRIs restored)."""
    tokens = [masked.restore(t) for t in _LABEL_TOKEN.findall(body)]
    triples: list[tuple[str, str, str]] = []
    i = 0
    while i < len(tokens):
        if tokens[i] in ".;,":
            i += 1
            continue
        subject, i = tokens[i], i + 1
        while i + 1 < len(tokens) and tokens[i] not in ".;,":
            pred, obj, i = tokens[i], tokens[i + 1], i + 2
            triples.append((subject, pred, obj))
            while i + 1 < len(tokens) and tokens[i] == ",":
                triples.append((subject, pred, tokens[i + 1]))
                i += 2
            if i < len(tokens) and tokens[i] == ";":
                i += 1
                continue
            break
    return triples


def _languages(triples: list[tuple[str, str, str]]) -> list[str]:
    """The service's language list, in order (``[AUTO_LANGUAGE]`` is English here)."""
    langs: list[str] = []
    for s, p, o in triples:
        if s == "bd:serviceParam" and p == "wikibase:language":
            for tag in _string_value(o).split(","):
                tag = tag.strip()
                tag = "en" if tag.upper() in ("[AUTO_LANGUAGE]", "") else tag
                if not _LANG_TAG.fullmatch(tag):
                    raise SparqlSyntaxError(f"Syntax error: {tag[:40]!r} in wikibase:language is not a language code.")
                if tag.lower() not in langs:
                    langs.append(tag.lower())
    return langs or ["en"]


def _label_bindings(code: str, body: str, group_text: str, masked: _Masked, n: int) -> str:
    """The patterns that stand in for one ``SERVICE wikibase:label`` block, joined after the
    pattern of the group it stands in (so they only ever add to solutions that exist).

    For each labelled subject, its value is first copied into a helper variable, or a node that
    names nothing when the subject is unbound (``BIND(COALESCE(?x, <urn:…>) AS ?__s)``): the label
    lookups that follow (an ``OPTIONAL`` per language) can only ever join on that value, never bind
    the subject itself, so a variable bound only inside an OPTIONAL stays unbound where it was, and
    its label too.  Labels and descriptions come in the first language of the list that has one
    (a label falls back to the bare ID), alternative labels are the ones in the first language
    that has any, joined with ", " — the service's documented behaviour.
    """
    triples = _service_triples(body, masked)
    langs = _languages(triples)
    targets: list[tuple[str, str, str]] = []  # (subject term, kind, output variable name)
    manual = [
        (s, _LABEL_PREDICATES[p], o[1:])
        for s, p, o in triples
        if s != "bd:serviceParam" and p in _LABEL_PREDICATES and o[:1] in "?$" and len(o) > 1
    ]
    if manual:
        for s, kind, out in manual:
            if not (s[:1] in "?$" or _PNAME.fullmatch(s) or (s.startswith("<") and s.endswith(">"))):
                raise SparqlSyntaxError(
                    f"Syntax error: {s[:40]} cannot be the subject of a label in SERVICE wikibase:label."
                )
            targets.append(("?" + s[1:] if s[:1] in "?$" else s, kind, out))
    else:
        seen: set[str] = set()
        for m in _LABEL_VAR.finditer(code):
            base, kind = m.group(1), m.group(2)
            out = base + kind
            if out in seen or not re.search(r"[?$]" + re.escape(base) + r"\b", group_text):
                continue
            seen.add(out)
            targets.append(("?" + base, kind, out))
    parts: list[str] = []
    helpers: dict[str, str] = {}
    for i, (subject, kind, out) in enumerate(targets):
        if subject not in helpers:
            helpers[subject] = f"?__lbl{n}_s{len(helpers)}"
            parts.append(f" BIND(COALESCE({subject}, {_UNBOUND}) AS {helpers[subject]})")
        node = helpers[subject]
        options = []
        for j, lang in enumerate(langs):
            v = f"?__lbl{n}_{i}_{j}"
            if kind == "AltLabel":
                a = f"?__alt{n}_{i}_{j}"
                parts.append(
                    f' OPTIONAL {{ SELECT {node} (GROUP_CONCAT({a}; separator=", ") AS {v}) '
                    f'WHERE {{ {node} {_LABEL_IRIS[kind]} {a} . FILTER(LCASE(LANG({a})) = "{lang}") }} '
                    f"GROUP BY {node} }}"
                )
            else:
                parts.append(f' OPTIONAL {{ {node} {_LABEL_IRIS[kind]} {v} . FILTER(LCASE(LANG({v})) = "{lang}") }}')
            options.append(v)
        if kind == "Label":
            options.append(
                f'IF(isIRI({subject}), IF(STRSTARTS(STR({subject}), "{_WD}"), STRAFTER(STR({subject}), "{_WD}"), STR({subject})), STR({subject}))'
            )
        parts.append(f" BIND(COALESCE({', '.join(options)}) AS ?{out})")
    return "".join(parts) + " "


# --- parse and plan ---------------------------------------------------------------------------

_INIT_NS: dict[Dialect, dict[str, Any]] = {}


def _init_ns(dialect: Dialect = WIKIDATA) -> dict[str, Any]:
    found = _INIT_NS.get(dialect)
    if found is None:
        from rdflib import URIRef

        found = _INIT_NS[dialect] = {k: URIRef(v) for k, v in dialect.prefixes}
        if len(_INIT_NS) > 64:  # a long-lived process opening many files
            _INIT_NS.pop(next(iter(_INIT_NS)))
    return found


def plan(text: str, dialect: Dialect = WIKIDATA) -> Any:
    """rdflib's parse and algebra for standard SPARQL text with the dialect's prefixes.

    Raises SparqlSyntaxError, or SparqlRefused when the text is a SPARQL Update."""
    from pyparsing import ParseException
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        parsed = parseQuery(text)
    except ParseException as e:
        _refuse_update(text)
        found = e.line[e.col - 1 : e.col + 19].strip() if e.line and e.col else ""
        near = f" near {found!r}" if found else ""
        raise SparqlSyntaxError(
            f"Syntax error at line {e.lineno}, column {e.col}{near}: {e.msg}.", e.lineno, e.col
        ) from None
    except RecursionError:
        raise SparqlSyntaxError("Syntax error: the query is nested too deeply to parse.") from None
    except ValueError as e:  # an escape naming no code point
        raise SparqlSyntaxError(f"Syntax error: {e}.") from None
    _keep_constant_filters(parsed)
    _check_prefixes(parsed, dialect)
    try:
        algebra = translateQuery(parsed, initNs=_init_ns(dialect))
        _scope_values(algebra.algebra)
        return algebra
    except RecursionError:
        raise SparqlSyntaxError("Syntax error: the query is nested too deeply to plan.") from None
    except Exception as e:  # rdflib reports unknown prefixes, bad aggregates … as plain exceptions
        message = str(e).strip() or type(e).__name__
        message = message.replace("Unknown namespace prefix : ", "unknown prefix ")
        raise SparqlSyntaxError(f"Syntax error: {message}.") from None


def _check_prefixes(parsed: Any, dialect: Dialect) -> None:
    """Every prefixed name uses a prefix the query or the dialect declares (on the parsed tree).

    rdflib would also take the two dozen prefixes it binds itself (``foaf:``, ``dcterms:``, …),
    which Oxigraph and a remote endpoint do not know: the same query must mean the same on every store."""

    declared = {str(k) for k, _v in dialect.prefixes}
    names = [node for node in _nodes(parsed) if node.name in ("PrefixDecl", "pname")]
    declared |= {str(dict.get(n, "prefix") or "") for n in names if n.name == "PrefixDecl"}
    for node in names:
        prefix = str(dict.get(node, "prefix") or "")
        if node.name == "pname" and prefix not in declared:
            raise SparqlSyntaxError(f"Syntax error: unknown prefix {prefix}: (declare it with PREFIX {prefix}: <…>).")


def _keep_constant_filters(parsed: Any) -> None:
    """rdflib drops a ``FILTER`` whose expression is a constant that is false in Python
    (``FILTER(false)``, ``FILTER(0)``, ``FILTER("")``: its translation tests ``if filters:``), so
    the group keeps every solution; such a constant is wrapped in ``… && true`` (same value)."""
    from rdflib import Literal
    from rdflib.plugins.sparql.operators import ConditionalAndExpression
    from rdflib.plugins.sparql.parserutils import CompValue, Expr

    for node in _nodes(parsed):  # a node's children are visited after it, so the rewrite below is walked too
        if node.name == "Filter":
            inner = dict.get(node, "expr")
            while (
                isinstance(inner, CompValue)
                and inner.name.endswith("Expression")
                and set(inner) <= {"expr", "other"}
                and not dict.get(inner, "other")
            ):
                inner = dict.get(inner, "expr")
            if isinstance(inner, CompValue) and inner.name == "literal" and set(inner) == {"string"}:
                inner = dict.get(inner, "string")  # a plain string: its value is the literal's
            if isinstance(inner, Literal):
                # what rdflib's and_ builds (its signature names Exprs; a constant is an expression too)
                node["expr"] = Expr(
                    "ConditionalAndExpression", ConditionalAndExpression, expr=inner, other=[Literal(True)]
                )


_UPDATE_NAMES = {
    "Load": "LOAD",
    "Clear": "CLEAR",
    "Drop": "DROP",
    "Create": "CREATE",
    "Add": "ADD",
    "Move": "MOVE",
    "Copy": "COPY",
    "InsertData": "INSERT DATA",
    "DeleteData": "DELETE DATA",
    "DeleteWhere": "DELETE WHERE",
    "Modify": "DELETE/INSERT",
}


def _refuse_update(text: str) -> None:
    """Raise SparqlRefused if ``text`` parses as a SPARQL Update (it did not parse as a query)."""
    from rdflib.plugins.sparql.parser import parseUpdate

    try:
        update = parseUpdate(text)
    except Exception:  # neither a query nor an update: the query's syntax error stands
        return
    ops = [_UPDATE_NAMES.get(getattr(op, "name", ""), "an update") for op in (update.get("request") or ())]
    if "LOAD" in ops:
        raise SparqlRefused("LOAD is refused: this endpoint is read-only and never fetches other data.")
    raise SparqlRefused(
        f"SPARQL Update ({', '.join(dict.fromkeys(ops)) or 'an update'}) is refused: this endpoint is read-only."
    )


# --- what may run: decided on the plan ------------------------------------------------------------

_WIKIBASE, _BD, _GAS = PREFIXES["wikibase"], PREFIXES["bd"], PREFIXES["gas"]
_OFFLINE_IRIS = {
    _WIKIBASE + "around": "geospatial search (SERVICE wikibase:around)",
    _WIKIBASE + "box": "geospatial search (SERVICE wikibase:box)",
    _WIKIBASE + "mwapi": "the MediaWiki API service (SERVICE wikibase:mwapi)",
    _GAS + "service": "the graph-analytics service (SERVICE gas:service)",
}
_HANDLED_IRIS = {
    _WIKIBASE + "label": "SERVICE wikibase:label { … }",
    _BD + "sample": "SERVICE bd:sample { … }",
    _BD + "slice": "SERVICE bd:slice { … }",
}
_HANDLED_IRIS.update({iri.strip("<>"): f"SERVICE {iri} {{ … }}" for iri in _SELF_ENDPOINTS})


def _short(iri: str) -> str:
    from engines.kg.prefixes import compact

    return compact(iri)


def _nodes(root: Any) -> Iterator[Any]:
    """Every CompValue in a plan or a parse tree, depth first, without recursion (plans can be deep); a
    node's children are taken after the caller has seen it, so a rewrite of the node is walked too."""
    from rdflib.plugins.sparql.parserutils import CompValue

    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, CompValue):
            yield node
            stack.extend(v for k, v in node.items() if k != "_vars")
        elif isinstance(node, (list, tuple, set, frozenset)) or type(node).__name__ == "ParseResults":
            stack.extend(node)  # before Mapping: pyparsing registers ParseResults as one, whose values() miss its items
        elif isinstance(node, Mapping):
            stack.extend(node.values())


def check(query: Any, dialect: Dialect = WIKIDATA) -> str | None:
    """Decide on a planned query (rdflib's ``Query``) whether it may run here.

    Raises SparqlRefused for a dataset clause (``FROM`` / ``FROM NAMED``: data from elsewhere)
    and for every ``SERVICE`` still in the plan (the rewrite has taken the label service, this
    endpoint's own address and ``bd:sample`` / ``bd:slice`` when written plainly), except the
    real endpoint's built-in services, for which it returns why the query cannot run offline.
    """
    from rdflib import URIRef

    unsupported: str | None = None
    for node in _nodes(query.algebra):
        clause = dict.get(node, "datasetClause")
        if clause:
            named = any(dict.get(d, "named") is not None for d in clause)
            kind = "FROM NAMED" if named else "FROM"
            raise SparqlRefused(
                f"{kind} is refused: this endpoint queries only its own graph and never fetches other data."
            )
        if node.name != "ServiceGraphPattern":
            continue
        term = dict.get(node, "term")
        iri = str(term) if isinstance(term, URIRef) else None
        if dialect.native_labels and iri == _WIKIBASE + "label":
            continue  # Wikidata's endpoint's own label service, which calls nothing else
        if iri in _OFFLINE_IRIS and dialect.wikidata:
            unsupported = unsupported or (
                f"This query uses {_OFFLINE_IRIS[iri]}, which the real Wikidata endpoint provides "
                "but this offline endpoint cannot run."
            )
            continue
        name = _short(iri) if iri is not None else (f"?{term}" if term is not None else "(unnamed)")
        if not dialect.wikidata:
            hint = (
                " (this graph does not use Wikidata's vocabulary, so the Wikidata dialect and its label service are off)."
                if iri in _HANDLED_IRIS
                else ""
            )
        elif iri in _HANDLED_IRIS:
            hint = f" Write it as {_HANDLED_IRIS[iri]}."
        else:
            hint = " (only SERVICE wikibase:label is available)."
        raise SparqlRefused(
            f"SERVICE {name} is refused: this endpoint never calls other endpoints.{hint}".replace(". (", " (")
        )
    return unsupported


def _scope_values(node: Any) -> set[Any]:
    """Record the variables of ``VALUES`` blocks in the ``_vars`` of the algebra nodes above them.

    rdflib leaves them out (it does not look inside the rows of a ``VALUES`` block), and its
    OPTIONAL then drops rows: ``VALUES ?x { … } OPTIONAL { ?x rdfs:label ?l }`` loses every ``?x``
    without a label.  Returns the VALUES variables visible from ``node``.
    """
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(node, CompValue):
        found: set[Any] = set()
        if node.name == "values":
            found = {k for row in (node.get("res") or ()) for k in row}
        for key, child in list(node.items()):
            if key != "_vars":
                found |= _scope_values(child)
        if node.name == "Project":
            found &= set(node.get("PV") or ())
        if found:
            node["_vars"] = set(node.get("_vars") or ()) | found
        return found
    if isinstance(node, (list, tuple)):
        out: set[Any] = set()
        for child in node:
            out |= _scope_values(child)
        return out
    return set()


_TYPED = re.compile(
    r"(" + _OPEN + r"\d+" + _CLOSE + r")\s*\^\^\s*(" + _OPEN + r"\d+" + _CLOSE + r"|[A-Za-z][\w.-]*:[\w-]*|:[\w-]+)"
)
_XSD_DATETIME = PREFIXES["xsd"] + "dateTime"
_SHORT_DATE = re.compile(r"(-?\d{4,})-(\d{2})-(\d{2})")
_NO_ZONE = re.compile(r"-?\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?")


def _full_date_times(text: str, prologue: Any) -> tuple[str, list[str]]:
    """``text`` with each ``xsd:dateTime`` literal written as a bare date (``"1990-01-01"``) or
    without a time zone given in Wikidata's full form (``"1990-01-01T00:00:00Z"``): the Wikidata
    endpoint reads such a literal as midnight (UTC), while rdflib compares it as a string and
    Oxigraph as a date-time of unknown zone.  Each typed literal is read as rdflib's parser reads
    it (the datatype through the query's own prefixes); returns the new text and the forms changed."""
    from rdflib import Literal, URIRef
    from rdflib.plugins.sparql.parser import RDFLiteral

    masked = _Masked(text)
    changed: list[str] = []

    def full(m: re.Match[str]) -> str:
        token = masked.restore(m.group())
        try:
            term = prologue.absolutize(RDFLiteral.parse_string(token, parse_all=True)[0])
        except Exception:  # an unknown prefix …: the plan has already accepted the query
            return m.group()
        if not isinstance(term, Literal) or term.datatype != URIRef(_XSD_DATETIME):
            return m.group()
        value = str(term)
        if _SHORT_DATE.fullmatch(value):
            lexical = value + "T00:00:00Z"
        elif _NO_ZONE.fullmatch(value):
            lexical = value + "Z"
        else:
            return m.group()
        changed.append(f'"{value}"^^xsd:dateTime')
        return f'"{lexical}"^^<{_XSD_DATETIME}>'

    code = _TYPED.sub(full, masked.code)
    return (masked.restore(code), changed) if changed else (text, [])


_FORMS = {"SelectQuery": "SELECT", "AskQuery": "ASK", "ConstructQuery": "CONSTRUCT", "DescribeQuery": "DESCRIBE"}


def prepare(query: str, dialect: Dialect = WIKIDATA) -> Prepared:
    """Dialect handling, then rdflib's parse and plan, then :func:`check` on the plan.

    With a standard dialect (``dialect.wikidata`` false) the text is parsed as written (its
    escapes expanded).  Raises SparqlRefused or SparqlSyntaxError."""
    if dialect.wikidata:
        text, _form, notes, _unsupported = rewrite(query, native_labels=dialect.native_labels)
    else:
        if not isinstance(query, str) or not query.strip():
            raise SparqlSyntaxError("Syntax error: the query is empty.")
        text, _form, notes = expand_escapes(query), "?", ()
    star = None
    if not dialect.native_labels:  # (Wikidata's own endpoint answers as Wikidata: its text is left alone)
        from engines.kg.agreement import agree

        agreed = agree(text, dialect)
        if agreed is not None:
            text, notes, star = agreed.text, notes + agreed.notes, agreed.star
    algebra = plan(text, dialect)
    if dialect.wikidata:
        dated, changed = _full_date_times(text, algebra.prologue)
        if changed:
            text, algebra = dated, plan(dated, dialect)
            notes = notes + (f"read {', '.join(changed)} as midnight UTC, as Wikidata does",)
    try:
        unsupported = check(algebra, dialect)
    except RecursionError:  # pragma: no cover - the walk is iterative
        raise SparqlSyntaxError("Syntax error: the query is nested too deeply to plan.") from None
    form = _FORMS.get(getattr(algebra.algebra, "name", ""), _form)
    return Prepared(query, text, form, notes, unsupported, algebra, star)


# --- the fast path for Oxigraph: a syntax tree instead of rdflib's plan -------------------------------

_TREE_FORMS = {
    "select_query": "SELECT",
    "ask_query": "ASK",
    "construct_query": "CONSTRUCT",
    "describe_query": "DESCRIBE",
}


def fast_prepare(query: str, dialect: Dialect = WIKIDATA) -> Prepared | None:
    """The query's standard text without rdflib's parse and plan, when a syntax tree shows at once
    that it may run — else None, and the caller takes :func:`prepare` (which decides and explains).

    For Oxigraph, which parses the text again itself: rdflib's parse is most of a query's cost
    there (about 15 ms against Oxigraph's 0.1 ms).  The text goes through the same rewrites as
    in :func:`prepare`; tree-sitter's SPARQL grammar then parses it (a fraction of a millisecond),
    and the fast path is taken only if that tree is whole (no error or missing node), is exactly
    one query (SELECT, ASK, CONSTRUCT or DESCRIBE; never an update), and holds no ``SERVICE``
    pattern and no ``FROM`` clause anywhere.  Anything else — a text mentioning "service" at all
    (even in a string), a Wikidata query with a date-time literal (its midnight-UTC reading needs
    the plan), an offline service, a tree-sitter that is not installed — takes the full path.
    A text Oxigraph then fails to parse takes the full path too, for rdflib's message.  The tree then
    goes through :func:`engines.kg.agreement.agree` as in :func:`prepare` (with Oxigraph's rewrite of
    zero-length paths); a variable bound again that is refused, or a function call other than the casts
    both stores implement, takes the full path, which names it."""
    tools = tree_tools()
    if tools is None or dialect.native_labels:
        return None
    parser, forbidden = tools
    try:
        if dialect.wikidata:
            text, form, notes, unsupported = rewrite(query)
        else:
            if not isinstance(query, str) or not query.strip():
                return None
            text, notes, unsupported = expand_escapes(query), (), None
    except (SparqlSyntaxError, SparqlRefused, RecursionError):
        return None
    lowered = text.casefold()
    if unsupported or "service" in lowered or (dialect.wikidata and "datetime" in lowered):
        return None
    try:
        tree = parser.parse(text.encode("utf-8"))
    except Exception:
        return None
    root = tree.root_node
    if root.has_error:
        return None
    parts = [c for c in root.children if c.type != "comment"]
    if parts and parts[0].type == "prologue":
        parts = parts[1:]
    if len(parts) != 1 or parts[0].type not in _TREE_FORMS:
        return None
    if TREE["cursor"](forbidden).captures(root):
        return None
    from engines.kg.agreement import COMMON_FUNCTIONS, agree

    try:
        agreed = agree(text, dialect, tree, oxigraph=True)
    except (SparqlSyntaxError, RecursionError):
        return None  # the full path refuses it, with the same message
    if agreed is None or any(iri not in COMMON_FUNCTIONS for iri in agreed.functions):
        return None  # a function one store lacks: the plan names it (engines.kg.worker)
    return Prepared(query, agreed.text, _TREE_FORMS[parts[0].type], notes + agreed.notes, None, None, agreed.star)
