"""Both stores answer a query as Wikidata would: rewrites decided on tree-sitter's syntax tree.

Oxigraph and rdflib's memory store read a few query shapes differently from each other and from
the Wikidata Query Service (Blazegraph).  :func:`agree` takes the standard text the dialect's
rewrite produced, parses it with tree-sitter's SPARQL grammar and, where the tree shows one of the
shapes below, edits the text at the nodes' byte offsets (never a pattern over the raw text), so that
both stores run the same query and get Wikidata's answer:

* **Assigning a variable that is already in scope** (SPARQL 1.1 §18.2.1 forbids it; Oxigraph calls it
  a syntax error, rdflib runs it and overwrites the value).  Blazegraph runs such an assignment as a
  *conditional bind* (``com.bigdata.rdf.internal.constraints.ConditionalBind``): an unbound variable
  takes the value; a bound one keeps its solution only if the value is the same, else the solution
  is dropped (also when the expression fails).  ``SELECT (?foo+1 AS ?foo) { BIND(1 AS ?foo) }``
  has no results on Wikidata (w3c-cg/sparql-dev#192, phabricator T346420).  Two shapes occur in real
  gold queries and run here as Blazegraph runs them, by renaming the rebound variable:

  - ``GROUP BY ?c`` where ``?c`` is also the name of a SELECT expression (``(COUNT(?s) AS ?c)``)
    and the WHERE clause never binds it: the grouping key is unbound in every solution, so it splits
    no group, and the expression binds ``?c`` per group (the conditional bind of an unbound variable).
    The key is renamed to a fresh variable, which is just as unbound.
  - ``BIND(expr AS ?o)`` after ``?o`` is bound in the same group: ``?o`` is renamed in the elements
    before the BIND (its earlier value, ``?__rbN``), the expression binds ``?__rbNv``, a FILTER keeps a
    solution only where the earlier value is unbound or the same term, and ``?o`` becomes
    ``COALESCE(earlier, new)``.  (Blazegraph compares its internal values, which differ from RDF term
    equality only for literals written in a non-canonical form such as ``"01"^^xsd:integer``.)

  Every other assignment to a variable in scope (a SELECT expression ``(… AS ?o)`` with ``?o``
  bound by the WHERE clause or assigned earlier in the same SELECT) is refused as a syntax error on
  both stores.  With a standard dialect (a user's own graph) the two shapes are refused too, as the
  standard says.

* **A zero-length path from a constant**: ``?x wdt:P279* wd:Q999999999`` binds ``?x`` to the
  constant even when it is in no triple (SPARQL 1.1 §18.4, ``ALP`` starts with the node itself;
  Wikidata and rdflib do so), Oxigraph binds only nodes of the graph.  A triple whose path is one
  element with ``*`` or ``?`` (``^`` and a parenthesised alternative allowed) between a constant and a
  variable (or two constants) is taken out of its triples block and joined right after it as
  ``{ VALUES ?x { c } } UNION { ?x path c FILTER(!sameTerm(?x, c)) }``: the same set of solutions
  (such a path is distinct), with the constant once.

* **``SELECT *`` columns**: in the order of first appearance in the query (``star``); rdflib's order
  follows Python's hash seed, Oxigraph's is alphabetical.

* **Function calls** (``functions``): the IRIs of the functions the query calls, so the caller can
  decide which store implements them (:func:`unsupported_function`): a function a store does not
  implement is one clear error naming it, the same on both stores (rdflib would give unbound values
  and so no rows, Oxigraph an error).

:func:`agree` returns None when tree-sitter is not installed or its tree of the text is not whole:
the text then runs as it is.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from engines.kg.prefixes import compact
from engines.kg.sparql import TREE, Dialect, SparqlSyntaxError, tree_tools

__all__ = ["Agreed", "agree", "for_oxigraph", "unsupported_function", "STORE_FUNCTIONS", "COMMON_FUNCTIONS"]

_XSD = "http://www.w3.org/2001/XMLSchema#"
# The functions (casts) each store implements; tests/engines/kg/test_store_agreement.py runs each one.
_MEMORY_CASTS = ("string", "boolean", "double", "float", "decimal", "integer", "dateTime")
_OXIGRAPH_CASTS = _MEMORY_CASTS + (
    "date",
    "time",
    "duration",
    "yearMonthDuration",
    "dayTimeDuration",
    "gYear",
    "gYearMonth",
    "gMonth",
    "gDay",
    "gMonthDay",
)
STORE_FUNCTIONS: Mapping[str, frozenset[str]] = {
    "memory": frozenset(_XSD + n for n in _MEMORY_CASTS),
    "oxigraph": frozenset(_XSD + n for n in _OXIGRAPH_CASTS),
}
COMMON_FUNCTIONS = STORE_FUNCTIONS["memory"] & STORE_FUNCTIONS["oxigraph"]
_GEOF = "http://www.opengis.net/def/function/geosparql/"
# Functions the Wikidata Query Service provides (its user manual) that no store here implements.
_WIKIDATA_FUNCTIONS = frozenset(
    [_GEOF + n for n in ("distance", "latitude", "longitude", "globe")] + ["http://wikiba.se/ontology#decodeUri"]
)

_MAX_REBINDS = 8  # BINDs to a variable in scope rewritten in one query (each one parse more); more is refused
_CONSTANT_TERMS = frozenset(
    ("prefixed_name", "iri_reference", "rdf_literal", "integer", "decimal", "double", "boolean_literal")
)
_NOT_IN_SCOPE = frozenset(("filter", "minus_graph_pattern", "comment"))


@dataclass(frozen=True)
class Agreed:
    """The text both stores run, what was rewritten, and what the tree says about the query."""

    text: str
    notes: tuple[str, ...] = ()
    star: tuple[str, ...] | None = None  # SELECT *: the variables in order of first appearance
    functions: tuple[str, ...] = ()  # IRIs of the functions called (prefixed names resolved)


def agree(text: str, dialect: Dialect, tree: Any = None, *, oxigraph: bool = False) -> Agreed | None:
    """The text with the rewrites above (``tree``: tree-sitter's tree of ``text``, if already parsed);
    ``oxigraph``: the text goes to Oxigraph, so its zero-length paths from a constant are rewritten too
    (the text is standard SPARQL, which means what rdflib computes: only Oxigraph needs the rewrite).

    Raises SparqlSyntaxError for an assignment to a variable in scope that is not one of the two
    shapes (or any, with a standard dialect).  None when tree-sitter cannot decide."""
    tools = tree_tools()
    if tools is None:
        return None
    parser = tools[0]
    parsed = _Tree(parser, text.encode("utf-8"), tree)
    if parsed.root.has_error:
        return None
    notes: list[str] = []
    t: _Tree | None = parsed
    try:
        star = _star(parsed) if "star" in parsed.found else None
        functions = _functions(parsed, dialect) if "call" in parsed.found else ()
        binds, selects = "bind" in parsed.found, "as" in parsed.found
        if oxigraph and "zprop" in parsed.found:
            t = _zero_length_paths(parsed)
        if selects and t is not None:
            t = _group_key_renames(t, dialect, notes)
        if binds and t is not None:
            t = _rebinding_binds(t, dialect, notes)
    except RecursionError:
        raise SparqlSyntaxError("Syntax error: the query is nested too deeply to plan.") from None
    if t is None:  # a rewrite gave a text the grammar does not take: run the text as it was
        return None
    return Agreed(t.src.decode("utf-8"), tuple(notes), star, functions)


def for_oxigraph(text: str) -> str:
    """``text`` (prepared for both stores) with its zero-length paths from a constant rewritten for Oxigraph."""
    tools = tree_tools()
    if tools is None:
        return text
    t = _Tree(tools[0], text.encode("utf-8"))
    if t.root.has_error or "zprop" not in t.found:
        return text
    edited = _zero_length_paths(t)
    return edited.src.decode("utf-8") if edited is not None else text


def unsupported_function(iris: Iterable[str], store: str, dialect: Dialect) -> str | None:
    """The error for the first function ``store`` does not implement, or None.

    The same message on both stores when neither implements it (``geof:latitude``)."""
    have = STORE_FUNCTIONS.get(store, COMMON_FUNCTIONS)
    for iri in iris:
        if iri in have:
            continue
        name = compact(iri, dialect.namespaces)
        others = [s for s, fs in STORE_FUNCTIONS.items() if s != store and iri in fs]
        if others:
            return f"Query error: the function {name} is not implemented by the {store} store (the {others[0]} store has it)."
        if dialect.wikidata and iri in _WIKIDATA_FUNCTIONS:
            return (
                f"Query error: the function {name} is not supported by this endpoint "
                "(the real Wikidata endpoint has it; this offline endpoint does not)."
            )
        return f"Query error: the function {name} is not supported by this endpoint."
    return None


# --- the tree ------------------------------------------------------------------------------------------


class _Tree:
    """One parse of the text and what tree-sitter's queries found in it (in C: no walk in Python)."""

    def __init__(self, parser: Any, src: bytes, tree: Any = None) -> None:
        self.parser, self.src = parser, src
        self.root = (tree if tree is not None else parser.parse(src)).root_node
        self.found: dict[str, list[Any]] = TREE["cursor"](TREE["shapes"]).captures(self.root)
        self._vars: list[Any] | None = None
        self._index: dict[str, list[int]] = {}

    def nodes(self, name: str) -> list[Any]:
        """The nodes captured as ``name``, in document order."""
        return sorted(self.found.get(name, ()), key=lambda n: n.start_byte)

    def variables(self) -> list[Any]:
        """Every ``var`` node, in document order."""
        if self._vars is None:
            found = TREE["cursor"](TREE["vars"]).captures(self.root).get("v", ())
            self._vars = sorted(found, key=lambda n: n.start_byte)
            for v in self._vars:
                self._index.setdefault(_name(v, self.src), []).append(v.start_byte)
        return self._vars

    def positions(self, name: str) -> list[int]:
        """Where ``?name`` is written (byte offsets, in order)."""
        self.variables()
        return self._index.get(name, [])

    def mentions(self, name: str, start: int, end: int) -> bool:
        """Whether ``?name`` is written anywhere between the two byte offsets."""
        at = self.positions(name)
        i = bisect.bisect_left(at, start)
        return i < len(at) and at[i] < end

    def edited(self, edits: list[tuple[int, int, str]]) -> _Tree | None:
        """The tree of the text with ``edits`` applied, or None if the grammar does not take it."""
        new = _Tree(self.parser, _edit(self.src, edits))
        return None if new.root.has_error else new


def _walk(node: Any) -> Iterator[Any]:
    """Every node under ``node`` (itself first), in document order, without recursion."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _text(node: Any, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8")


def _name(var: Any, src: bytes) -> str:
    return _text(var, src)[1:]  # ?x and $x are the same variable


def _vars(node: Any) -> Iterator[Any]:
    return (n for n in _walk(node) if n.type == "var")


def _edit(src: bytes, edits: list[tuple[int, int, str]]) -> bytes:
    """``src`` with each (start, end, replacement) applied (the spans do not overlap), in one pass."""
    pieces, at = [], 0
    for start, end, new in sorted(edits):
        pieces += [src[at:start], new.encode("utf-8")]
        at = end
    pieces.append(src[at:])
    return b"".join(pieces)


def _star(t: _Tree) -> tuple[str, ...] | None:
    """A ``SELECT *`` query's variables in order of first appearance (None for any other query)."""
    query = next((c for c in t.root.children if c.type == "select_query"), None)
    if query is None or not any(clause.parent == query for clause in t.found.get("star", ())):
        return None
    return tuple(dict.fromkeys(_name(v, t.src) for v in t.variables()))


def _functions(t: _Tree, dialect: Dialect) -> tuple[str, ...]:
    """The IRIs of the functions called, prefixed names read with the query's PREFIXes and the dialect's."""
    table = dict(dialect.prefixes)
    for part in t.root.children:
        for node in part.children if part.type == "prologue" else ():
            ns = next((c for c in node.children if c.type == "namespace"), None)
            iri = next((c for c in node.children if c.type == "iri_reference"), None)
            if node.type == "prefix_declaration" and ns is not None and iri is not None:
                table[_text(ns, t.src)[:-1]] = _text(iri, t.src)[1:-1]
    out: list[str] = []
    for node in t.nodes("call"):
        head = node.named_children[0] if node.named_children else None
        if head is not None and head.type == "iri_reference":
            out.append(_text(head, t.src)[1:-1])
        elif head is not None and head.type == "prefixed_name":
            prefix, _, local = _text(head, t.src).partition(":")
            out.append(table.get(prefix, prefix + ":") + local)
    return tuple(dict.fromkeys(out))


# --- in-scope variables (SPARQL 1.1 §18.2.1) ----------------------------------------------------------------


def _scope(node: Any, src: bytes) -> set[str]:
    """The variables an element of a group pattern puts in scope."""
    kind = node.type
    if kind in _NOT_IN_SCOPE:
        return set()
    if kind == "bind":
        target = _bind_target(node)
        return {_name(target, src)} if target is not None else set()
    if kind in ("sub_select", "select_query"):
        return _projected(node, src)
    if kind in ("triples_block", "inline_data", "values_clause"):
        return {_name(v, src) for v in _vars(node)}
    if kind in (
        "group_graph_pattern",
        "optional_graph_pattern",
        "group_or_union_graph_pattern",
        "graph_graph_pattern",
        "service_graph_pattern",
    ):
        out: set[str] = set()
        for child in node.named_children:
            if child.type == "var":  # GRAPH ?g (as in Oxigraph, not SERVICE ?s, which is refused anyway)
                if kind == "graph_graph_pattern":
                    out.add(_name(child, src))
            else:
                out |= _scope(child, src)
        return out
    return set()


def _bind_target(bind: Any) -> Any:
    after = False
    for child in bind.children:
        if after and child.type == "var":
            return child
        after = after or child.type == "AS"
    return None


def _select_parts(query: Any) -> tuple[Any, Any, Any]:
    clause = where = group = None
    for child in query.children:
        if child.type == "select_clause":
            clause = child
        elif child.type == "where_clause":
            where = next((c for c in child.children if c.type == "group_graph_pattern"), None)
        elif child.type == "solution_modifier":
            group = next((c for c in child.children if c.type == "group_clause"), None)
    return clause, where, group


def _projection(clause: Any) -> list[tuple[str, Any]]:
    """The SELECT clause as ("var", node) for a plain variable and ("as", target) for ``(expr AS ?v)``."""
    out: list[tuple[str, Any]] = []
    depth, after_as = 0, False
    for child in clause.children:
        if child.type == "(":
            depth += 1
        elif child.type == ")":
            depth -= 1
        elif child.type == "AS":
            after_as = True
        elif child.type == "var":
            if after_as:
                out.append(("as", child))
                after_as = False
            elif depth == 0:
                out.append(("var", child))
    return out


def _projected(query: Any, src: bytes) -> set[str]:
    clause, where, _group = _select_parts(query)
    if clause is None:
        return set()
    if any(c.type == "*" for c in clause.children):
        out = _scope(where, src) if where is not None else set()
    else:
        out = {_name(node, src) for _kind, node in _projection(clause)}
    for child in query.children:
        if child.type == "values_clause":
            out |= _scope(child, src)
    return out


# --- the rewrites ------------------------------------------------------------------------------------------


def _fresh(src: bytes, stem: str) -> str:
    n = 0
    while f"?{stem}{n}".encode() in src or f"${stem}{n}".encode() in src:
        n += 1
    return f"{stem}{n}"


def _group_key_renames(t: _Tree, dialect: Dialect, notes: list[str]) -> _Tree | None:
    """Shape 1, over every SELECT with an expression: its GROUP BY key renamed (Wikidata) or refused
    (standard); any other SELECT expression naming a variable in scope is refused."""
    edits: list[tuple[int, int, str]] = []
    used, src = t.src, t.src
    for clause in t.nodes("as"):
        query = clause.parent
        _clause, where, group = _select_parts(query)
        bound_in_where = _Bound(t, where)
        # In a grouped query only the GROUP BY keys are in scope where the SELECT expressions are
        # evaluated (SAMPLE(?c) AS ?c is fine); otherwise every variable the WHERE clause binds is.
        grouped = group is not None or _aggregates(query, clause)
        keys: dict[str, list[Any]] = {}  # the plain-variable keys (Oxigraph lets (… AS ?k) name a (… AS ?k) key)
        for condition in group.named_children if group is not None else ():
            named = condition.named_children
            if len(named) == 1 and named[0].type == "var":
                keys.setdefault(_name(named[0], src), []).append(named[0])
        assigned: set[str] = set()  # projected so far
        expressions: set[str] = set()  # named by a SELECT expression so far
        for kind, node in _projection(clause):
            name = _name(node, src)
            if kind == "var":
                if name in expressions:
                    raise SparqlSyntaxError(f"Syntax error: ?{name} is projected again after (… AS ?{name}).")
                assigned.add(name)
                continue
            if name in keys and name not in assigned and not bound_in_where(name):
                if not dialect.wikidata:
                    raise SparqlSyntaxError(
                        f"Syntax error: ?{name} is both a GROUP BY key and the name of a SELECT expression "
                        "(SPARQL 1.1, section 18.2.1)."
                    )
                fresh = _fresh(used, "__gb")
                used += f" ?{fresh}".encode()
                edits.extend((v.start_byte, v.end_byte, "?" + fresh) for v in keys.pop(name))
            elif name in assigned or (name in keys if grouped else bound_in_where(name)):
                raise SparqlSyntaxError(
                    f"Syntax error: (… AS ?{name}) in SELECT assigns ?{name}, which is already in scope "
                    "(SPARQL 1.1, section 18.2.1)."
                )
            assigned.add(name)
            expressions.add(name)
    if not edits:
        return t
    notes.append("GROUP BY a variable named by a SELECT expression groups by a fresh (unbound) name, as Wikidata does")
    return t.edited(edits)


class _Bound:
    """Whether the WHERE clause puts a variable in scope, worked out (a walk in Python) only for a
    variable it writes at all."""

    def __init__(self, t: _Tree, where: Any) -> None:
        self.t, self.where = t, where
        self.scope: set[str] | None = None

    def __call__(self, name: str) -> bool:
        where = self.where
        if where is None or not self.t.mentions(name, where.start_byte, where.end_byte):
            return False
        if self.scope is None:
            self.scope = _scope(where, self.t.src)
        return name in self.scope


def _aggregates(query: Any, clause: Any) -> bool:
    """Whether a SELECT without GROUP BY is still grouped: an aggregate in its SELECT clause, or a HAVING."""
    for child in query.children:
        if child.type == "solution_modifier" and any(c.type == "having_clause" for c in child.children):
            return True
    stack = list(clause.children)
    while stack:
        node = stack.pop()
        if node.type == "aggregate":
            return True
        if node.type not in ("sub_select", "group_graph_pattern"):  # (an EXISTS inside an expression)
            stack.extend(node.children)
    return False


def _rebinding_binds(t: _Tree, dialect: Dialect, notes: list[str]) -> _Tree | None:
    """Shape 2, one BIND at a time (each rewrite is parsed again): Blazegraph's conditional bind
    (Wikidata), or refused (standard)."""
    found = _rebinding_binds_in(t)
    if not found:
        return t
    bind, _before, name = found[0]
    if not dialect.wikidata:
        raise SparqlSyntaxError(
            f"Syntax error: BIND(… AS ?{name}) assigns ?{name}, which is already in scope in its group "
            "(SPARQL 1.1, section 18.2.1)."
        )
    if len(found) > _MAX_REBINDS:
        raise SparqlSyntaxError(
            f"Syntax error: {len(found)} BINDs assign a variable already in scope; at most {_MAX_REBINDS} are run "
            "as Wikidata runs them."
        )
    notes.append(
        "BIND to a variable already bound keeps a solution only where the values are the same, as Wikidata does"
    )
    for _ in range(len(found)):
        edited = t.edited(_conditional_bind(t, *found[0]))
        if edited is None:
            return None
        t = edited
        found = _rebinding_binds_in(t)
        if not found:
            return t
    return t if not found else None  # (each rewrite takes one away: not reached)


def _rebinding_binds_in(t: _Tree) -> list[tuple[Any, list[Any], str]]:
    """Every BIND assigning a variable the elements before it in its group put in scope, as (the BIND,
    those elements but the group's FILTERs, the variable).  A group is walked once, and only if one of
    its BINDs names a variable written before it there."""
    suspects: dict[int, Any] = {}
    for bind in t.nodes("bind"):
        group, target = bind.parent, _bind_target(bind)
        if group is not None and group.type == "group_graph_pattern" and target is not None:
            if t.mentions(_name(target, t.src), group.start_byte, bind.start_byte):
                suspects.setdefault(group.start_byte, group)
    found: list[tuple[Any, list[Any], str]] = []
    for group in suspects.values():
        seen: set[str] = set()
        before: list[Any] = []
        for child in group.named_children:
            if child.type == "bind":
                target = _bind_target(child)
                if target is not None and _name(target, t.src) in seen:
                    found.append((child, list(before), _name(target, t.src)))
            if child.type not in ("filter", "comment"):
                seen |= _scope(child, t.src)
                before.append(child)
    return found


def _conditional_bind(t: _Tree, bind: Any, before: list[Any], name: str) -> list[tuple[int, int, str]]:
    """Blazegraph's conditional bind in standard SPARQL (see the module's docstring)."""
    src = t.src
    earlier = _fresh(src, "__rb")
    new = earlier + "v"
    starts = [element.start_byte for element in before]  # in document order, not overlapping

    def inside(at: int) -> bool:
        i = bisect.bisect_right(starts, at) - 1
        return i >= 0 and at < before[i].end_byte

    width = len(name.encode("utf-8")) + 1  # ?name or $name
    edits = [(at, at + width, "?" + earlier) for at in t.positions(name) if inside(at)]
    children = bind.children
    open_at = next(i for i, c in enumerate(children) if c.type == "(")
    as_at = next(i for i, c in enumerate(children) if c.type == "AS")
    start, end = children[open_at].end_byte, children[as_at].start_byte
    inner = [
        (v.start_byte - start, v.end_byte - start, "?" + earlier)
        for v in _vars(bind)
        if start <= v.start_byte < end and _name(v, src) == name
    ]
    expression = _edit(src[start:end], inner).decode("utf-8").strip()
    edits.append(
        (
            bind.start_byte,
            bind.end_byte,
            f"BIND({expression}\n AS ?{new}) "
            f"FILTER(!BOUND(?{earlier}) || (BOUND(?{new}) && sameTerm(?{earlier}, ?{new}))) "
            f"BIND(COALESCE(?{earlier}, ?{new}) AS ?{name})",
        )
    )
    return edits


def _zero_length_paths(t: _Tree) -> _Tree | None:
    """Each triples block holding a zero-length path from a constant, split (no note: it is what SPARQL
    says, the same for every query on either store, not a reading of Wikidata's)."""
    blocks: dict[int, Any] = {}
    for prop in t.nodes("zprop"):
        if not _zero_length_verb(prop.named_children[0], t.src):
            continue
        triple = prop.parent.parent if prop.parent is not None else None
        block = triple.parent if triple is not None else None
        if triple is None or block is None or block.type != "triples_block" or block.parent is None:
            continue
        if block.parent.type == "group_graph_pattern" and triple.named_children:
            subject = _end_kind(triple.named_children[0])
            objects = next((c for c in prop.named_children[1:] if c.type == "object_list"), None)
            kinds = {(subject, _end_kind(o)) for o in objects.named_children} if objects is not None else set()
            if kinds & {("var", "constant"), ("constant", "var"), ("constant", "constant")}:
                blocks[block.start_byte] = block
    edits = [edit for block in blocks.values() if (edit := _split_block(block, t.src)) is not None]
    return t.edited(edits) if edits else t


def _end_kind(node: Any) -> str:
    if node.type == "var":
        return "var"
    return "constant" if node.type in _CONSTANT_TERMS else "other"


def _zero_length_verb(verb: Any, src: bytes) -> bool:
    """A path of one element with ``*`` or ``?`` (a zero-length match is possible, and it is distinct)."""
    if verb.type != "path_element" or not verb.children:
        return False
    last = verb.children[-1]
    return last.type == "path_mod" and _text(last, src) in ("*", "?")


def _split_block(block: Any, src: bytes) -> tuple[int, int, str] | None:
    """The block without its zero-length triples from a constant, followed by each one's UNION."""
    kept: list[str] = []
    unions: list[str] = []
    for triple in block.named_children:
        if triple.type != "triples_same_subject":
            continue
        named = triple.named_children
        subject = named[0] if named else None
        plist = named[1] if len(named) > 1 and named[1].type == "property_list" else None
        if subject is None or plist is None or _end_kind(subject) == "other":
            kept.append(_text(triple, src))
            continue
        s_text, s_kind = _text(subject, src), _end_kind(subject)
        properties: list[str] = []
        for prop in plist.named_children:
            if prop.type != "property":
                continue
            parts = prop.named_children
            verb = parts[0] if parts else None
            objects_node = next((p for p in parts[1:] if p.type == "object_list"), None)
            objects = [o for o in objects_node.named_children if o.type != "comment"] if objects_node else []
            if verb is None or not _zero_length_verb(verb, src):
                properties.append(_text(prop, src))
                continue
            v_text = _text(verb, src)
            stay: list[str] = []
            for obj in objects:
                o_text, o_kind = _text(obj, src), _end_kind(obj)
                kinds = {s_kind, o_kind}
                if kinds == {"var", "constant"} or (s_kind == o_kind == "constant"):
                    unions.append(_zero_length_union(s_text, s_kind, v_text, o_text, o_kind))
                else:
                    stay.append(o_text)
            if stay:
                properties.append(v_text + " " + ",\n".join(stay))
        if properties:
            kept.append(s_text + " " + " ;\n".join(properties))
    if not unions:
        return None
    # new lines between the parts: a comment (standard SPARQL keeps them) ends where its line does
    text = " .\n".join(kept) + (" .\n" if kept else "") + "\n".join(unions) + "\n"
    return block.start_byte, block.end_byte, text


def _zero_length_union(s: str, s_kind: str, verb: str, o: str, o_kind: str) -> str:
    if s_kind == o_kind == "constant":
        return f"{{ FILTER(sameTerm({s}, {o})) }} UNION {{ {s} {verb} {o} FILTER(!sameTerm({s}, {o})) }}"
    var, constant = (s, o) if s_kind == "var" else (o, s)
    # VALUES, not BIND: rdflib evaluates the right side of a join with the left's bindings, and a BIND there
    # overwrites a variable the left side bound (its VALUES leaves out a row that does not agree instead)
    return f"{{ VALUES {var} {{ {constant} }} }} UNION {{ {s} {verb} {o} FILTER(!sameTerm({var}, {constant})) }}"
