"""SUQL: SQL plus ``answer(text, 'question')`` and ``summary(text)`` (lecture 7 §2).

Input is the SUQL paper's PostgreSQL dialect.  It is parsed with sqlglot and checked
by the SQL sandbox's policy (one read-only query); the two LLM functions may stand
wherever a text value may.  This module finds them and refuses, with a message
naming the construct, what the worlds cannot serve.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeGuard, TypeVar

from sqlglot import exp

from engines.sql.sandbox import SqlRefused, check

LLM_FUNCTIONS = ("answer", "summary")
CALL_KEY = "suql_call"  # the key of the node's LLMCall, where annotate_calls wrote it (a node's sqlglot ``meta``)

# Functions a query may name that no world here can serve, with the reason.
UNSERVABLE: dict[str, str] = {
    "st_distance_sphere": "a geographic function (the worlds store no coordinates)",
    "st_distance": "a geographic function (the worlds store no coordinates)",
    "st_dwithin": "a geographic function (the worlds store no coordinates)",
    "st_point": "a geographic function (the worlds store no coordinates)",
    "st_makepoint": "a geographic function (the worlds store no coordinates)",
    "earth_distance": "a geographic function (the worlds store no coordinates)",
    "ll_to_earth": "a geographic function (the worlds store no coordinates)",
    "now": "the current time (the worlds have no clock)",
    "current_timestamp": "the current time (the worlds have no clock)",
    "current_date": "the current date (the worlds have no clock)",
}


class SuqlError(SqlRefused):
    """A SUQL query that cannot run: the message names the construct."""


@dataclass(frozen=True)
class LLMCall:
    """One distinct ``answer()`` / ``summary()`` call of a query."""

    function: str  # "answer" | "summary"
    text: exp.Expr  # the text argument (usually a column)
    question: str  # for summary(): "" (its fixed question)

    @cached_property
    def key(self) -> tuple[str, str, str]:
        return (self.function, self.text.sql(dialect="postgres"), self.question)

    @cached_property
    def text_sql(self) -> str:
        """The text argument as DuckDB SQL (how the candidate rows name the text they read)."""
        return self.text.sql(dialect="duckdb")

    def sql(self) -> str:
        if self.function == "summary":
            return f"summary({self.text.sql(dialect='postgres')})"
        q = self.question.replace("'", "''")
        return f"answer({self.text.sql(dialect='postgres')}, '{q}')"


def is_llm_call(node: exp.Expr) -> TypeGuard[exp.Anonymous]:
    return isinstance(node, exp.Anonymous) and str(node.this).lower() in LLM_FUNCTIONS


def as_call(node: exp.Anonymous) -> LLMCall:
    """The call a node stands for; refuses malformed arguments."""
    name = str(node.this).lower()
    args = node.expressions
    if name == "summary":
        if len(args) != 1:
            raise SuqlError(f"summary() takes one text argument, not {len(args)}: {node.sql(dialect='postgres')}")
        _refuse_constant(name, args[0])
        return LLMCall("summary", args[0], "")
    if len(args) != 2:
        raise SuqlError(
            f"answer() takes a text and a question, answer(text, 'question'): {node.sql(dialect='postgres')}"
        )
    question = args[1]
    if not (isinstance(question, exp.Literal) and question.is_string):
        raise SuqlError(f"the question of answer() must be a string literal: {node.sql(dialect='postgres')}")
    if any(is_llm_call(n) for n in args[0].find_all(exp.Anonymous)):
        raise SuqlError(
            f"answer() over the output of another LLM call is not supported: {node.sql(dialect='postgres')}"
        )
    _refuse_constant(name, args[0])
    return LLMCall("answer", args[0], question.name)


def _refuse_constant(name: str, text: exp.Expr) -> None:
    """The text of answer() / summary() is read from each row: an argument naming no column is a constant."""
    if text.find(exp.Column) is None:
        raise SuqlError(
            f"{name}() reads a text column of each row: {pretty(text)} is a constant, "
            f"the same for every row (name a column, e.g. {name}(reviews{', ...' if name == 'answer' else ''}))."
        )


def call_key(node: exp.Anonymous) -> tuple[str, str, str]:
    """``as_call(node).key``, read from the node when :func:`annotate_calls` wrote it there (rendering the
    text argument's SQL for the key is the costly part, and the row loop asks for it on every row)."""
    key: tuple[str, str, str] | None = node.meta.get(CALL_KEY)
    return key if key is not None else as_call(node).key


Tree = TypeVar("Tree", bound=exp.Expr)


def annotate_calls(tree: Tree) -> Tree:
    """A copy of ``tree`` whose LLM calls (its own scope, as :func:`calls_in` finds them) carry their key
    for :func:`call_key`; copies of the copy keep it.  ``tree`` itself is not changed."""
    out = tree.copy()
    for n in calls_in(out):
        n.meta[CALL_KEY] = as_call(n).key
    return out


def calls_in(node: exp.Expr, *, own_scope: bool = True) -> list[exp.Anonymous]:
    """The LLM call nodes under ``node``; with ``own_scope``, not those inside nested SELECTs."""
    out: list[exp.Anonymous] = []
    for n in node.find_all(exp.Anonymous):
        if not is_llm_call(n):
            continue
        if own_scope and _inside_nested_select(n, node):
            continue
        out.append(n)
    return out


def _inside_nested_select(n: exp.Expr, top: exp.Expr) -> bool:
    parent = n.parent
    while parent is not None and parent is not top:
        if isinstance(parent, (exp.Select, exp.Union, exp.Except, exp.Intersect)):
            return True
        parent = parent.parent
    return False


def has_llm_calls(node: exp.Expr) -> bool:
    return any(is_llm_call(n) for n in node.find_all(exp.Anonymous))


@dataclass(frozen=True)
class Query:
    """A SUQL query read once (:func:`read`): its text and its checked tree.  Nothing that runs, estimates or
    compiles a query changes its tree (each copies what it rewrites), so one reading serves them all."""

    text: str
    tree: exp.Expr = field(repr=False)


def read(sql: str | Query) -> Query:
    """``sql`` parsed and checked (:func:`parse`), or the :class:`Query` it already is."""
    return sql if isinstance(sql, Query) else Query(sql, parse(sql))


def parse(sql: str) -> exp.Expr:
    """Parse and check a SUQL query: one read-only statement whose LLM calls are well formed."""
    if not sql or not sql.strip():
        raise SuqlError("The query is empty.")
    tree = check(sql.strip().rstrip(";").strip() or sql)
    calls: list[exp.Anonymous] = []
    for fn in tree.find_all(exp.Func):  # one walk: the functions; where the LLM calls sit is read from them
        name = (fn.name if isinstance(fn, exp.Anonymous) else fn.sql_name()).lower()
        if name in UNSERVABLE:
            raise SuqlError(
                f"{fn.sql(dialect='postgres')[:80]} uses {name}(), {UNSERVABLE[name]}: this world cannot serve it."
            )
        if isinstance(fn, exp.Anonymous) and name in LLM_FUNCTIONS:
            as_call(fn)
            _refuse_as_condition(fn)
            calls.append(fn)
    for fn in calls:
        _refuse_placement(fn)
    return tree


def _refuse_placement(call: exp.Anonymous) -> None:
    """answer() / summary() in a JOIN condition, HAVING, a window or QUALIFY (the closest such clause above it)."""
    node: exp.Expr = call
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.Join) and parent.args.get("on") is node:
            raise SuqlError("answer() in a JOIN condition is not supported: move the condition to WHERE.")
        if isinstance(parent, (exp.Having, exp.Window, exp.Qualify)):
            raise SuqlError(
                f"answer() or summary() inside {type(parent).__name__.upper()} is not supported: compute it in a subquery and filter outside."
            )
        node, parent = parent, parent.parent


def _refuse_as_condition(call: exp.Anonymous) -> None:
    """A bare ``WHERE answer(...)``: its value is text ('Yes', 'No', a value), never a truth value."""
    node: exp.Expr = call
    parent = call.parent
    while isinstance(parent, exp.Paren):
        node, parent = parent, parent.parent
    bare = (
        isinstance(parent, (exp.Where, exp.Having, exp.Qualify, exp.And, exp.Or, exp.Xor, exp.Not))
        or (isinstance(parent, exp.If) and parent.args.get("this") is node)
        or (isinstance(parent, exp.Is) and isinstance(parent.expression, exp.Boolean))
        or (isinstance(parent, exp.Join) and parent.args.get("on") is node)
    )
    if bare:
        text = pretty(call)
        returns = "text ('Yes', 'No' or a value)" if str(call.this).lower() == "answer" else "text"
        raise SuqlError(
            f"{text} is used as a condition, but {str(call.this).lower()}() returns {returns}, not true or false "
            f"(SQL would have to cast 'No' to a truth value): compare it, e.g. {text} = 'Yes'."
        )


def pretty(node: exp.Expr) -> str:
    """SQL text for display, with the LLM functions in lower case."""
    return node.sql(dialect="postgres", normalize_functions=False)
