"""Completion for the SQL and SUQL editors: the current source's columns and tables, SUQL's ``answer()`` and
``summary()`` with their argument shapes, SQL's keywords and DuckDB's functions.

    sql_suggestions("rat", tables=[("restaurants", ("rating", "name"))], suql=True)
    # [Suggestion(text='rating', label='rating', kind='column · restaurants')]
    sql_suggestions("restaurants.na", tables=…)   # a member: the columns of that table

The tables come from the tab (what its schema pane reads: ``SqlGate.tables()`` or the source's description).
Identifiers are written by sqlglot (quoted only when they must be: ``"my col"``); the keywords are sqlglot's
tokenizer's, the functions DuckDB's own list (``duckdb_functions()``, read once)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

import duckdb
from sqlglot import exp
from sqlglot.tokens import Tokenizer

from engines.completion import MAX_WORD, Suggestion, ranked

MAX_SUGGESTIONS = 40
"""Entries of the list at most."""
MAX_TABLES = 500
"""Tables of a source offered (the first ones; a bigger catalogue is completed from these)."""
MAX_COLUMNS = 2000
"""Columns offered in all (the first tables' first)."""

LLM_CALLS: tuple[Suggestion, ...] = (
    Suggestion("answer(", "answer(column, 'question')", "SUQL · LLM reads"),
    Suggestion("summary(", "summary(column)", "SUQL · LLM summary"),
)
"""SUQL's two LLM functions, shown with their arguments: a text column (or a list of text), then for answer()
the question in single quotes."""

# statements the gate refuses (it runs one read-only SELECT): not offered
_NOT_READ = frozenset(
    """alter analyze attach begin cache commit copy create delete describe detach drop execute export grant import
    insert install load merge pivot pragma rename replace revoke rollback set show summarize truncate uncache
    update use vacuum""".split()
)


@lru_cache(maxsize=1)
def sql_keywords() -> tuple[str, ...]:
    """SQL's one-word keywords, upper case, as sqlglot's tokenizer knows them (statements other than SELECT left
    out)."""
    return tuple(sorted(k for k in Tokenizer.KEYWORDS if k.isalpha() and k.isascii() and k.lower() not in _NOT_READ))


@lru_cache(maxsize=1)
def sql_functions() -> tuple[str, ...]:
    """DuckDB's scalar and aggregate functions and macros, by name (from ``duckdb_functions()``)."""
    with duckdb.connect(":memory:") as con:
        rows = con.execute(
            "SELECT DISTINCT function_name FROM duckdb_functions() "
            "WHERE function_type IN ('scalar', 'aggregate', 'macro') ORDER BY function_name"
        ).fetchall()
    return tuple(str(r[0]) for r in rows if str(r[0]).isidentifier() and not str(r[0]).startswith("__"))


def identifier(name: str) -> str:
    """``name`` as DuckDB reads it: quoted by sqlglot only when it must be."""
    return exp.to_identifier(name).sql(dialect="duckdb")


def _columns(tables: Sequence[tuple[str, Sequence[str]]]) -> Iterable[Suggestion]:
    n = 0
    for table, columns in tables[:MAX_TABLES]:
        for column in columns:
            if n >= MAX_COLUMNS:
                return
            n += 1
            yield Suggestion(identifier(column), column, f"column · {table}")


def sql_suggestions(
    word: str, tables: Sequence[tuple[str, Sequence[str]]], *, suql: bool, limit: int = MAX_SUGGESTIONS
) -> list[Suggestion]:
    """What completes ``word`` (the text typed before the cursor, up to the last space or bracket):
    ``table.col`` → that table's columns (text put in: ``table.column``); otherwise columns, tables, (``suql``:)
    ``answer(`` and ``summary(``, keywords, functions — each kind in that order, those starting with ``word``."""
    word = word[:MAX_WORD]
    if "." in word:
        qualifier, _, part = word.rpartition(".")
        table = next((t for t in tables[:MAX_TABLES] if qualifier.strip('"').casefold() == t[0].casefold()), None)
        if table is None:
            return []
        members = [Suggestion(f"{qualifier}.{identifier(c)}", c, f"column · {table[0]}") for c in table[1]]
        if not part:
            return members[:limit]
        folded = part.casefold()
        return [s for s in members if s.label.casefold().startswith(folded)][:limit]

    def candidates() -> Iterable[Suggestion]:
        yield from _columns(tables)
        for table, _ in tables[:MAX_TABLES]:
            yield Suggestion(identifier(table), table, "table")
        if suql:
            yield from LLM_CALLS
        for k in sql_keywords():
            yield Suggestion(k, k, "keyword")
        for f in sql_functions():
            yield Suggestion(f"{f}(", f"{f}()", "function")

    return ranked(word, candidates(), limit=limit)


__all__ = ["LLM_CALLS", "MAX_SUGGESTIONS", "identifier", "sql_functions", "sql_keywords", "sql_suggestions"]
