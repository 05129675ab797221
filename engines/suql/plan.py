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
    "CascadeReport",
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
    cascade: bool = False  # G: a proxy decides the rows it is sure of (engines.suql.compiler.cascade)
    targets: tuple[float, float, float] = (0.9, 0.9, 0.05)  # G: precision, recall, delta
    cascade_sample: int = 400  # G: rows drawn for the LLM to label
    cascade_seed: int = 0  # G: the sample's seed (a run is deterministic)

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
    "G": Mode(
        "G",
        "E + a cascade: a proxy decides the rows it is sure of, to a stated precision and recall (SUPG)",
        cascade=True,
    ),
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
class CascadeReport:
    """Mode G's cascade as decided so far (``engines.suql.compiler.cascade``): its targets, sample, thresholds."""

    precision: float
    recall: float
    delta: float
    candidates: int
    proxy: str
    pilot: int = 0  # rows the pilot asked (what the learned proxy was taught by)
    draws: int = 0
    sampled: int = 0  # distinct rows the draws asked of the LLM
    sample_yes: int = 0
    positives: float | None = None  # estimated 'Yes' rows among the candidates
    positives_interval: tuple[float, float] | None = None
    accept: float | None = None
    reject: float | None = None
    precision_bound: float | None = None
    recall_bound: float | None = None
    accepted: int = 0  # rows accepted by the proxy, without a call
    rejected: int = 0  # rows rejected by the proxy, without a call
    band: int | None = None  # rows between the thresholds, asked of the LLM (None: not decided yet)
    pool: int = 0  # candidates the pilot did not ask: what the sample, the estimate and the thresholds are over
    proof_draws: float | None = None  # a recall proof's least draws at that estimate (cascade_stats.proof_draws)
    fallback: str = ""  # why the cascade did not run (then the mode runs as E)

    def lines(self) -> list[str]:
        conf = 1.0 - self.delta
        out = [
            f"cascade (SUPG): precision ≥ {self.precision:.2f} and recall ≥ {self.recall:.2f} against the LLM's "
            f"answers, together at confidence {conf:.0%} (δ = {self.delta:g}, δ/2 each)"
        ]
        if self.fallback:
            out.append(f"  not cascaded: {self.fallback}; the rows are decided as in mode E")
            return out
        out.append(f"  proxy: {self.proxy}")
        if self.pilot:
            out.append(f"  pilot: {self.pilot} rows asked to teach the proxy")
        if not self.draws:
            return out
        out.append(
            f"  sample: {self.draws} draws (∝ √score, 10% uniform) of {self.candidates:,} candidates → "
            f"{self.sampled} rows asked, {self.sample_yes} said Yes"
        )
        if self.positives is not None and self.positives_interval is not None:
            lo, hi = self.positives_interval
            among = f"the {self.pool:,} candidates the pilot did not ask" if self.pool else "the candidates"
            out.append(f"  'Yes' rows among {among} ≈ {self.positives:,.0f} ({conf:.0%} interval {lo:,.0f}–{hi:,.0f})")
        if self.band is None:
            return out
        half = 1.0 - self.delta / 2
        if self.accept is not None and self.precision_bound is not None:
            out.append(
                f"  accept score ≥ {self.accept:.3f}: {self.accepted:,} rows matched by the proxy without a call "
                f"(their precision ≥ {self.precision_bound:.3f} at {half:.1%})"
            )
        else:
            out.append("  accept: none (no threshold's precision could be shown to meet the target)")
        if self.reject is not None and self.recall_bound is not None:
            out.append(
                f"  reject score < {self.reject:.3f}: {self.rejected:,} rows left out by the proxy without a call, "
                f"never shown as 'No' (recall kept ≥ {self.recall_bound:.3f} at {half:.1%})"
            )
        else:
            out.append("  reject: none (no threshold's recall could be shown to meet the target)")
            if self.proof_draws is not None and self.positives is not None:
                rows = self.pool or self.candidates
                need = (
                    "more draws than there are rows: no proxy can leave a row out here"
                    if self.proof_draws >= rows
                    else f"≥ {self.proof_draws:,.0f} draws among them, whatever the proxy; the sample made {self.draws:,}"
                )
                out.append(
                    f"    why: with ≈ {self.positives:,.0f} 'Yes' of {rows:,} rows, showing that the rows left out hold "
                    f"at most {1.0 - self.recall:.0%} of them takes {need}"
                )
        out.append(f"  band: {self.band:,} rows asked of the LLM")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "precision_target": self.precision,
            "recall_target": self.recall,
            "delta": self.delta,
            "candidates": self.candidates,
            "proxy": self.proxy,
            "pilot": self.pilot,
            "draws": self.draws,
            "sampled": self.sampled,
            "sample_yes": self.sample_yes,
            "positives_estimate": self.positives,
            "positives_interval": list(self.positives_interval) if self.positives_interval else None,
            "accept_threshold": self.accept,
            "reject_threshold": self.reject,
            "precision_bound": self.precision_bound,
            "recall_bound": self.recall_bound,
            "accepted_by_proxy": self.accepted,
            "rejected_by_proxy": self.rejected,
            "band": self.band,
            "pool": self.pool,
            "recall_proof_draws": self.proof_draws if self.proof_draws != float("inf") else None,
            "fallback": self.fallback,
        }


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
    cascade: CascadeReport | None = None  # mode G

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
        if self.cascade is not None:
            out.extend(self.cascade.lines())
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
            **({"cascade": self.cascade.to_json()} if self.cascade is not None else {}),
            "lines": self.lines(),
        }
