"""The catalog of a PostgreSQL database: its tables and columns, and the DuckDB type each column becomes.

The fixed catalog queries read the current schema's tables this user may ``SELECT``, their columns with
their types (an enum with its labels, an array with its element type) and single-column primary keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from engines.data.postgres.connection import _Connection

_SCALARS: dict[str, str] = {
    "int2": "SMALLINT",
    "int4": "INTEGER",
    "int8": "BIGINT",
    "float4": "REAL",
    "float8": "DOUBLE",
    "bool": "BOOLEAN",
    "text": "VARCHAR",
    "varchar": "VARCHAR",
    "bpchar": "VARCHAR",
    "name": "VARCHAR",
    "citext": "VARCHAR",
    "date": "DATE",
    "timestamp": "TIMESTAMP",
    "timestamptz": "TIMESTAMP WITH TIME ZONE",
    "time": "TIME",
    "interval": "INTERVAL",
    "uuid": "UUID",
    "bytea": "BLOB",
}


# Types whose comparisons read the same in PostgreSQL and DuckDB (see engines.data.postgres_pushdown.KINDS);
# char(n) (blank-padded comparison), citext (case-blind), timestamptz (the session's time zone) ... are not.
_PLAIN = frozenset({"int2", "int4", "int8", "float4", "float8", "numeric", "bool", "date", "timestamp"})
_TEXT = frozenset({"text", "varchar", "name"})


@dataclass(frozen=True)
class PgColumn:
    name: str
    duck_type: str  # the DuckDB type it becomes (VARCHAR, DECIMAL(2,1), VARCHAR[], ENUM('a', 'b') ...)
    as_text: bool = False  # fetched as text (a type DuckDB has no twin for: json, inet, ranges ...)
    is_list: bool = False
    kind: str = "other"  # how a condition on it may be pushed down (engines.data.postgres_pushdown.KINDS)


@dataclass(frozen=True)
class PgTable:
    name: str
    columns: tuple[PgColumn, ...]
    primary_key: str | None = None

    def column(self, name: str) -> PgColumn | None:
        return next((c for c in self.columns if c.name == name), None)


def _numeric(typmod: int) -> str:
    if typmod is None or typmod < 4:
        return "DOUBLE"  # numeric without a precision: any size
    precision, scale = ((typmod - 4) >> 16) & 0xFFFF, (typmod - 4) & 0xFFFF
    return f"DECIMAL({precision},{scale})" if 0 < precision <= 38 and scale <= precision else "DOUBLE"


def _enum_type(labels: Sequence[str]) -> str:
    return exp.DataType(this=exp.DataType.Type.ENUM, expressions=[exp.Literal.string(v) for v in labels]).sql(
        dialect="duckdb"
    )


def _column(name: str, typname: str, typtype: str, elem: str | None, elem_typtype: str | None, typmod: int,
            labels: tuple[str, ...]) -> PgColumn:  # fmt: skip
    """``labels``: an enum type's labels in their order (empty for other types)."""
    if elem is not None:  # an array
        if elem in _SCALARS or elem == "numeric":
            base = _numeric(typmod) if elem == "numeric" else _SCALARS[elem]
            exact = elem != "numeric" or base != "DOUBLE"  # numeric[] without a precision: DOUBLE[] here
            kind = "list" if (elem in _PLAIN or elem in _TEXT) and exact else "other"
            return PgColumn(name, f"{base}[]", is_list=True, kind=kind)
        kind = "enum_list" if elem_typtype == "e" else "other"
        return PgColumn(name, "VARCHAR[]", as_text=True, is_list=True, kind=kind)  # enum[] and others: as text[]
    if typname == "numeric":  # without a precision it becomes DOUBLE here: compared as DOUBLE there too
        duck = _numeric(typmod)
        return PgColumn(name, duck, kind="double" if duck == "DOUBLE" else "plain")
    if typname in _SCALARS:
        kind = "plain" if typname in _PLAIN else "text" if typname in _TEXT else "other"
        return PgColumn(name, _SCALARS[typname], kind=kind)
    if typtype == "e" and labels:
        return PgColumn(name, _enum_type(labels), kind="enum")
    return PgColumn(name, "VARCHAR", as_text=True)


_CATALOG_SQL = """
SELECT c.relname, a.attname, t.typname, t.typtype, et.typname, et.typtype, a.atttypmod, t.oid
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_catalog.pg_type et ON et.oid = t.typelem AND t.typcategory = 'A'
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND has_table_privilege(c.oid, 'SELECT')
ORDER BY c.relname, a.attnum
"""
_ENUM_SQL = """
SELECT e.enumtypid, e.enumlabel FROM pg_catalog.pg_enum e ORDER BY e.enumtypid, e.enumsortorder
"""
_PK_SQL = """
SELECT c.relname, a.attname
FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_class c ON c.oid = i.indrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
WHERE i.indisprimary AND i.indnatts = 1 AND n.nspname = current_schema()
"""
# Fixed catalog queries (no input in them): run as they are.


def _catalog(conn: _Connection) -> dict[str, PgTable]:
    with conn.transaction() as con, con.cursor() as cur:
        enums: dict[int, list[str]] = {}
        for oid, label in cur.execute(_ENUM_SQL).fetchall():
            enums.setdefault(oid, []).append(label)
        pks = dict(cur.execute(_PK_SQL).fetchall())
        columns: dict[str, list[PgColumn]] = {}
        for rel, att, typname, typtype, elem, elem_typtype, typmod, oid in cur.execute(_CATALOG_SQL).fetchall():
            labels = tuple(enums.get(oid, ()))
            columns.setdefault(rel, []).append(_column(att, typname, typtype, elem, elem_typtype, typmod, labels))
    return {name: PgTable(name, tuple(cols), pks.get(name)) for name, cols in columns.items()}


def _duck_type(text: str) -> exp.DataType:
    return exp.DataType.build(text, dialect="duckdb")


_DISPLAY: dict[str, str] = {
    "smallint": "SMALLINT",
    "integer": "INTEGER",
    "bigint": "BIGINT",
    "real": "REAL",
    "double precision": "DOUBLE",
    "boolean": "BOOLEAN",
    "text": "VARCHAR",
    "date": "DATE",
    "interval": "INTERVAL",
    "uuid": "UUID",
    "bytea": "BLOB",
}


def _display_to_duck(display: str) -> str:
    d = display.lower()
    suffix = "[]" if d.endswith("[]") else ""
    d = d.removesuffix("[]")
    if d.startswith("numeric"):
        return ("DECIMAL" + d[len("numeric") :].upper() if "(" in d else "DOUBLE") + suffix
    if d.startswith(("character varying", "character", "varchar")):
        return "VARCHAR" + suffix
    if d.startswith("timestamp"):
        return ("TIMESTAMP WITH TIME ZONE" if "with time zone" in d else "TIMESTAMP") + suffix
    if d.startswith("time"):
        return "TIME" + suffix
    return _DISPLAY.get(d, "VARCHAR") + suffix
