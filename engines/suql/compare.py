"""Compare the execution modes: one SUQL query run in each of A–F (lecture 7 §3.3).

:func:`compare_modes` compiles the query once (a query that cannot parse fails once,
not six times), then runs it in every mode on the same engine and returns a
:class:`Comparison`: per mode the answer()/summary() calls, the cached answers, the
rows examined, the rows and the rows to verify, the wall time, and whether its rows
agree with the reference mode's (A, the naive evaluation, by default).

A mode that fails with an :class:`~engines.errors.EngineError` (its budget, a database
error) is recorded with its message and the others still run; a cancellation stops the
whole comparison (:class:`~engines.errors.Cancelled` propagates).  Progress goes to
``emit`` as :class:`ModeStarted`, :class:`ModeProgressed` (every ``progress_every``
calls) and :class:`ModeCompared`; the per-call events of each run are counted, not
forwarded, so a listener is not flooded by the naive mode's hundreds of calls.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engines.errors import Cancelled, EngineError
from engines.events import CallFinished, Emit, Event, ignore

if TYPE_CHECKING:  # the compiler (sqlglot, DuckDB) loads when a comparison runs, not when its types are imported
    from sqlglot import exp

    from engines.sources import SuqlRunner
    from engines.suql.execute import SuqlResult

REFERENCE_MODE = "A"
"""The mode the others are checked against: A evaluates answer() on every row, nothing skipped."""
PROGRESS_EVERY = 10
"""While a mode runs, :class:`ModeProgressed` is emitted every this many answer()/summary() calls."""


# --- events ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModeStarted(Event):
    """The run in ``mode`` began."""

    mode: str


@dataclass(frozen=True)
class ModeProgressed(Event):
    """The run in ``mode`` has made this many calls so far."""

    mode: str
    answer_calls: int
    summary_calls: int


@dataclass(frozen=True)
class ModeCompared(Event):
    """The run in one mode ended (or failed): its line of the comparison."""

    outcome: ModeOutcome


# --- the result --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModeOutcome:
    """One mode's run: what it cost and what it returned (or why it failed)."""

    mode: str
    title: str
    answer_calls: int = 0
    summary_calls: int = 0
    cached_calls: int = 0
    rows_examined: int = 0
    rows: int = 0
    to_verify: int = 0
    approximate: bool = False
    budget_exhausted: bool = False
    wall_s: float = 0.0
    agrees: bool | None = None
    """Its rows are the reference mode's (as a multiset); None for the reference itself, a failed mode,
    or when the reference failed."""
    error: str | None = None
    result: SuqlResult | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    # Hand-written: its status is computed, and the result it holds is not printed.
    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "title": self.title,
            "status": "ok" if self.ok else "failed",
            "answer_calls": self.answer_calls,
            "summary_calls": self.summary_calls,
            "cached_calls": self.cached_calls,
            "rows_examined": self.rows_examined,
            "rows": self.rows,
            "to_verify": self.to_verify,
            "approximate": self.approximate,
            "budget_exhausted": self.budget_exhausted,
            "wall_s": round(self.wall_s, 4),
            "agrees": self.agrees,
            "error": self.error,
        }


@dataclass(frozen=True)
class Comparison:
    """A query run in several modes, in the order they ran."""

    query: str
    reference: str
    modes: tuple[ModeOutcome, ...]
    limit_without_order: bool = False
    """The query has a LIMIT but no ORDER BY: any rows that qualify will do, so modes that visit rows in
    another order may return other rows and still be right (``agrees`` False is then no error)."""

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(o.mode for o in self.modes if not o.ok)

    def fewest_answer_calls(self) -> tuple[tuple[str, ...], int] | None:
        """The modes (that ran) with the fewest answer() calls, and that number; None when none ran."""
        calls = {o.mode: o.answer_calls for o in self.modes if o.ok}
        if not calls:
            return None
        fewest = min(calls.values())
        return tuple(m for m, n in calls.items() if n == fewest), fewest

    @property
    def approximate(self) -> bool:
        return any(o.approximate for o in self.modes)

    def outcome(self, mode: str) -> ModeOutcome:
        for o in self.modes:
            if o.mode == mode:
                return o
        raise KeyError(mode)

    # Hand-written: each mode's outcome and the fewest calls are computed, not its fields.
    def to_json(self) -> dict[str, Any]:
        best = self.fewest_answer_calls()
        return {
            "query": self.query,
            "reference": self.reference,
            "modes": [o.to_json() for o in self.modes],
            "failed": list(self.failed),
            "limit_without_order": self.limit_without_order,
            "fewest_answer_calls": None if best is None else {"modes": list(best[0]), "calls": best[1]},
        }


# --- running it ----------------------------------------------------------------------------------


class ModeProgress:
    """The ``emit`` of one mode's run: counts its answer()/summary() calls and reports every few."""

    def __init__(self, mode: str, emit: Emit, every: int = PROGRESS_EVERY) -> None:
        self.mode = mode
        self.emit = emit
        self.every = every
        self.answer = 0
        self.summary = 0

    def __call__(self, event: Event) -> None:
        if isinstance(event, CallFinished) and event.function in ("answer", "summary"):
            if event.function == "answer":
                self.answer += 1
            else:
                self.summary += 1
            if (self.answer + self.summary) % self.every == 0:
                self.emit(ModeProgressed(self.mode, self.answer, self.summary))


def row_multiset(result: SuqlResult) -> Counter[str]:
    """A result's rows as a multiset (each row as canonical JSON): order does not count."""
    from engines.sql.sandbox import to_jsonable

    return Counter(json.dumps([to_jsonable(v) for v in row], sort_keys=True, default=str) for row in result.rows)


def compare_modes(
    engine: SuqlRunner,
    sql: str,
    *,
    modes: Sequence[str] | None = None,
    reference: str = REFERENCE_MODE,
    emit: Emit = ignore,
    cancel: threading.Event | None = None,
    clock: Callable[[], float] | None = None,
    progress_every: int = PROGRESS_EVERY,
) -> Comparison:
    """Run ``sql`` in each of ``modes`` (default: A–F) and compare them (see the module docstring).

    Raises the engine's :class:`~engines.errors.EngineError` when the query cannot compile (nothing
    ran), :class:`~engines.errors.Cancelled` when ``cancel`` is set, and
    :class:`~engines.suql.language.SuqlError` for an unknown mode name.
    """
    from engines.suql.plan import MODES, mode_named

    if progress_every < 1:
        raise ValueError("progress_every must be at least 1")
    names = tuple(mode_named(m).name for m in (modes if modes is not None else MODES))
    reference = mode_named(reference).name
    now = clock or time.perf_counter
    if reference in names:  # the reference runs first, so every later mode is judged as it ends
        names = (reference, *(n for n in names if n != reference))
    tree, _ = engine.compile(sql)
    outcomes: list[ModeOutcome] = []
    expected: Counter[str] | None = None
    for name in names:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        title = mode_named(name).title
        emit(ModeStarted(name))
        start = now()
        try:
            result = engine.run(sql, mode=name, emit=ModeProgress(name, emit, progress_every), cancel=cancel)
        except Cancelled:
            raise
        except EngineError as e:
            outcome = ModeOutcome(name, title, error=str(e) or type(e).__name__, wall_s=now() - start)
        else:
            s = result.stats
            rows = row_multiset(result)
            if name == reference:
                expected = rows
            outcome = ModeOutcome(
                name,
                title,
                s.answer_calls,
                s.summary_calls,
                s.cached_calls,
                s.rows_examined,
                len(result.rows),
                len(result.to_verify),
                result.approximate,
                result.budget_exhausted,
                now() - start,
                agrees=None if name == reference or expected is None else rows == expected,
                result=result,
            )
        outcomes.append(outcome)
        emit(ModeCompared(outcome))
    return Comparison(sql, reference, tuple(outcomes), limit_without_order=_limit_without_order(tree))


def _limit_without_order(tree: exp.Expr) -> bool:
    """The outermost query (a SELECT or a set operation) limits its rows without ordering them."""
    return tree.args.get("limit") is not None and tree.args.get("order") is None


__all__ = [
    "Comparison",
    "ModeCompared",
    "ModeOutcome",
    "ModeProgress",
    "ModeProgressed",
    "ModeStarted",
    "PROGRESS_EVERY",
    "REFERENCE_MODE",
    "compare_modes",
    "row_multiset",
]
