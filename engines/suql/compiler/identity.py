"""What a row is called: whether a table has a rowid, its own id column, a readable label.

One small class a sandbox (kept by the engine, so a world's tables are described once).
"""

from __future__ import annotations

from sqlglot import exp

from engines.errors import EngineError
from engines.sql.sandbox import Sandbox
from engines.suql.compiler.sqlparts import bare_table, join_parts


class RowNames:
    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._rowid: dict[str, bool] = {}
        self._id_columns: dict[tuple[str, str, str], str | None] = {}
        self._columns: dict[tuple[str, str, str], tuple[str, ...] | None] = {}

    def _column_names(self, table: exp.Table) -> tuple[str, ...] | None:
        """The table's column names (None: it cannot be described, e.g. a CTE's name), described once per
        world table; a scratch table (per query) each time."""
        cache_key = (table.catalog or "", table.db or "", table.name)
        if cache_key in self._columns:
            return self._columns[cache_key]
        try:
            found: tuple[str, ...] | None = tuple(
                c for c, _ in self.sandbox.columns_of(exp.select("*").from_(bare_table(table)))
            )
        except EngineError:
            found = None
        if table.db != "scratch":
            self._columns[cache_key] = found
        return found

    def has_rowid(self, table: exp.Table) -> bool:
        """Base tables have a rowid; views do not (they are materialised first)."""
        name = table.sql(dialect="duckdb").split(" AS ")[0]
        cached = self._rowid.get(name)
        if cached is None:
            try:
                self.sandbox.columns_of(exp.select("rowid").from_(exp.table_(table.name, db=table.db or None)))
                cached = True
            except EngineError:
                cached = False
            self._rowid[name] = cached
        return cached

    def id_column(self, table: exp.Table) -> str | None:
        """The table's own row id: an ``_id`` column, else a one-column PRIMARY KEY; None if it has neither."""
        cache_key = (table.catalog or "", table.db or "", table.name)
        if cache_key in self._id_columns:
            return self._id_columns[cache_key]
        found = None
        names = self._column_names(table) or ()
        if "_id" in names:
            found = "_id"
        elif table.db != "scratch":
            try:
                pks = self.sandbox.run(
                    "SELECT schema_name, table_name, constraint_column_names FROM duckdb_constraints() "
                    "WHERE constraint_type = 'PRIMARY KEY'"
                ).rows
            except EngineError:
                pks = ()
            for schema, name, cols in pks:
                if name == table.name and (not table.db or schema == table.db) and len(cols) == 1 and cols[0] in names:
                    found = cols[0]
                    break
        if table.db != "scratch":  # scratch tables are per query
            self._id_columns[cache_key] = found
        return found

    def display_id(self, select: exp.Select) -> exp.Expr:
        """What a row is called in events and rows to verify: each source's own id (``_id`` / primary key),
        else its rowid (0-based, as the HybridQA tab numbers rows); a join's ids joined with '|'."""
        parts = []
        for src in [select.args.get("from_")] + list(select.args.get("joins") or []):
            if src is None or not isinstance(src.this, exp.Table):
                continue
            table = src.this
            column = self.id_column(table)
            parts.append(exp.column(column or "rowid", table=table.alias_or_name, quoted=column is not None))
        if len(parts) == 1:
            return parts[0]
        return join_parts(parts, "-")

    def label_column(self, select: exp.Select) -> exp.Expr | None:
        """A readable column of the FROM table (name, title, an id) to label rows in events."""
        from_ = select.args.get("from_")
        if from_ is None or not isinstance(from_.this, exp.Table):
            return None
        table = from_.this
        names = self._column_names(table)
        if names is None:
            return None
        for candidate in ("name", "Name", "title", "Title", "course_id", "id"):
            if candidate in names:
                return exp.column(candidate, table=table.alias_or_name)
        return None
