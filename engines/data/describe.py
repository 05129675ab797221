"""The engine describes a user's tables itself: column types, and the role each column plays.

A role says what the agents do with a column:

``enum``       a text column with few distinct, short, repeating values: ``classify()`` maps what a user
               says onto them (lecture 6 §3.2), and the parser is shown them when there are few
``list_enum``  a list column whose elements are such values (``'x' = ANY(col)``)
``free_text``  a text column of prose (reviews, notes, descriptions): long values, several words each, most of
               them words, few addresses, links or identifiers among them (:func:`prose`); what SUQL's
               ``answer()`` and ``summary()`` read
``list_text``  a list of such texts
``text``       other text (names, identifiers, e-mail addresses, URLs, "Name <email>"): compared as written
``list``       any other list
``number``, ``date``, ``bool``, ``other``  by type

Each column also says how many of its values are NULL (``nulls``) and where its type came from (``type_from``:
``inferred`` from the values of a CSV, TSV or JSON file, ``given`` with ``--type``, ``declared`` by the source
itself); a table read from a file names it and, for CSV and TSV, the fields read as NULL (``null_tokens``).

The statistics come from plain ``SELECT`` queries built with sqlglot and run through the source's
gate (:meth:`engines.sql.sandbox.Sandbox.run_tree`), so the description reads the data exactly as a
query would, and works over any gate with that method.  A statistic that fails (a time-out on a
huge table) leaves the column with the role its type gives.

:meth:`SchemaDescription.render` writes the schema text the parser prompts show (``CREATE TABLE``
statements with every name quoted by sqlglot, each column's role in a comment);
:attr:`SchemaDescription.enum_fields` is what the :class:`~engines.sql.classify.Classifier` uses.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from sqlglot import exp

from engines.errors import EngineError
from engines.sql.readback import NUMERIC_TYPES

__all__ = [
    "ENUM_MAX_VALUES",
    "ENUM_SHOWN_VALUES",
    "ColumnInfo",
    "EnumField",
    "SchemaDescription",
    "TableInfo",
    "describe",
    "describe_world",
    "outline",
    "prose",
    "role_of",
]

ENUM_MAX_VALUES = 50
"""A text column with at most this many distinct values (each repeated) is an enumeration."""
ENUM_SHOWN_VALUES = 20
"""Enumerations with at most this many values are written into the schema the parser sees."""
ENUM_MAX_LENGTH = 60
"""An enumeration's values are short: none longer than this."""
FREE_TEXT_AVG_LENGTH = 40
"""A text column whose values average at least this many characters is free text for answer() ..."""
FREE_TEXT_MAX_LENGTH = 200
"""... and so is one with any value at least this long, when its values are prose (:func:`prose`)."""
PROSE_SAMPLE = 200
"""Values read (the first non-NULL ones) to tell prose from other long text, ..."""
PROSE_CHARS = 1000
"""... the first this many characters of each."""
PROSE_MIN_WORDS = 4.0
"""Prose has at least this many words per value on average, ..."""
PROSE_MIN_WORD_SHARE = 0.5
"""... at least this share of its tokens are words (letters, with punctuation around them), ..."""
PROSE_MAX_ADDRESS_SHARE = 0.25
"""... at most this share are e-mail addresses, links, paths or identifiers (letters mixed with digits), ..."""
PROSE_SENTENCES = 0.5
"""... and either at least this share of its values end as a sentence does (a word and . ! or ?), ..."""
PROSE_LONG_WORDS = 8.0
"""... or its values hold at least this many words on average, at most a tenth of its tokens addresses."""
NULL_COUNT_COLUMNS = 200
"""Columns whose NULLs one query counts (a wider table takes several)."""

DATE_TYPES = ("DATE", "TIME", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ", "INTERVAL")
TEXT_TYPES = ("VARCHAR", "TEXT", "STRING", "CHAR", "BPCHAR")

ROLES = ("number", "date", "bool", "enum", "list_enum", "free_text", "list_text", "text", "list", "other")
ROLE_WORDS = {
    "number": "number",
    "date": "date",
    "bool": "yes/no",
    "enum": "enum · classify()",
    "list_enum": "list enum · classify()",
    "free_text": "free text · answer()",
    "list_text": "list of free texts · answer()",
    "text": "text",
    "list": "list",
    "other": "other",
}


class Gate(Protocol):
    def run_tree(self, expression: exp.Expression) -> Any: ...


class WorldGate(Gate, Protocol):
    """A gate that lists its tables too (a :class:`~engines.sql.sandbox.Sandbox`)."""

    def tables(self) -> Sequence[tuple[str | None, str, Sequence[tuple[str, str]]]]: ...


@dataclass(frozen=True)
class EnumField:
    """What :class:`engines.sql.classify.Classifier` needs of an enumeration (as the worlds' EnumField)."""

    column: str
    values: tuple[str, ...]
    is_list: bool
    in_schema: bool


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    type: str  # DuckDB's name for it (VARCHAR, BIGINT, VARCHAR[], ENUM('a', 'b') ...)
    role: str
    values: tuple[str, ...] = ()  # an enumeration's values, sorted
    distinct: int | None = None  # distinct non-null values (list columns: distinct elements)
    non_null: int | None = None  # non-null values (list columns: elements)
    avg_length: float | None = None  # text: average length of the values (list columns: of the elements)
    max_length: int | None = None
    nulls: int | None = None  # values that are NULL (None: not counted)
    type_from: str = ""  # inferred (from a file's values) | given (--type) | declared (by the source) | "" unknown

    @property
    def is_list(self) -> bool:
        return self.role in ("list_enum", "list_text", "list")

    @property
    def role_words(self) -> str:
        return ROLE_WORDS.get(self.role, self.role)


@dataclass(frozen=True)
class TableInfo:
    name: str
    columns: tuple[ColumnInfo, ...]
    rows: int | None = None
    schema: str | None = None  # a DuckDB schema other than main, else None
    described: bool = True  # False in an :func:`outline`: the roles are the types' alone, no statistics read
    file: str | None = None  # the file it was read from (a --db file or a file of a --db folder)
    null_tokens: tuple[str, ...] | None = None  # a CSV or TSV file's fields read as NULL ("" the empty field)

    def ref(self) -> exp.Table:
        """The table's reference, every part quoted."""
        return exp.table_(
            exp.to_identifier(self.name, quoted=True),
            db=exp.to_identifier(self.schema, quoted=True) if self.schema else None,
        )

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name

    def column(self, name: str) -> ColumnInfo | None:
        return next((c for c in self.columns if c.name == name), None)


@dataclass(frozen=True)
class SchemaDescription:
    source: str  # the data source's name as shown to the user
    tables: tuple[TableInfo, ...]
    kind: str = ""  # "CSV file", "DuckDB database" ...
    notes: tuple[str, ...] = field(default=())  # what describing it could not do (a statistic that timed out)

    def table(self, name: str) -> TableInfo | None:
        return next((t for t in self.tables if t.qualified == name or t.name == name), None)

    @property
    def enum_fields(self) -> dict[str, EnumField]:
        """Column name -> its enumeration, for ``classify()``.  The classifier keys fields by column name:
        a name that is an enumeration in several tables gets the union of their values."""
        out: dict[str, EnumField] = {}
        for t in self.tables:
            for c in t.columns:
                if c.role not in ("enum", "list_enum") or not c.values:
                    continue
                old = out.get(c.name)
                if old is None:
                    out[c.name] = EnumField(c.name, c.values, c.role == "list_enum", len(c.values) <= ENUM_SHOWN_VALUES)
                elif old.is_list == (c.role == "list_enum"):
                    values = tuple(sorted(set(old.values) | set(c.values)))
                    out[c.name] = EnumField(c.name, values, old.is_list, len(values) <= ENUM_SHOWN_VALUES)
        return out

    @property
    def free_text(self) -> list[tuple[str, str]]:
        """(table, column) of every column answer() and summary() read."""
        return [(t.qualified, c.name) for t in self.tables for c in t.columns if c.role in ("free_text", "list_text")]

    def render(self, *, suql: bool = False) -> str:
        """The schema text the parser is shown: one ``CREATE TABLE`` per table, every name quoted, each
        column's role in a comment (an enumeration's values when there are few, as a SQL array literal).
        With ``suql``, the functions answer() and summary() and the free-text columns they read."""
        lines = [f"-- The user's data: {self.source}" + (f" ({self.kind})" if self.kind else "")]
        for t in self.tables:
            lines.append(f"CREATE TABLE {t.ref().sql(dialect='duckdb')} (")
            for i, c in enumerate(t.columns):
                comma = "," if i < len(t.columns) - 1 else ""
                ident = exp.to_identifier(c.name, quoted=True).sql(dialect="duckdb")
                lines.append(f"    {ident} {_type_sql(c.type)}{comma} -- {_comment(c)}")
            lines.append(");")
            if t.rows is not None:
                lines.append(f"-- {t.rows} row{'s' if t.rows != 1 else ''}")
        if suql:
            lines += [
                "-- SUQL adds two functions usable wherever a text value may stand:",
                "--   answer(text, 'question')  an LLM reads the text and answers ('Yes' / 'No' / a value, NULL when it does not say)",
                "--   summary(text)             an LLM summarises the text",
            ]
            free = [
                f"{exp.to_identifier(c, quoted=True).sql(dialect='duckdb')} ({exp.to_identifier(t, quoted=True).sql(dialect='duckdb')})"
                for t, c in self.free_text
            ]
            lines.append("-- free-text columns: " + (", ".join(free) if free else "none"))
        return "\n".join(lines)

    # Hand-written: each table and column described from several objects (roles, NULL counts, values).
    def to_json(self) -> dict[str, Any]:
        """Every table: its name, rows, file and the fields read as NULL (a CSV or TSV file), whether it was
        described from its data; every column: its type, where the type came from, its role, how many values
        are NULL and an enumeration's values."""
        return {
            "source": self.source,
            "kind": self.kind,
            "tables": [
                {
                    "name": t.qualified,
                    "rows": t.rows,
                    **({"file": t.file} if t.file is not None else {}),
                    **({"null_tokens": list(t.null_tokens)} if t.null_tokens is not None else {}),
                    "described": t.described,
                    "columns": [
                        {
                            "name": c.name,
                            "type": c.type,
                            **({"type_from": c.type_from} if c.type_from else {}),
                            "role": c.role,
                            **({"nulls": c.nulls} if c.nulls is not None else {}),
                            **({"values": list(c.values)} if c.values else {}),
                        }
                        for c in t.columns
                    ],
                }
                for t in self.tables
            ],
            **({"notes": list(self.notes)} if self.notes else {}),
        }


def _type_sql(typ: str) -> str:
    """The type as SQL text (it is DuckDB's own name; anything odd becomes a quoted comment-free word)."""
    try:
        return exp.DataType.build(typ, dialect="duckdb").sql(dialect="duckdb")
    except Exception:  # a type sqlglot cannot read (a UNION, an extension type): say it in words
        return "VARCHAR"


def _comment(c: ColumnInfo) -> str:
    if c.role in ("enum", "list_enum"):
        head = "enum" if c.role == "enum" else "list enum"
        if c.values and len(c.values) <= ENUM_SHOWN_VALUES:
            values = exp.Array(expressions=[exp.Literal.string(v) for v in c.values]).sql(dialect="duckdb")
            return f"{head}: {values}"
        return f"{head}: {len(c.values)} values; classify() maps what the user says onto them"
    return c.role_words


# --- describing --------------------------------------------------------------------------------------


def _base(typ: str) -> str:
    return typ.upper().split("(")[0].strip()


def role_of(typ: str) -> str:
    """The role a column's type alone gives (text refined by :func:`describe` from its values)."""
    t = typ.upper().strip()
    if t.endswith("[]") or t.startswith(("LIST", "ARRAY")):
        return "list"
    base = _base(t)
    if base in NUMERIC_TYPES:
        return "number"
    if base in DATE_TYPES or base.startswith(("TIMESTAMP", "TIME")):
        return "date"
    if base == "BOOLEAN" or base == "BOOL":
        return "bool"
    if base == "ENUM":
        return "enum"
    if base in TEXT_TYPES:
        return "text"
    return "other"


def _element_is_text(typ: str) -> bool:
    t = typ.upper().strip()
    return t.endswith("[]") and _base(t[:-2]) in TEXT_TYPES


def describe(
    gate: Gate,
    tables: Sequence[tuple[str | None, str, Sequence[tuple[str, str]]]],
    *,
    source: str,
    kind: str = "",
    deadline: float | None = None,
    deadline_note: str = "its deadline",
    count_nulls: bool = True,
) -> SchemaDescription:
    """Describe ``tables`` — (schema or None, table, [(column, DuckDB type)]) — from their data, read
    through ``gate``.

    ``deadline`` (a :func:`time.monotonic` time): no statistic starts after it; the columns left get the
    roles their types give, the tables left no row count, and one note says so (``deadline_note`` names
    the deadline).  Each statistic is bounded by the gate's own query time-out.  With ``count_nulls`` each
    column's NULLs are counted too (with the rows, :data:`NULL_COUNT_COLUMNS` columns a query)."""
    infos: list[TableInfo] = []
    notes: list[str] = []

    def late() -> bool:
        if deadline is None or time.monotonic() < deadline:
            return False
        if not any(n.startswith(_STOPPED) for n in notes):
            notes.append(f"{_STOPPED} at {deadline_note}: the columns left have the roles their types give")
        return True

    for schema, name, columns in tables:
        schema = None if schema in (None, "", "main") else schema
        ref = exp.table_(
            exp.to_identifier(name, quoted=True), db=exp.to_identifier(schema, quoted=True) if schema else None
        )
        label = f"{schema}.{name}" if schema else name
        names = [c for c, _ in columns]
        rows, nulls = (None, {}) if late() else _counts(gate, ref, label, names if count_nulls else [], notes, late)
        described = [
            replace(
                ColumnInfo(c, t, role_of(t)) if late() else _column(gate, ref, label, c, t, rows, notes),
                nulls=nulls.get(c),
            )
            for c, t in columns
        ]
        infos.append(TableInfo(name, tuple(described), int(rows) if rows is not None else None, schema))
    return SchemaDescription(source, tuple(infos), kind, tuple(notes))


def _counts(
    gate: Gate, ref: exp.Table, label: str, columns: Sequence[str], notes: list[str], late: Any
) -> tuple[int | None, dict[str, int]]:
    """The table's rows, and each of ``columns``' NULLs: ``count(*)`` and ``count(column)`` in one query per
    :data:`NULL_COUNT_COLUMNS` columns (the first with the rows)."""
    rows: int | None = None
    nulls: dict[str, int] = {}
    chunks = [columns[i : i + NULL_COUNT_COLUMNS] for i in range(0, len(columns), NULL_COUNT_COLUMNS)] or [[]]
    for n, chunk in enumerate(chunks):
        if n and (rows is None or late()):
            break
        counts = [exp.Count(this=exp.column(exp.to_identifier(c, quoted=True))) for c in chunk]
        query = exp.select(*([exp.Count(this=exp.Star())] if n == 0 else []), *counts).from_(ref.copy())
        try:
            result = gate.run_tree(query)
        except EngineError as e:
            notes.append(f"counting {label}" + (f" (NULLs of {len(chunk)} columns)" if n else "") + f": {e}")
            continue
        values = list(result.rows[0]) if result.rows else []
        if n == 0 and values:
            rows = int(values.pop(0))
        if rows is not None:
            nulls.update((c, rows - int(v)) for c, v in zip(chunk, values) if v is not None)
    return rows, nulls


_STOPPED = "describing stopped"


def _one(gate: Gate, tree: exp.Expression, notes: list[str], what: str) -> Any:
    """The single value of a one-row statistic, or None (noted) when it fails."""
    try:
        r = gate.run_tree(tree)
    except EngineError as e:
        notes.append(f"{what}: {e}")
        return None
    return r.rows[0][0] if r.rows else None


def _column(gate: Gate, ref: exp.Table, label: str, name: str, typ: str, rows: Any, notes: list[str]) -> ColumnInfo:
    role = role_of(typ)
    col = exp.column(exp.to_identifier(name, quoted=True))
    if role == "enum":  # DuckDB's own ENUM type: its values are the type's
        values = _distinct(gate, ref.copy(), col, notes, f"{label}.{name}", limit=None)
        return ColumnInfo(name, typ, "enum", tuple(v for v in values if isinstance(v, str)))
    if role == "text" or (role == "list" and _element_is_text(typ)):
        listed = role == "list"
        source: exp.Expr = ref.copy()
        value: exp.Expr = col
        if listed:  # the elements, one per row
            element = exp.to_identifier("element", quoted=True)
            source = (
                exp.select(exp.Unnest(expressions=[col.copy()]).as_(element)).from_(ref.copy()).subquery("elements")
            )
            value = exp.column(element)
        length = exp.Length(this=value.copy())
        stats = exp.select(
            exp.Count(this=value.copy()),
            exp.Count(this=exp.Distinct(expressions=[value.copy()])),
            exp.Avg(this=length.copy()),
            exp.Max(this=length.copy()),
            exp.Max(this=exp.func("strpos", value.copy(), exp.func("chr", exp.Literal.number(10)))),
        ).from_(source)
        try:
            r = gate.run_tree(stats)
            non_null, distinct, avg, longest, newline = r.rows[0]
        except EngineError as e:
            notes.append(f"{label}.{name}: {e}")
            return ColumnInfo(name, typ, role)
        non_null, distinct = int(non_null or 0), int(distinct or 0)
        avg = float(avg) if avg is not None else None
        longest = int(longest) if longest is not None else None

        def counted(role: str, values: tuple[str, ...] = ()) -> ColumnInfo:
            return ColumnInfo(
                name, typ, role, values, distinct=distinct, non_null=non_null, avg_length=avg, max_length=longest
            )

        long = avg is not None and (avg >= FREE_TEXT_AVG_LENGTH or (longest or 0) >= FREE_TEXT_MAX_LENGTH)
        if long and prose(_sample(gate, source.copy(), value, notes, f"{label}.{name}")):
            return counted("list_text" if listed else "free_text")
        if (
            0 < distinct <= ENUM_MAX_VALUES
            and distinct * 2 <= non_null  # values repeat: a category, not a name per row
            and (longest or 0) <= ENUM_MAX_LENGTH
            and not newline  # a value of an enumeration fits on one line of the schema
        ):
            values = _distinct(gate, source.copy(), value, notes, f"{label}.{name}", limit=ENUM_MAX_VALUES + 1)
            if values and len(values) <= ENUM_MAX_VALUES:
                return counted("list_enum" if listed else "enum", tuple(str(v) for v in values))
        return counted("list" if listed else "text")
    return ColumnInfo(name, typ, role)


def _sample(gate: Gate, source: exp.Expr, value: exp.Expr, notes: list[str], what: str) -> list[str]:
    """The first :data:`PROSE_SAMPLE` non-NULL values, each cut to its first :data:`PROSE_CHARS` characters."""
    query = (
        exp.select(
            exp.Substring(this=value.copy(), start=exp.Literal.number(1), length=exp.Literal.number(PROSE_CHARS))
        )
        .from_(source)
        .where(exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null())))
        .limit(PROSE_SAMPLE)
    )
    try:
        return [str(row[0]) for row in gate.run_tree(query).rows if row[0] is not None]
    except EngineError as e:
        notes.append(f"{what}: {e}")
        return []


# The shape of one token (a run of characters between spaces): regexes over a token, never over a column's text.
_WORD = re.compile(r"[\W_]*[^\W\d_]+(?:['’.-][^\W\d_]+)*[\W_]*")  # letters, punctuation around them
_EMAIL = re.compile(r"\W*[^@\s]+@[^@\s]+\.[^@\s]+")  # jane@example.com, <jane@example.com>,
_LINK = re.compile(r"(?i)\W*(?:[a-z][a-z0-9+.-]*://|www\.)\S+")  # https://…, www.…
_PATH = re.compile(r"\S*[/\\]\S*[/\\]\S*")  # src/main.py/…, C:\\x\\y
_MIXED = re.compile(r"(?=\S*\d)(?=\S*[^\W\d_])\S{6,}")  # letters mixed with digits: ids, hashes, codes
_SENTENCE_END = re.compile(r".*[^\W\d_][.!?。！？]['\"’”)\]]*")  # the last word of a sentence: "fresh." "soft!)"
_UNSPACED = 20
"""A token of at least this many letters (and little else) is a script written without spaces (Chinese, Thai ...):
counted as one word per three of its letters."""


def prose(values: Iterable[str]) -> bool:
    """Whether ``values`` read as prose, measured over their tokens (runs of characters between spaces): at least
    :data:`PROSE_MIN_WORDS` words a value on average, at least :data:`PROSE_MIN_WORD_SHARE` of the tokens words,
    at most :data:`PROSE_MAX_ADDRESS_SHARE` of them e-mail addresses, links, paths or identifiers; and most values
    ending as a sentence does (:data:`PROSE_SENTENCES`), or long ones (:data:`PROSE_LONG_WORDS` words) with hardly
    an address.  Names with addresses (``Jane Doe <jane@example.com>``), URLs, ids and codes are not prose;
    reviews, notes and descriptions are."""
    n = tokens = words = addresses = sentences = 0
    for value in values:
        n += 1
        last = ""
        for token in value.split():
            if _EMAIL.fullmatch(token) or _LINK.fullmatch(token) or _PATH.fullmatch(token) or _MIXED.fullmatch(token):
                tokens += 1
                addresses += 1
                last = ""
            elif (letters := sum(ch.isalpha() for ch in token)) >= _UNSPACED and letters >= 0.8 * len(token):
                tokens += letters // 3
                words += letters // 3
                last = token
            elif _WORD.fullmatch(token):
                tokens += 1
                words += 1
                last = token
            else:
                tokens += 1
                last = ""
        sentences += bool(_SENTENCE_END.fullmatch(last))
    if n == 0 or tokens == 0:
        return False
    return (
        words / n >= PROSE_MIN_WORDS
        and words / tokens >= PROSE_MIN_WORD_SHARE
        and addresses / tokens <= PROSE_MAX_ADDRESS_SHARE
        and (sentences / n >= PROSE_SENTENCES or (words / n >= PROSE_LONG_WORDS and addresses / tokens <= 0.1))
    )


def _distinct(
    gate: Gate, source: exp.Expr, value: exp.Expr, notes: list[str], what: str, *, limit: int | None
) -> list[Any]:
    query = (
        exp.select(value.copy())
        .distinct()
        .from_(source)
        .where(exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null())))
        .order_by(exp.Ordered(this=value.copy()))
    )
    if limit is not None:
        query = query.limit(limit)
    try:
        return [row[0] for row in gate.run_tree(query).rows]
    except EngineError as e:
        notes.append(f"{what}: {e}")
        return []


# --- the built-in worlds -----------------------------------------------------------------------------


def _tables_of(gate: WorldGate, names: Sequence[str] | None) -> list[tuple[str | None, str, Sequence[tuple[str, str]]]]:
    tables = list(gate.tables())
    if names is None:
        return tables
    wanted = set(names)
    return [t for t in tables if t[1] in wanted or (t[0] not in (None, "", "main") and f"{t[0]}.{t[1]}" in wanted)]


def outline(gate: WorldGate, *, source: str, kind: str = "", tables: Sequence[str] | None = None) -> SchemaDescription:
    """The tables of ``gate`` (all, or those named in ``tables``) with their columns' types and the roles the
    types alone give, reading no statistics (one catalogue query): what a world of many tables shows before a
    table is described (each :class:`TableInfo` has ``described`` False and no row count)."""
    infos = []
    for schema, name, columns in _tables_of(gate, tables):
        schema = None if schema in (None, "", "main") else schema
        cols = tuple(ColumnInfo(c, t, role_of(t)) for c, t in columns)
        infos.append(TableInfo(name, cols, None, schema, described=False))
    return SchemaDescription(source, tuple(infos), kind)


def describe_world(
    gate: WorldGate,
    *,
    source: str,
    kind: str = "built-in world",
    enum_fields: Mapping[str, Any] | None = None,
    tables: Sequence[str] | None = None,
) -> SchemaDescription:
    """Describe the tables a built-in world loaded into ``gate`` (all, or those named in ``tables``) as a user's
    tables are described (:func:`describe`: the same statistics, through the same gate).

    An agent over a built-in world does not classify what the statistics call an enumeration: it classifies the
    world's declared ones.  So with ``enum_fields`` (column -> an enumeration with ``values`` and ``is_list``:
    what the agent's classifier was given; ``{}`` when it has none), a column is an enumeration exactly when the
    agent maps words onto it, with the agent's values; any other keeps its statistics and is text (a list).  A
    DuckDB ENUM type stays visible in the column's type."""
    described = describe(gate, _tables_of(gate, tables), source=source, kind=kind, count_nulls=False)
    if enum_fields is None:
        return described
    return SchemaDescription(
        described.source,
        tuple(replace(t, columns=tuple(_agent_role(c, enum_fields) for c in t.columns)) for t in described.tables),
        described.kind,
        described.notes,
    )


def _agent_role(column: ColumnInfo, enum_fields: Mapping[str, Any]) -> ColumnInfo:
    declared = enum_fields.get(column.name)
    if declared is not None:
        is_list = bool(getattr(declared, "is_list", False))
        values = tuple(sorted(str(v) for v in getattr(declared, "values", ())))
        return replace(column, role="list_enum" if is_list else "enum", values=values)
    if column.role == "enum":
        return replace(column, role="text", values=())
    if column.role == "list_enum":
        return replace(column, role="list", values=())
    return column
