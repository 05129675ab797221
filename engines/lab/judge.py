"""The evaluator's side: what a query means, what a user wanted, and scores.

Only evaluators use this module, and only evaluators read a world's hidden truth.  ``meaning()``
reads a SQL / SUQL statement of the shapes the parsers and the simulated annotators write (a
conjunction of conditions on the restaurant table, an optional ORDER BY / LIMIT / COUNT) the way a
person checking it would; anything else is reported as not understood rather than guessed.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp

# --- what a statement means ---------------------------------------------------------------------


@dataclass(frozen=True)
class Meaning:
    locations: frozenset[str] | None = None
    cuisines: tuple[frozenset[str], ...] = ()  # each item: one condition, an OR over values
    prices: frozenset[str] | None = None
    rating: tuple[str, float] | None = None  # (">=" or ">", value)
    name: str | None = None
    texts: tuple[tuple[str, str], ...] = ()  # answer(column, question) = 'Yes'
    late: str | None = None  # the literal an opening_hours comparison used
    order: tuple[tuple[str, bool], ...] = ()  # (column, descending)
    limit: int | None = None
    count: bool = False
    understood: bool = True
    unknown: tuple[str, ...] = field(default=())  # conditions not understood

    @property
    def cuisine_values(self) -> frozenset[str] | None:
        if not self.cuisines:
            return None
        out: frozenset[str] = frozenset()
        for c in self.cuisines:
            out |= c
        return out

    @property
    def rating_min(self) -> float | None:
        if self.rating is None:
            return None
        op, v = self.rating
        return v if op == ">=" else v + 0.5  # ratings move in half stars

    def structured_conditions(self) -> set[str]:
        """Which kinds of condition the statement has."""
        out = set()
        if self.locations:
            out.add("location")
        if self.cuisines:
            out.add("cuisine")
        if self.prices:
            out.add("price")
        if self.rating:
            out.add("rating")
        if self.name:
            out.add("name")
        if self.late:
            out.add("late")
        return out


def meaning(sql: str | None) -> Meaning:
    if not sql:
        return Meaning(understood=False, unknown=("no statement",))
    try:
        tree = sqlglot.parse_one(sql, read="postgres")
    except sqlglot.errors.SqlglotError:
        return Meaning(understood=False, unknown=("does not parse",))
    if not isinstance(tree, exp.Select):
        return Meaning(understood=False, unknown=(type(tree).__name__,))
    fields: dict[str, Any] = {"cuisines": [], "texts": [], "unknown": []}
    count = any(isinstance(e.unalias(), exp.Count) for e in tree.expressions)
    where = tree.args.get("where")
    if where is not None:
        for cond in _flatten(where.this, exp.And):
            _absorb(cond, fields)
    order: list[tuple[str, bool]] = []
    if tree.args.get("order") is not None:
        for o in tree.args["order"].expressions:
            if isinstance(o.this, exp.Column):
                order.append((o.this.name, bool(o.args.get("desc"))))
            else:
                fields["unknown"].append(o.sql())
    limit = None
    lim = tree.args.get("limit")
    if lim is not None:
        value = lim.args.get("expression") or lim.this
        if isinstance(value, exp.Literal) and not value.is_string:
            limit = int(value.name)
        else:
            fields["unknown"].append(lim.sql())
    unknown = tuple(fields.pop("unknown"))
    return Meaning(
        locations=fields.get("locations"),
        cuisines=tuple(fields.pop("cuisines")),
        prices=fields.get("prices"),
        rating=fields.get("rating"),
        name=fields.get("name"),
        texts=tuple(fields.pop("texts")),
        late=fields.get("late"),
        order=tuple(order),
        limit=limit,
        count=count,
        understood=not unknown,
        unknown=unknown,
    )


def _flatten(node: exp.Expr, kind: type) -> list[exp.Expr]:
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(node, kind):
        return _flatten(node.this, kind) + _flatten(node.expression, kind)
    return [node]


def _any_value(node: exp.Expr) -> str | None:
    """``'x' = ANY(cuisines)`` -> 'x'."""
    if isinstance(node, exp.EQ):
        for lit, other in ((node.this, node.expression), (node.expression, node.this)):
            if isinstance(lit, exp.Literal) and lit.is_string and isinstance(other, exp.Any):
                inner = other.this.unnest() if isinstance(other.this, exp.Paren) else other.this
                if isinstance(inner, exp.Column) and inner.name == "cuisines":
                    return lit.name
    return None


def _absorb(cond: exp.Expr, f: dict[str, Any]) -> None:
    parts = _flatten(cond, exp.Or)
    values = [_any_value(p) for p in parts]
    if all(v is not None for v in values):
        f["cuisines"].append(frozenset(v for v in values if v is not None))
        return
    c = cond.unnest() if isinstance(cond, exp.Paren) else cond
    if isinstance(c, exp.In) and isinstance(c.this, exp.Column) and c.this.name in ("location", "price"):
        vals = frozenset(v.name for v in c.expressions if isinstance(v, exp.Literal))
        f["locations" if c.this.name == "location" else "prices"] = vals
        return
    if isinstance(c, exp.EQ):
        col, lit = c.this, c.expression
        if isinstance(lit, exp.Column) and isinstance(col, exp.Literal):
            col, lit = lit, col
        if isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and lit.is_string:
            if col.name == "location":
                f["locations"] = frozenset({lit.name})
                return
            if col.name == "price":
                f["prices"] = frozenset({lit.name})
                return
            if col.name == "name":
                f["name"] = lit.name
                return
        call, yes = c.this, c.expression
        if (
            isinstance(call, exp.Anonymous)
            and str(call.this).lower() == "answer"
            and isinstance(yes, exp.Literal)
            and yes.name == "Yes"
        ):
            args = call.expressions
            if len(args) == 2 and isinstance(args[0], exp.Column) and isinstance(args[1], exp.Literal):
                f["texts"].append((args[0].name, args[1].name))
                return
    if isinstance(c, (exp.GTE, exp.GT)) and isinstance(c.this, exp.Column):
        if c.this.name == "rating" and isinstance(c.expression, exp.Literal) and not c.expression.is_string:
            f["rating"] = (">=" if isinstance(c, exp.GTE) else ">", float(c.expression.name))
            return
        if c.this.name == "opening_hours" and isinstance(c.expression, exp.Literal):
            f["late"] = c.expression.name
            return
    f["unknown"].append(cond.sql(dialect="postgres"))


# --- what a user wanted -------------------------------------------------------------------------


def closing_hour(opening_hours: str) -> float | None:
    """'5pm-11pm' -> 23.0; '6pm-12am' -> 24.0; '5pm-1am' -> 25.0 (past midnight counts as late)."""
    m = re.search(r"-\s*(\d{1,2})(?::(\d{2}))?\s*(am|pm)\s*$", opening_hours.strip().lower())
    if not m:
        return None
    hour: float = int(m.group(1)) % 12 + (12 if m.group(3) == "pm" else 0)
    hour += int(m.group(2) or 0) / 60
    if m.group(3) == "am":
        hour += 24  # closing after midnight
    return hour


def open_late(opening_hours: str, at: float = 23.0) -> bool:
    """A person's reading of "open late": still open at 11pm."""
    h = closing_hour(opening_hours)
    return h is not None and h >= at


# The evaluator's own knowledge of which dishes of the world are which kind of food.
DISH_KINDS: dict[str, frozenset[str]] = {
    "pasta": frozenset({"cacio e pepe", "lasagna", "spaghetti carbonara"}),
    "dumplings": frozenset({"har gow", "siu mai", "gyoza", "char siu bao", "wonton soup"}),
    "tacos": frozenset({"al pastor tacos", "jackfruit tacos"}),
    "burgers": frozenset({"cheeseburger", "double smash burger"}),
    "oysters": frozenset({"oysters"}),
    "curry": frozenset({"green curry", "chicken tikka masala", "lamb vindaloo", "chana masala", "laksa", "khao soi"}),
}


# --- scores ---------------------------------------------------------------------------------------


def set_f1(predicted: Iterable[Any], gold: Iterable[Any]) -> float:
    """F1 of two sets of values (both empty: 1)."""
    from engines.eval.metrics import overlap_f1

    p, g = set(predicted), set(gold)
    return 1.0 if not p and not g else overlap_f1(len(p & g), len(p), len(g))


def one_minus_relative_error(predicted: float | None, gold: float) -> float:
    """1 - |predicted - gold| / gold, at least 0 (no answer scores 0)."""
    if predicted is None:
        return 0.0
    if gold == 0:
        return 1.0 if predicted == 0 else 0.0
    return max(0.0, 1.0 - abs(predicted - gold) / gold)


def mean(xs: Sequence[float]) -> float:
    return statistics.fmean(xs) if xs else 0.0


def rounded(x: float | None, places: int = 3) -> float | None:
    return None if x is None else round(float(x), places)


def share(part: float, whole: float) -> float:
    return part / whole if whole else 0.0
