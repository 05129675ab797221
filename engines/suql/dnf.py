"""A WHERE as an OR of ANDs (DNF), in two pure steps: normalise it, then split it into conjuncts.

The compiler's passes ``normalise`` and ``split_conjuncts`` (:mod:`engines.suql.compiler.passes`) are these
two steps; :func:`to_dnf` is both at once, for callers that want the conjuncts of a condition.  Neither step
changes the tree it is given: normalising copies it (sqlglot's ``normalize`` rewrites in place), and a
conjunct's literals are nodes of the normalised tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.optimizer.normalize import normalization_distance, normalize

from engines.suql.language import calls_in, pretty

MAX_DNF_DISTANCE = 128  # beyond this many conjuncts DNF would explode: evaluate the WHERE as written


@dataclass
class Conjunct:
    """One AND-clause of the WHERE in DNF: structured literals and text (answer()) literals."""

    structured: list[exp.Expr]
    text: list[exp.Expr]
    _sql: str | None = field(default=None, repr=False, compare=False)

    def structured_sql(self) -> exp.Expr:
        return exp.and_(*[s.copy() for s in self.structured]) if self.structured else exp.true()

    def sql(self) -> str:
        if self._sql is None:  # the literals are not changed once split: shown once
            parts = [pretty(p) for p in self.structured + self.text]
            self._sql = " AND ".join(parts) if parts else "TRUE"
        return self._sql


def flatten(node: exp.Expr, kind: type[exp.Connector]) -> list[exp.Expr]:
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(node, kind):
        return flatten(node.this, kind) + flatten(node.expression, kind)
    return [node]


def normal_form(where: exp.Expr) -> tuple[exp.Expr, bool]:
    """The condition in DNF (a new tree), and True; or ``where`` itself and False when DNF would explode
    (more than :data:`MAX_DNF_DISTANCE` conjuncts).  A condition with no OR, and none that De Morgan could
    make (an AND or OR below a NOT, an XOR), is in DNF already: it is returned as it is, not copied."""
    if not any(
        isinstance(n, exp.Or) for n in where.find_all(exp.Or, exp.Not, exp.Xor)
    ) and not _has_connective_below_not(where):
        return where, True
    if normalization_distance(where, dnf=True, max_=MAX_DNF_DISTANCE + 1) > MAX_DNF_DISTANCE:
        return where, False
    return normalize(where.copy(), dnf=True, max_distance=MAX_DNF_DISTANCE), True


def split(normal: exp.Expr, in_dnf: bool) -> list[Conjunct]:
    """The conjuncts of a condition :func:`normal_form` returned: one per OR branch (duplicates dropped),
    each split into its structured and text literals.  Not in DNF: one conjunct of the top-level AND's
    parts (the structured ones still run first in DuckDB)."""
    if not in_dnf:
        return [_conjunct(flatten(normal, exp.And))]
    return _dedupe([_conjunct(flatten(c, exp.And)) for c in flatten(normal, exp.Or)])


def to_dnf(where: exp.Expr) -> tuple[list[Conjunct], bool]:
    """The WHERE as OR of ANDs; ``False`` as second value when DNF would explode (kept whole)."""
    normal, in_dnf = normal_form(where)
    return split(normal, in_dnf), in_dnf


def _has_connective_below_not(where: exp.Expr) -> bool:
    """A NOT over AND / OR (De Morgan may turn it into an OR), or an XOR: only the normaliser knows."""
    for n in where.find_all(exp.Not, exp.Xor):
        if isinstance(n, exp.Xor) or n.find(exp.Connector) is not None:
            return True
    return False


def _conjunct(literals: list[exp.Expr]) -> Conjunct:
    structured: list[exp.Expr] = []
    text: list[exp.Expr] = []
    for lit in literals:
        (text if calls_in(lit) else structured).append(lit)
    return Conjunct(structured, text)


def _dedupe(conjuncts: list[Conjunct]) -> list[Conjunct]:
    seen: set[str] = set()
    out: list[Conjunct] = []
    for c in conjuncts:
        key = c.sql()
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def dnf_text(conjuncts: list[Conjunct]) -> str:
    if len(conjuncts) == 1:
        return conjuncts[0].sql()
    return "\nOR ".join(f"({c.sql()})" for c in conjuncts)
