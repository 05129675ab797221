"""What a query returned, and its values as plain JSON-friendly Python."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from datetime import time as time_of_day
from decimal import Decimal
from typing import Any
from uuid import UUID


@dataclass(frozen=True)
class QueryResult:
    """What a query returned.

    ``rows`` hold the values as DuckDB gives them to Python (``Decimal``, ``date``,
    lists, dicts ...); :meth:`records` converts them for JSON.
    """

    sql: str
    """The DuckDB SQL that ran."""
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool
    """True when the query had more rows than the row cap; only the first are kept."""
    elapsed_s: float

    def records(self) -> list[dict[str, Any]]:
        """The rows as JSON-ready dicts.

        Repeated column names get a suffix (``a``, ``a_1`` ...) so no value is lost.
        """
        keys = _unique_keys(self.columns)
        return [{k: to_jsonable(v) for k, v in zip(keys, row)} for row in self.rows]


def to_jsonable(value: Any) -> Any:
    """Convert a value DuckDB returned into plain JSON-friendly Python.

    Lists and tuples become lists, dicts (STRUCT, MAP) dicts with string keys,
    ``Decimal`` becomes ``float``, dates and times ISO-8601 strings, intervals and
    UUIDs strings, BLOBs text (undecodable bytes escaped).  Non-finite numbers become
    the strings ``'nan'``, ``'inf'`` and ``'-inf'`` so the output is strict JSON.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else str(float(value))
    if isinstance(value, (datetime, date, time_of_day)):
        return value.isoformat()
    if isinstance(value, (timedelta, UUID)):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="backslashreplace")
    if isinstance(value, Mapping):
        return {k if isinstance(k, str) else str(to_jsonable(k)): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    return str(value)


def _unique_keys(columns: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    keys = []
    for name in columns:
        key, n = name, 0
        while key in seen:
            n += 1
            key = f"{name}_{n}"
        seen.add(key)
        keys.append(key)
    return keys
