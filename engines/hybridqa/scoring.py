"""Scoring HybridQA answers (lecture 7 §6.3–§6.5).

* :func:`exact_match` and :func:`f1` — SQuAD's metrics against the single gold answer: lower case,
  punctuation and the articles a/an/the removed, whitespace collapsed; F1 over tokens.
* :func:`judge` — the "human judgement" of §6.4: it reads the hidden truth and accepts any correct
  answer in any form a person would accept (a date spelt out, a city with its country).
* :func:`error_class` — why an answer does not match the gold exactly, in the classes of §6.4–§6.5.
  Three are problems of the *evaluation* (the system was right): ``format variant`` (the gold's
  answer in another form), ``gold incomplete`` (another of several right answers), ``gold wrong``
  (the annotator's gold is not a correct answer).  The rest are problems of the *system*:
  ``no result`` (nothing came back, even after retries), ``wrong query`` (the query's structured
  conditions or its ordering mean something else than the question), ``wrong column`` (answer()
  read another passage column than the one that holds the fact), ``reader error`` (the query was
  right; answer() misread a passage).  The first that applies, in this order.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

from engines.errors import EngineError
from engines.eval.metrics import overlap_f1
from engines.jsonable import Jsonable, JsonShape
from engines.sql.sandbox import Sandbox
from engines.sql.sim_reader import parse_date
from engines.suql.language import as_call, calls_in, is_llm_call

EVALUATION_CLASSES = ("format variant", "gold incomplete", "gold wrong")
SYSTEM_CLASSES = ("no result", "wrong column", "wrong query", "reader error")
ERROR_CLASSES = EVALUATION_CLASSES + SYSTEM_CLASSES

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = (text or "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1(prediction: str, gold: str) -> float:
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    common = Counter(pred) & Counter(ref)
    return overlap_f1(sum(common.values()), len(pred), len(ref))


def canonical(text: str) -> str:
    """The form the judge compares: a date as ISO, anything else SQuAD-normalised."""
    d = parse_date((text or "").strip().removeprefix("on ").strip())
    return d.isoformat() if d is not None else normalize_answer(text)


def _matching(text: str, truth: Any) -> int | None:
    """Index of the correct answer ``text`` is a form of, or None."""
    c = canonical(text)
    if not c:
        return None
    for i, answer in enumerate(truth.answers):
        if c in {canonical(f) for f in answer.forms}:
            return i
    return None


def judge(prediction: str, truth: Any) -> bool:
    """The human judgement of §6.4: is the prediction one of the correct answers, in any accepted form?"""
    return _matching(prediction, truth) is not None


@dataclass(frozen=True)
class Score(Jsonable):
    __json__ = JsonShape(rounded={"f1": 4})

    em: float
    f1: float
    judged: bool | None  # None without hidden truth (real tables)
    error: str | None  # the error class when EM is 0 (None when EM is 1, or without hidden truth)


def score(answer: Any, gold: str, truth: Any | None = None, sandbox: Sandbox | None = None) -> Score:
    """EM and F1 against the gold; with hidden truth, the judgement and the error class."""
    prediction = answer.short
    em, f = exact_match(prediction, gold), f1(prediction, gold)
    if truth is None:
        return Score(em, f, None, None)
    ok = judge(prediction, truth)
    error = None if em == 1.0 else error_class(answer, gold, truth, sandbox, judged=ok)
    return Score(em, f, ok, error)


def error_class(answer: Any, gold: str, truth: Any, sandbox: Sandbox | None, *, judged: bool) -> str:
    """Why an answer that is not an exact match is not one (§6.4–§6.5)."""
    if judged:
        mine, golds = _matching(answer.short, truth), _matching(gold, truth)
        if golds is None:
            return "gold wrong"
        if mine == golds:
            return "format variant"
        return "gold incomplete"
    if answer.no_result:
        return "no result"
    final = answer.final.suql
    if sandbox is not None and not same_meaning(final, truth.suql, sandbox):
        return "wrong query"
    rescued = answer.improvements.fallback and answer.fallback_calls > 0  # improvement 1 read the right column
    if set(text_columns(final)) != set(truth.columns) and not rescued:
        return "wrong column"
    return "reader error"


# --- comparing a query with the expert's ------------------------------------------------------------


def _tree(suql: str) -> exp.Expr | None:
    try:
        return sqlglot.parse_one(suql, read="postgres")
    except sqlglot.errors.SqlglotError:
        return None


def text_columns(suql: str) -> list[str]:
    """The passage columns the query's answer() calls read."""
    tree = _tree(suql)
    if not isinstance(tree, exp.Expression):  # None; parse_one is typed Expr, and every node it builds is an Expression
        return []
    out = []
    for node in calls_in(tree, own_scope=False):
        try:
            call = as_call(node)
        except EngineError:
            continue
        if isinstance(call.text, exp.Column):
            out.append(call.text.name)
    return out


def _structured_where(tree: exp.Expr) -> exp.Expr | None:
    where = tree.args.get("where")
    if where is None:
        return None
    parts = _conjuncts(where.this)
    kept = [p for p in parts if not any(is_llm_call(n) for n in p.find_all(exp.Anonymous))]
    return exp.and_(*[p.copy() for p in kept]) if kept else None


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    return [node]


def _rows_selected(tree: exp.Expr, sandbox: Sandbox) -> frozenset[Any] | None:
    from_ = tree.args.get("from_")
    if from_ is None:
        return None
    q = exp.select(exp.column("rowid")).from_(from_.this.copy())
    cond = _structured_where(tree)
    if cond is not None:
        q = q.where(cond)
    try:
        return frozenset(r[0] for r in sandbox.run_tree(q).rows)
    except EngineError:
        return None


def _order_shape(tree: exp.Expr) -> tuple[tuple[bool, bool], ...]:
    order = tree.args.get("order")
    if order is None:
        return ()
    return tuple((bool(o.args.get("desc")), bool(calls_in(o, own_scope=False))) for o in order.expressions)


def same_meaning(suql: str, expert: str, sandbox: Sandbox) -> bool:
    """Do the two queries select the same rows by their table conditions and order them the same way?"""
    mine, theirs = _tree(suql), _tree(expert)
    if mine is None or theirs is None:
        return False
    if _order_shape(mine) != _order_shape(theirs):
        return False
    a, b = _rows_selected(mine, sandbox), _rows_selected(theirs, sandbox)
    return a is not None and a == b


# --- aggregates ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Totals(Jsonable):
    __json__ = JsonShape(places=4)

    questions: int
    em: float
    f1: float
    judged: float | None


def totals(scores: Sequence[Score]) -> Totals:
    n = len(scores)
    if n == 0:
        return Totals(0, 0.0, 0.0, None)
    judged = [s.judged for s in scores if s.judged is not None]
    return Totals(
        n, sum(s.em for s in scores) / n, sum(s.f1 for s in scores) / n, (sum(judged) / len(judged)) if judged else None
    )


def error_counts(scores: Sequence[Score]) -> dict[str, int]:
    counts = {c: 0 for c in ERROR_CLASSES}
    for s in scores:
        if s.error is not None:
            counts[s.error] += 1
    return counts
