"""Candidate rows for SUQL: per table, the rows that pass the pushed filter, streamed into a local sandbox.

For each base table a SUQL query reads, :mod:`engines.data.postgres_pushdown` computes the filter every row
the query can use must pass and the columns it reads; that SELECT (built, checked, parametrised) streams
its rows from PostgreSQL into a fresh DuckDB database, batch by batch, up to a cap.  A filter PostgreSQL
cannot evaluate falls back to every row (the local engine still applies the whole WHERE).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb
from sqlglot import exp

from engines.data.postgres.catalog import PgColumn, PgTable, _duck_type
from engines.data.postgres_pushdown import TableFilter
from engines.errors import Cancelled
from engines.events import Event
from engines.sql.sandbox import Limits, Sandbox, SqlFailed, SqlTimedOut, columns_insert, validate

if TYPE_CHECKING:
    from engines.data.postgres.gate import PostgresGate


@dataclass(frozen=True)
class CandidatesLoaded(Event):
    """The candidate rows of one table came back from PostgreSQL: the SELECT sent, its parameters, how many."""

    table: str
    sql: str
    parameters: tuple[Any, ...]
    rows: int
    elapsed_s: float
    note: str = ""  # why the filter was not pushed, when it was not


class TooManyCandidates(SqlFailed):
    """More rows pass the pushed filter than a SUQL query may load (``postgres_candidate_rows``)."""


def load_candidates(gate: PostgresGate, filters: dict[str, TableFilter], *, cap: int,
                    cancel: threading.Event | None, limits: Limits,
                    row_cap: int) -> tuple[Sandbox, list[CandidatesLoaded]]:  # fmt: skip
    """A fresh local sandbox holding, per table, only the rows and columns ``filters`` ask for."""
    loads: list[CandidatesLoaded] = []

    def loader(con: duckdb.DuckDBPyConnection) -> None:
        for name, f in filters.items():
            loads.append(load_table(gate, con, gate.tables_by_name[name], f, cap=cap, cancel=cancel))

    sandbox = Sandbox.create(loader, row_cap=row_cap, timeout_s=gate.timeout_s, limits=limits)
    return sandbox, loads


def candidate_sql(
    gate: PostgresGate,
    table: PgTable,
    wanted: Sequence[PgColumn],
    predicate: exp.Expr | None,
    pk: str | None,
    cap: int,
) -> tuple[str, list[Any]]:
    select = exp.select(
        *[
            exp.alias_(
                exp.cast(exp.column(exp.to_identifier(c.name, quoted=True)), "TEXT[]" if c.is_list else "TEXT"),
                exp.to_identifier(c.name, quoted=True),
            )
            if c.as_text
            else exp.column(exp.to_identifier(c.name, quoted=True))
            for c in wanted
        ]
    ).from_(
        exp.table_(exp.to_identifier(table.name, quoted=True), db=exp.to_identifier(gate.catalog.schema, quoted=True))
    )
    if predicate is not None:
        select = select.where(predicate.copy())
    if pk is not None:  # a fixed order: the rows arrive (and are numbered) as the table's own ids
        select = select.order_by(exp.column(exp.to_identifier(pk, quoted=True)))
    select = select.limit(cap + 1)
    validate(select)
    return gate.sent(select)


def load_table(gate: PostgresGate, con: duckdb.DuckDBPyConnection, table: PgTable, f: TableFilter, *, cap: int,
               cancel: threading.Event | None) -> CandidatesLoaded:  # fmt: skip
    wanted = [c for c in table.columns if f.columns is None or c.name in f.columns]
    pk = table.primary_key if table.primary_key in {c.name for c in wanted} else None
    target = exp.to_identifier(table.name, quoted=True)
    ddl = exp.Create(
        this=exp.Schema(
            this=target.copy(),
            expressions=[
                exp.ColumnDef(
                    this=exp.to_identifier(c.name, quoted=True),
                    kind=_duck_type(c.duck_type),
                    constraints=[exp.ColumnConstraint(kind=exp.PrimaryKeyColumnConstraint())] if c.name == pk else [],
                )
                for c in wanted
            ],
        ),
        kind="TABLE",
    )
    con.execute(ddl.sql(dialect="duckdb", identify=True))
    insert = columns_insert(exp.table_(target.copy()), [_duck_type(c.duck_type) for c in wanted]).sql(
        dialect="duckdb", identify=True
    )
    count = 0
    sql = ""

    def each(batch: list[tuple[Any, ...]]) -> None:
        nonlocal count
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        count += len(batch)
        if count > cap:
            raise TooManyCandidates(
                f"More than {cap:,} rows of {table.name!r} pass the query's structured conditions: narrow them "
                "(or raise CS224V_POSTGRES_CANDIDATE_ROWS).",
                sql=sql,
            )
        try:
            con.execute(insert, [[row[i] for row in batch] for i in range(len(wanted))])
        except duckdb.Error as e:
            raise SqlFailed(f"A value of {table.name!r} could not be copied into DuckDB: {e}", sql=sql) from e

    started = time.perf_counter()
    sql, values = candidate_sql(gate, table, wanted, f.predicate, pk, cap)
    note = ""
    try:
        gate.fetch(sql, values, cap + 1, each=each, cancel=cancel)
    except (SqlTimedOut, TooManyCandidates):
        raise
    except SqlFailed as e:
        if f.predicate is None:
            raise
        # PostgreSQL could not evaluate the pushed condition (it reads a type differently): every
        # row instead; the local engine still applies the whole WHERE
        note = f"the structured filter did not run on PostgreSQL ({e}); every row was loaded"
        con.execute(exp.delete(target.copy()).sql(dialect="duckdb", identify=True))
        count = 0
        sql, values = candidate_sql(gate, table, wanted, None, pk, cap)
        gate.fetch(sql, values, cap + 1, each=each, cancel=cancel)
    return CandidatesLoaded(table.name, sql, tuple(values), count, time.perf_counter() - started, note)
