"""The gate's steps on text: split, parse, check, transpile, and the re-check of what runs.

1. **Split** — the text is tokenized (sqlglot) and split on ``;``.  More than one statement is refused,
   and so is a statement that starts with a keyword that can only begin a non-query (``DROP``,
   ``ATTACH``, ``COPY``, ``SET``, ``PRAGMA`` ...).
2. **Parse** — as PostgreSQL first, then as DuckDB (:data:`DIALECTS`); text neither dialect reads fails
   with a syntax error and a position.
3. **Validate** — :func:`engines.sql.sandbox.policy.validate` (:func:`check` is parse + validate).
4. **Transpile** — to DuckDB SQL without comments, size guards added; :func:`runnable` validates sqlglot's
   DuckDB reading of that text again (the reading the guards were added on, when they changed nothing).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, SqlglotError, TokenError
from sqlglot.tokenizer_core import Token, TokenType  # where sqlglot defines them (tokens re-exports them implicitly)

from engines.errors import ConfigurationError
from engines.sql.sandbox.bounds import bound_read
from engines.sql.sandbox.errors import SqlFailed, SqlRefused, _from_sqlglot, _strip_ansi
from engines.sql.sandbox.policy import _MODIFIERS, _ONLY_SELECT, _STATEMENT_KEYWORDS, _TWO_WORD_KEYWORDS, validate

DIALECTS: tuple[str, ...] = ("postgres", "duckdb")
"""Dialects tried in order when reading a query: the first that parses it wins."""
MAX_SQL_CHARS = 100_000
"""Longer texts are refused before any parsing."""


def parse(sql: str, dialects: Sequence[str] = DIALECTS) -> exp.Expr:
    """Read one statement with the first dialect of ``dialects`` that parses it.

    Raises :class:`SqlRefused` for several statements or a statement that cannot be
    a query, and :class:`SqlFailed` (with a position when sqlglot has one) for text
    that no dialect reads.  Does not validate the tree; see :func:`check`.
    """
    if len(sql) > MAX_SQL_CHARS:
        raise SqlRefused(f"The query is longer than {MAX_SQL_CHARS:,} characters and was refused.", sql=sql)
    tokens_by_dialect: dict[str, list[Token] | TokenError] = {}  # each dialect tokenizes the text at most once
    statements = _split_statements(sql, dialects, tokens_by_dialect)
    if not statements:
        raise SqlFailed("There is no query to run: the text is empty or only comments.", sql=sql)
    if len(statements) > 1:
        line, column = _token_position(statements[1][0])
        raise SqlRefused(
            f"Only one statement at a time: found {len(statements)}. Run them one by one.",
            line=line,
            column=column,
            sql=sql,
        )
    tokens = statements[0]
    keyword = tokens[0].text.upper()
    if tokens[0].token_type != TokenType.STRING and keyword in _STATEMENT_KEYWORDS:
        line, column = _token_position(tokens[0])
        raise SqlRefused(
            f"{_ONLY_SELECT}; {_statement_phrase(tokens)} statements are refused.",
            line=line,
            column=column,
            sql=sql,
        )
    return _parse_one(sql, dialects, tokens_by_dialect)


def _tokenize(sql: str, dialects: Sequence[str], tokens_by_dialect: dict[str, list[Token] | TokenError]) -> list[Token]:
    """The tokens of the first dialect that reads ``sql``; each dialect's tokens (or its error) are kept in
    ``tokens_by_dialect`` for the parse, which then need not tokenize the text again."""
    error: TokenError | None = None
    for dialect in dialects:
        try:
            tokens = tokens_by_dialect[dialect] = Dialect.get_or_raise(dialect).tokenize(sql)
        except TokenError as e:
            tokens_by_dialect[dialect] = e
            error = error or e
        else:
            return tokens
    raise SqlFailed(
        "Syntax error: the query could not be read; look for an unterminated string, "
        f"quoted name or comment. ({_strip_ansi(str(error))})",
        sql=sql,
    )


def _split_statements(
    sql: str, dialects: Sequence[str], tokens_by_dialect: dict[str, list[Token] | TokenError]
) -> list[list[Token]]:
    """The statements' tokens, split on ``;``; empty statements are dropped."""
    statements: list[list[Token]] = [[]]
    for token in _tokenize(sql, dialects, tokens_by_dialect):
        if token.token_type == TokenType.SEMICOLON:
            statements.append([])
        else:
            statements[-1].append(token)
    return [s for s in statements if s]


def _statement_phrase(tokens: Sequence[Token]) -> str:
    """``CREATE OR REPLACE TEMP MACRO m ...`` -> ``CREATE MACRO``."""
    first = tokens[0].text.upper()
    if first in _TWO_WORD_KEYWORDS:
        for token in tokens[1:]:
            word = token.text.upper()
            if word not in _MODIFIERS:
                return f"{first} {word}" if word.isidentifier() else first
    return first


def _token_position(token: Token) -> tuple[int, int]:
    return token.line, max(1, token.col - (token.end - token.start))


def _parse_one(sql: str, dialects: Sequence[str], tokens_by_dialect: dict[str, list[Token] | TokenError]) -> exp.Expr:
    """What ``sqlglot.parse(sql, read=dialect)`` does, dialect by dialect, on the tokens the split already
    has for a dialect (its tokenizer's error, if it had one), tokenizing only for a dialect it has not tried."""
    errors: list[SqlFailed] = []
    for dialect in dialects:
        reader = Dialect.get_or_raise(dialect)
        try:
            tokens = tokens_by_dialect.get(dialect)
            if isinstance(tokens, TokenError):
                raise tokens
            if tokens is None:
                tokens = reader.tokenize(sql)
            expressions = [e for e in reader.parser().parse(tokens, sql) if e is not None]
        except (ParseError, TokenError) as e:
            errors.append(_from_sqlglot(e, sql))
            continue
        except RecursionError:
            raise SqlFailed("The query is nested too deeply to be read.", sql=sql) from None
        if len(expressions) == 1:
            return expressions[0]
        if len(expressions) > 1:
            raise SqlRefused(f"Only one statement at a time: found {len(expressions)}.", sql=sql)
        raise SqlFailed("There is no query to run: the text is empty or only comments.", sql=sql)
    if not errors:
        raise ConfigurationError("No SQL dialect is configured to read queries.")
    # Report the dialect that read furthest: its error is most likely the real one.
    raise max(errors, key=lambda e: (e.line or 0, e.column or 0))


def transpile(expression: exp.Expr) -> str:
    """DuckDB SQL for a parsed query, without comments.

    PostgreSQL semantics are kept: ``ORDER BY x DESC`` becomes ``DESC NULLS FIRST``.
    """
    try:
        return expression.sql(dialect="duckdb", comments=False)
    except SqlglotError as e:
        raise SqlFailed(f"The query could not be translated to DuckDB SQL: {_strip_ansi(str(e))}") from e
    except RecursionError:
        raise SqlFailed("The query is nested too deeply to be translated.") from None


def check(sql: str, dialects: Sequence[str] = DIALECTS) -> exp.Expr:
    """Parse and validate ``sql`` without running it; returns the parsed tree."""
    expression = parse(sql, dialects)
    try:
        validate(expression)
    except SqlRefused as e:
        e.sql = sql
        raise
    return expression


def runnable(expression: exp.Expr) -> str:
    """The DuckDB SQL that runs for a validated tree: transpiled (:func:`transpile`), size-guarded
    (:func:`engines.sql.sandbox.bounds.bound`) and validated again as sqlglot reads that text."""
    transpiled = transpile(expression)
    if len(transpiled) > _MAX_REMEMBERED_CHARS:
        return _guarded_and_rechecked(transpiled)
    return _remembered_guarded_and_rechecked(transpiled)


_MAX_REMEMBERED_CHARS = 4_000
"""Transpiled texts up to this long have their guarded, re-checked text remembered (an engine runs the same
statements again and again: SUQL's per-row and per-mode queries, a tab's schema queries)."""


def _guarded_and_rechecked(transpiled: str) -> str:
    duckdb_sql, reading = bound_read(transpiled)
    _recheck(duckdb_sql, reading)
    return duckdb_sql


_remembered_guarded_and_rechecked = functools.lru_cache(maxsize=2048)(_guarded_and_rechecked)
""":func:`_guarded_and_rechecked` remembered by text: both steps depend on the text alone (sqlglot's reading
of it and the pure policy), so the same text always gives the same SQL; a text they refuse raises each time
(an exception is never remembered)."""


def _recheck(duckdb_sql: str, expression: exp.Expr | None = None) -> None:
    """Validate the transpiled SQL too, so the policy applies to what really runs.

    ``expression``: sqlglot's reading of ``duckdb_sql`` (DuckDB dialect) when the caller has it already.
    If sqlglot cannot read its own output back, the check of the original tree stands.
    """
    if expression is None:
        try:
            expression = sqlglot.parse_one(duckdb_sql, read="duckdb")
        except (SqlglotError, RecursionError):
            return
    try:
        validate(expression)
    except SqlRefused as e:
        e.sql = duckdb_sql
        raise
