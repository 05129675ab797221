"""Which chart shows a result table, and the chart's data: pure and typed (no textual; numpy for the numbers).

A table is columns and rows of typed values (``tui.export.table_data``: what the engine returned, not the display
strings).  :func:`column_types` reads each column as one of

- ``number``: every non-NULL value an int, float or Decimal (a bool is not a number), or every one a text that
  Python reads as a finite number (a SPARQL literal, a HybridQA cell: "numbers read from text", and said so);
- ``date``: every non-NULL value a date or datetime, or an ISO 8601 date text;
- ``category``: anything else that is text or a bool (mixed types included: they are shown as text);
- ``none``: no value at all, or lists and objects (nothing to chart).

:func:`choose` picks the chart a person would draw first: lines for a date against a number; a bar chart for a
category and a number (top categories by value, the rest summed as "other"); lines for an ordered number against
another; a histogram of one number; the count of rows per category when no column is a number but one repeats.
Otherwise it says why there is nothing to chart.  :func:`build` computes what is drawn, bounded:
at most :data:`MAX_BARS` bars and :data:`MAX_POINTS` points (beyond, consecutive points are averaged, and said so).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal

import numpy as np

ColumnType = Literal["number", "date", "category", "none"]
Kind = Literal["bar", "line", "histogram"]
Aggregate = Literal["sum", "mean"]

KINDS: tuple[Kind, ...] = ("bar", "line", "histogram")
COUNT = -1
"""The y "column" of a bar chart that counts the rows of each category (``count(*)``)."""
MAX_BARS = 12
"""Most bars a bar chart draws: the categories with the largest values; the rest are summed as "other"."""
MAX_POINTS = 400
"""Most points a line draws; beyond, runs of consecutive points (in x order) are averaged into one."""
HISTOGRAM_BINS = 20
"""Most bins of a histogram (fewer when the column has fewer distinct values)."""
MAX_TEXT_NUMBER = 64
"""Longest text read as a number or a date (a longer value is text)."""


@dataclass(frozen=True)
class Column:
    """One column as the chart chooser reads it."""

    index: int
    name: str
    type: ColumnType
    from_text: bool = False  # numbers or dates read from text values
    distinct: int = 0  # distinct non-NULL values
    values: int = 0  # non-NULL values
    whole: bool = False  # numbers all whole (counts: a bar chart adds them up; else it averages them)


@dataclass(frozen=True)
class ChartSpec:
    """A chart of a table: its kind, the x column (None: a histogram's bins) and the y column (:data:`COUNT`: the
    number of rows), and how a bar chart adds up the rows of one category."""

    kind: Kind
    x: int | None
    y: int
    aggregate: Aggregate = "sum"


@dataclass(frozen=True)
class NothingToChart:
    """Why a table has no chart: one line, shown instead of one."""

    reason: str

    @property
    def message(self) -> str:
        return f"nothing to chart: {self.reason}"


@dataclass(frozen=True)
class ChartData:
    """What is drawn.  A bar chart and a histogram: ``labels`` and ``values`` (one bar each); lines: ``xs`` and
    ``values`` (x in order), ``ticks`` labelling some xs (dates).  ``caption`` says which columns were chosen and what
    was bounded: ``bar · x = cuisine · y = count(*) · 12 of 40 categories, rest as other``."""

    spec: ChartSpec
    x_label: str
    y_label: str
    labels: tuple[str, ...]
    xs: tuple[float, ...]
    values: tuple[float, ...]
    ticks: tuple[tuple[float, str], ...]
    caption: str


# --- reading the columns -------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    """A typed number as a finite float (None: not one, NaN or infinite)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return None
    try:
        f = float(value)
    except (OverflowError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _text_number(value: str) -> float | None:
    """A text as a finite number ("12", "-0.5", "1e3", " 4 "); None for anything else."""
    text = value.strip()
    if not text or len(text) > MAX_TEXT_NUMBER:
        return None
    try:
        f = float(text)
    except ValueError:
        return None
    return f if math.isfinite(f) else None


def _date(value: Any) -> float | None:
    """A date or datetime as days since 1970-01-01 (the time of day as a fraction)."""
    if isinstance(value, datetime):
        epoch = datetime(1970, 1, 1, tzinfo=value.tzinfo)
        return (value - epoch).total_seconds() / 86400.0
    if isinstance(value, date):
        return float((value - date(1970, 1, 1)).days)
    return None


def _text_date(value: str) -> float | None:
    text = value.strip()
    if len(text) < 10 or len(text) > MAX_TEXT_NUMBER or not text[:4].isdigit() or text[4] != "-":
        return None  # ISO 8601 only: "2024-05-01", "2024-05-01T10:00:00"
    try:
        return _date(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        return None


def _read_column(index: int, name: str, cells: Sequence[Any]) -> Column:
    present = [v for v in cells if v is not None]
    if not present:
        return Column(index, name, "none")
    try:
        distinct = len(set(present))
    except TypeError:  # lists, dicts
        return Column(index, name, "none", values=len(present))
    if all(isinstance(v, (list, tuple, dict, set)) for v in present):
        return Column(index, name, "none", distinct=distinct, values=len(present))
    n = len(present)
    numbers = [_number(v) for v in present]
    if all(f is not None for f in numbers):
        whole = all(float(f).is_integer() for f in numbers if f is not None)
        return Column(index, name, "number", distinct=distinct, values=n, whole=whole)
    if all(_date(v) is not None for v in present):
        return Column(index, name, "date", distinct=distinct, values=n)
    if all(isinstance(v, str) for v in present):
        read = [_text_number(v) for v in present]
        if all(f is not None for f in read):
            whole = all(float(f).is_integer() for f in read if f is not None)
            return Column(index, name, "number", from_text=True, distinct=distinct, values=n, whole=whole)
        if all(_text_date(v) is not None for v in present):
            return Column(index, name, "date", from_text=True, distinct=distinct, values=n)
    return Column(index, name, "category", distinct=distinct, values=n)


def column_types(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[Column]:
    """Each column read as a number, a date, a category or nothing chartable (see the module's docstring)."""
    return [
        _read_column(i, str(name), [row[i] if i < len(row) else None for row in rows]) for i, name in enumerate(columns)
    ]


def numeric(column: Column, value: Any) -> float | None:
    """``value`` of ``column`` as the float a chart draws (None: NULL or not readable)."""
    if value is None:
        return None
    if column.type == "number":
        return _text_number(value) if column.from_text and isinstance(value, str) else _number(value)
    if column.type == "date":
        return _text_date(value) if column.from_text and isinstance(value, str) else _date(value)
    return None


def _is_id(column: Column) -> bool:
    """A key, not a quantity: ``_id``, ``id``, ``row_id``, ``qid``."""
    name = column.name.lower()
    return name in {"id", "_id", "rowid", "qid", "pid", "key", "#"} or name.endswith("_id")


# --- the choice ---------------------------------------------------------------------------------


def _measures(cols: Sequence[Column]) -> list[Column]:
    """The number columns, quantities before keys."""
    numbers = [c for c in cols if c.type == "number"]
    return sorted(numbers, key=_is_id)


def valid_x(cols: Sequence[Column], kind: Kind) -> list[int]:
    """The columns that can be ``kind``'s x (a histogram's: the numbers it bins)."""
    if kind == "bar":
        return [c.index for c in cols if c.type in ("category", "date", "number") and c.values]
    if kind == "line":
        return [c.index for c in cols if c.type in ("date", "number")]
    return [c.index for c in _measures(cols)]


def valid_y(cols: Sequence[Column], kind: Kind, x: int | None) -> list[int]:
    """The columns that can be ``kind``'s y against ``x`` (:data:`COUNT` for a bar chart's row count)."""
    if kind == "histogram":
        return [x] if x is not None else []
    ys = [c.index for c in _measures(cols) if c.index != x]
    return [*ys, COUNT] if kind == "bar" else ys


def _default_x(cols: Sequence[Column], kind: Kind) -> int | None:
    xs = valid_x(cols, kind)
    if not xs:
        return None
    by_index = {c.index: c for c in cols}
    if kind == "bar":
        categories = [i for i in xs if by_index[i].type == "category"]
        repeating = [i for i in categories if by_index[i].distinct < by_index[i].values]
        return (repeating or categories or xs)[0]
    if kind == "line":
        dates = [i for i in xs if by_index[i].type == "date"]
        if dates:
            return dates[0]
        measures = [c.index for c in _measures(cols)]
        # an ordered number: a key (a step, a rank, k) before a quantity
        keys = [i for i in xs if _is_id(by_index[i]) or by_index[i].distinct == by_index[i].values]
        return (keys or measures or xs)[0]
    return xs[0]


def spec_for(cols: Sequence[Column], kind: Kind, x: int | None = None, y: int | None = None) -> ChartSpec | None:
    """A ``kind`` chart with ``x`` and ``y`` when valid, else the kind's defaults; None when the table has no such
    chart."""
    if x is None or x not in valid_x(cols, kind):
        x = _default_x(cols, kind)
    if x is None:
        return None
    ys = valid_y(cols, kind, x)
    if not ys:
        return None
    if y is None or y not in ys:
        y = ys[0]
    by_index = {c.index: c for c in cols}
    # a category's rows are added up when y counts something (whole numbers), averaged when it measures (a rating)
    aggregate: Aggregate = "sum" if y == COUNT or by_index[y].whole else "mean"
    return ChartSpec(kind, None if kind == "histogram" else x, x if kind == "histogram" else y, aggregate)


def choose(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> ChartSpec | NothingToChart:
    """The chart a person would draw first for this table, or why there is none."""
    if not columns:
        return NothingToChart("the table has no columns")
    if not rows:
        return NothingToChart("the table has no rows")
    cols = column_types(columns, rows)
    types = {c.type for c in cols}
    measures = _measures(cols)
    if measures:
        if "date" in types:
            spec = spec_for(cols, "line")
        elif "category" in types:
            spec = spec_for(cols, "bar")
        elif len(measures) >= 2 and len(rows) >= 2:
            spec = spec_for(cols, "line")
        else:
            spec = spec_for(cols, "histogram")
        if spec is not None:
            return spec
    repeating = [c for c in cols if c.type in ("category", "date") and c.distinct < c.values]
    if repeating:
        return ChartSpec("bar", repeating[0].index, COUNT)
    said = ", ".join(f"{c.name} ({c.type if c.type != 'none' else 'empty or lists'})" for c in cols[:6])
    more = f" and {len(cols) - 6} more" if len(cols) > 6 else ""
    return NothingToChart(f"no column holds numbers and none repeats a value to count — {said}{more}")


def kinds_of(cols: Sequence[Column]) -> list[Kind]:
    """The kinds of chart this table has."""
    return [k for k in KINDS if spec_for(cols, k) is not None]


def cycle(cols: Sequence[Column], spec: ChartSpec, what: Literal["kind", "x", "y", "aggregate"]) -> ChartSpec:
    """``spec`` with its next kind, x column, y column or way of adding up (the same spec when there is no other)."""
    if what == "aggregate":
        return replace(spec, aggregate="mean" if spec.aggregate == "sum" else "sum")
    if what == "kind":
        kinds = kinds_of(cols)
        at = kinds.index(spec.kind) if spec.kind in kinds else -1
        for kind in kinds[at + 1 :] + kinds[: at + 1]:
            x = spec.x if spec.x is not None else spec.y
            found = spec_for(cols, kind, x, spec.y)
            if found is not None:
                return replace(found, aggregate=spec.aggregate)
        return spec
    if what == "x":
        xs = valid_x(cols, spec.kind)
        current = spec.x if spec.kind != "histogram" else spec.y
        if not xs:
            return spec
        nxt = xs[(xs.index(current) + 1) % len(xs)] if current in xs else xs[0]
        found = spec_for(cols, spec.kind, nxt, spec.y)
        return spec if found is None else replace(found, aggregate=spec.aggregate)
    ys = valid_y(cols, spec.kind, spec.x)
    if not ys:
        return spec
    nxt = ys[(ys.index(spec.y) + 1) % len(ys)] if spec.y in ys else ys[0]
    return spec_for(cols, spec.kind, spec.x, nxt) or spec if spec.kind != "histogram" else spec


# --- the data drawn -----------------------------------------------------------------------------


def _label(value: Any, column: Column) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return (
            value.isoformat(sep=" ", timespec="minutes") if value.time() != datetime.min.time() else f"{value:%Y-%m-%d}"
        )
    if isinstance(value, float):
        return f"{value:g}"
    return " ".join(str(value).split())


def _count(n: int, noun: str) -> str:
    if n == 1:
        return f"{n:,} {noun}"
    return f"{n:,} {noun[:-1]}ies" if noun.endswith("y") else f"{n:,} {noun}s"


def _skipped(n: int, column: str) -> str:
    return f"{_count(n, 'row')} without {column} left out" if n else ""


def _date_label(days: float) -> str:
    whole = math.floor(days)
    day = date(1970, 1, 1).toordinal() + whole
    try:
        return date.fromordinal(day).isoformat()
    except ValueError:
        return f"{days:g}"


def build(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    spec: ChartSpec,
    *,
    max_bars: int = MAX_BARS,
    max_points: int = MAX_POINTS,
    bins: int = HISTOGRAM_BINS,
) -> ChartData | NothingToChart:
    """The data of ``spec``'s chart of the table, bounded (see the module's docstring)."""
    cols = column_types(columns, rows)
    by_index = {c.index: c for c in cols}
    y_col = by_index.get(spec.y) if spec.y != COUNT else None
    y_name = "count(*)" if y_col is None else y_col.name
    if y_col is not None and y_col.from_text:
        y_name_shown = f"{y_name} (numbers read from text)"
    else:
        y_name_shown = y_name
    if spec.kind == "histogram":
        return _histogram(rows, y_col, y_name_shown, spec, bins)
    x_col = by_index.get(spec.x) if spec.x is not None else None
    if x_col is None:
        return NothingToChart("no column for the x axis")
    if spec.kind == "bar":
        return _bars(rows, x_col, y_col, y_name, spec, max_bars)
    return _lines(rows, x_col, y_col, y_name_shown, spec, max_points)


def _cell(row: Sequence[Any], i: int) -> Any:
    return row[i] if i < len(row) else None


def _bars(
    rows: Sequence[Sequence[Any]], x: Column, y: Column | None, y_name: str, spec: ChartSpec, max_bars: int
) -> ChartData | NothingToChart:
    totals: dict[str, float] = {}
    counts: dict[str, int] = {}
    skipped = 0
    for row in rows:
        if y is None:
            value = 1.0
        else:
            got = numeric(y, _cell(row, y.index))
            if got is None:
                skipped += 1
                continue
            value = got
        key = _label(_cell(row, x.index), x)
        totals[key] = totals.get(key, 0.0) + value
        counts[key] = counts.get(key, 0) + 1
    if not totals:
        return NothingToChart(f"every row's {y_name} is NULL")
    repeats = any(n > 1 for n in counts.values())
    mean = spec.aggregate == "mean" and y is not None

    def shown(key: str) -> float:
        return totals[key] / counts[key] if mean else totals[key]

    ranked = sorted(totals, key=lambda k: -shown(k))  # stable: ties keep the table's order
    parts = []
    if len(ranked) > max_bars:
        top, rest = ranked[: max_bars - 1], ranked[max_bars - 1 :]
        labels = [*top, "other"]
        if mean:
            other = sum(totals[k] for k in rest) / sum(counts[k] for k in rest)
        else:
            other = sum(totals[k] for k in rest)
        values = [shown(k) for k in top] + [other]
        parts.append(f"{len(top)} of {len(ranked):,} categories, rest as other ({'mean' if mean else 'sum'})")
    else:
        labels, values = ranked, [shown(k) for k in ranked]
        parts.append(_count(len(ranked), "category"))
    if y is None:
        label = "count(*)"
    elif repeats or mean:
        label = f"{'avg' if mean else 'sum'}({y_name})"
    else:
        label = y_name
    if y is not None and y.from_text:
        parts.append("numbers read from text")
    if skipped:
        parts.append(_skipped(skipped, y_name))
    caption = " · ".join(["bar", f"x = {x.name}", f"y = {label}", *parts])
    return ChartData(spec, x.name, label, tuple(labels), (), tuple(values), (), caption)


def _lines(
    rows: Sequence[Sequence[Any]], x: Column, y: Column | None, y_name: str, spec: ChartSpec, max_points: int
) -> ChartData | NothingToChart:
    if y is None:
        return NothingToChart("lines need a number column for y")
    pairs = []
    skipped = 0
    for row in rows:
        a, b = numeric(x, _cell(row, x.index)), numeric(y, _cell(row, y.index))
        if a is None or b is None:
            skipped += 1
            continue
        pairs.append((a, b))
    if len(pairs) < 2:
        return NothingToChart(f"lines need two rows with both {x.name} and {y.name}; the table has {len(pairs)}")
    order = np.argsort(np.array([p[0] for p in pairs]), kind="stable")
    xs = np.array([pairs[i][0] for i in order], dtype=float)
    ys = np.array([pairs[i][1] for i in order], dtype=float)
    parts = [_count(len(xs), "point")]
    unique, first, counts = np.unique(xs, return_index=True, return_counts=True)
    if len(unique) < len(xs):  # rows that share an x: one point each, their mean (a line has one y per x)
        ys = np.add.reduceat(ys, first) / counts
        xs = unique
        parts = [f"{len(pairs):,} rows, the mean {y.name} of each {x.name}: {_count(len(xs), 'point')}"]
        pairs = list(zip(xs.tolist(), ys.tolist()))
    if len(xs) > max_points:
        groups = np.array_split(np.arange(len(xs)), max_points)
        xs = np.array([xs[g].mean() for g in groups])
        ys = np.array([ys[g].mean() for g in groups])
        parts.append(f"{len(pairs):,} points averaged into {len(xs):,}")
        parts = parts[-1:] if parts[0].endswith("points") and "rows" not in parts[0] else parts
    if skipped:
        parts.append(_skipped(skipped, f"both {x.name} and {y.name}"))
    ticks: tuple[tuple[float, str], ...] = ()
    if x.type == "date":
        picks = np.unique(np.linspace(0, len(xs) - 1, num=min(5, len(xs))).round().astype(int))
        ticks = tuple((float(xs[i]), _date_label(float(xs[i]))) for i in picks)
    x_label = f"{x.name} (numbers read from text)" if x.from_text and x.type == "number" else x.name
    caption = " · ".join(["lines", f"x = {x_label}", f"y = {y_name}", *parts])
    return ChartData(spec, x.name, y.name, (), tuple(float(v) for v in xs), tuple(float(v) for v in ys), ticks, caption)


def _histogram(
    rows: Sequence[Sequence[Any]], y: Column | None, y_name: str, spec: ChartSpec, bins: int
) -> ChartData | NothingToChart:
    if y is None:
        return NothingToChart("a histogram needs a number column")
    values = [v for v in (numeric(y, _cell(row, y.index)) for row in rows) if v is not None]
    if not values:
        return NothingToChart(f"every row's {y.name} is NULL")
    data = np.array(values, dtype=float)
    n_bins = max(1, min(bins, len(np.unique(data))))
    counts, edges = np.histogram(data, bins=n_bins)
    labels = tuple(f"{_short(edges[i])}–{_short(edges[i + 1])}" for i in range(len(counts)))
    parts = [f"{_count(len(values), 'value')} in {_count(len(counts), 'bin')}"]
    if len(values) < len(rows):
        parts.append(_skipped(len(rows) - len(values), y.name))
    caption = " · ".join(["histogram", f"x = {y_name}", "y = rows", *parts])
    return ChartData(spec, y.name, "rows", labels, (), tuple(float(c) for c in counts), (), caption)


def _short(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1e6 else f"{value:.2e}"


def nice_ticks(low: float, high: float, most: int = 6) -> list[float]:
    """Round tick values from ``low`` to ``high`` (both included when round): 0, 0.2, … 1 for 0–1; at most
    ``most`` of them."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else []
    raw = (high - low) / max(1, most - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    start = math.ceil(low / step - 1e-9) * step
    ticks: list[float] = []
    t = start
    while t <= high + step * 1e-9 and len(ticks) <= most:
        ticks.append(round(t, 12))
        t += step
    return ticks


def round_axis(low: float, high: float, most: int = 6) -> tuple[float, float, list[float]]:
    """An axis from ``low`` to ``high`` widened to round ends, and its round ticks: (0, 1, [0, 0.2, … 1]) for scores
    from 0.1 to 0.95, never 0 … 1.33."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return low, high, []
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(1, most - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    lo = math.floor(low / step + 1e-9) * step
    hi = math.ceil(high / step - 1e-9) * step
    ticks = nice_ticks(lo, hi, most=int(round((hi - lo) / step)) + 1)
    return round(lo, 12), round(hi, 12), ticks


__all__ = [
    "round_axis",
    "COUNT",
    "KINDS",
    "MAX_BARS",
    "MAX_POINTS",
    "ChartData",
    "ChartSpec",
    "Column",
    "NothingToChart",
    "build",
    "choose",
    "column_types",
    "cycle",
    "kinds_of",
    "nice_ticks",
    "spec_for",
    "valid_x",
    "valid_y",
]
