"""The description of a PostgreSQL database: H1's schema description, read lazily through a bounded sample.

Opening the database reads the catalogue alone (:func:`outline`): every relation's columns and their types (an
enum type's labels as its values), and PostgreSQL's estimate of its rows (``pg_class.reltuples``).  No table's
rows are read.  A table is described from its data the first time something needs it
(:func:`describe_tables`: the parser's schema for a question that mentions it, the schema pane when it is
expanded, ``describe``), and the source keeps what it learned for the session.

Statistics of a table's column (its role) come from at most :data:`DESCRIBE_SAMPLE` rows of its table; the
row counts are exact (or PostgreSQL's own estimate when counting takes too long), and an enumeration's values
are read from the whole table.  Only stored rows are read: a table's or a materialized view's.

A view is described from the catalogue without running it (reading a view runs its query, which can be slow
or call anything): its columns' types, an enum type's labels, and for a column that passes a column of a
described table through unchanged (read from the view's definition as PostgreSQL writes it back, parsed by
sqlglot) that column's role and values; its rows are read only when a query reads them.  So is a foreign
table (reading one reaches another server; its row count is PostgreSQL's estimate), a relation whose reading
would run a function PostgreSQL does not define, and a column whose type has a cast through one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from engines.data.describe import ENUM_MAX_VALUES, ColumnInfo, SchemaDescription, TableInfo, describe, role_of
from engines.data.postgres.catalog import PgCatalog, PgColumn, PgTable
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
        def sample(node: exp.Expr) -> exp.Expr:
            if isinstance(node, exp.Table) and node.name in self.gate.tables_by_name and not node.args.get("db"):
                inner = exp.select("*").from_(exp.to_identifier(node.name, quoted=True)).limit(DESCRIBE_SAMPLE)
                return inner.subquery(exp.to_identifier(node.alias_or_name, quoted=True))
            return node

        sampled = expression.transform(sample, copy=True)
        if not isinstance(sampled, exp.Expression):  # only tables inside the statement are replaced
            raise TypeError(f"describing sampled a {type(sampled).__name__}, not a statement")
        return self.gate.run_tree(sampled)


_ESTIMATE_SQL = """
SELECT c.reltuples::pg_catalog.int8 FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s
"""


def _estimated_rows(gate: PostgresGate, table: str) -> int | None:
    """PostgreSQL's own estimate of a table's rows (from its statistics), or None when it has none."""
    try:
        with gate._conn.transaction() as con, con.cursor() as cur:
            row = cur.execute(_ESTIMATE_SQL, [gate.catalog.schema, table]).fetchone()
    except psycopg.Error:
        return None
    return int(row[0]) if row and row[0] is not None and row[0] >= 0 else None


def _catalogue_column(c: PgColumn) -> ColumnInfo:
    """A column described by its type alone: an enum type's labels are its values."""
    if c.labels and len(c.labels) <= ENUM_MAX_VALUES:
        return ColumnInfo(c.name, c.duck_type, "list_enum" if c.is_list else "enum", c.labels)
    return ColumnInfo(c.name, c.duck_type, role_of(c.duck_type))


def _passed_through(view: PgTable, schema: str) -> dict[str, tuple[str, str]]:
    """View column -> (table, column) of the schema it passes through unchanged, read from the view's definition
    (PostgreSQL's own text of it, every relation of another schema than pg_catalog qualified)."""
    if not view.definition:
        return {}
    try:
        tree = sqlglot.parse_one(view.definition, read="postgres")
    except (SqlglotError, RecursionError):
        return {}
    if not isinstance(tree, exp.Select) or len(tree.selects) != len(view.columns):
        return {}
    from_ = tree.args.get("from_")
    sources = [from_.this] if from_ is not None else []
    sources += [j.this for j in tree.args.get("joins") or []]
    tables = {
        s.alias_or_name: s.name
        for s in sources
        if isinstance(s, exp.Table) and isinstance(s.this, exp.Identifier) and s.db == schema and not s.catalog
    }
    out: dict[str, tuple[str, str]] = {}
    for column, projection in zip(view.columns, tree.selects):
        value = projection.unalias()
        if not isinstance(value, exp.Column) or not isinstance(value.this, exp.Identifier):
            continue
        if value.table:
            table = tables.get(value.table)
        else:
            table = next(iter(tables.values())) if len(sources) == 1 and tables else None
        if table is not None:
            out[column.name] = (table, value.name)
    return out


def _from_catalogue(t: PgTable, schema: str, described: dict[str, TableInfo], notes: list[str]) -> TableInfo:
    """A relation that is not read to describe it: a view, a foreign table, one whose reading is refused."""
    sources = _passed_through(t, schema)
    columns = []
    for c in t.columns:
        info = _catalogue_column(c)
        table, name = sources.get(c.name, ("", ""))
        base = described[table].column(name) if table in described else None
        if base is not None and base.type == c.duck_type and not c.refused:
            info = replace(base, name=c.name)
        columns.append(info)
    why = t.refused or ("reading it runs its query" if t.kind == "v" else "reading it reaches another server")
    notes.append(f"{t.what} {t.name}: described from the catalogue without reading it ({why})")
    rows = t.estimate if t.kind != "v" else None
    return TableInfo(t.name, tuple(columns), rows)


KIND = "PostgreSQL database"


def outline(catalog: PgCatalog, name: str) -> SchemaDescription:
    """Every relation from the catalogue alone, reading no row: its columns, their types and the roles the types
    give (an enum type's labels as its values), PostgreSQL's estimate of its rows (none for a view); each table
    ``described`` False until :func:`describe_tables` reads it."""
    tables = tuple(
        TableInfo(
            t.name,
            tuple(replace(_catalogue_column(c), type_from="declared") for c in t.columns),
            t.estimate if t.kind != "v" else None,
            described=False,
        )
        for t in catalog.tables.values()
    )
    return SchemaDescription(name, tables, KIND)


def describe_tables(
    gate: PostgresGate, names: Iterable[str], done: dict[str, TableInfo], notes: list[str]
) -> dict[str, TableInfo]:
    """The relations ``names`` described (those not in ``done`` yet, which is then updated): a table's or a
    materialized view's statistics from a bounded sample, its row count exact (or PostgreSQL's estimate when
    counting takes too long) and an enumeration's values from the whole table; a view, a foreign table or a
    relation whose reading is refused from the catalogue, with the roles of the table columns it passes through
    unchanged (those tables are described first).  ``notes`` gets what describing could not do."""
    catalog = gate.catalog
    wanted = [catalog.tables[n] for n in dict.fromkeys(names) if n in catalog.tables and n not in done]
    bases = [
        table
        for t in wanted
        if not t.sampled
        for table, _ in _passed_through(t, catalog.schema).values()
        if table in catalog.tables and catalog.tables[table].sampled and table not in done
    ]
    read = [t for t in dict.fromkeys([*bases, *(t.name for t in wanted if t.sampled)])]
    if read:
        sampled = describe(
            _SampledGate(gate),
            [(None, n, [(c.name, c.duck_type) for c in catalog.tables[n].columns if not c.refused]) for n in read],
            source="",
            kind=KIND,
            count_nulls=False,  # a sample's NULLs are not the table's
        )
        notes += sampled.notes
        for info in sampled.tables:
            done[info.name] = _declared(_completed(gate, info, catalog.tables[info.name], notes))
    for table in wanted:
        if not table.sampled:
            done[table.name] = _declared(_from_catalogue(table, catalog.schema, done, notes))
    return done


def _declared(table: TableInfo) -> TableInfo:
    """Every column's type is the database's own."""
    return replace(table, columns=tuple(replace(c, type_from="declared") for c in table.columns))


def _describe(gate: PostgresGate, name: str) -> SchemaDescription:
    """Every relation described (:func:`describe_tables` over them all)."""
    notes: list[str] = []
    done = describe_tables(gate, gate.catalog.tables, {}, notes)
    return SchemaDescription(name, tuple(done[t] for t in gate.catalog.tables), KIND, tuple(notes))


MENTIONED_TABLES = 5
"""A question has at most this many tables described for it (those it names first, then those whose columns it
names most)."""
QUESTION_CHARS = 2000
"""Of a question, the first this many characters are read to find the tables it mentions."""


def _words(text: str) -> list[str]:
    """A name or a question as lower-case words: ``depDelay``, ``dep_delay`` and "dep delay" are dep, delay."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text[:QUESTION_CHARS])
    return re.findall(r"[^\W_]+", spaced.lower())


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def mentioned(question: str, description: SchemaDescription) -> list[str]:
    """The relations of ``description`` that ``question`` mentions, at most :data:`MENTIONED_TABLES`: every one
    of a database of one relation; else those whose name's words all occur in it (a plural for a singular too),
    then those with the most columns whose names' words all occur in it."""
    if len(description.tables) == 1:
        return [description.tables[0].name]
    said = {_singular(w) for w in _words(question)}

    def named(name: str) -> bool:
        words = [_singular(w) for w in _words(name)]
        return bool(words) and all(w in said for w in words)

    scored = []
    for i, t in enumerate(description.tables):
        columns = sum(1 for c in t.columns if named(c.name))
        if named(t.name) or columns:
            scored.append((not named(t.name), -columns, i, t.name))
    return [name for *_, name in sorted(scored)[:MENTIONED_TABLES]]


def _completed(gate: PostgresGate, t: TableInfo, table: PgTable, notes: list[str]) -> TableInfo:
    """A sampled table's description with its exact row count, an enumeration's values from the whole table,
    and the columns left out of the sample (their type has a cast PostgreSQL does not define) by their type."""
    ref = exp.to_identifier(t.name, quoted=True)
    rows: int | None
    try:
        rows = int(gate.run_tree(exp.select(exp.Count(this=exp.Star())).from_(ref)).rows[0][0])
    except EngineError as e:
        rows = _estimated_rows(gate, t.name)
        notes.append(f"counting {t.name}: {e}" + (f"; PostgreSQL estimates {rows:,} rows" if rows is not None else ""))
    columns = []
    for c in t.columns:
        if c.role in ("enum", "list_enum") and rows is not None and rows > DESCRIBE_SAMPLE:
            col = exp.column(exp.to_identifier(c.name, quoted=True))
            source: exp.Expr = ref.copy()
            value: exp.Expr = col
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
    by_name = {c.name: c for c in columns}
    ordered = tuple(by_name.get(c.name) or _catalogue_column(c) for c in table.columns)
    return replace(t, rows=rows, columns=ordered)
