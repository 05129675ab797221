"""SUQL benchmark (lecture 7 §3.3-§3.4): every mode against the fair baselines and against the limit.

    python benchmarks/suql_bench.py [--queries 60] [--rows 600] [--latency 0.05] [--pool 4] [--json]

1. the seeded workload (engines.suql.workload) in every mode and in B-duckdb: answer() calls per query,
   precision and recall (the evaluator reads the world's hidden truth; the executors never do);
2. ratios side by side: E/B split by written order (answer() written before the structured conditions,
   or after them), E/B-duckdb (DuckDB as it is, answer() a per-row function) and E/C;
3. E against an oracle lower bound: the fewest calls any executor could make given the simulated LLM's
   actual answers (see :func:`oracle_calls`), median and p90 over the LIMIT and the list-all queries,
   and per query class; beside E, ``E-static`` (the retrieval order fixed before the first call, without
   learning from the answers) shows what the adaptive ranker adds; ``E-sentence`` (mode E with
   ``suql_ranker = "sentence"``: the sentence model all-MiniLM-L6-v2 instead of WordLlama's static
   vectors, measured when the optional extra ``sentence`` is installed) beside E, per class too; and where
   E's calls on the LIMIT queries go, per class, by what the rows asked answered (:func:`call_outcomes`);
4. the bounded pool: a list-all and a LIMIT query with a simulated latency L per call on P workers,
   against ceil(calls / P) x L (the wall time, and the span from the first call's start to the last call's
   end: the pool's schedule without the work before and after the calls; beside them the executor's own
   work, timed by the same run again with every answer cached), whether a LIMIT
   without ORDER BY returns the same rows run after run, and the speculative calls a LIMIT 1 query
   wastes (bound: P - 1);
5. compile time (parse + DNF, no database work) over the SUQL paper's queries: median and p90;
6. rows to verify settled on demand (issue 29.0): mode E with lazy verification (``E-lazy``, the app's and the CLI's
   default: a row stops at its first Unknown condition and is listed unsettled) and with eager verification
   (``E``, every condition of such a row asked), against the matches-only bound (the fewest calls that return the
   matches alone: :func:`oracle_calls` with ``to_verify=False``) and against the strategies of two peers on the same
   queries, each peer's model answering exactly what the simulated LLM answers (:func:`peer_calls`):

   - BlendSQL (Glenn et al., "BlendSQL: A Scalable Dialect for Unifying Hybrid Question Answering in Relational
     Algebra", ACL Findings 2024; github.com/parkervg/blendsql, its LLMMap ingredient): each condition is a map
     over the distinct values of the column, the conditions in written order, the rows in table order, each map
     only over the rows every earlier map kept ('Unknown' is no match); a LIMIT stops only the last map early, once
     its k-th match is in — with 1 call in flight, or 32 (a batch answered together, so the stop comes at the end
     of the batch that found it);
   - LOTUS (Patel et al., "Semantic Operators: A Declarative Model for Rich, AI-based Data Processing", VLDB 2025;
     github.com/lotus-data/lotus, ``lotus/sem_ops/sem_filter.py``): ``sem_filter`` asks its condition of every row
     of the frame, one prompt per row, each filter over the rows the earlier ones kept; the LIMIT is ``head(k)``
     on the filtered frame, so it saves nothing.

   Neither peer lists rows to verify: their bound is the matches-only one.  Targets (issue 29): E-lazy at most
   0.95x the best peer on the list-all queries and 0.3x on the LIMIT queries, with the same rows as mode A.
7. with ``--cascade``: mode G against E on the 5,000-restaurant world (``benchmarks/suql_cascade.py``).

Nothing here is a test: it prints what it measures (``--json``: one object).  Every number comes from
running the engines.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engines.events import CallFinished, CallStarted, ignore
from engines.llm import sentence_vectors
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.retrieval.bm25 import as_text
from engines.settings import Settings
from engines.sql.sandbox import Sandbox
from engines.suql.examples import LECTURE, paper_queries
from engines.suql.execute import RowDecided, SuqlEngine
from engines.suql.plan import DUCKDB_UDF, MODES, Mode
from engines.suql.tasks import ANSWER, AnswerInput
from engines.suql.workload import TEXT_CONDITIONS, WorkloadQuery, generate, truly_matching
from worlds.restaurants import build

STATIC = replace(MODES["E"], name="E-static", feedback=False)  # E without learning from the answers
LAZY = "E-lazy"  # mode E with lazy verification (suql_verify = "lazy", the app's and the CLI's default)
PEERS = ("BlendSQL-1", "BlendSQL-32", "LOTUS")  # the peers' strategies (see peer_calls)
SENTENCE = "E-sentence"  # mode E with suql_ranker = "sentence" (all-MiniLM-L6-v2, the optional extra), when installed
RUN_MODES = (*MODES, DUCKDB_UDF.name, STATIC.name, LAZY)


def run_modes() -> tuple[str, ...]:
    """The modes this run measures: every mode, B-duckdb, E-static, and E-sentence where its extra is installed."""
    return RUN_MODES + ((SENTENCE,) if sentence_vectors.missing() is None else ())


def quantile(xs: Sequence[float], q: float) -> float:
    """The q-quantile by linear interpolation (statistics.quantiles' 'inclusive' method)."""
    s = sorted(xs)
    if not s:
        return float("nan")
    if len(s) == 1:
        return float(s[0])
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summary(xs: Sequence[float]) -> dict[str, float]:
    return {"n": len(xs), "median": round(quantile(xs, 0.5), 3), "p90": round(quantile(xs, 0.9), 3)}


# --- the oracle ---------------------------------------------------------------------------------------


def oracle_calls(answers: Sequence[tuple[str, Sequence[Any]]], limit: int | None, *, to_verify: bool = True) -> int:
    """The fewest answer() calls any executor could make for ``WHERE structured AND answer(t, q1) = 'Yes'
    AND ... AND answer(t, qn) = 'Yes' [LIMIT k]``, given the LLM's actual answers: ``answers`` holds, per
    candidate row (one that passes the structured conditions, which cost no call), its text and its
    n values.

    A row is a match only when all n answers are 'Yes', and no executor can know that without asking
    all n (any one could have said 'No').  A row is out ('No' under Kleene AND) as soon as one answer
    is 'No': one call, the right one, at best.  A row with no 'No' but an Unknown is "to verify": all n
    are needed to know that none says 'No'.  Rows with the same text share their calls (an executor asks
    a (text, question) once).

    - LIMIT k with at least k matches: k·n — the k matches with the fewest distinct texts, n calls each;
      nothing needs to be known about the other rows.
    - otherwise (no LIMIT, or fewer matches than the LIMIT): every row must be decided: n calls per text
      with no 'No', 1 per text with a 'No'.  That is the list-all bound.

    ``to_verify=False``: the bound of an executor that returns the matches only and drops the rows whose
    WHERE is Unknown unexamined (B-duckdb: DuckDB's filter drops a row at its first answer that is not 'Yes'):
    1 call per text that is no match.  Modes A-F list the rows to verify, so theirs is the default.
    """
    by_text: dict[str, tuple[Any, ...]] = {}
    rows_of: dict[str, int] = {}
    for text, values in answers:
        by_text[text] = tuple(values)
        rows_of[text] = rows_of.get(text, 0) + 1
    n = max((len(v) for v in by_text.values()), default=0)
    matching = sorted((t for t, v in by_text.items() if all(x == "Yes" for x in v)), key=lambda t: -rows_of[t])
    if limit is not None:
        if limit == 0:
            return 0
        covered = texts = 0
        for t in matching:
            if covered >= limit:
                break
            covered += rows_of[t]
            texts += 1
        if covered >= limit:
            return texts * n
    if not to_verify:
        return sum(len(v) if all(x == "Yes" for x in v) else 1 for v in by_text.values())
    return sum(1 if any(x == "No" for x in v) else len(v) for v in by_text.values())


def peer_calls(answers: Sequence[tuple[str, Sequence[Any]]], limit: int | None, peer: str) -> tuple[int, int]:
    """The answer() calls a peer's strategy makes for ``WHERE structured AND answer(t, q1) = 'Yes' AND ...
    [LIMIT k]``, and the rows it returns, given the LLM's actual answers (``answers``: per candidate row in table
    order, its text and its values in written order; the structured conditions cost no call).

    ``BlendSQL-<b>``: one map per condition in written order over the distinct texts of the rows every earlier
    map kept (a text asked once per map), ``b`` calls in flight: the last map under a LIMIT stops at the end of
    the batch in which its k-th match came.  ``LOTUS``: each filter over every row the earlier ones kept, one call
    per row (no sharing of texts), then the first k rows."""
    n = max((len(v) for _, v in answers), default=0)
    rows = list(answers)
    calls = 0
    for i in range(n):
        last = i == n - 1
        if peer == "LOTUS":
            calls += len(rows)
            rows = [(t, v) for t, v in rows if v[i] == "Yes"]
            continue
        batch = int(peer.split("-")[1])
        asked: dict[str, Any] = {}
        kept: list[tuple[str, Sequence[Any]]] = []
        start, stop = 0, False
        while start < len(rows) and not stop:
            # the next batch: the rows up to the next ``batch`` texts not asked yet, all asked at once
            new, end = 0, start
            while end < len(rows) and (rows[end][0] in asked or new < batch):
                if rows[end][0] not in asked:
                    asked[rows[end][0]] = rows[end][1][i]
                    new += 1
                end += 1
            calls += new
            for t, v in rows[start:end]:
                if asked[t] == "Yes":
                    kept.append((t, v))
                if last and limit is not None and len(kept) >= limit:
                    stop = True
                    break
            start = end
        rows = kept
    returned = len(rows) if limit is None else min(limit, len(rows))
    return calls, returned


def oracle_for(world, llm: LLM, q: WorkloadQuery, peers: dict[str, tuple[int, int]]) -> tuple[int, int, set]:
    """The oracle bound of one workload query, its matches-only bound (:func:`oracle_calls`), and the ids of
    the candidate rows that match by the LLM's answers (from the same seeded simulated LLM the executors use);
    into ``peers``, each peer strategy's calls and rows returned (:func:`peer_calls`)."""
    by_feature = {feature: question for question, feature in TEXT_CONDITIONS}
    questions = [by_feature[f] for f in q.features]
    answers, matches = [], set()
    for r in world.rows:
        if r.location != q.location or (q.cuisine is not None and q.cuisine not in r.cuisines):
            continue
        text = as_text(list(r.reviews))
        values = [llm.run(ANSWER, AnswerInput(text, question)).value for question in questions]
        answers.append((text, values))
        if all(x == "Yes" for x in values):
            matches.add(r._id)
    peers.update({peer: peer_calls(answers, q.limit, peer) for peer in PEERS})
    return oracle_calls(answers, q.limit), oracle_calls(answers, q.limit, to_verify=False), matches


# --- the workload -------------------------------------------------------------------------------------

OUTCOMES = ("match", "silent_first", "no_first", "yes_then_not", "decided_in_full")


def call_outcomes(verdicts: dict[str, list[str]], n: int) -> dict[str, int]:
    """Where one run's answer() calls went, from each asked row's verdicts in the order they came (``n``: the
    query's conditions): ``match`` (n calls, all 'Yes'); ``silent_first`` / ``no_first`` (one call: the first
    condition asked was Unknown / 'No', and the row stopped there); ``yes_then_not`` (a 'Yes', then a
    condition that was not, or none: the row stopped once the LIMIT was met); ``decided_in_full`` (more calls after an answer that was not 'Yes': the LIMIT
    was not met and the row was decided in full)."""
    out = dict.fromkeys(OUTCOMES, 0)
    for answers in verdicts.values():
        if len(answers) == n and all(a == "Yes" for a in answers):
            kind = "match"
        elif len(answers) == 1:
            kind = {"Unknown": "silent_first", "No": "no_first"}.get(answers[0], "yes_then_not")
        elif answers[0] != "Yes":
            kind = "decided_in_full"
        else:
            kind = "yes_then_not"
        out[kind] += len(answers)
    return out


class Verdicts:
    """Each row's answer() verdicts in one run, in the order they came."""

    def __init__(self) -> None:
        self.by_row: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def __call__(self, event: Any) -> None:
        if isinstance(event, CallFinished) and event.function == "answer":
            with self._lock:
                self.by_row.setdefault(event.row_key or "", []).append(event.verdict)


@dataclass
class Run:
    query: WorkloadQuery
    oracle: int
    oracle_matches_only: int
    matches: set  # the ids that match by the LLM's answers
    calls: dict[str, int]
    ids: dict[str, set]
    approximate: dict[str, bool]
    outcomes: dict[str, int] | None = None  # mode E's calls by what the rows answered (:func:`call_outcomes`)
    outcomes_sentence: dict[str, int] | None = None  # the same for E-sentence
    peers: dict[str, tuple[int, int]] | None = None  # per peer strategy: its calls, the rows it returns

    @property
    def answer_first(self) -> bool:
        where = self.query.sql.split(" WHERE ", 1)[1]
        return where.startswith("answer(")

    @property
    def limit_met(self) -> bool:
        return self.query.limit is not None and len(self.matches) >= self.query.limit

    @property
    def klass(self) -> str:
        limit = "list-all" if self.query.limit is None else f"LIMIT {self.query.limit}"
        n = len(self.query.features)
        return f"{limit}, {n} condition{'s' if n > 1 else ''}"


def run_workload(world, truth, sandbox, n: int) -> tuple[list[Run], dict[str, Any]]:
    engine = SuqlEngine(sandbox, LLM(SimBackend()))
    modes = run_modes()
    # the same simulated LLM (its answers depend on the text and question only); only the ranker differs
    sentence = SuqlEngine(sandbox, LLM(SimBackend()), ranker="sentence") if SENTENCE in modes else None
    oracle_llm = LLM(SimBackend())
    mode_of: dict[str, str | Mode] = {STATIC.name: STATIC, SENTENCE: "E", LAZY: "E"}
    runs: list[Run] = []
    scores: dict[str, dict[str, list[float]]] = {m: {"precision": [], "recall": []} for m in modes}
    for q in generate(7, n):
        peers: dict[str, tuple[int, int]] = {}
        bound, matches_only, matches = oracle_for(world, oracle_llm, q, peers)
        gold = truly_matching(world, truth, q)
        run = Run(q, bound, matches_only, matches, {}, {}, {}, peers=peers)
        for m in modes:
            verdicts = Verdicts()
            on = sentence if m == SENTENCE and sentence is not None else engine
            result = on.run(
                q.sql,
                mode=mode_of.get(m, m),
                emit=verdicts if m in ("E", SENTENCE) else ignore,
                verify="lazy" if m == LAZY else "eager",
            )
            if m == "E":
                run.outcomes = call_outcomes(verdicts.by_row, len(q.features))
            elif m == SENTENCE:
                run.outcomes_sentence = call_outcomes(verdicts.by_row, len(q.features))
            ids = {rec["_id"] for rec in result.records()}
            run.calls[m] = result.stats.answer_calls
            run.ids[m] = ids
            run.approximate[m] = result.approximate
            if ids:
                scores[m]["precision"].append(len(ids & gold) / len(ids))
            if q.limit is None and gold:
                scores[m]["recall"].append(len(ids & gold) / len(gold))
        runs.append(run)
    return runs, scores


def ratio(runs: Sequence[Run], num: str, den: str) -> float | None:
    d = sum(r.calls[den] for r in runs)
    return round(sum(r.calls[num] for r in runs) / d, 3) if d else None


def figures(runs: Sequence[Run], scores: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
    mean = lambda xs: round(sum(xs) / len(xs), 4) if xs else None  # noqa: E731
    all_modes = tuple(scores)
    has_sentence = SENTENCE in all_modes
    modes = {
        m: {
            "answer_calls_mean": mean([r.calls[m] for r in runs]),
            "answer_calls": [r.calls[m] for r in runs],
            "approximate": [r.approximate[m] for r in runs],  # mode F's cap dropped candidates: not bound by the oracle
            "precision": mean(scores[m]["precision"]),
            "recall": mean(scores[m]["recall"]),
        }
        for m in all_modes
    }
    first = [r for r in runs if r.answer_first]
    after = [r for r in runs if not r.answer_first]
    limit = [r for r in runs if r.query.limit is not None]
    list_all = [r for r in runs if r.query.limit is None]

    def over_oracle(rs: Sequence[Run], mode: str = "E") -> dict[str, float]:
        return summary([r.calls[mode] / r.oracle for r in rs if r.oracle > 0])

    classes = sorted({r.klass for r in runs})
    by_class = {
        k: {
            "queries": len([r for r in runs if r.klass == k]),
            "oracle_mean": mean([r.oracle for r in runs if r.klass == k]),
            "E_mean": mean([r.calls["E"] for r in runs if r.klass == k]),
            "E-static_mean": mean([r.calls[STATIC.name] for r in runs if r.klass == k]),
            "E_over_oracle": over_oracle([r for r in runs if r.klass == k]),
            "E-static_over_oracle": over_oracle([r for r in runs if r.klass == k], STATIC.name),
            "E_calls_by_outcome": {
                o: sum((r.outcomes or {}).get(o, 0) for r in runs if r.klass == k) for o in OUTCOMES
            },
            # the queries whose LIMIT the LLM's matches can meet (the oracle's k·n bound): where E's waste is
            "E_calls_by_outcome_limit_met": {
                o: sum((r.outcomes or {}).get(o, 0) for r in runs if r.klass == k and r.limit_met) for o in OUTCOMES
            },
            "queries_limit_met": len([r for r in runs if r.klass == k and r.limit_met]),
            **(
                {
                    "E-sentence_mean": mean([r.calls[SENTENCE] for r in runs if r.klass == k]),
                    "E-sentence_over_oracle": over_oracle([r for r in runs if r.klass == k], SENTENCE),
                    "E-sentence_calls_by_outcome_limit_met": {
                        o: sum((r.outcomes_sentence or {}).get(o, 0) for r in runs if r.klass == k and r.limit_met)
                        for o in OUTCOMES
                    },
                }
                if has_sentence
                else {}
            ),
        }
        for k in classes
    }
    # the same rows: every exact mode returns rows that match by the LLM's answers — all of them without a
    # LIMIT; under one, as many as mode A (which rows is the executor's choice: any matches are a valid answer)
    same_rows = {
        m: all(
            r.ids[m] <= r.matches
            and (r.ids[m] == r.matches if r.query.limit is None else len(r.ids[m]) == len(r.ids["A"]))
            for r in runs
        )
        for m in all_modes
        if m != "F"
    }
    worst = sorted(limit, key=lambda r: -(r.calls["E"] / max(1, r.oracle)))[:5]
    return {
        "queries": len(runs),
        "modes": modes,
        "oracle": {
            "calls": [r.oracle for r in runs],
            "calls_mean": mean([r.oracle for r in runs]),
            # the bound of an executor that lists no rows to verify (B-duckdb's result)
            "matches_only": [r.oracle_matches_only for r in runs],
        },
        "e_over_b_by_order": {
            "answer_first": {"queries": len(first), "ratio": ratio(first, "E", "B")},
            "filters_first": {"queries": len(after), "ratio": ratio(after, "E", "B")},
            "all": {"queries": len(runs), "ratio": ratio(runs, "E", "B")},
        },
        "e_over_bduckdb": ratio(runs, "E", DUCKDB_UDF.name),
        "e_over_c": ratio(runs, "E", "C"),
        "e_over_oracle": {"limit": over_oracle(limit), "list_all": over_oracle(list_all)},
        "e_static_over_oracle": {
            "limit": over_oracle(limit, STATIC.name),
            "list_all": over_oracle(list_all, STATIC.name),
        },
        # suql_ranker = "sentence" (None: the extra is not installed, `pip install 'cs224v-tui[sentence]'`)
        "e_sentence_over_oracle": {"limit": over_oracle(limit, SENTENCE), "list_all": over_oracle(list_all, SENTENCE)}
        if has_sentence
        else None,
        "by_class": by_class,
        "worst_limit_queries": [
            {
                "sql": r.query.sql,
                "E": r.calls["E"],
                "E-static": r.calls[STATIC.name],
                **({"E-sentence": r.calls[SENTENCE]} if has_sentence else {}),
                "oracle": r.oracle,
                "E_calls_by_outcome": r.outcomes,
            }
            for r in worst
        ],
        "precision_identical_a_to_e": len({modes[m]["precision"] for m in "ABCDE"}) == 1,
        "rankers": {
            "static": {"limit": over_oracle(limit), "precision": modes["E"]["precision"]},
            "sentence": {"limit": over_oracle(limit, SENTENCE), "precision": modes[SENTENCE]["precision"]}
            if has_sentence
            else None,
        },
        "rows_are_the_llms_matches": same_rows,
        "verify": verify_figures(runs),
    }


def verify_figures(runs: Sequence[Run]) -> dict[str, Any]:
    """Section 6: E lazy and eager against the matches-only bound and the peers' strategies, per class."""

    def side(rs: Sequence[Run]) -> dict[str, Any]:
        total = {
            "E-lazy": sum(r.calls[LAZY] for r in rs),
            "E-eager": sum(r.calls["E"] for r in rs),
            "matches_only": sum(r.oracle_matches_only for r in rs),
            **{p: sum((r.peers or {})[p][0] for r in rs) for p in PEERS},
        }
        best = min(PEERS, key=lambda p: total[p])
        return {
            "queries": len(rs),
            "calls": total,
            "best_peer": best,
            "E-lazy_over_best_peer": round(total["E-lazy"] / total[best], 3) if total[best] else None,
            "E-eager_over_best_peer": round(total["E-eager"] / total[best], 3) if total[best] else None,
            "E-lazy_over_matches_only": round(total["E-lazy"] / total["matches_only"], 3)
            if total["matches_only"]
            else None,
            # every peer returns as many rows as mode A (the LLM's matches, or the first k of them)
            "peers_same_rows_as_A": all((r.peers or {})[p][1] == len(r.ids["A"]) for r in rs for p in PEERS),
            "E-lazy_same_rows_as_A": all(
                r.ids[LAZY] == r.ids["A"] if r.query.limit is None else len(r.ids[LAZY]) == len(r.ids["A"]) for r in rs
            ),
        }

    limit = [r for r in runs if r.query.limit is not None]
    list_all = [r for r in runs if r.query.limit is None]
    out = {"limit": side(limit), "list_all": side(list_all)}
    out["targets"] = {
        "list_all_at_most_0.95x_best_peer": (out["list_all"]["E-lazy_over_best_peer"] or 0) <= 0.95,
        "limit_at_most_0.3x_best_peer": (out["limit"]["E-lazy_over_best_peer"] or 0) <= 0.3,
    }
    return out


# --- the pool -----------------------------------------------------------------------------------------

POOL_QUERIES = {
    "list_all": "SELECT _id FROM restaurants WHERE location = 'Sunnyvale' AND answer(reviews, 'is it good for groups?') = 'Yes' "
    "AND answer(reviews, 'does it have outdoor seating?') = 'Yes'",
    "list_all_one_condition": "SELECT _id FROM restaurants WHERE location = 'Sunnyvale' AND price = 'cheap' "
    "AND answer(reviews, 'is the food spicy?') = 'Yes'",
    "limit": "SELECT _id FROM restaurants WHERE location = 'Mountain View' AND answer(reviews, 'is it romantic?') = 'Yes' "
    "AND answer(reviews, 'is it good for groups?') = 'Yes' LIMIT 3",
}


def pool_figures(sandbox, latency: float, size: int) -> dict[str, Any]:
    out: dict[str, Any] = {"pool": size, "latency_s": latency}
    engine = SuqlEngine(sandbox, LLM(SimBackend(latency_s=latency)), pool=size)
    # the engine's BM25 index of the reviews is built once, by its first query: not part of any pool figure
    engine.run("SELECT _id FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes' LIMIT 0")
    for name, sql in POOL_QUERIES.items():
        span = CallSpan()
        start = time.perf_counter()
        r = engine.run(sql, mode="E", emit=span)
        took = time.perf_counter() - start
        # the executor's own work (compile, DuckDB, ranking): the same run again, every answer now cached
        start = time.perf_counter()
        again = engine.run(sql, mode="E")
        own = time.perf_counter() - start
        ideal = math.ceil(r.stats.answer_calls / size) * latency
        out[name] = {
            "calls": r.stats.answer_calls,
            "wall_s": round(took, 3),
            "ideal_s": round(ideal, 3),
            "over_ideal": round(took / ideal, 3) if ideal else None,
            # from the first call's start to the last call's end: the pool's schedule, without the work
            # before the first call (compile, candidates, ranking) and after the last (the final query)
            "calls_span_s": round(span.span(), 3),
            "calls_span_over_ideal": round(span.span() / ideal, 3) if ideal else None,
            "executor_s": round(own, 3),
            "same_rows_cached": sorted(again.rows) == sorted(r.rows),
        }
    # a LIMIT without ORDER BY on the pool: the same rows on every run, whatever order the answers arrive in
    repeats = [
        tuple(
            SuqlEngine(sandbox, LLM(SimBackend(latency_s=latency)), pool=size).run(POOL_QUERIES["limit"], mode="E").rows
        )
        for _ in range(3)
    ]
    out["limit_rows_repeatable"] = len(set(repeats)) == 1
    sequential = SuqlEngine(sandbox, LLM(SimBackend()), pool=1)
    in_flight, late, beyond = [], [], []
    for question, _ in TEXT_CONDITIONS:
        sql1 = f"SELECT _id FROM restaurants WHERE location = 'Mountain View' AND answer(reviews, '{question}') = 'Yes' LIMIT 1"
        events = EventLog()
        pooled = engine.run(sql1, mode="E", emit=events)
        flying, started_after = events.at_first_match()
        in_flight.append(flying)
        late.append(started_after)
        beyond.append(pooled.stats.answer_calls - sequential.run(sql1, mode="E").stats.answer_calls)
    out["limit1_wasted"] = {
        "max": max(in_flight),
        "mean": round(statistics.mean(in_flight), 3),
        "bound": size - 1,
        "started_after_the_match": max(late),  # counted in max / mean too
        "pool_minus_sequential": {"max": max(beyond), "mean": round(statistics.mean(beyond), 3)},
    }
    return out


class CallSpan:
    """When a run's first call started and its last call finished."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last: float | None = None

    def __call__(self, event: Any) -> None:
        now = time.perf_counter()
        if isinstance(event, CallStarted) and self.first is None:
            self.first = now
        elif isinstance(event, CallFinished):
            self.last = now

    def span(self) -> float:
        return (self.last - self.first) if self.first is not None and self.last is not None else 0.0


class EventLog:
    """A run's call and row events, in the order they happened (the pool's workers emit too)."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self._lock = threading.Lock()

    def __call__(self, event: Any) -> None:
        if isinstance(event, (CallStarted, CallFinished, RowDecided)):
            with self._lock:
                self.events.append(event)

    def at_first_match(self) -> tuple[int, int]:
        """Calls whose answers came after the first match was decided (speculative: their answers go unused),
        and of those, the ones that even started after it (rows already submitted whose worker had not begun)."""
        for n, e in enumerate(self.events):
            if isinstance(e, RowDecided) and e.truth == "match":
                after = self.events[n + 1 :]
                return (
                    sum(1 for x in after if isinstance(x, CallFinished)),
                    sum(1 for x in after if isinstance(x, CallStarted)),
                )
        return 0, 0


# --- compile time -------------------------------------------------------------------------------------


def compile_figures(sandbox, settings: Settings, repeat: int = 5) -> dict[str, Any]:
    """Per query the median of ``repeat`` compiles (parse + checks + DNF), in CPU time (what compiling costs,
    not what the scheduler adds on a loaded machine) and in wall time; median and p90 over the queries."""
    engine = SuqlEngine(sandbox, LLM(SimBackend()))
    paper = [q.sql for q in paper_queries(settings)]  # the data folder the settings name
    source = "SUQL paper" if paper else "lecture examples (../shared/data/suql_paper not found)"
    queries = paper or [q.sql for q in LECTURE]

    def once(sql: str) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            engine.compile(sql)
        except Exception:  # a query the compiler refuses is timed to its refusal
            pass
        return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000

    for sql in queries:  # warm: the first compile of a process imports and builds what later ones reuse
        once(sql)
    walls, cpus = [], []
    for sql in queries:
        runs = [once(sql) for _ in range(repeat)]
        walls.append(statistics.median(w for w, _ in runs))
        cpus.append(statistics.median(c for _, c in runs))
    return {
        "source": source,
        "queries": len(queries),
        "median": round(quantile(cpus, 0.5), 3),
        "p90": round(quantile(cpus, 0.9), 3),
        "cpu_ms": summary(cpus),
        "wall_ms": summary(walls),
        "over_1ms": sum(1 for c in cpus if c > 1.0),
    }


# --- report -------------------------------------------------------------------------------------------


def report(fig: dict[str, Any]) -> str:
    w = fig["workload"]
    lines = [f"1. workload: {w['queries']} queries, every mode (calls per query, precision, recall)"]
    lines.append("   mode       answer()/q  precision  recall")
    for m, s in w["modes"].items():
        lines.append(f"   {m:<9} {s['answer_calls_mean']:>11.1f}  {s['precision']:>9.3f}  {s['recall']:>6.3f}")
    lines.append(f"   oracle    {w['oracle']['calls_mean']:>11.1f}")
    lines.append(
        f"   every exact mode returns the rows that match by the LLM's answers (all of them, or as many as the LIMIT): "
        f"{all(w['rows_are_the_llms_matches'].values())}; precision identical A-E: {w['precision_identical_a_to_e']} "
        "(under a LIMIT which matches are returned is the executor's choice, and the LLM errs on some)"
    )
    o = w["e_over_b_by_order"]
    lines.append("\n2. ratios of total calls")
    lines.append(
        f"   E/B  answer() written first ({o['answer_first']['queries']}): {o['answer_first']['ratio']}   "
        f"filters written first ({o['filters_first']['queries']}): {o['filters_first']['ratio']}   all: {o['all']['ratio']}"
    )
    lines.append(f"   E/B-duckdb {w['e_over_bduckdb']}   E/C {w['e_over_c']}")
    lines.append("\n3. E / oracle lower bound, per query")
    for shape in ("limit", "list_all"):
        e, s = w["e_over_oracle"][shape], w["e_static_over_oracle"][shape]
        lines.append(
            f"   {shape:<8} ({e['n']:>2}): median {e['median']:.2f}  p90 {e['p90']:.2f}     "
            f"(E-static: median {s['median']:.2f}  p90 {s['p90']:.2f})"
        )
    sent = w["e_sentence_over_oracle"]
    if sent is None:
        lines.append(
            "   E-sentence (suql_ranker = 'sentence'): not measured, the extra is not installed "
            "(pip install 'cs224v-tui[sentence]')"
        )
    else:
        for shape in ("limit", "list_all"):
            e = sent[shape]
            lines.append(
                f"   {shape:<8} ({e['n']:>2}) with suql_ranker = 'sentence' (E-sentence): median {e['median']:.2f}  "
                f"p90 {e['p90']:.2f}"
            )
        lines.append(
            f"   precision: E {w['modes']['E']['precision']:.4f}, E-sentence {w['modes'][SENTENCE]['precision']:.4f} "
            f"(A {w['modes']['A']['precision']:.4f})"
        )
    lines.append("   per class                    n   oracle      E  E-static   E/oracle med/p90  E-static med/p90")
    for k, c in w["by_class"].items():
        lines.append(
            f"   {k:<26} {c['queries']:>3} {c['oracle_mean']:>8.1f} {c['E_mean']:>6.1f} {c['E-static_mean']:>9.1f}"
            f"   {c['E_over_oracle']['median']:>6.2f} / {c['E_over_oracle']['p90']:<6.2f}"
            f"   {c['E-static_over_oracle']['median']:>6.2f} / {c['E-static_over_oracle']['p90']:.2f}"
            + (
                f"   E-sentence {c['E-sentence_mean']:>6.1f}  {c['E-sentence_over_oracle']['median']:.2f} / "
                f"{c['E-sentence_over_oracle']['p90']:.2f}"
                if "E-sentence_mean" in c
                else ""
            )
        )
    lines.append(
        "   E's calls on the LIMIT queries by what the rows answered: match / first condition asked Unknown / "
        "'No' / 'Yes' then not / decided in full (the LIMIT not met); the queries whose LIMIT can be met, then all"
    )
    for k, c in w["by_class"].items():
        if k.startswith("LIMIT"):
            met, every = c["E_calls_by_outcome_limit_met"], c["E_calls_by_outcome"]
            lines.append(
                f"   {k:<26} met ({c['queries_limit_met']:>2}) "
                + " ".join(f"{met[x]:>4}" for x in OUTCOMES)
                + f"   all ({c['queries']:>2}) "
                + " ".join(f"{every[x]:>4}" for x in OUTCOMES)
                + (
                    "   E-sentence met "
                    + " ".join(f"{c['E-sentence_calls_by_outcome_limit_met'][x]:>4}" for x in OUTCOMES)
                    if "E-sentence_calls_by_outcome_limit_met" in c
                    else ""
                )
            )
    lines.append("   worst LIMIT queries (E / oracle):")
    for q in w["worst_limit_queries"]:
        o = q["E_calls_by_outcome"] or {}
        lines.append(
            f"     {q['E']:>4} / {q['oracle']:<3} (E-static {q['E-static']:>4}"
            + (f", E-sentence {q['E-sentence']:>4}" if "E-sentence" in q else "")
            + "; E's calls "
            + "/".join(str(o.get(x, 0)) for x in OUTCOMES)
            + f")  {q['sql'][40:]}"
        )
    p = fig["pool"]
    lines.append(f"\n4. pool: {p['pool']} workers, {p['latency_s'] * 1000:.0f} ms per call")
    for name in POOL_QUERIES:
        r = p[name]
        lines.append(
            f"   {name:<23} {r['calls']:>4} calls  {r['wall_s']:.3f} s  ideal ceil(calls/P)·L {r['ideal_s']:.3f} s  "
            f"ratio {r['over_ideal']}\n   {'':<23} first call to last answer {r['calls_span_s']:.3f} s, ratio "
            f"{r['calls_span_over_ideal']}; the executor's own work (the run again, answers cached) {r['executor_s']:.3f} s"
        )
    lines.append(
        f"   LIMIT without ORDER BY, 3 runs on the pool: the same rows each time: {p['limit_rows_repeatable']}"
    )
    lw = p["limit1_wasted"]
    lines.append(
        f"   LIMIT 1: calls answered after the match was decided (speculative, unused): max {lw['max']}, "
        f"mean {lw['mean']} (bound P - 1 = {lw['bound']}; of them started after it: {lw['started_after_the_match']})"
    )
    pm = lw["pool_minus_sequential"]
    lines.append(
        f"            calls beyond the sequential run (pool=1): max {pm['max']}, mean {pm['mean']} "
        "(the pool picks its next rows before the answers in flight can re-rank them)"
    )
    c = fig["compile"]
    lines.append(
        f"\n5. compile over {c['queries']} {c['source']} queries (median of 5 each): CPU median {c['median']:.2f} ms, "
        f"p90 {c['p90']:.2f} ms, {c['over_1ms']} over 1 ms; wall median {c['wall_ms']['median']:.2f} ms, "
        f"p90 {c['wall_ms']['p90']:.2f} ms"
    )
    v = w["verify"]
    lines.append("\n6. rows to verify settled on demand: total answer() calls, E lazy (the default) and eager, the")
    lines.append("   matches-only bound and the peers' strategies (same LLM answers; every peer returns mode A's rows)")
    names = ("E-lazy", "E-eager", "matches_only", *PEERS)
    lines.append("   " + f"{'':<22}" + "".join(f"{n:>13}" for n in names) + "   E-lazy/best peer")
    for shape, label in (("limit", "LIMIT"), ("list_all", "list-all")):
        c = v[shape]
        lines.append(
            f"   {label + ' (' + str(c['queries']) + ')':<22}"
            + "".join(f"{c['calls'][n]:>13,}" for n in names)
            + f"   {c['E-lazy_over_best_peer']} ({c['best_peer']}); eager {c['E-eager_over_best_peer']}"
        )
    t = v["targets"]
    lines.append(
        f"   targets: list-all <= 0.95x best peer: {t['list_all_at_most_0.95x_best_peer']}; LIMIT <= 0.3x: "
        f"{t['limit_at_most_0.3x_best_peer']}; E-lazy returns mode A's rows: "
        f"{v['limit']['E-lazy_same_rows_as_A'] and v['list_all']['E-lazy_same_rows_as_A']}; the peers too: "
        f"{v['limit']['peers_same_rows_as_A'] and v['list_all']['peers_same_rows_as_A']}"
    )
    return "\n".join(lines)


def run(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--queries", type=int, default=60)
    p.add_argument("--rows", type=int, default=600, help="restaurants in the world (default 600)")
    p.add_argument("--latency", type=float, default=0.05)
    p.add_argument("--pool", type=int, default=4)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    world, truth = build(n=args.rows)
    sandbox = Sandbox.create(world.load)
    try:
        runs, scores = run_workload(world, truth, sandbox, args.queries)
        fig = {
            "workload": figures(runs, scores),
            "pool": pool_figures(sandbox, args.latency, args.pool),
            "compile": compile_figures(sandbox, Settings()),
        }
    finally:
        sandbox.close()
    # the keys at the top level
    w = fig["workload"]
    keys = ("modes", "e_over_b_by_order", "e_over_bduckdb", "e_over_c", "e_over_oracle", "oracle", "rankers")
    out = {k: w[k] for k in keys}
    out.update(fig)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--json", action="store_true")
    p.add_argument("--cascade", action="store_true")  # mode G's section (benchmarks/suql_cascade.py)
    known, rest = p.parse_known_args(argv)
    fig = run([a for a in (argv if argv is not None else sys.argv[1:]) if a != "--cascade"])
    if known.cascade:  # mode G on the larger world: a section of its own (suql_cascade.py says what it measures)
        import importlib.util

        spec = importlib.util.spec_from_file_location("suql_cascade", Path(__file__).with_name("suql_cascade.py"))
        assert spec is not None and spec.loader is not None
        suql_cascade = sys.modules["suql_cascade"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(suql_cascade)
        fig["cascade"] = suql_cascade.cascade_figures(60, suql_cascade.LARGE, 3, 200)
    print(json.dumps(fig, indent=1) if known.json else report(fig))
    if known.cascade and not known.json:
        print(suql_cascade.report(fig["cascade"]))


if __name__ == "__main__":
    main()
