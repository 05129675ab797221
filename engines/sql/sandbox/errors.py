"""The gate's errors, and DuckDB's and sqlglot's errors turned into them with a position."""

from __future__ import annotations

import re

import duckdb
from sqlglot.errors import SqlglotError

from engines.errors import EngineError


class SqlError(EngineError):
    """Base of the gate's errors.

    ``line`` and ``column`` are 1-based and point into ``sql``, the text the
    position refers to (the query as written, or the DuckDB SQL it became when the
    error came from DuckDB); any of the three may be ``None``.  ``str(e)`` is
    ``message``.
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        sql: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.sql = sql

    def __str__(self) -> str:
        return self.message


class SqlRefused(SqlError):
    """The gate's policy refused the query; nothing was executed."""


class SqlFailed(SqlError):
    """The query could not be parsed, or DuckDB reported an error running it."""


class SqlTimedOut(SqlFailed):
    """The query ran past the sandbox's time limit and was interrupted."""


# --- positions in foreign errors ---------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_SQLGLOT_CLASS = re.compile(r"<class '(?:[\w]+\.)*(\w+)'>")


def _strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _from_sqlglot(error: SqlglotError, sql: str) -> SqlFailed:
    """A sqlglot parse or tokenize error as a :class:`SqlFailed` with a position."""
    details = getattr(error, "errors", None) or [{}]
    first = details[0]
    description = _SQLGLOT_CLASS.sub(r"\1", str(first.get("description") or _strip_ansi(str(error)).split("\n")[0]))
    line, end_col, highlight = first.get("line"), first.get("col"), first.get("highlight") or ""
    column = max(1, end_col - len(highlight) + 1) if isinstance(end_col, int) else None
    if line is None:
        return SqlFailed(f"Syntax error: {description}", sql=sql)
    near = f" near {highlight!r}" if highlight else ""
    return SqlFailed(
        f"Syntax error at line {line}, column {column}{near}: {description}",
        line=line,
        column=column,
        sql=sql,
    )


_LINE_MARK = re.compile(r"^(LINE (\d+): )(.*)\n( *)\^", re.MULTILINE)


def _from_duckdb(error: duckdb.Error, sql: str) -> SqlFailed:
    """A DuckDB error as :class:`SqlFailed`, with the position its ``LINE n:`` mark shows."""
    message = str(error).strip() or type(error).__name__
    line, column = _duckdb_position(message, sql)
    return SqlFailed(message, line=line, column=column, sql=sql)


def _duckdb_position(message: str, sql: str) -> tuple[int | None, int | None]:
    """Read ``LINE 3:   nme = 1`` and the caret line under it.

    DuckDB shortens long lines to ``...snippet...``; the snippet is then looked up
    in ``sql`` to turn the caret into a column of the full line.
    """
    mark = _LINE_MARK.search(message)
    if mark is None:
        return None, None
    prefix, line, snippet, pad = mark.group(1), int(mark.group(2)), mark.group(3), mark.group(4)
    offset = len(pad) - len(prefix)  # caret's 0-based offset within the snippet
    if offset < 0:
        return line, None
    if not snippet.startswith("..."):
        return line, offset + 1
    lines = sql.splitlines()
    core = snippet[3:].removesuffix("...")
    found = lines[line - 1].find(core) if 0 < line <= len(lines) and core else -1
    return line, (found + offset - 3 + 1) if found >= 0 else None
