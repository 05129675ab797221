"""SUQL mode G (issue 29): the cascade against mode E on larger generated worlds (5,000 and 20,000 restaurants).

    python benchmarks/suql_cascade.py [--queries 60] [--rows 5000,20000] [--runs 3] [--seeds 200] [--json]

``benchmarks/suql_bench.py --cascade`` prints the 5,000-restaurant section after its own.  For every query of the
seeded workload (engines.suql.workload) on each world, split list-all and LIMIT:

1. the engine itself: mode E once and mode G with ``--runs`` sample seeds (what a user gets), both verifying
   eagerly: answer() calls per query, G/E, and the precision and recall of G's rows against the LLM's own labels
   (mode A's answers: the same seeded simulated LLM asked every candidate) and against hidden truth (the
   evaluator's ``truly_matching``; the engines never read it); and G/E with both verifying lazily (the app's and
   the CLI's default), on list-all queries;
2. the guarantee over ``--seeds`` sample seeds (at least 100): how often both targets held, against the LLM's
   labels.  To keep this fast the LLM's labels are computed once per query (every candidate's answers and the
   sentences they quoted, from the same seeded simulated LLM) and only the sampling varies: the pilot, the
   taught proxy, the SUPG sample, the thresholds (the same functions the engine runs,
   ``engines.suql.compiler.cascade_stats`` and ``cascade.taught``).  One difference, stated: here every question
   of a pilot row teaches the proxy, where the engine asks a row's second question only when the first did not
   decide it;
3. why it pays where it pays: the proxies' precision-recall curves against the LLM's labels (the prior proxy,
   BM25 + WordLlama, and the proxy taught by one pilot), on the list-all queries;
4. which proxy would: the same SUPG step with other proxies (the prior alone, the taught one, the LLM's labels
   blurred by noise, the labels themselves: a perfect proxy), each with its AUC, the share of the candidates it
   leaves to ask and how often the targets held; and the share of the candidates a recall proof must ask whatever
   the proxy (``cascade_stats.proof_draws``).

Honesty: the simulated answer() decides by words, so a proxy made of the sentences its 'Yes' answers quoted
agrees with it partly by construction, and the savings measured on the simulation are optimistic: a real
model's verdicts depend on more than a sentence it can quote.  The guarantee does not depend on the proxy (a
random proxy meets the targets too and saves about nothing: tests/engines/suql/test_cascade.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engines.suql.compiler.cascade as cascade
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.retrieval.bm25 import IndexCache, as_text, chunks_of
from engines.sql.sandbox import Sandbox
from engines.suql.compiler.cascade_stats import (
    Targets,
    choose_thresholds,
    decide,
    draw,
    proof_draws,
    recall_outlook,
    sampling_probabilities,
)
from engines.suql.execute import SuqlEngine
from engines.suql.plan import MODES
from engines.suql.tasks import ANSWER, AnswerInput
from engines.suql.workload import TEXT_CONDITIONS, WorkloadQuery, generate, truly_matching
from worlds.restaurants import LARGE, build

TARGETS = Targets(0.9, 0.9, 0.05)
SAMPLE = 400  # the engine's default (suql_cascade_sample)
SIZES = (LARGE, 4 * LARGE)  # the worlds of the default run: the larger world, and one four times its size


@dataclass
class Labelled:
    """One query's candidates as the LLM labels them (computed once; the evaluator's view)."""

    ids: list[int]
    prior: np.ndarray  # the engine's prior proxy score of each candidate
    truth: list[bool | None]  # the WHERE by the LLM's answers: True, False or None (Unknown)
    sentences: list[list[set[str]]]  # per question, per candidate: its normalised sentences
    said: list[list[tuple[str | None, tuple[str, ...]]]]  # per question, per candidate: (value, quoted sentences)


def label(world: Any, llm: LLM, q: WorkloadQuery, prior: dict[int, float] | None) -> Labelled:
    by_feature = {feature: question for question, feature in TEXT_CONDITIONS}
    questions = [by_feature[f] for f in q.features]
    rows = [
        r
        for r in world.rows
        if r.location == q.location
        and (q.cuisine is None or q.cuisine in r.cuisines)
        and (prior is None or r._id in prior)
    ]
    sentences: list[list[set[str]]] = [[] for _ in questions]
    said: list[list[tuple[str | None, tuple[str, ...]]]] = [[] for _ in questions]
    truth: list[bool | None] = []
    for r in rows:
        text = as_text(list(r.reviews))
        values = []
        for j, question in enumerate(questions):
            a = llm.run(ANSWER, AnswerInput(text, question))
            values.append(a.value)
            said[j].append((a.value, tuple(a.evidence)))
            sentences[j].append(
                {cascade.norm_sentence(c) for c in chunks_of(list(r.reviews))}
            )  # as the engine reads it
        truth.append(True if all(v == "Yes" for v in values) else False if any(v == "No" for v in values) else None)
    scores = np.asarray([prior[r._id] if prior is not None else 0.0 for r in rows])
    return Labelled([r._id for r in rows], scores, truth, sentences, said)


def simulate(lab: Labelled, targets: Targets, seed: int, sample: int = SAMPLE) -> tuple[float, float, int]:
    """One cascade over the LLM's labels: precision and recall of its rows against them, and the rows asked."""
    n = len(lab.ids)
    yes = np.asarray([t is True for t in lab.truth])
    rng = np.random.default_rng(seed)
    p1 = sampling_probabilities(lab.prior)
    pilot_draws = draw(p1, min(sample // 4, n), rng)
    if targets.recall < 1.0 and recall_outlook(p1, pilot_draws, yes[pilot_draws], targets).hopeless(
        sample - sample // 4
    ):
        return 1.0, 1.0, n  # the engine gives the cascade up after its pilot: E asks every row
    pilot = sorted(set(pilot_draws.tolist()))
    in_pilot = np.zeros(n, dtype=bool)
    in_pilot[pilot] = True
    return cascade_once(_taught(lab, pilot), yes, in_pilot, targets, rng, sample - sample // 4)


def cascade_once(
    scores: np.ndarray,
    yes: np.ndarray,
    asked_before: np.ndarray,
    targets: Targets,
    rng: np.random.Generator,
    draws: int,
) -> tuple[float, float, int]:
    """SUPG over the rows not ``asked_before`` by ``scores`` (the engine's functions): precision and recall of the
    rows returned against the LLM's labels ``yes``, and how many rows the LLM was asked in all."""
    pool = np.flatnonzero(~asked_before)
    p = sampling_probabilities(scores[pool])
    drawn = draw(p, min(draws, len(pool)), rng)
    th = choose_thresholds(scores[pool], p, drawn, yes[pool][drawn].astype(float), targets)
    verdict = np.zeros(len(yes), dtype=int)
    verdict[pool] = decide(scores[pool], th)
    asked = asked_before.copy()
    asked[pool[drawn]] = True
    asked |= verdict == 0
    returned = (asked & yes) | (~asked & (verdict == 1))
    tp = int((returned & yes).sum())
    return tp / max(1, int(returned.sum())), tp / max(1, int(yes.sum())), int(asked.sum())


def _taught(lab: Labelled, pilot: Sequence[int]) -> np.ndarray:
    """The engine's taught proxy after a pilot of rows ``pilot``: every question of a pilot row teaches it."""
    learned = np.ones(len(lab.ids))
    for j, said in enumerate(lab.said):
        pos = {s for i in pilot if said[i][0] == "Yes" for s in map(cascade.norm_sentence, said[i][1])}
        neg = {s for i in pilot if said[i][0] == "No" for s in map(cascade.norm_sentence, said[i][1])}
        learned = np.minimum(learned, cascade.taught(lab.prior, lab.sentences[j], pos, neg))
    return learned


def auc(scores: np.ndarray, yes: np.ndarray) -> float | None:
    """The chance that a positive outscores a negative (ties count half): the proxy's ranking quality."""
    pos, neg = int(yes.sum()), int((~yes).sum())
    if not pos or not neg:
        return None
    ranks = rankdata(scores)
    return float((ranks[yes].sum() - pos * (pos + 1) / 2) / (pos * neg))


NOISE = (0.3, 0.2, 0.1)  # the noisy label proxies' standard deviations ("which proxy would")
PROXY_SEEDS = 40  # sampling seeds per proxy in the "which proxy would" comparison


def which_proxy(lab: Labelled, targets: Targets, seeds: int = PROXY_SEEDS) -> list[dict[str, Any]]:
    """The same SUPG step over one query's candidates with other proxies (no pilot: all ``SAMPLE`` draws are the
    SUPG sample's): the engine's prior proxy alone, the taught proxy (the engine's, after its pilot), the LLM's
    own labels blurred by normal noise, and the labels themselves (a perfect proxy, the best any proxy can do
    with this sample): per proxy its AUC against the labels, the share of candidates asked and how often both
    targets held."""
    yes = np.asarray([t is True for t in lab.truth])
    n = len(yes)
    proxies: list[tuple[str, Any]] = [("prior (BM25 + vectors)", lambda s: lab.prior), ("taught by the pilot", None)]
    for sigma in NOISE:
        proxies.append(
            (
                f"the LLM's labels + noise {sigma}",
                lambda s, sigma=sigma: np.clip(
                    np.where(yes, 0.8, 0.2) + np.random.default_rng(10_000 + s).normal(0.0, sigma, n), 0.0, 1.0
                ),
            )
        )
    proxies.append(("the LLM's labels (perfect)", lambda s: np.where(yes, 0.8, 0.2)))
    out = []
    for name, make in proxies:
        results, aucs = [], []
        for s in range(seeds):
            rng = np.random.default_rng(s)
            if make is None:  # the engine's two steps, as ``simulate``
                results.append(simulate(lab, targets, s))
                pilot = sorted(set(draw(sampling_probabilities(lab.prior), min(SAMPLE // 4, n), rng).tolist()))
                aucs.append(auc(_taught(lab, pilot), yes))
                continue
            scores = make(s)
            aucs.append(auc(scores, yes))
            results.append(cascade_once(scores, yes, np.zeros(n, dtype=bool), targets, rng, SAMPLE))
        got = [a for a in aucs if a is not None]
        out.append(
            {
                "proxy": name,
                "auc": statistics.fmean(got) if got else None,
                "asked": sum(k for _, _, k in results) / (seeds * n),
                "met": statistics.fmean(pr >= targets.precision and rc >= targets.recall for pr, rc, _ in results),
            }
        )
    return out


def proof_floor(lab: Labelled, targets: Targets) -> float:
    """The share of the candidates a sample must ask, whatever the proxy, before any row may be rejected
    (``cascade_stats.proof_draws`` at the LLM's own count of matches).  At 1 or more, no proxy can save a call."""
    pos = sum(1 for t in lab.truth if t is True)
    return proof_draws(len(lab.ids), pos, targets.recall, targets.delta) / max(1, len(lab.ids))


def pr_curve(scores: np.ndarray, yes: np.ndarray, points: int = 10) -> list[tuple[float, float, float]]:
    """(share of candidates taken by score, precision, recall) at ``points`` cut-offs."""
    order = np.argsort(-scores, kind="stable")
    out = []
    for k in np.linspace(len(scores) / points, len(scores), points).astype(int):
        top = order[:k]
        out.append((k / len(scores), float(yes[top].mean()), float(yes[top].sum() / max(1, yes.sum()))))
    return out


def run(argv: Sequence[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--queries", type=int, default=60)
    p.add_argument(
        "--rows",
        type=_sizes,
        default=list(SIZES),
        help="restaurants in the generated world; a comma-separated list runs each size in turn",
    )
    p.add_argument("--runs", type=int, default=3, help="engine runs of G per query, each with its own sample seed")
    p.add_argument("--seeds", type=int, default=200, help="sample seeds of the guarantee's simulation (≥ 100)")
    p.add_argument("--json", action="store_true")
    args, _ = p.parse_known_args(argv)
    return {"sizes": [cascade_figures(args.queries, n, args.runs, args.seeds) for n in args.rows]}


def _sizes(text: str) -> list[int]:
    """``--rows``: comma-separated world sizes, each a positive whole number."""
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of whole numbers: {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"sizes must be at least 1: {text!r}")
    return sizes


def cascade_figures(n_queries: int, n_rows: int, runs: int, seeds: int) -> dict[str, Any]:
    started = time.perf_counter()
    world, truth = build(n=n_rows)
    sandbox = Sandbox.create(world.load)
    oracle = LLM(SimBackend())
    captured: dict[str, Any] = {}
    proxy_said = {"proxy": ""}
    original = cascade.proxy_scores

    def capture(ctx: Any, plan: Any, rows: Any) -> Any:  # the benchmark reads the engine's prior proxy
        scores, what = original(ctx, plan, rows)
        captured["prior"] = {int(r.label.split()[0].lstrip("#")): float(s) for r, s in zip(rows, scores)}  # by _id
        captured["proxy"] = proxy_said["proxy"] = what
        return scores, what

    cascade.proxy_scores = capture
    per_query: list[dict[str, Any]] = []
    indexes = IndexCache()  # the reviews' BM25 index, built once for every engine (each run has its own LLM)
    try:
        for q in generate(7, n_queries):
            e = SuqlEngine(sandbox, LLM(SimBackend()), call_budget=100_000, indexes=indexes).run(q.sql, mode="E")
            every = label(world, oracle, q, None)  # mode A's answers: what the LLM says of every candidate
            llm_yes = {i for i, t in zip(every.ids, every.truth) if t is True}
            gold = truly_matching(world, truth, q)
            rec: dict[str, Any] = {
                "sql": q.sql,
                "limit": q.limit,
                "conditions": len(q.features),
                "e_calls": e.stats.answer_calls,
                "g": [],
            }
            captured.clear()
            for seed in range(runs if q.limit is None else 1):
                mode = replace(MODES["G"], cascade_seed=seed)
                g = SuqlEngine(sandbox, LLM(SimBackend()), call_budget=100_000, indexes=indexes).run(q.sql, mode=mode)
                ids = {r["_id"] for r in g.records()}
                c = g.plan.cascade
                rec["g"].append(
                    {
                        "calls": g.stats.answer_calls,
                        "precision_llm": len(ids & llm_yes) / len(ids) if ids else None,
                        "recall_llm": len(ids & llm_yes) / len(llm_yes) if llm_yes else None,
                        "precision_truth": len(ids & gold) / len(ids) if ids else None,
                        "recall_truth": len(ids & gold) / len(gold) if gold else None,
                        "by_proxy": g.decided_by.count("proxy"),
                        "fallback": c.fallback if c is not None else "",
                        "gave_up": c is not None and bool(c.fallback) and c.proof_draws is not None,
                        "candidates": c.candidates if c is not None else 0,
                    }
                )
            if q.limit is None:  # the app's and the CLI's default: lazy verification, for both modes (seed 0)
                lazy = {
                    m: SuqlEngine(sandbox, LLM(SimBackend()), call_budget=100_000, indexes=indexes, verify="lazy")
                    .run(q.sql, mode=replace(MODES["G"], cascade_seed=0) if m == "G" else m)
                    .stats.answer_calls
                    for m in "EG"
                }
                rec["lazy"] = [lazy["E"], lazy["G"]]
            if q.limit is None and "prior" in captured:
                lab = label(world, oracle, q, captured["prior"])
                results = [simulate(lab, TARGETS, s) for s in range(seeds)]
                met = [pr >= TARGETS.precision and rc >= TARGETS.recall for pr, rc, _ in results]
                yes = np.asarray([t is True for t in lab.truth])
                rec["guarantee"] = {
                    "seeds": seeds,
                    "met": sum(met) / len(met),
                    "asked_share": statistics.fmean(n / len(lab.ids) for _, _, n in results),
                }
                rec["pr_prior"] = pr_curve(lab.prior, yes)
                pilot_scores = _taught_once(lab)
                rec["pr_taught"] = pr_curve(pilot_scores, yes)
                rec["llm_yes"] = int(yes.sum())
                rec["proxies"] = which_proxy(lab, TARGETS)
                rec["floor"] = proof_floor(lab, TARGETS)
            per_query.append(rec)
    finally:
        cascade.proxy_scores = original
        sandbox.close()
    return summarise(per_query, proxy_said["proxy"], time.perf_counter() - started, n_rows)


def _taught_once(lab: Labelled) -> np.ndarray:
    """The taught proxy after the pilot of seed 0 (for its precision-recall curve)."""
    rng = np.random.default_rng(0)
    return _taught(
        lab, sorted(set(draw(sampling_probabilities(lab.prior), min(SAMPLE // 4, len(lab.ids)), rng).tolist()))
    )


def _mean(xs: Sequence[float | None]) -> float | None:
    got = [x for x in xs if x is not None]
    return round(statistics.fmean(got), 3) if got else None


def summarise(per_query: list[dict[str, Any]], proxy: str, wall: float, rows: int = LARGE) -> dict[str, Any]:
    classes: dict[str, list[dict[str, Any]]] = {}
    for r in per_query:
        if r["limit"] is not None:
            key = "LIMIT"
        elif r["g"] and any("fewer than" in x["fallback"] for x in r["g"]):
            key = "list-all, not cascaded (under 200 candidates)"
        elif r["g"] and all(x["gave_up"] for x in r["g"]):
            key = f"list-all, given up after the pilot (too few matches for a recall proof), {_conditions(r)}"
        elif r["g"] and any(x["gave_up"] for x in r["g"]):
            key = f"list-all, given up after the pilot on some seeds, {_conditions(r)}"
        else:
            key = f"list-all, cascaded, {_conditions(r)}"
        classes.setdefault(key, []).append(r)
    out: dict[str, Any] = {
        "targets": [TARGETS.precision, TARGETS.recall, TARGETS.delta],
        "proxy": proxy,
        "rows": rows,
        "classes": {},
    }
    for key, rs in sorted(classes.items()):
        g_calls = [statistics.fmean(x["calls"] for x in r["g"]) for r in rs]
        e_calls = [r["e_calls"] for r in rs]
        runs = [x for r in rs for x in r["g"]]
        guaranteed = [r["guarantee"] for r in rs if "guarantee" in r]
        out["classes"][key] = {
            "queries": len(rs),
            "e_calls_per_query": round(statistics.fmean(e_calls), 1),
            "g_calls_per_query": round(statistics.fmean(g_calls), 1),
            "g_over_e": round(sum(g_calls) / sum(e_calls), 3) if sum(e_calls) else None,
            "g_over_e_lazy": (
                round(sum(r["lazy"][1] for r in rs) / sum(r["lazy"][0] for r in rs), 3)
                if all("lazy" in r for r in rs) and sum(r["lazy"][0] for r in rs)
                else None
            ),
            "precision_llm": _mean([x["precision_llm"] for x in runs]),
            "recall_llm": _mean([x["recall_llm"] for x in runs]),
            "precision_truth": _mean([x["precision_truth"] for x in runs]),
            "recall_truth": _mean([x["recall_truth"] for x in runs]),
            "rows_by_proxy_per_run": round(statistics.fmean(x["by_proxy"] for x in runs), 1),
            "targets_met_share": _mean([g["met"] for g in guaranteed]),
            "targets_met_worst_query": min((g["met"] for g in guaranteed), default=None),
            "seeds": guaranteed[0]["seeds"] if guaranteed else 0,
            "asked_share_simulated": _mean([g["asked_share"] for g in guaranteed]),
        }
        curves = [r for r in rs if "pr_prior" in r]
        if curves:
            out["classes"][key]["pr_prior"] = _mean_curve([r["pr_prior"] for r in curves])
            out["classes"][key]["pr_taught"] = _mean_curve([r["pr_taught"] for r in curves])
            out["classes"][key]["candidates_per_query"] = round(
                statistics.fmean(r["g"][0]["candidates"] for r in curves)
            )
            out["classes"][key]["positive_share"] = round(
                statistics.fmean(r["llm_yes"] / max(1, r["g"][0]["candidates"]) for r in curves), 3
            )
            out["classes"][key]["proof_floor"] = round(statistics.fmean(r["floor"] for r in curves), 3)
            out["classes"][key]["proxies"] = [
                {
                    "proxy": x["proxy"],
                    "auc": _mean([r["proxies"][i]["auc"] for r in curves]),
                    "asked": _mean([r["proxies"][i]["asked"] for r in curves]),
                    "met": _mean([r["proxies"][i]["met"] for r in curves]),
                }
                for i, x in enumerate(curves[0]["proxies"])
            ]
    out["wall_s"] = round(wall, 1)
    return out


def _conditions(r: dict[str, Any]) -> str:
    return f"{r['conditions']} condition{'s' if r['conditions'] > 1 else ''}"


def _mean_curve(curves: list[list[tuple[float, float, float]]]) -> list[list[float]]:
    return [[round(statistics.fmean(c[i][k] for c in curves), 3) for k in range(3)] for i in range(len(curves[0]))]


def report(fig: dict[str, Any]) -> str:
    pt, rt, d = fig["targets"]
    lines = [
        f"Mode G, the cascade (targets precision {pt}, recall {rt}, delta {d}) against mode E, on {fig['rows']:,} "
        "restaurants",
        f"  proxy: {fig['proxy']}",
        "  class | queries | E calls/query | G calls/query | G/E | precision, recall vs the LLM | vs hidden truth | "
        "rows by proxy/run | targets met (seeds) | asked (sim) | G/E, both lazy",
    ]
    for key, c in fig["classes"].items():
        met = (
            f"{c['targets_met_share']:.3f} (worst query {c['targets_met_worst_query']:.3f}, {c['seeds']} seeds)"
            if c["targets_met_share"] is not None
            else "-"
        )
        asked = f"{c['asked_share_simulated']:.2f}" if c["asked_share_simulated"] is not None else "-"
        lines.append(
            f"  {key} | {c['queries']} | {c['e_calls_per_query']} | {c['g_calls_per_query']} | {c['g_over_e']} | "
            f"{c['precision_llm']}, {c['recall_llm']} | {c['precision_truth']}, {c['recall_truth']} | "
            f"{c['rows_by_proxy_per_run']} | {met} | {asked} | {c['g_over_e_lazy'] if c['g_over_e_lazy'] else '-'}"
        )
    for key, c in fig["classes"].items():
        if "pr_prior" in c:
            lines.append(f"  precision-recall against the LLM's labels, {key} (share taken by score: precision/recall)")
            for name in ("pr_prior", "pr_taught"):
                pts = ", ".join(f"{s:.0%}: {p:.2f}/{r:.2f}" for s, p, r in c[name])
                lines.append(f"    {'prior (BM25 + vectors)' if name == 'pr_prior' else 'taught by the pilot'}: {pts}")
    for key, c in fig["classes"].items():
        if "proxies" not in c:
            continue
        lines.append(
            f"  which proxy would, {key}: {c['candidates_per_query']:,} candidates a query, "
            f"{c['positive_share']:.1%} of them the LLM's matches; a recall proof alone must ask "
            f"{c['proof_floor']:.2f} of the candidates whatever the proxy (1 or more: no proxy can save a call)"
        )
        lines.append("    proxy | AUC vs the LLM's labels | share of candidates asked | targets met")
        for x in c["proxies"]:
            a = f"{x['auc']:.3f}" if x["auc"] is not None else "-"
            lines.append(f"    {x['proxy']} | {a} | {x['asked']:.2f} | {x['met']:.3f}")
    lines.append(
        "  The simulated answer() decides by words: a proxy of the sentences its 'Yes' answers quoted agrees with it "
        "partly by construction, so these savings are optimistic for a real model."
    )
    lines.append(f"  ({fig['wall_s']} s)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    fig = run(argv)
    if "--json" in (argv if argv is not None else sys.argv[1:]):
        print(json.dumps(fig, indent=1))
    else:
        print("\n\n".join(report(f) for f in fig["sizes"]))


if __name__ == "__main__":
    main()
