"""The catalog of a PostgreSQL database: its tables and columns, the DuckDB type each column becomes, and
what PostgreSQL itself would run when one of them is read.

The fixed catalog queries (every name in them qualified with ``pg_catalog``, run on a session whose
``search_path`` is ``pg_catalog``) read the schema's tables, views, materialized views and foreign tables
this user may ``SELECT``, their columns with their types (an enum with its labels, an array with its element
type) and single-column primary keys.  They also read, by OID, which functions are PostgreSQL's own: those in
``pg_catalog`` with an OID below :data:`BUILTIN_OID_LIMIT`.  Anything else (a function the database or an
extension defines) could write (through ``dblink``, on a connection the read-only transaction does not cover)
or run anything, so the gate refuses:

* a call of any function that is not PostgreSQL's own (:attr:`PgCatalog.functions`);
* reading a relation whose reading or planning runs one: a view's definition, a row-level security policy,
  an index's expression or predicate (the planner folds constant calls in them), a constraint or extended
  statistics, through views, policies and inheritance children (:attr:`PgTable.refused`);
* any expression over a column whose type has a cast through one, which PostgreSQL picks by the types alone,
  whatever the search_path (:attr:`PgColumn.refused`), and naming a type that has one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from engines.data.postgres.connection import _Connection

BUILTIN_OID_LIMIT = 16384
"""PostgreSQL's FirstNormalObjectId: initdb gives PostgreSQL's own objects OIDs below it, and everything a user
or an extension creates gets one at or above it."""

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
    labels: tuple[str, ...] = ()  # an enum type's (or an enum array's element type's) labels, in their order
    refused: str = ""  # why no expression may read it: its type has a cast through a function not PostgreSQL's


RELATION_KINDS = {"r": "table", "p": "table", "v": "view", "m": "materialized view", "f": "foreign table"}


@dataclass(frozen=True)
class PgTable:
    name: str
    columns: tuple[PgColumn, ...]
    primary_key: str | None = None
    kind: str = "r"  # pg_class.relkind: r, p (partitioned), v (view), m (materialized view), f (foreign)
    refused: str = ""  # why it may not be read: reading (or planning) it runs a function not PostgreSQL's own
    definition: str | None = None  # a view's definition as PostgreSQL writes it back (pg_get_viewdef)
    estimate: int | None = None  # PostgreSQL's estimate of its rows (pg_class.reltuples), None when it has none

    def column(self, name: str) -> PgColumn | None:
        return next((c for c in self.columns if c.name == name), None)

    @property
    def what(self) -> str:
        return RELATION_KINDS.get(self.kind, "table")

    @property
    def sampled(self) -> bool:
        """Whether describing it reads its rows: a table's or a materialized view's stored rows, never a view
        (reading one runs its query) or a foreign table (reading one reaches another server)."""
        return self.kind in ("r", "p", "m") and not self.refused


@dataclass(frozen=True)
class PgCatalog:
    """What the gate knows of the database: the schema's relations, and which functions and types are safe."""

    schema: str
    tables: dict[str, PgTable]
    functions: frozenset[str] = frozenset()  # names every function of which in pg_catalog is PostgreSQL's own
    shadowed: frozenset[str] = frozenset()  # names pg_catalog also holds a function of that is not its own
    elsewhere: dict[str, str] = field(default_factory=dict)  # other functions' names -> one's signature
    types: dict[str, str] = field(default_factory=dict)  # the schema's type names -> why refused ("" if not)


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
    """``labels``: an enum type's (or an array's enum element type's) labels in their order (else empty)."""
    if elem is not None:  # an array
        if elem in _SCALARS or elem == "numeric":
            base = _numeric(typmod) if elem == "numeric" else _SCALARS[elem]
            exact = elem != "numeric" or base != "DOUBLE"  # numeric[] without a precision: DOUBLE[] here
            kind = "list" if (elem in _PLAIN or elem in _TEXT) and exact else "other"
            return PgColumn(name, f"{base}[]", is_list=True, kind=kind)
        if elem_typtype == "e":
            return PgColumn(name, "VARCHAR[]", as_text=True, is_list=True, kind="enum_list", labels=labels)
        return PgColumn(name, "VARCHAR[]", as_text=True, is_list=True)  # enum[] and others: as text[]
    if typname == "numeric":  # without a precision it becomes DOUBLE here: compared as DOUBLE there too
        duck = _numeric(typmod)
        return PgColumn(name, duck, kind="double" if duck == "DOUBLE" else "plain")
    if typname in _SCALARS:
        kind = "plain" if typname in _PLAIN else "text" if typname in _TEXT else "other"
        return PgColumn(name, _SCALARS[typname], kind=kind)
    if typtype == "e" and labels:
        return PgColumn(name, _enum_type(labels), kind="enum", labels=labels)
    return PgColumn(name, "VARCHAR", as_text=True)


_CATALOG_SQL = """
SELECT c.relname, a.attname, t.typname, t.typtype, et.typname, et.typtype, a.atttypmod, t.oid, c.relkind,
       et.oid, t.typbasetype, bt.typelem, c.reltuples::pg_catalog.int8, c.reltype
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_catalog.pg_type et ON et.oid = t.typelem AND t.typcategory = 'A'
LEFT JOIN pg_catalog.pg_type bt ON bt.oid = t.typbasetype
WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
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
WHERE i.indisprimary AND i.indnatts = 1 AND n.nspname = %s
"""
# A function is PostgreSQL's own when it is in pg_catalog with an OID initdb gave it.
_OWN = f"(pn.nspname = 'pg_catalog' AND p.oid < {BUILTIN_OID_LIMIT}::pg_catalog.oid)"
# PostgreSQL's own functions (fewer than BUILTIN_OID_LIMIT), and every other one pg_catalog holds.
_FUNCTIONS_SQL = f"""
SELECT p.proname, {_OWN}
FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
WHERE pn.nspname = 'pg_catalog'
"""
NAMED_FUNCTIONS = 10_000
"""At most this many of the database's own functions are listed by name (to say where a refused one lives)."""
_ELSEWHERE_SQL = f"""
SELECT DISTINCT ON (p.proname) p.proname, p.oid::pg_catalog.regprocedure::pg_catalog.text
FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
WHERE NOT {_OWN} AND pn.nspname <> 'pg_catalog'
ORDER BY p.proname, pn.nspname
LIMIT {NAMED_FUNCTIONS}
"""
# Casts PostgreSQL picks by the types alone (explicit or implicit) that call a function not its own.
_CASTS_SQL = f"""
SELECT c.castsource, c.casttarget, p.oid::pg_catalog.regprocedure::pg_catalog.text
FROM pg_catalog.pg_cast c
JOIN pg_catalog.pg_proc p ON p.oid = c.castfunc
JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
WHERE NOT {_OWN}
"""
# The schema's types a query may name without their schema (one named like a type of pg_catalog means that one,
# as it would with pg_catalog first on the search_path).
_TYPES_SQL = """
SELECT t.typname, t.oid, t.typelem, t.typbasetype, bt.typelem
FROM pg_catalog.pg_type t
JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
LEFT JOIN pg_catalog.pg_type bt ON bt.oid = t.typbasetype
WHERE n.nspname = %s AND NOT EXISTS (
    SELECT FROM pg_catalog.pg_type c JOIN pg_catalog.pg_namespace cn ON cn.oid = c.typnamespace
    WHERE cn.nspname = 'pg_catalog' AND c.typname = t.typname
)
"""
# Domains whose constraints call a function not PostgreSQL's own (a cast to the domain runs it), and the
# composite types with a field of such a domain.
_DOMAINS_SQL = f"""
WITH bad(typ, function) AS (
    SELECT DISTINCT ON (k.contypid) k.contypid, p.oid::pg_catalog.regprocedure::pg_catalog.text
    FROM pg_catalog.pg_constraint k
    JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND d.objid = k.oid
     AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
    JOIN pg_catalog.pg_proc p ON p.oid = d.refobjid
    JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
    WHERE k.contypid <> 0 AND NOT {_OWN}
    ORDER BY k.contypid, 2
)
SELECT b.typ, 'its domain constraint calls ' || b.function FROM bad b
UNION ALL
SELECT c.reltype, 'a field of it has a domain constraint calling ' || b.function
FROM bad b JOIN pg_catalog.pg_attribute a ON a.atttypid = b.typ
JOIN pg_catalog.pg_class c ON c.oid = a.attrelid AND c.reltype <> 0
"""
# What reading a relation of the schema makes PostgreSQL run or plan, found by OID through pg_depend: the
# rules of views (their queries), row-level security policies, indexes (expressions and predicates, which
# the planner folds), constraints and extended statistics, of the relation and of every relation those read
# and of inheritance children.  One function not PostgreSQL's own per relation, with the object calling it.
_RUNS_SQL = f"""
WITH RECURSIVE code(rel, objclass, obj) AS (
    SELECT w.ev_class, 'pg_catalog.pg_rewrite'::pg_catalog.regclass, w.oid FROM pg_catalog.pg_rewrite w
    JOIN pg_catalog.pg_class v ON v.oid = w.ev_class AND v.relkind = 'v' AND w.ev_type = '1'  -- views' SELECT
    UNION ALL
    SELECT y.polrelid, 'pg_catalog.pg_policy'::pg_catalog.regclass, y.oid FROM pg_catalog.pg_policy y
    UNION ALL
    SELECT i.indrelid, 'pg_catalog.pg_class'::pg_catalog.regclass, i.indexrelid FROM pg_catalog.pg_index i
    UNION ALL
    SELECT k.conrelid, 'pg_catalog.pg_constraint'::pg_catalog.regclass, k.oid FROM pg_catalog.pg_constraint k
    WHERE k.conrelid <> 0
    UNION ALL
    SELECT x.stxrelid, 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass, x.oid
    FROM pg_catalog.pg_statistic_ext x
), reads(root, rel) AS (
    SELECT c.oid, c.oid FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
    UNION
    SELECT r.root, n.rel FROM reads r, LATERAL (
        SELECT d.refobjid FROM code k
        JOIN pg_catalog.pg_depend d ON d.classid = k.objclass AND d.objid = k.obj
         AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
        WHERE k.rel = r.rel AND d.refobjid <> r.rel
        UNION ALL
        SELECT h.inhrelid FROM pg_catalog.pg_inherits h WHERE h.inhparent = r.rel
    ) AS n(rel)
)
SELECT DISTINCT ON (root.relname) root.relname, pg_catalog.pg_describe_object(k.objclass, k.obj, 0),
       p.oid::pg_catalog.regprocedure::pg_catalog.text
FROM reads r
JOIN pg_catalog.pg_class root ON root.oid = r.root
JOIN code k ON k.rel = r.rel
JOIN pg_catalog.pg_depend d ON d.classid = k.objclass AND d.objid = k.obj
LEFT JOIN pg_catalog.pg_operator o
  ON d.refclassid = 'pg_catalog.pg_operator'::pg_catalog.regclass AND o.oid = d.refobjid
JOIN pg_catalog.pg_proc p
  ON (d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND p.oid = d.refobjid) OR p.oid = o.oprcode
JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
WHERE NOT {_OWN}
ORDER BY root.relname, 2, 3
"""
VIEW_DEFINITION_CHARS = 20_000
"""A view's definition longer than this is not read (its columns are then described by their types alone) ..."""
VIEW_DEFINITIONS = 500
"""... nor are those of views past the first this many (by name)."""
_VIEWS_SQL = """
SELECT v.relname, v.definition FROM (
    SELECT c.relname, pg_catalog.pg_get_viewdef(c.oid) AS definition
    FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = %s AND c.relkind = 'v' AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
) v WHERE pg_catalog.length(v.definition) <= %s
ORDER BY v.relname LIMIT %s
"""
# Fixed catalog queries: the schema's name and the bound are their only parameters.


def _refusals(casts: Sequence[tuple[int, int, str]]) -> dict[int, str]:
    """Type OID -> why an expression over it is refused: a cast to or from it calls a function that is not
    PostgreSQL's own.  The database's own types carry the blame (only their owner, or a superuser, can add a
    cast); both types of a cast between two of PostgreSQL's (a superuser's doing)."""
    out: dict[int, str] = {}
    for source, target, function in casts:
        mine = [t for t in (source, target) if t >= BUILTIN_OID_LIMIT] or [source, target]
        for t in mine:
            out.setdefault(t, f"its type has a cast through {function}")
    return out


def _refused(refusals: dict[int, str], *oids: int | None) -> str:
    return next((refusals[o] for o in oids if o is not None and o in refusals), "")


def _catalog(conn: _Connection) -> PgCatalog:
    schema = conn.schema or ""
    with conn.transaction() as con, con.cursor() as cur:
        enums: dict[int, list[str]] = {}
        for oid, label in cur.execute(_ENUM_SQL).fetchall():
            enums.setdefault(oid, []).append(label)
        pks = dict(cur.execute(_PK_SQL, [schema]).fetchall())
        refusals = _refusals(cur.execute(_CASTS_SQL).fetchall())
        own: set[str] = set()
        shadowed: set[str] = set()  # names with a function in pg_catalog that is not PostgreSQL's own
        for name, is_own in cur.execute(_FUNCTIONS_SQL).fetchall():
            (own if is_own else shadowed).add(name)
        elsewhere: dict[str, str] = dict(cur.execute(_ELSEWHERE_SQL).fetchall())
        domains = dict(cur.execute(_DOMAINS_SQL).fetchall())
        types = {
            name: _refused(refusals, oid, elem, base, base_elem) or _refused(domains, oid, elem)
            for name, oid, elem, base, base_elem in cur.execute(_TYPES_SQL, [schema]).fetchall()
        }
        runs = {
            rel: f"reading it runs {function} ({what})"
            for rel, what, function in cur.execute(_RUNS_SQL, [schema]).fetchall()
        }
        views = dict(cur.execute(_VIEWS_SQL, [schema, VIEW_DEFINITION_CHARS, VIEW_DEFINITIONS]).fetchall())
        columns: dict[str, list[PgColumn]] = {}
        kinds: dict[str, str] = {}
        estimates: dict[str, int | None] = {}
        for row in cur.execute(_CATALOG_SQL, [schema]).fetchall():
            (
                rel,
                att,
                typname,
                typtype,
                elem,
                elem_typtype,
                typmod,
                oid,
                relkind,
                elem_oid,
                base,
                base_elem,
                n,
                row_type,
            ) = row
            labels = tuple(enums.get(elem_oid if elem is not None else oid, ()))
            column = _column(att, typname, typtype, elem, elem_typtype, typmod, labels)
            if why := _refused(refusals, oid, elem_oid, base, base_elem):
                column = PgColumn(column.name, column.duck_type, column.as_text, column.is_list, "other",
                                  column.labels, why)  # fmt: skip
            columns.setdefault(rel, []).append(column)
            kinds[rel] = relkind
            if rel not in runs and (whole := refusals.get(row_type)):  # CAST(t AS text): a whole row's cast
                runs[rel] = whole.replace("its type", "its row type")
            estimates[rel] = int(n) if n is not None and n >= 0 else None
    tables = {
        name: PgTable(
            name, tuple(cols), pks.get(name), kinds[name], runs.get(name, ""), views.get(name), estimates[name]
        )
        for name, cols in columns.items()
    }
    return PgCatalog(schema, tables, frozenset(own - shadowed), frozenset(shadowed), elsewhere, types)


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


_INTERNAL_NAMES = {
    "int2": "smallint",
    "int4": "integer",
    "int8": "bigint",
    "float4": "real",
    "float8": "double precision",
    "bool": "boolean",
    "bpchar": "character",
    "timestamptz": "timestamp with time zone",
    "timetz": "time with time zone",
}
"""PostgreSQL's internal type names (a result column's type as psycopg names it) by their SQL names."""


def _display_to_duck(display: str) -> str:
    d = display.lower()
    suffix = "[]" if d.endswith("[]") else ""
    d = d.removesuffix("[]")
    d = _INTERNAL_NAMES.get(d, d)
    if d.startswith("numeric"):
        return ("DECIMAL" + d[len("numeric") :].upper() if "(" in d else "DOUBLE") + suffix
    if d.startswith(("character varying", "character", "varchar")):
        return "VARCHAR" + suffix
    if d.startswith("timestamp"):
        return ("TIMESTAMP WITH TIME ZONE" if "with time zone" in d else "TIMESTAMP") + suffix
    if d.startswith("time"):
        return "TIME" + suffix
    return _DISPLAY.get(d, "VARCHAR") + suffix
