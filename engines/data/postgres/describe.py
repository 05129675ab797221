"""The description of a PostgreSQL database: H1's schema description, read through a bounded sample.

Statistics of a column (its role) come from at most :data:`DESCRIBE_SAMPLE` rows of its table; the row
counts are exact (or PostgreSQL's own estimate when counting takes too long), and an enumeration's values
are read from the whole table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from engines.data.describe import SchemaDescription, TableInfo, describe
from engines.data.postgres.connection import psycopg
from engines.errors import EngineError
from engines.sql.sandbox import QueryResult

if TYPE_CHECKING:
    from engines.data.postgres.gate import PostgresGate

DESCRIBE_SAMPLE = 100_000
"""Statistics of a column (its role) are read from at most this many rows of its table."""


class _SampledGate:
    """The gate for describing columns: each table read as (at most) its first DESCRIBE_SAMPLE rows, so
    describing a huge table costs a bounded scan."""

    def __init__(self, gate: PostgresGate) -> None:
        self.gate = gate

    def run_tree(self, expression: exp.Expression) -> QueryResult:
        def sample(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Table) and node.name in self.gate.tables_by_name and not node.args.get("db"):
                inner = (
                    exp.select("*")
                    .from_(exp.to_table(exp.to_identifier(node.name, quoted=True)))
                    .limit(DESCRIBE_SAMPLE)
                )
                return inner.subquery(exp.to_identifier(node.alias_or_name, quoted=True))
            return node

        return self.gate.run_tree(expression.transform(sample, copy=True))


_ESTIMATE_SQL = "SELECT c.reltuples::bigint FROM pg_catalog.pg_class c WHERE c.oid = to_regclass(%s)"


def _estimated_rows(gate: PostgresGate, table: str) -> int | None:
    """PostgreSQL's own estimate of a table's rows (from its statistics), or None when it has none."""
    try:
        with gate._conn.transaction() as con, con.cursor() as cur:
            row = cur.execute(_ESTIMATE_SQL, [exp.to_identifier(table, quoted=True).sql(dialect="postgres")]).fetchone()
    except psycopg.Error:
        return None
    return int(row[0]) if row and row[0] is not None and row[0] >= 0 else None


def _describe(gate: PostgresGate, name: str) -> SchemaDescription:
    """H1's description, its statistics from a bounded sample; the row counts exact (or PostgreSQL's
    estimate when counting takes too long) and an enumeration's values from the whole table."""
    sampled = describe(_SampledGate(gate), gate.tables(), source=name, kind="PostgreSQL database")
    tables: list[TableInfo] = []
    notes = list(sampled.notes)
    from dataclasses import replace

    for t in sampled.tables:
        ref = exp.to_table(exp.to_identifier(t.name, quoted=True))
        try:
            rows = int(gate.run_tree(exp.select(exp.Count(this=exp.Star())).from_(ref)).rows[0][0])
        except EngineError as e:
            rows = _estimated_rows(gate, t.name)
            notes.append(
                f"counting {t.name}: {e}" + (f"; PostgreSQL estimates {rows:,} rows" if rows is not None else "")
            )
        columns = []
        for c in t.columns:
            if c.role in ("enum", "list_enum") and rows is not None and rows > DESCRIBE_SAMPLE:
                col = exp.column(exp.to_identifier(c.name, quoted=True))
                source: exp.Expression = ref.copy()
                value: exp.Expression = col
                if c.role == "list_enum":
                    element = exp.to_identifier("element", quoted=True)
                    source = exp.select(exp.Unnest(expressions=[col]).as_(element)).from_(ref.copy()).subquery("e")
                    value = exp.column(element)
                q = (
                    exp.select(value.copy()).distinct().from_(source)
                    .where(exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null())))
                    .order_by(exp.Ordered(this=value.copy())).limit(60)
                )  # fmt: skip
                try:
                    values = tuple(str(r[0]) for r in gate.run_tree(q).rows)
                    c = (
                        replace(c, values=values)
                        if len(values) <= 50
                        else replace(c, role="text" if c.role == "enum" else "list")
                    )
                except EngineError as e:
                    notes.append(f"{t.name}.{c.name}: {e}")
            columns.append(c)
        tables.append(replace(t, rows=rows, columns=tuple(columns)))
    return SchemaDescription(sampled.source, tuple(tables), sampled.kind, tuple(notes))
