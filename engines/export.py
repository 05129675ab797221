"""Write rows (a results table, the LLM calls, a trajectory) to a file: CSV, JSON, JSON Lines or Parquet.

:func:`export_rows` is the one entry point (the app's export prompt uses it, and the command line can):
the format follows the file's extension (:data:`FORMATS`), the file is written next to its final place
and moved there only when complete (a failed write never leaves half a file, nor clobbers the old one, and a
symlink in its place is replaced, never written through),
and an existing file is replaced only when asked (``overwrite=True``).  Every failure is an
:class:`ExportError` with a message for a person.

- CSV through :mod:`csv` (a header row; NULL as an empty field; lists and objects as JSON text);
- JSON through :mod:`json` (a list of objects, one a row, column name -> value; JSON Lines: one object a line);
- Parquet through DuckDB: the rows go into an in-memory table by parameters, with a column type inferred
  from the values (:func:`duckdb_type`): DuckDB's Python API reads them (staged as JSON Lines next to the
  file) and :meth:`duckdb.DuckDBPyRelation.write_parquet` writes them.  No SQL text is built at all: neither
  the path, a column name nor a value is ever pasted into a query.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any

from engines.errors import EngineError
from engines.writing import replace_atomically

FORMATS: dict[str, str] = {".csv": "csv", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}
"""File extension (lower case) -> format."""


class ExportError(EngineError):
    """The rows could not be written (unknown extension, unwritable path, a value the format cannot hold)."""


class ExportExists(ExportError):
    """The file exists and ``overwrite`` was not asked for: nothing was written."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} already exists: choose another name, or confirm to replace it.")
        self.path = path


@dataclass(frozen=True)
class Exported:
    """What :func:`export_rows` wrote."""

    path: Path
    format: str
    rows: int
    columns: int


def format_for(path: str | os.PathLike[str]) -> str:
    """The format a file name asks for, by its extension (ExportError for any other)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        what = f"the extension {suffix!r}" if suffix else "a file name without an extension"
        raise ExportError(f"Cannot export to {what}: end the name in one of {known}.")
    return FORMATS[suffix]


def column_names(columns: Sequence[str]) -> list[str]:
    """The columns as unique, non-empty names (a query may return two ``name`` columns): ``name``, ``name_2``."""
    seen: set[str] = set()
    out = []
    for i, raw in enumerate(columns, start=1):
        base = str(raw).strip() or f"column_{i}"
        name, n = base, 1
        while name.lower() in seen:
            n += 1
            name = f"{base}_{n}"
        seen.add(name.lower())
        out.append(name)
    return out


def plain(value: Any) -> Any:
    """A value as plain JSON-friendly Python (dates as ISO text, Decimal as float, lists as lists, NaN as text)."""
    from engines.sql.sandbox import to_jsonable

    return to_jsonable(value)


def text(value: Any) -> str:
    """A value as one CSV field: NULL empty, booleans ``true``/``false``, lists and objects as JSON."""
    value = plain(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def export_rows(
    path: str | os.PathLike[str],
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    overwrite: bool = False,
) -> Exported:
    """Write ``rows`` (each a sequence of values, one per column) under ``columns`` to ``path``.

    ``~`` is expanded and missing parent folders are created.  Raises :class:`ExportExists` when the
    file exists and ``overwrite`` is false, :class:`ExportError` for anything else that goes wrong
    (the old file, if any, is then untouched)."""
    target = Path(os.fspath(path)).expanduser()
    fmt = format_for(target)
    if "\x00" in str(target):
        raise ExportError("Cannot write a file whose name holds a NUL character.")
    try:
        if target.is_dir():
            raise ExportError(f"{target} is a folder: give a file name, such as {target / ('rows' + _suffix(fmt))}.")
        exists = target.exists()
    except OSError as e:  # a name too long for the file system, a folder that cannot be searched
        raise ExportError(f"Cannot write {_short(target)}: {e.strerror or e}.") from None
    if exists and not target.is_file():
        raise ExportError(f"Cannot write {target}: it is not a regular file (a FIFO, a device…).")
    if exists and not overwrite:
        raise ExportExists(target)
    names = column_names(columns)
    if not names:
        raise ExportError("Nothing to export: the table has no columns (run a query first).")
    table = [list(row) for row in rows]
    for n, row in enumerate(table, start=1):
        if len(row) != len(names):
            raise ExportError(f"Row {n} has {len(row)} values for {len(names)} columns: nothing was written.")

    def not_created_meanwhile() -> None:
        if target.exists() and not overwrite:  # appeared meanwhile: still never clobbered unasked
            raise ExportExists(target)

    try:
        replace_atomically(
            target, lambda temp: WRITERS[fmt](temp, names, table), prefix=".cs224v-export-", check=not_created_meanwhile
        )
    except OSError as e:
        raise ExportError(f"Cannot write {_short(target)}: {e.strerror or e}.") from e
    return Exported(target, fmt, len(table), len(names))


def _short(path: Path, width: int = 100) -> str:
    """A path for a message, its middle cut when it is long (a 300-character name is not repeated whole)."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return text if len(text) <= width else text[: width // 2 - 1] + "…" + text[-(width // 2) :]


def _suffix(fmt: str) -> str:
    return next(s for s, f in FORMATS.items() if f == fmt)


# --- the writers ----------------------------------------------------------------------------


def _write_csv(path: Path, names: list[str], rows: list[list[Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(names)
        for row in rows:
            writer.writerow([text(v) for v in row])


def _objects(names: list[str], rows: list[list[Any]]) -> Iterable[dict[str, Any]]:
    for row in rows:
        yield {name: plain(v) for name, v in zip(names, row)}


def _write_json(path: Path, names: list[str], rows: list[list[Any]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        json.dump(list(_objects(names, rows)), f, ensure_ascii=False, indent=2)
        f.write("\n")


def _write_jsonl(path: Path, names: list[str], rows: list[list[Any]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for obj in _objects(names, rows):
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")


_INT64 = (-(2**63), 2**63 - 1)


def duckdb_type(values: Iterable[Any]) -> str:
    """The DuckDB type of a column holding ``values`` (NULLs ignored): BOOLEAN, BIGINT, DOUBLE, DATE,
    TIMESTAMP, TIMESTAMPTZ, TIME, VARCHAR[] for lists of text, VARCHAR for text and for anything mixed
    (lists of other values and objects are stored as JSON text)."""
    kinds: set[str] = set()
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool):
            kinds.add("BOOLEAN")
        elif isinstance(v, int):
            kinds.add("BIGINT" if _INT64[0] <= v <= _INT64[1] else "VARCHAR")
        elif isinstance(v, (float, Decimal)):
            kinds.add("DOUBLE" if math.isfinite(float(v)) else "VARCHAR")
        elif isinstance(v, datetime):
            kinds.add("TIMESTAMPTZ" if v.tzinfo is not None else "TIMESTAMP")
        elif isinstance(v, date):
            kinds.add("DATE")
        elif isinstance(v, time):
            kinds.add("TIME")
        elif isinstance(v, (list, tuple)) and all(x is None or isinstance(x, str) for x in v):
            kinds.add("VARCHAR[]")
        else:
            kinds.add("VARCHAR")
    if not kinds:
        return "VARCHAR"
    if len(kinds) == 1:
        return kinds.pop()
    if kinds == {"BIGINT", "DOUBLE"}:
        return "DOUBLE"
    return "VARCHAR"


def _parquet_value(value: Any, kind: str) -> Any:
    """``value`` as the JSON value DuckDB reads back as ``kind``."""
    if value is None:
        return None
    if kind == "VARCHAR":
        return text(value)
    if kind == "DOUBLE":
        return float(value)
    if kind == "VARCHAR[]":
        return list(value)
    return plain(value)  # BOOLEAN and BIGINT as they are; dates and times as ISO text, which DuckDB parses


def _write_parquet(path: Path, names: list[str], rows: list[list[Any]]) -> None:
    """The rows as JSON Lines next to ``path``, read by DuckDB with the inferred column types (its Python
    API: no SQL text at all), written to ``path`` as Parquet."""
    import duckdb

    kinds = [duckdb_type(row[i] for row in rows) for i in range(len(names))]
    staged = path.with_name(path.name + ".jsonl")
    try:
        with staged.open("w", encoding="utf-8") as f:
            for row in rows:
                obj = {name: _parquet_value(v, k) for name, v, k in zip(names, row, kinds)}
                f.write(json.dumps(obj, ensure_ascii=False) + "\n")
        con = duckdb.connect(":memory:")
        try:
            relation = con.read_json(
                str(staged), format="newline_delimited", columns=dict(zip(names, kinds)), maximum_depth=-1
            )
            relation.write_parquet(str(path))
        except duckdb.Error as e:
            raise ExportError(f"Cannot write Parquet: {e}") from e
        finally:
            con.close()
    finally:
        staged.unlink(missing_ok=True)


WRITERS = {"csv": _write_csv, "json": _write_json, "jsonl": _write_jsonl, "parquet": _write_parquet}
