"""Mode G: a model cascade for the WHERE's answer() conditions (issue 29), after SUPG (Kang et al., VLDB 2020).

A *proxy* scores every candidate row for the WHERE; the LLM labels a sample drawn by that score (importance
sampling); two thresholds are chosen from the sample (:mod:`~engines.suql.compiler.cascade_stats`): rows scoring
at least the accept threshold are matched without a call, rows scoring below the reject threshold are left out
without a call, and only the band between is asked of the LLM.  What is guaranteed, against what the LLM would
have said ('Yes' meaning the row's WHERE is True), with probability at least 1 − δ (δ/2 each):

- the rows returned have at least the precision target (the sample's and the band's rows are the LLM's own
  verdicts; the proxy's accepted rows are the only ones that can be wrong);
- they hold at least the recall target of the rows the LLM would have matched.

What it is not: the LLM's verdict on the proxy's rows.  Those rows are marked ``decided_by: "proxy"`` in the
results (``SuqlResult.decided_by``, ``--json``) and never shown as the LLM's; a rejected row is "not asked",
never "No".  Unknown stays Unknown: a sampled or band row the LLM answered Unknown is listed to verify as in
every mode; the proxy never decides that a row is Unknown, and a sampled Unknown counts as not 'Yes' (against
precision; the recall target is over the 'Yes' rows).  A row whose text is NULL is never the proxy's: it goes
to the band (its answer is NULL without a call).

The proxy is what the retrieval modes already read: BM25 of each ``answer(...) = 'Yes'`` question over the row's
text (:mod:`~engines.suql.compiler.evidence`), averaged with the cosine of the ranker's embeddings (WordLlama's
static vectors, or the sentence model with ``suql_ranker = "sentence"``) when they are available; a conjunct's
score is its predicates' least, the WHERE's the best conjunct's.  Any other predicate scores 1 (no opinion).
Whatever the proxy, the guarantee holds: a bad proxy only saves fewer calls (a random one saves about none).

The cascade runs where it can pay: the statement's own WHERE (not a subquery's), without a LIMIT the loop could
stop at (with one, the sample would cost more than E's lazy stop: G runs as E), over at least
``MIN_CANDIDATES`` candidates.  Both targets 1.0 make no proxy decision possible: G then runs exactly as E.  And
after its pilot the cascade gives up, deciding the rest as E does, when even at the most 'Yes' rows the pilot
allows (its upper bound) a recall proof would need more draws than the sample makes (``proof_draws``): with few
matches among the candidates (a conjunction of rare conditions), no proxy could leave a row out, and a sample
would only cost E's adaptive order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from engines.retrieval.bm25 import as_text, chunks_of
from engines.suql.compiler.cascade_stats import (
    Targets,
    choose_thresholds,
    decide,
    draw,
    proof_draws,
    recall_outlook,
    sampling_probabilities,
)
from engines.suql.compiler.context import RunContext
from engines.suql.compiler.cost import passes_if_yes
from engines.suql.compiler.kleene import DEFERRED, Deferred, Truth
from engines.suql.compiler.passes import SelectPlan
from engines.suql.compiler.records import PlanBuilt, Row, Values
from engines.suql.compiler.rows import RowEvaluator, RowLoop
from engines.suql.compiler.semantic import question_vector, ranker_embedder
from engines.suql.language import as_call, calls_in, is_llm_call
from engines.suql.plan import CascadeReport, Plan

__all__ = ["MIN_CANDIDATES", "cascade_decide", "learned_scores", "norm_sentence", "proxy_scores", "taught"]

MIN_CANDIDATES = 200  # fewer candidates than this: a sample would cost about what asking them all does


def proxy_scores(ctx: RunContext, plan: SelectPlan, rows: Sequence[Row]) -> tuple[np.ndarray, str]:
    """Every row's proxy score in [0, 1] for the WHERE, and what the proxy is (said in the plan)."""
    model = ranker_embedder(ctx.ranker)
    per_question: dict[str, np.ndarray] = {}
    for call in plan.where_calls:
        sql = call.sql()
        if sql in per_question:
            continue
        bm = plan.evidence.scores.get(sql, {})
        raw = np.asarray([float(bm.get(r.key, 0.0)) for r in rows])
        top = float(raw.max()) if len(raw) else 0.0
        share = raw / top if top > 0 else np.zeros(len(rows))
        if model is not None and call.question:
            share = (share + _cosine_share(model, call.question, [r.texts.get(call.text_sql) for r in rows])) / 2.0
        per_question[sql] = np.clip(share, 0.0, 1.0)
    scores = np.zeros(len(rows))
    for ci, conjunct in enumerate(plan.conjuncts):
        conj = np.ones(len(rows))
        for lit in conjunct.text:
            if not passes_if_yes(lit):
                continue  # no opinion on anything but answer(...) = 'Yes'
            for node in calls_in(lit):
                if is_llm_call(node):
                    conj = np.minimum(conj, per_question.get(as_call(node).sql(), np.ones(len(rows))))
        holds = np.asarray([r.flags[ci] is not False for r in rows])
        scores = np.maximum(scores, np.where(holds, conj, 0.0))
    what = "BM25 of the question over each row's text" + (
        f", averaged with the cosine of {'the sentence model' if ctx.ranker == 'sentence' else 'WordLlama'} vectors"
        if model is not None
        else ""
    )
    return scores, what


def _cosine_share(model: Any, question: str, texts: Sequence[Any]) -> np.ndarray:
    """Per text, its closest sentence's cosine to ``question`` as a share of the best (0 for an empty text)."""
    sentences = [[c for c in chunks_of(t)] if t is not None else [] for t in texts]
    distinct = list(dict.fromkeys(s for sents in sentences for s in sents))
    if not distinct:
        return np.zeros(len(texts))
    cos = np.asarray(model.vectors(distinct)) @ question_vector(model, question)
    by = dict(zip(distinct, cos.tolist()))
    best = np.asarray([max((by[s] for s in sents), default=0.0) for sents in sentences])
    top = float(best.max())
    return np.clip(best / top, 0.0, 1.0) if top > 0 else np.zeros(len(texts))


def cascade_decide(
    ctx: RunContext,
    evaluator: RowEvaluator,
    plan: SelectPlan,
    shown: Plan,
    *,
    top: bool,
    defer: Callable[[Row], bool] | None = None,
) -> list[tuple[Any, Truth | Deferred]] | None:
    """Decide ``plan``'s rows by the cascade: (row key, truth) per row decided, the proxy's accepted rows
    True (their keys in ``ctx.state.proxy_accepted``) and its rejected rows left out; None when the cascade
    does not run (the plan says why; the caller decides the rows as E does).

    ``defer`` (lazy verification, as E's loop takes it): the rows stop at their first Unknown condition (a row
    that can no longer be True is not a 'Yes' either way, so the labels are the same); once the pilot has shown
    that the cascade can pay, its own rows are settled in full, so that what the proxy is taught, and so the
    draws, the thresholds and the band, are the eager run's, and settling every row gives exactly the eager
    result."""
    mode = ctx.mode
    precision, recall, delta = mode.targets
    targets = Targets(precision, recall, delta)
    rows = list(plan.visit)
    report = CascadeReport(precision, recall, delta, len(rows), proxy="")
    reason = ""
    if targets.exact:
        reason = "both targets are 1.0, so no row may be decided without the LLM"
    elif not top:
        reason = "the cascade decides the statement's own WHERE, not a subquery's"
    elif plan.lazy:
        reason = "a LIMIT the loop can stop at: E's lazy stop costs less than a sample"
    elif len(rows) < MIN_CANDIDATES:
        reason = f"{len(rows)} candidates, fewer than {MIN_CANDIDATES}: a sample would cost about what asking them does"
    if reason:
        _show(ctx, shown, replace(report, fallback=reason))
        return None

    prior, proxy = proxy_scores(ctx, plan, rows)
    forced = np.asarray([any(r.texts.get(c.text_sql) is None for c in plan.where_calls) for r in rows])
    open_ = np.flatnonzero(~forced)  # rows the proxy may decide (their texts are all there)
    rng = np.random.default_rng(mode.cascade_seed)
    loop = RowLoop(ctx, evaluator, [list(e) for e in plan.estimates])

    # 1. the pilot: a quarter of the draws, by the prior proxy; its answers' quoted sentences teach the proxy
    p1 = sampling_probabilities(prior[open_])
    pilot_draws = draw(p1, min(mode.cascade_sample // 4, len(open_)), rng) if len(open_) else np.zeros(0, dtype=int)
    pilot_idx = sorted({int(open_[i]) for i in pilot_draws.tolist()})
    report = replace(report, proxy=proxy, pilot=len(pilot_idx))
    current = _show(ctx, shown, report)
    decided = _step(ctx, "pilot", loop, [rows[i] for i in pilot_idx], current, defer)
    if len(decided) < len(pilot_idx):  # the budget ran out: nothing may be decided by the proxy
        return decided
    sample_draws = mode.cascade_sample - len(pilot_draws)
    pilot_truth = dict(decided)
    outlook = recall_outlook(
        p1, pilot_draws, np.asarray([pilot_truth.get(rows[int(open_[i])].key) is True for i in pilot_draws]), targets
    )
    if targets.recall < 1.0 and outlook.hopeless(sample_draws):  # E's loop decides the rest better than a sample
        _show(
            ctx,
            current,
            replace(
                report,
                fallback=f"the pilot's {len(pilot_idx)} rows put the 'Yes' rows at ≈ {outlook.positives:,.0f} of "
                f"{len(open_):,} (at most {outlook.upper:,.0f}); showing that the rows left out hold at most "
                f"{1.0 - recall:.0%} of them would take ≥ {_count(outlook.need)} draws, more than the sample's "
                f"{sample_draws:,}, so no row could be left out whatever the proxy",
                proof_draws=outlook.need,
            ),
        )
        return None
    # the pilot teaches the proxy in full: lazily deferred pilot rows are settled now (what they teach, and so the
    # draws, the thresholds and the band, are the eager run's)
    unsettled = {k for k, t in decided if t is DEFERRED}
    if unsettled:
        rest = [rows[i] for i in pilot_idx if rows[i].key in unsettled]
        decided = [(k, t) for k, t in decided if t is not DEFERRED] + _step(ctx, "pilot", loop, rest, current, None)
        if len(decided) < len(pilot_idx):
            return decided
    learned = learned_scores(ctx, plan, rows, prior, evaluator.sel.values)
    report = replace(
        report,
        proxy=proxy + "; then, learned from the pilot's answers: 1 for a row holding a sentence "
        "a 'Yes' quoted, 0 for one holding a sentence a 'No' quoted, else half the first score",
    )

    # 2. SUPG over the rows the pilot did not ask, by the learned proxy
    in_pilot = np.zeros(len(rows), dtype=bool)
    in_pilot[pilot_idx] = True
    pool = np.flatnonzero(~forced & ~in_pilot)
    scores = learned[pool]
    p = sampling_probabilities(scores)
    drawn = draw(p, min(sample_draws, len(pool)), rng) if len(pool) else np.zeros(0, int)
    sample_idx = sorted({int(pool[i]) for i in drawn.tolist()})
    report = replace(report, draws=len(drawn), sampled=len(sample_idx))
    current = _show(ctx, current, report)
    got = _step(ctx, "sample", loop, [rows[i] for i in sample_idx], current, defer)
    decided += got
    if len(got) < len(sample_idx):
        return decided
    truth = dict(decided)
    yes = np.asarray([truth.get(rows[int(pool[i])].key) is True for i in drawn.tolist()], dtype=float)
    th = choose_thresholds(scores, p, drawn, yes, targets)
    verdict = np.zeros(len(rows), dtype=int)
    verdict[pool] = decide(scores, th)
    verdict[sample_idx] = 0
    sampled = set(sample_idx)
    band_idx = [i for i in range(len(rows)) if verdict[i] == 0 and not in_pilot[i] and i not in sampled]
    accepted = [rows[i].key for i in range(len(rows)) if verdict[i] == 1]
    report = replace(
        report,
        sample_yes=sum(1 for i in sample_idx if truth.get(rows[i].key) is True),
        positives=th.positives,
        positives_interval=th.positives_interval,
        accept=th.accept,
        reject=th.reject,
        precision_bound=th.precision_bound,
        recall_bound=th.recall_bound,
        accepted=len(accepted),
        rejected=int((verdict == -1).sum()),
        band=len(band_idx),
        pool=len(pool),
        proof_draws=proof_draws(len(pool), th.positives, recall, delta),
    )
    current = _show(ctx, current, report)
    ctx.state.proxy_accepted.update(accepted)
    decided += _step(ctx, "band", loop, [rows[i] for i in band_idx], current, defer)
    decided += [(k, True) for k in accepted]
    return decided


def _count(draws: float) -> str:
    return f"{draws:,.0f}" if draws != float("inf") else "infinitely many"


def _step(
    ctx: RunContext, phase: str, loop: RowLoop, rows: list[Row], plan: Plan, defer: Callable[[Row], bool] | None
) -> list[tuple[Any, Truth | Deferred]]:
    """One step of the cascade: ``rows`` decided by the LLM, each call marked with ``phase`` (the calls table
    tells the pilot's, the sample's and the band's calls apart)."""
    ctx.asker.phase = phase
    try:
        return loop.decide(rows, lazy=False, needed=0, plan=plan, defer=defer)
    finally:
        ctx.asker.phase = ""


def learned_scores(
    ctx: RunContext, plan: SelectPlan, rows: Sequence[Row], prior: np.ndarray, values: Values
) -> np.ndarray:
    """The proxy after the pilot: per ``answer(...) = 'Yes'`` question, 1 for a row holding a sentence an answer
    'Yes' quoted, 0 for one holding a sentence a 'No' quoted (and none a 'Yes' did), else half the prior score;
    a conjunct's least, the best conjunct's.  It reads only what the LLM answered (``Asker.evidence``) of the
    rows this run has decided (``values``: the pilot's, when the cascade calls it; answers a settled re-run
    was given back are in the asker, not in ``values``, until their row is decided)."""
    quoted: dict[str, tuple[set[str], set[str]]] = {}
    for call in plan.where_calls:
        pos, neg = quoted.setdefault(call.sql(), (set(), set()))
        for r in rows:
            raw = r.texts.get(call.text_sql)
            if raw is None:
                continue
            if (r.key, call.key) not in values:
                continue  # not asked
            said = ctx.asker.evidence.get(("answer", as_text(raw), call.question))
            if not said:
                continue
            value = values[(r.key, call.key)]
            (pos if value == "Yes" else neg if value == "No" else set()).update(norm_sentence(x) for x in said)
    per_question: dict[str, np.ndarray] = {}
    for call in plan.where_calls:
        pos, neg = quoted[call.sql()]
        sentences = [{norm_sentence(c) for c in chunks_of(r.texts.get(call.text_sql))} for r in rows]
        per_question[call.sql()] = taught(prior, sentences, pos, neg)
    scores = np.zeros(len(rows))
    for ci, conjunct in enumerate(plan.conjuncts):
        conj = np.ones(len(rows))
        for lit in conjunct.text:
            if passes_if_yes(lit):
                for node in calls_in(lit):
                    if is_llm_call(node):
                        conj = np.minimum(conj, per_question.get(as_call(node).sql(), np.ones(len(rows))))
        holds = np.asarray([r.flags[ci] is not False for r in rows])
        scores = np.maximum(scores, np.where(holds, conj, 0.0))
    return scores


def taught(prior: np.ndarray, sentences: Sequence[set[str]], pos: set[str], neg: set[str]) -> np.ndarray:
    """One question's proxy after the pilot, per row (its normalised sentences): 1 when it holds a sentence a
    'Yes' quoted, else 0 when it holds one a 'No' quoted, else half its prior score."""
    out = np.empty(len(sentences))
    for i, sents in enumerate(sentences):
        out[i] = 1.0 if sents & pos else 0.0 if sents & neg else float(prior[i]) / 2.0
    return out


def norm_sentence(sentence: str) -> str:
    return " ".join(sentence.lower().split())


def _show(ctx: RunContext, base: Plan, report: CascadeReport) -> Plan:
    """The run's plan (or ``base``, a subquery's) with the cascade as decided so far, emitted and kept as the
    run's plan (the row loop may have re-estimated it meanwhile)."""
    top = ctx.state.plan is not None and (ctx.state.plan is base or ctx.state.plan.cascade is not None)
    new = replace(ctx.state.plan if top and ctx.state.plan is not None else base, cascade=report)
    if top:
        ctx.state.plan = new
    ctx.emit(PlanBuilt(new))
    return new
