"""The compiler's view of a query: execution modes, and the plan it shows (plain data).

The WHERE's DNF is :mod:`engines.suql.dnf` (re-exported here); the cost model that fills the plan's
estimates is ``engines.suql.compiler.cost``, the passes of ``engines.suql.compiler.passes`` build the
plan, and ``engines.suql.compiler`` runs what it describes.  Nothing here imports the compiler.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from engines.suql.dnf import MAX_DNF_DISTANCE, Conjunct, dnf_text, flatten, to_dnf

__all__ = [
    "DEFAULT_MODE",
    "DUCKDB_UDF",
    "MAX_DNF_DISTANCE",
    "MODES",
    "Conjunct",
    "ConjunctPlan",
    "Mode",
    "Plan",
    "PredicateEstimate",
    "dnf_text",
    "flatten",
    "mode_named",
    "to_dnf",
]


# --- execution modes (lecture 7 §3.3) -----------------------------------------------------------


@dataclass(frozen=True)
class Mode:
    name: str
    title: str
    udf: bool = False  # DuckDB runs the query as written, answer() a per-row function (an extra, beside B)
    as_written: bool = False  # B: a row-at-a-time engine: the WHERE left to right, short-circuit, stop at LIMIT
    structured_first: bool = True  # per conjunct, structured predicates run first in DuckDB
    order_predicates: bool = True  # answer() predicates ordered by cost x selectivity
    short_circuit: bool = True  # stop evaluating a row's conjunct at the first False
    lazy: bool = True  # stop once LIMIT (+ OFFSET) is met, when the output order allows
    retrieval: bool = True  # visit candidates by retrieval score
    feedback: bool = True  # E, F: the visit order learns from the answers as they arrive (retrieval modes only)
    cap: int | None = None  # F: visit at most this many candidates (approximate)
    summaries_for_all_matches: bool = False  # A: SELECT-list calls for every passing row

    def describe(self) -> str:
        return f"{self.name} — {self.title}"


MODES: dict[str, Mode] = {
    "A": Mode(
        "A",
        "naive: answer() on every row, then filter, summaries for every passing row, then LIMIT",
        structured_first=False,
        order_predicates=False,
        short_circuit=False,
        lazy=False,
        retrieval=False,
        summaries_for_all_matches=True,
    ),
    "B": Mode(
        "B",
        "the query as written, row by row like SQLite: the WHERE left to right with short-circuit, stop at LIMIT",
        as_written=True,
        structured_first=False,
        order_predicates=False,
        retrieval=False,
    ),
    "C": Mode(
        "C",
        "predicate ordering: structured predicates first, answer() ordered by cost x selectivity",
        lazy=False,
        retrieval=False,
    ),
    "D": Mode("D", "C + lazy evaluation: stop when LIMIT is met", retrieval=False),
    "E": Mode("E", "D + retrieval ordering: most promising rows first (BM25)"),
    "F": Mode("F", "E + a retrieval cap: only the best-scoring candidates are examined (approximate)", cap=20),
}
DEFAULT_MODE = "E"
DUCKDB_UDF = Mode(
    "B-duckdb",
    "the query as written, run by DuckDB with answer() as a per-row function "
    "(DuckDB orders the filters itself and evaluates whole vectors of rows)",
    udf=True,
    structured_first=False,
    order_predicates=False,
    lazy=False,
    retrieval=False,
)
"""Not one of the six modes: what an unmodified vectorised engine does, measured beside B."""


def mode_named(name: str, *, cap: int | None = None, order_predicates: bool | None = None) -> Mode:
    from engines.suql.language import SuqlError

    m = MODES.get(name.strip().upper()) or (DUCKDB_UDF if name.strip().upper() == DUCKDB_UDF.name.upper() else None)
    if m is None:
        raise SuqlError(f"Unknown execution mode {name!r}: choose one of {', '.join(MODES)} (or {DUCKDB_UDF.name}).")
    if cap is not None and m.cap is not None:
        m = replace(m, cap=cap)
    if order_predicates is not None:
        m = replace(m, order_predicates=order_predicates)
    return m


# --- the plan shown to the user ------------------------------------------------------------


@dataclass(frozen=True)
class PredicateEstimate:
    """One answer() predicate of a conjunct as the cost model (``engines.suql.compiler.cost``) sees it."""

    sql: str
    written_position: int
    cost: float  # LLM calls one check costs
    selectivity: float  # estimated share of candidates that go on (True or Unknown) past this predicate
    source: str  # how the selectivity was estimated

    @property
    def rank(self) -> float:
        """Order by c / (1 - s): cheap predicates that stop many rows go first."""
        return self.cost / max(1e-6, 1.0 - self.selectivity)


@dataclass(frozen=True)
class ConjunctPlan:
    index: int
    structured: str
    candidates: int
    predicates: tuple[PredicateEstimate, ...]  # in evaluation order
    expected_calls_per_row: float


@dataclass(frozen=True)
class Plan:
    mode: Mode
    dnf: str
    conjuncts: tuple[ConjunctPlan, ...] = ()
    visit_order: str = ""
    lazy: bool = False
    lazy_reason: str = ""
    stop_after: int | None = None
    cap: int | None = None
    select_calls: tuple[str, ...] = ()
    select_calls_for: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def lines(self) -> list[str]:
        out = [f"mode {self.mode.describe()}"]
        if self.mode.udf:
            out.append("DuckDB evaluates the WHERE in its own order; answer() runs as a scalar function per row")
        for c in self.conjuncts:
            head = f"conjunct {c.index + 1}: structured {c.structured} → {c.candidates} candidate rows"
            out.append(head)
            for i, p in enumerate(c.predicates, 1):
                out.append(
                    f"  {i}. {p.sql}   cost {p.cost:g} call, passes ≈ {p.selectivity:.2f} ({p.source}), "
                    f"rank {p.rank:.2f}"
                    + (f", written #{p.written_position + 1}" if p.written_position != i - 1 else "")
                )
            if c.predicates:
                out.append(f"  expected calls per candidate ≈ {c.expected_calls_per_row:.2f}")
        if self.visit_order:
            out.append(f"visit order: {self.visit_order}")
        if not self.mode.udf:  # DuckDB decides for B-duckdb: laziness is not the executor's
            if self.lazy:
                out.append(f"lazy: stop after {self.stop_after} matching row(s) — {self.lazy_reason}")
            elif self.lazy_reason:
                out.append(f"not lazy: {self.lazy_reason}")
        if self.cap is not None:
            out.append(f"retrieval cap: at most {self.cap} candidates examined — results are approximate")
        if self.select_calls:
            out.append(f"SELECT-list calls ({', '.join(self.select_calls)}) for {self.select_calls_for}")
        out.extend(self.notes)
        return out

    # Hand-written: each conjunct and predicate reshaped (rounded, renamed) from the plan's own records.
    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode.name,
            "conjuncts": [
                {
                    "structured": c.structured,
                    "candidates": c.candidates,
                    "predicates": [
                        {
                            "sql": p.sql,
                            "cost": p.cost,
                            "selectivity": round(p.selectivity, 4),
                            "rank": round(p.rank, 4),
                            "estimated_from": p.source,
                            "written_position": p.written_position,
                        }
                        for p in c.predicates
                    ],
                    "expected_calls_per_row": round(c.expected_calls_per_row, 4),
                }
                for c in self.conjuncts
            ],
            "visit_order": self.visit_order,
            "lazy": self.lazy,
            "lazy_reason": self.lazy_reason,
            "stop_after": self.stop_after,
            "cap": self.cap,
            "select_calls": list(self.select_calls),
            "select_calls_for": self.select_calls_for,
            "notes": list(self.notes),
            "lines": self.lines(),
        }
