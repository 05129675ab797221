"""The shape shared by generated and real HybridQA tables: a question as a dataset shows it, a table whose linked
columns are followed by ``_Info`` passage columns (loaded into DuckDB), a world of tables, and the errors of the data.
No hidden truth here."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import duckdb

DEFAULT_SEED = 7
N_TABLES = 50
INFO_SUFFIX = "_Info"
TYPES = ("I", "II", "III", "IV", "V", "VI")

# What each HybridQA type means (§2.3; T = table, P = passage).
TYPE_TITLES: Mapping[str, str] = {
    "I": "T→P: a table cell locates the row, the answer is in its passage",
    "II": "P→T: a passage locates the row, the answer is a table cell",
    "III": "P→T→P: a passage locates the row, the answer is in another passage",
    "IV": "T&P→T: a table condition and a passage condition together",
    "V": "comparison of two rows by what their passages say",
    "VI": "superlative over every row by what the passages say",
}


class HybridDataError(ValueError):
    """Real HybridQA data that cannot be loaded; the message names the file and the problem.  (The engines
    re-raise it as ``engines.hybridqa.session.HybridDataError``, which is also an ``EngineError``.)"""


class UnknownTable(LookupError):
    """A table name or id that is not in the world; the message names it."""


@dataclass(frozen=True)
class HybridQuestion:
    """One question as a dataset shows it: no hidden truth here."""

    question_id: str
    table: str  # the DuckDB table it is asked over
    question: str
    gold: str  # the single gold answer the annotator wrote
    qtype: str | None = None  # "I".."VI" for generated questions; None for real ones


@dataclass(frozen=True)
class HybridTable:
    """A table with its linked passages stored in ``_Info`` columns."""

    name: str  # the DuckDB table name (an identifier)
    table_id: str  # the dataset's id (a HybridQA file name, or a generated id)
    title: str
    columns: tuple[str, ...]  # every column, ``_Info`` ones right after the column they belong to
    rows: tuple[tuple[str | None, ...], ...]
    questions: tuple[HybridQuestion, ...] = ()
    source: str = "generated"  # "generated" | "real"
    url: str = ""

    @property
    def info_columns(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c.endswith(INFO_SUFFIX))

    def records(self) -> list[dict[str, str | None]]:
        return [dict(zip(self.columns, row)) for row in self.rows]

    def schema(self) -> str:
        """The table's signature as a parser is shown it (no rows, no values)."""
        cols = ",\n".join(f"    {quote_ident(c)} TEXT" for c in self.columns)
        return f"CREATE TABLE {quote_ident(self.name)} (\n{cols}\n);"

    def load(self, con: duckdb.DuckDBPyConnection) -> None:
        """Create and fill this table on a DuckDB connection (rows keep their order: rowid = index)."""
        ddl = ", ".join(f"{quote_ident(c)} VARCHAR" for c in self.columns)
        con.execute(f"CREATE TABLE {quote_ident(self.name)} ({ddl})")
        if self.rows:
            keys = [f"c{i}" for i in range(len(self.columns))]
            records = [dict(zip(keys, row)) for row in self.rows]
            select = ", ".join(f"r.{k} AS {quote_ident(c)}" for k, c in zip(keys, self.columns))
            con.execute(
                f"INSERT INTO {quote_ident(self.name)} SELECT {select} FROM (SELECT UNNEST($rows) AS r)",
                {"rows": records},
            )

    def to_summary(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id,
            "columns": list(self.columns),
            "rows": len(self.rows),
            "questions": len(self.questions),
        }


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class HybridWorld:
    """Several tables in one database (what the SUQL tab and the pipeline load)."""

    name: str
    tables: tuple[HybridTable, ...]

    def table(self, name_or_id: str) -> HybridTable:
        for t in self.tables:
            if name_or_id in (t.name, t.table_id):
                return t
        raise UnknownTable(f"No table {name_or_id!r} in the {self.name} world.")

    @property
    def questions(self) -> tuple[HybridQuestion, ...]:
        return tuple(q for t in self.tables for q in t.questions)

    def load(self, con: duckdb.DuckDBPyConnection) -> None:
        for t in self.tables:
            t.load(con)

    def schema(self) -> str:
        return "\n\n".join(t.schema() for t in self.tables)


@dataclass(frozen=True)
class GeneratedWorld(HybridWorld):
    """The generated tables (visible data only: the hidden truth is returned apart, see :class:`Built`)."""

    seed: int = DEFAULT_SEED


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
