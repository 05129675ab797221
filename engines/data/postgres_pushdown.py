"""Which rows of each base table a SUQL query can need: the structured filter pushed down to PostgreSQL.

Pure functions over sqlglot trees; no database is touched here.

For every base table a query reads, :func:`candidate_filters` computes

* a *necessary* condition: a predicate over that table's own columns that every row the query can use
  satisfies (or leaves undecided, see below).  Rows failing it can never reach the result, a row to
  verify, or an ``answer()`` call of the structured-first plan, so PostgreSQL filters them out before
  a single row travels;
* the columns the query can read (all of them when it says ``*`` or ``NATURAL JOIN``).

The condition is a projection of the WHERE (and of inner joins' ON) onto one table:
``nec(a AND b) = nec(a) AND nec(b)``, ``nec(a OR b) = nec(a) OR nec(b)``, an atom stays when it is
*pushable* — it reads only this occurrence's columns and is built only from the node types in
:data:`_PUSHABLE` (comparisons, arithmetic, LIKE, IN lists, ``= ANY(list)``, ``@>``, casts, a few
string functions) — and becomes TRUE otherwise (an ``answer()`` call, a subquery, another table's
column, any function not on the list).  ``NOT x`` stays only when ``x`` is wholly pushable.  Replacing
atoms by TRUE in positive positions only weakens the formula, so under Kleene logic
``WHERE ∈ {TRUE, UNKNOWN}`` implies ``nec ∈ {TRUE, UNKNOWN}``: the pushed filter is ``nec IS NOT FALSE``
(written by :func:`not_false` so that a plain ``col > 4`` becomes ``col > 4 OR col IS NULL``, which an
index can serve), because SUQL keeps rows whose structured part is Unknown as rows *to verify*.

A table read more than once (a self-join, a subquery, a CTE) gets the OR of its occurrences'
conditions; an occurrence on the null-supplying side of an outer join, or one whose scope cannot be
analysed, needs every row (no filter).  The local engine re-evaluates the whole query on the rows
loaded, so a weaker filter only costs transfer, never correctness.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

__all__ = ["TableFilter", "candidate_filters", "not_false"]

# Node types an atom pushed to PostgreSQL may consist of.  Anything else keeps the atom local.
_PUSHABLE: tuple[type[exp.Expr], ...] = tuple(
    cls
    for name in (
        "Column",
        "Identifier",
        "Literal",
        "Boolean",
        "Null",
        "Paren",
        "Neg",
        "And",
        "Or",
        "Not",
        "EQ",
        "NEQ",
        "GT",
        "GTE",
        "LT",
        "LTE",
        "Is",
        "NullSafeEQ",
        "NullSafeNEQ",
        "In",
        "Between",
        "Like",
        "Add",
        "Sub",
        "Mul",
        "Mod",
        "Cast",
        "DataType",
        "DataTypeParam",
        "Coalesce",
        "Any",
        "ArrayContains",
        "ArrayContainsAll",
        "ArrayOverlaps",
        "Array",
        "Tuple",
        "Abs",
        "Floor",
        "Ceil",
    )  # fmt: skip
    if isinstance(cls := getattr(exp, name, None), type)
)
# Atoms that are NULL exactly when one of their columns is NULL (the literals in them are not NULL):
# their "not false" form can be ``atom OR col IS NULL``, which PostgreSQL can answer from an index.
_STRICT_ATOMS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.Between)
_STRICT_OPERANDS = (exp.Column, exp.Identifier, exp.Literal, exp.Paren, exp.Neg, exp.Add, exp.Sub, exp.Mul,
                    exp.Mod, exp.Cast, exp.DataType, exp.Collate)  # fmt: skip
_LLM_FUNCTIONS = frozenset({"answer", "summary"})
_ORDERING = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between)

# What a column is, for pushing: the local DuckDB engine re-evaluates every condition, so PostgreSQL's
# reading of a pushed atom must never be stricter than DuckDB's.  Where the two differ, the atom is
# rewritten so they agree, or not pushed:
#   "plain"      numbers, booleans, dates, timestamps: the same in both
#   "text"       text: ordering comparisons get COLLATE "C" (DuckDB compares bytes; PostgreSQL a locale)
#   "enum"       an enum type: compared as its text (DuckDB compares an ENUM with a string as strings,
#                and PostgreSQL would reject a string that is not one of the labels)
#   "enum_list"  a list of enum values: compared as text[]
#   "double"     a number PostgreSQL holds exactly and DuckDB as DOUBLE (numeric without a precision):
#                compared as double precision
#   "list"       a list of plain values or texts
#   "other"      anything fetched as text (json, inet, char(n) ...): never pushed
KINDS = ("plain", "text", "enum", "enum_list", "double", "list", "other")


@dataclass(frozen=True)
class TableFilter:
    """What to fetch of one base table: the columns (None: all) and the filter (None: every row)."""

    table: str
    columns: tuple[str, ...] | None
    predicate: exp.Expr | None  # over unqualified, quoted column names; already "IS NOT FALSE"


def _is_llm_call(node: exp.Expr) -> bool:
    if isinstance(node, exp.Anonymous):
        return node.name.lower() in _LLM_FUNCTIONS
    return isinstance(node, exp.Func) and any(n.lower() in _LLM_FUNCTIONS for n in type(node).sql_names())


def _pushable_shape(node: exp.Expr) -> bool:
    for n in node.walk():
        if not isinstance(n, _PUSHABLE) or _is_llm_call(n):
            return False
        if isinstance(n, exp.Literal) and not n.is_string:
            try:
                float(n.name)
            except ValueError:
                return False
        if isinstance(n, exp.DataType) and (
            not isinstance(n.this, exp.DataType.Type) or n.this == exp.DataType.Type.USERDEFINED
        ):
            return False
        if isinstance(n, exp.Cast) and not isinstance(n.this, exp.Literal):
            return False  # casting a column: the two engines' casts differ (rounding, errors)
        if isinstance(n, exp.Null) and isinstance(n.parent, (exp.In, exp.Array, exp.Tuple)):
            return False  # keeps _STRICT_ATOMS honest
    return True


class _Resolver:
    """Which columns of a scope belong to one occurrence of a base table."""

    def __init__(
        self,
        scope: Scope,
        alias: str,
        columns: Mapping[str, Sequence[str]],
        table_of: Mapping[str, str],
        kinds: Mapping[str, str] | None = None,
    ):
        self.alias = alias
        self.kinds = {k.lower(): v for k, v in (kinds or {}).items()}
        names = [c.lower() for c in columns[table_of[alias]]]
        # lower-case name -> the column's own name (DuckDB matches names without regard to case); two
        # columns whose names differ only in case are left out: which one a name means is unclear
        self.own = {c.lower(): c for c in columns[table_of[alias]] if names.count(c.lower()) == 1}
        self.others_known = True
        self.other_columns: set[str] = set()
        for other in scope.sources:
            if other == alias:
                continue
            if other in table_of:
                self.other_columns |= {c.lower() for c in columns[table_of[other]]}
            else:
                self.others_known = False  # a derived table, a CTE, a function: its columns are unknown

    def mine(self, column: exp.Column) -> str | None:
        """The column's own name when the reference is one of this occurrence's columns, else None."""
        key = column.name.lower()
        if column.args.get("db") or column.args.get("catalog") or key not in self.own:
            return None
        if column.table:
            return self.own[key] if column.table.lower() == self.alias.lower() else None
        if not self.others_known or key in self.other_columns:
            return None  # ambiguous, or could be another source's
        return self.own[key]


def _atom_for(node: exp.Expr, resolver: _Resolver) -> exp.Expr | None:
    """The atom over bare column names, when it is pushable for this occurrence; else None."""
    if not _pushable_shape(node):
        return None
    columns = list(node.find_all(exp.Column))
    if not columns:
        return None  # a constant: nothing to filter on
    out = node.copy()
    for col in list(out.find_all(exp.Column)):
        name = resolver.mine(col)
        if name is None:
            return None
        kind = resolver.kinds.get(name.lower(), "other")
        if kind == "other":
            return None
        bare: exp.Expr = exp.column(exp.to_identifier(name, quoted=True))
        if kind == "enum":
            bare = exp.cast(bare, "TEXT")
        elif kind == "double":
            bare = exp.cast(bare, "DOUBLE")
        elif kind == "enum_list":
            bare = exp.cast(bare, exp.DataType.build("TEXT[]", dialect="postgres"))
        if kind in ("text", "enum") and isinstance(_comparison_of(col, out), _ORDERING):
            bare = exp.Collate(this=bare, expression=exp.to_identifier("C", quoted=True))
        col.replace(bare)
    return out


def _comparison_of(node: exp.Expr, root: exp.Expr) -> exp.Expr | None:
    """The nearest comparison above ``node`` (within ``root``)."""
    while node is not root and node.parent is not None:
        node = node.parent
        if isinstance(node, (*_STRICT_ATOMS, exp.In, exp.Is, exp.Any, exp.ArrayContains, exp.ArrayContainsAll)):
            return node
    return None


def _necessary(node: exp.Expr, resolver: _Resolver) -> exp.Expr | None:
    """nec(node) over this occurrence's columns; None stands for TRUE."""
    if isinstance(node, exp.Paren):
        return _necessary(node.this, resolver)
    if isinstance(node, exp.And):
        parts = [p for p in (_necessary(node.left, resolver), _necessary(node.right, resolver)) if p is not None]
        return exp.and_(*parts) if parts else None
    if isinstance(node, exp.Or):
        left, right = _necessary(node.left, resolver), _necessary(node.right, resolver)
        if left is None or right is None:
            return None
        return exp.or_(left, right)
    return _atom_for(node, resolver)  # NOT x included: kept only when x is pushable as a whole


def _null_supplying(select: exp.Select, alias: str) -> bool:
    """Whether the occurrence can be NULL-extended by an outer join of its SELECT (then it needs all rows)."""
    joins = select.args.get("joins") or []
    from_ = select.args.get("from_")
    from_alias = from_.this.alias_or_name if from_ is not None else None
    for i, join in enumerate(joins):
        side = (join.side or "").upper()
        if not side:
            continue
        this_alias = join.this.alias_or_name
        if side == "LEFT" and this_alias == alias:
            return True
        if side in ("RIGHT", "FULL"):
            earlier = [from_alias] + [j.this.alias_or_name for j in joins[:i]]
            if alias in earlier or (side == "FULL" and this_alias == alias):
                return True
    return False


def _occurrence_filter(scope: Scope, alias: str, resolver: _Resolver) -> exp.Expr | None:
    select = scope.expression
    if not isinstance(select, exp.Select) or _null_supplying(select, alias):
        return None
    parts: list[exp.Expr] = []
    where = select.args.get("where")
    if where is not None:
        if (p := _necessary(where.this, resolver)) is not None:
            parts.append(p)
    for join in select.args.get("joins") or []:
        on = join.args.get("on")
        if on is not None and not join.side and (join.kind or "").upper() in ("", "INNER", "CROSS"):
            if (p := _necessary(on, resolver)) is not None:
                parts.append(p)
    return exp.and_(*parts) if parts else None


def not_false(node: exp.Expr) -> exp.Expr:
    """A predicate true exactly where ``node`` is not FALSE (TRUE or UNKNOWN), in a form an index can serve."""
    if isinstance(node, exp.Paren):
        return not_false(node.this)
    if isinstance(node, exp.And):
        return exp.and_(not_false(node.left), not_false(node.right))
    if isinstance(node, exp.Or):
        return exp.or_(not_false(node.left), not_false(node.right))
    if isinstance(node, exp.Not):
        return _not_true(node.this)
    if isinstance(node, exp.Is):
        return node.copy()  # never UNKNOWN
    if isinstance(node, _STRICT_ATOMS) and all(isinstance(n, (*_STRICT_ATOMS, *_STRICT_OPERANDS)) for n in node.walk()):
        nulls = [exp.Is(this=c.copy(), expression=exp.Null()) for c in _distinct_columns(node)]
        return exp.paren(exp.or_(node.copy(), *nulls))
    return exp.Not(this=exp.Is(this=exp.paren(node.copy()), expression=exp.false()))


def _not_true(node: exp.Expr) -> exp.Expr:
    """A predicate true exactly where ``node`` is not TRUE (FALSE or UNKNOWN): ``NOT node`` is not false."""
    if isinstance(node, exp.Paren):
        return _not_true(node.this)
    if isinstance(node, exp.And):
        return exp.or_(_not_true(node.left), _not_true(node.right))
    if isinstance(node, exp.Or):
        return exp.and_(_not_true(node.left), _not_true(node.right))
    if isinstance(node, exp.Not):
        return not_false(node.this)
    return exp.Not(this=exp.Is(this=exp.paren(node.copy()), expression=exp.true()))


def _distinct_columns(node: exp.Expr) -> list[exp.Column]:
    seen: dict[str, exp.Column] = {}
    for c in node.find_all(exp.Column):
        seen.setdefault(c.name, c)
    return list(seen.values())


def _table_key(table: exp.Table, known: Mapping[str, Sequence[str]]) -> str | None:
    """The described table an ``exp.Table`` names (unqualified names only, matched without regard to
    case as DuckDB does), or None."""
    if not isinstance(table.this, exp.Identifier) or table.args.get("db") or table.args.get("catalog"):
        return None
    name = table.name
    if name in known:
        return name
    matches = [key for key in known if key.lower() == name.lower()]  # DuckDB, which runs the query, ignores case
    return matches[0] if len(matches) == 1 else None


def candidate_filters(
    tree: exp.Expr,
    columns: Mapping[str, Sequence[str]],
    *,
    kinds: Mapping[str, Mapping[str, str]] | None = None,
    always: Sequence[str] = (),
) -> dict[str, TableFilter]:
    """Per described base table the query reads: the columns it needs and the rows it can need.

    ``columns``: table name -> its column names, in order.  ``kinds``: table -> column -> one of
    :data:`KINDS` (a column without one is "other": never pushed).  ``always``: column names fetched whenever
    the table has them (its id and label columns, which name rows in events).
    """
    try:
        scopes = traverse_scope(tree)
    except Exception:  # sqlglot cannot analyse the scopes (an odd construct): no filters, all columns
        scopes = []
        found = {k for t in tree.find_all(exp.Table) if (k := _table_key(t, columns))}
        return {k: TableFilter(k, None, None) for k in found}
    filters: dict[str, list[exp.Expr | None]] = {}
    for scope in scopes:
        table_of: dict[str, str] = {}
        for alias, source in scope.sources.items():
            if isinstance(source, exp.Table) and (key := _table_key(source, columns)) is not None:
                table_of[alias] = key
        for alias, key in table_of.items():
            resolver = _Resolver(scope, alias, columns, table_of, (kinds or {}).get(key))
            filters.setdefault(key, []).append(_occurrence_filter(scope, alias, resolver))
    # a table named somewhere no scope saw it (an odd construct): every row
    for t in tree.find_all(exp.Table):
        if (key := _table_key(t, columns)) is not None and key not in filters:
            filters[key] = [None]
    names = {i.name.lower() for i in tree.find_all(exp.Identifier)}
    star = any(isinstance(s, exp.Star) and not isinstance(s.parent, exp.Count) for s in tree.find_all(exp.Star))
    natural = any(j.args.get("method") for j in tree.find_all(exp.Join))
    out: dict[str, TableFilter] = {}
    for key, occurrences in filters.items():
        predicate = None
        present = [o for o in occurrences if o is not None]
        if len(present) == len(occurrences):
            predicate = not_false(exp.or_(*present) if len(present) > 1 else present[0])
        wanted: tuple[str, ...] | None = None
        if not (star or natural):
            keep = {a.lower() for a in always}
            wanted = tuple(c for c in columns[key] if c.lower() in names or c.lower() in keep)
            if not wanted:
                wanted = tuple(columns[key][:1])  # COUNT(*) still needs the rows
        out[key] = TableFilter(key, wanted, predicate)
    return out
