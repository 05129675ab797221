"""Kleene logic: SQL's three-valued AND / OR / NOT (Unknown is ``None``, SQL NULL), evaluated lazily.

Every function here is pure over an expression tree; what a leaf is worth on a row comes in as a
callback (:data:`Leaf`), so the row loop decides how values are asked and this module decides only
which leaves are needed, in which order, and what they add up to.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any, Final

from sqlglot import exp

from engines.suql.dnf import Conjunct
from engines.suql.language import calls_in, is_llm_call

Truth = bool | None  # True, False, or Unknown
Leaf = Callable[[exp.Expr], Truth]  # the truth of a condition the connectives here do not take apart


class NoFast(enum.Enum):
    """fast_truth: this shape needs the database."""

    NO_FAST = "NO_FAST"


NO_FAST: Final = NoFast.NO_FAST


class Deferred(enum.Enum):
    """dnf_truth with ``defer``: the row cannot be True; whether it is False or Unknown was not asked."""

    DEFERRED = "DEFERRED"

    def __repr__(self) -> str:
        return "DEFERRED"


DEFERRED: Final = Deferred.DEFERRED


def and_(a: Truth, b: Truth) -> Truth:
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def or_(a: Truth, b: Truth) -> Truth:
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def not_(a: Truth) -> Truth:
    return None if a is None else not a


def fast_truth(pred: exp.Expr, value_of: Callable[[exp.Anonymous], Any]) -> Truth | NoFast:
    """Kleene truth of common shapes without a database round trip; NO_FAST otherwise."""
    pred = pred.unnest() if isinstance(pred, exp.Paren) else pred
    if isinstance(pred, exp.Not):
        inner = fast_truth(pred.this, value_of)
        if inner is NO_FAST or inner is None:
            return inner
        return not inner
    if isinstance(pred, (exp.EQ, exp.NEQ)):
        for a, b in ((pred.this, pred.expression), (pred.expression, pred.this)):
            if is_llm_call(a) and isinstance(b, exp.Literal) and b.is_string:
                v = value_of(a)
                if v is None:
                    return None
                return (str(v) == b.name) if isinstance(pred, exp.EQ) else (str(v) != b.name)
    if isinstance(pred, exp.Is) and isinstance(pred.expression, exp.Null) and is_llm_call(pred.this):
        is_null = value_of(pred.this) is None
        return not is_null if pred.args.get("negate") else is_null  # IS NOT NULL parses as a negated Is
    return NO_FAST


def structured_leaves(node: exp.Expr) -> list[exp.Expr]:
    """The maximal parts of a WHERE below AND / OR / NOT / parentheses that hold no LLM call,
    left to right: the conditions a row-at-a-time engine tests without asking the LLM."""
    if isinstance(node, exp.Paren):
        return structured_leaves(node.this)
    if isinstance(node, exp.Not):
        return structured_leaves(node.this)
    if isinstance(node, (exp.And, exp.Or)):
        return structured_leaves(node.this) + structured_leaves(node.expression)
    return [] if calls_in(node) else [node]


LEAF = "suql_leaf"  # a structured leaf's position in the written WHERE (in the node's sqlglot ``meta``)


def number_leaves(where: exp.Expr) -> tuple[exp.Expr, list[exp.Expr]]:
    """A copy of ``where`` whose :func:`structured_leaves` carry their position, for :func:`written_truth`;
    and those leaves, left to right.  ``where`` itself is not changed."""
    tree = where.copy()
    leaves = structured_leaves(tree)
    for j, leaf in enumerate(leaves):
        leaf.meta[LEAF] = j
    return tree, leaves


def written_truth(node: exp.Expr, known: Sequence[Truth], leaf: Leaf) -> Truth:
    """Mode B: the WHERE as a row-at-a-time engine evaluates it — left to right, Kleene logic,
    AND stopping at the first False and OR at the first True.  ``node``: a tree :func:`number_leaves`
    numbered; ``known``: the row's structured leaves by their number, tested in the database beforehand."""
    if isinstance(node, exp.Paren):
        return written_truth(node.this, known, leaf)
    if isinstance(node, exp.Not):
        return not_(written_truth(node.this, known, leaf))
    if isinstance(node, (exp.And, exp.Or)):
        stop = isinstance(node, exp.Or)  # the value that decides the connective
        left = written_truth(node.this, known, leaf)
        if left is stop:
            return left
        right = written_truth(node.expression, known, leaf)
        return or_(left, right) if stop else and_(left, right)
    position: int | None = node.meta.get(LEAF)
    if position is not None:
        return known[position]
    return leaf(node)


def lazy_truth(node: exp.Expr, leaf: Leaf, *, structured_first: bool, short_circuit: bool) -> Truth:
    """A predicate holding AND / OR / NOT / CASE, evaluated the way SQL defines it but asking only
    what decides the row: a CASE asks the conditions in order and only the branch the row takes
    (``CASE WHEN c THEN answer(..) = 'Yes' ELSE answer(..) = 'Yes' END``); AND / OR stop at the
    deciding value (the naive mode has asked everything already)."""
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if not calls_in(node):
        return leaf(node)

    def again(n: exp.Expr) -> Truth:
        return lazy_truth(n, leaf, structured_first=structured_first, short_circuit=short_circuit)

    if isinstance(node, exp.Not):
        return not_(again(node.this))
    if isinstance(node, (exp.And, exp.Or)):
        stop = isinstance(node, exp.Or)
        first, second = node.this, node.expression
        if structured_first and calls_in(first) and not calls_in(second):
            first, second = second, first  # the side without a call first: it may decide the row
        left = again(first)
        if left is stop and short_circuit:
            return left
        right = again(second)
        return or_(left, right) if stop else and_(left, right)
    if isinstance(node, exp.Case) and node.this is None:  # searched CASE: WHEN cond THEN value
        for branch in node.args.get("ifs") or []:
            if again(branch.this) is True:
                return again(branch.args["true"])
        default = node.args.get("default")
        return None if default is None else again(default)
    return leaf(node)


def predicate_truth(pred: exp.Expr, leaf: Leaf, *, structured_first: bool, short_circuit: bool) -> Truth:
    """One text predicate of a conjunct: taken apart lazily when it holds connectives, else a leaf."""
    inner = pred.unnest() if isinstance(pred, exp.Paren) else pred
    if isinstance(inner, (exp.And, exp.Or, exp.Not, exp.Case)) and calls_in(inner):
        return lazy_truth(inner, leaf, structured_first=structured_first, short_circuit=short_circuit)
    return leaf(pred)


def dnf_truth(
    flags: Sequence[Truth],
    conjuncts: Sequence[Conjunct],
    orders: Sequence[Sequence[int]],
    predicate: Callable[[exp.Expr], Truth],
    *,
    short_circuit: bool,
    observe: dict[tuple[int, int], list[Truth]] | None = None,
    defer: bool = False,
    verifying: Callable[[bool], None] | None = None,
) -> Truth | Deferred:
    """Kleene OR over conjuncts of (structured AND text predicates), short-circuiting.

    ``flags``: per conjunct, the truth of its structured part.  With ``observe``, every predicate of
    every applicable conjunct is evaluated and its value recorded under (conjunct, written position).
    With ``defer`` (a LIMIT wants matches only), a conjunct stops at its first non-True value: once it
    cannot be True, the rest would only tell False from Unknown; when no conjunct is True and one
    stopped so, the row is :data:`DEFERRED`.  ``verifying`` is told when a predicate is asked after its
    conjunct became Unknown (outside ``observe``): a verification call, which ``defer`` would not make.
    """
    result: Truth = False
    partial = False
    for i, c in enumerate(conjuncts):
        flag = flags[i]
        if flag is False and short_circuit:
            continue
        truth: Truth = flag
        stopped = False
        for k in orders[i]:
            if truth is False and short_circuit and observe is None:
                break
            if defer and truth is None:
                stopped = True
                break
            told = verifying if truth is None and observe is None else None
            if told is not None:
                told(True)
            try:
                t = predicate(c.text[k])
            finally:
                if told is not None:
                    told(False)
            if observe is not None and flag is not False:
                observe.setdefault((i, k), []).append(t)
            truth = and_(truth, t)
        if stopped:
            partial = True
        else:
            result = or_(result, truth)
        if result is True and short_circuit and observe is None:
            break
    if partial and result is not True:
        return DEFERRED
    return result
