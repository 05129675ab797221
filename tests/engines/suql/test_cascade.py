"""Mode G, the cascade (issue 29): the statistical guarantee, a random proxy, the marks, Unknown, targets 1.0, LIMIT.

The guarantee is checked on synthetic populations with known labels (many seeded repetitions: the targets are met
at least 1 - delta of the time), and the engine's run on a 2,000-restaurant world from the same generator."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import engines.suql.compiler.cascade as cascade
from engines.events import CallFinished
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.retrieval.bm25 import IndexCache
from engines.sql.sandbox import Sandbox
from engines.suql.compiler.cascade_stats import Targets, choose_thresholds, decide, draw, sampling_probabilities
from engines.suql.execute import SuqlEngine, proxy_marks
from engines.suql.plan import MODES
from worlds import restaurants as W

REPS = 200


def _population(rng: np.random.Generator, n: int, *, informative: bool) -> tuple[np.ndarray, np.ndarray]:
    """Scores and labels: an informative proxy (labels follow the score) or a random one (labels independent)."""
    scores = rng.beta(0.5, 2.0, n)
    if informative:
        labels = rng.random(n) < np.where(scores > 0.3, 0.97, 0.01)
    else:
        labels = rng.random(n) < 0.2
    return scores, labels


def _one_cascade(scores: np.ndarray, labels: np.ndarray, targets: Targets, seed: int) -> tuple[float, float, int]:
    """One cascade as the engine runs its second stage: the precision and recall of the rows returned (against
    the labels) and the rows asked (the sample's and the band's)."""
    rng = np.random.default_rng(seed)
    p = sampling_probabilities(scores)
    drawn = draw(p, 400, rng)
    th = choose_thresholds(scores, p, drawn, labels[drawn].astype(float), targets)
    verdict = decide(scores, th)
    asked = np.zeros(len(scores), dtype=bool)
    asked[drawn] = True
    asked |= verdict == 0
    returned = (asked & labels) | (~asked & (verdict == 1))
    tp = int((returned & labels).sum())
    precision = tp / max(1, int(returned.sum()))
    recall = tp / max(1, int(labels.sum()))
    return precision, recall, int(asked.sum())


@pytest.mark.parametrize("informative", [True, False], ids=["good-proxy", "random-proxy"])
def test_the_targets_hold_at_least_one_minus_delta_of_the_time(informative):
    targets = Targets(0.9, 0.9, 0.05)
    rng = np.random.default_rng(29)
    scores, labels = _population(rng, 4000, informative=informative)
    met, asked = 0, []
    for rep in range(REPS):
        precision, recall, n = _one_cascade(scores, labels, targets, rep)
        met += precision >= targets.precision and recall >= targets.recall
        asked.append(n)
    assert met / REPS >= 1 - targets.delta
    if informative:  # a proxy that knows saves most calls ...
        assert np.mean(asked) < 0.5 * len(scores)
    else:  # ... a random one saves about nothing
        assert np.mean(asked) > 0.9 * len(scores)


def test_targets_of_one_decide_no_row_and_a_sample_of_one_kind_proves_nothing():
    rng = np.random.default_rng(3)
    scores, labels = _population(rng, 1000, informative=True)
    p = sampling_probabilities(scores)
    drawn = draw(p, 300, rng)
    th = choose_thresholds(scores, p, drawn, labels[drawn].astype(float), Targets(1.0, 1.0, 0.05))
    assert th.accept is None and th.reject is None and (decide(scores, th) == 0).all()
    # every draw 'Yes' (no negative seen): the pseudo-draw keeps a tiny sample from claiming certainty
    th = choose_thresholds(scores, p, drawn[:3], np.ones(3), Targets(0.9, 0.9, 0.05))
    assert th.accept is None


def test_output_rows_are_marked_by_who_decided_them():
    assert proxy_marks([(1,), (2,), (2,), (3,)], [(2,), (3,)]) == ("proxy", "llm", "proxy", "llm")


# --- the engine -----------------------------------------------------------------------------------------------

QUERY = "SELECT _id, name FROM restaurants WHERE answer(reviews, 'is it family-friendly?') = 'Yes' AND location = '{}'"


@pytest.fixture(scope="module")
def big():
    sb = Sandbox.create(W.build(n=2000).world.load)
    yield sb
    sb.close()


_INDEXES: dict[int, IndexCache] = {}


def _engine(sb: Sandbox) -> SuqlEngine:
    """A fresh engine (its own LLM) over ``sb``, sharing the sandbox's BM25 index with the others."""
    indexes = _INDEXES.setdefault(id(sb), IndexCache())
    return SuqlEngine(sb, LLM(SimBackend(seed=224)), call_budget=10_000, indexes=indexes)


class Calls:
    def __init__(self) -> None:
        self.rows: list[str] = []

    def __call__(self, event: object) -> None:
        if isinstance(event, CallFinished) and not event.cached and event.row_key:
            self.rows.append(event.row_key)


def _labels(sb: Sandbox, sql: str) -> tuple[set[int], set[int]]:
    """Mode A's matches and rows to verify: what the LLM says of every candidate."""
    a = _engine(sb).run(sql, mode="A")
    return {r["_id"] for r in a.records()}, {r["_id"] for r in a.to_verify}


def test_g_meets_its_targets_marks_the_proxy_rows_and_asks_none_of_them(big):
    sql = QUERY.format("Menlo Park")
    yes, _ = _labels(big, sql)
    calls = Calls()
    g = _engine(big).run(sql, mode="G", emit=calls)
    e = _engine(big).run(sql, mode="E")
    records = g.records()
    got = {r["_id"] for r in records}
    proxy = {r["_id"] for r in records if r["decided_by"] == "proxy"}
    report = g.plan.cascade
    assert report is not None and not report.fallback and report.band is not None
    assert proxy and len(proxy) == report.accepted  # the proxy decided some rows, each marked
    assert all(r["decided_by"] in ("llm", "proxy") for r in records)
    assert all(r["decided_by"] == "llm" for r in records if r["_id"] not in proxy)
    assert {r["decided_by"] for r in g.to_json()["rows"]} == {"llm", "proxy"}
    asked = set(calls.rows)
    assert not any(lbl.startswith(f"#{i} ") for i in proxy for lbl in asked)  # no proxy row was asked
    assert g.stats.answer_calls < 0.7 * e.stats.answer_calls
    tp = len(got & yes)
    assert tp / len(got) >= 0.9 and tp / len(yes) >= 0.9  # against the LLM's own labels (mode A)


def test_unknown_stays_unknown(big):
    sql = QUERY.format("Menlo Park")
    _, unknown = _labels(big, sql)
    calls = Calls()
    g = _engine(big).run(sql, mode="G", emit=calls)
    listed = {r["_id"] for r in g.to_verify}
    assert listed and listed <= unknown  # every row listed to verify is one the LLM called Unknown ...
    asked = set(calls.rows)
    for i in listed:  # ... and was asked: the proxy never makes a row Unknown
        assert any(lbl.startswith(f"#{i} ") for lbl in asked)
    assert not listed & {r["_id"] for r in g.records()}  # nor Yes or No of an Unknown


def test_targets_of_one_ask_every_row_e_asks(big):
    sql = QUERY.format("Palo Alto")
    exact = replace(MODES["G"], targets=(1.0, 1.0, 0.05))
    e_calls, g_calls = Calls(), Calls()
    e = _engine(big).run(sql, mode="E", emit=e_calls)
    g = _engine(big).run(sql, mode=exact, emit=g_calls)
    assert sorted(g_calls.rows) == sorted(e_calls.rows)
    assert g.rows == e.rows and not g.decided_by


def test_with_a_limit_the_cascade_stops_as_e_does(big):
    sql = QUERY.format("Menlo Park") + " LIMIT 3"
    e = _engine(big).run(sql, mode="E")
    g = _engine(big).run(sql, mode="G")
    assert g.stats.answer_calls == e.stats.answer_calls and g.rows == e.rows
    assert g.plan.cascade is not None and "LIMIT" in g.plan.cascade.fallback


def test_a_random_proxy_still_meets_the_targets_and_saves_about_nothing(big, monkeypatch):
    sql = QUERY.format("Menlo Park")
    yes, _ = _labels(big, sql)
    rng = np.random.default_rng(5)

    def random_prior(ctx, plan, rows):
        return rng.random(len(rows)), "random"

    monkeypatch.setattr(cascade, "proxy_scores", random_prior)
    monkeypatch.setattr(cascade, "learned_scores", lambda ctx, plan, rows, prior, values: rng.random(len(rows)))
    g = _engine(big).run(sql, mode="G")
    e = _engine(big).run(sql, mode="E")
    got = {r["_id"] for r in g.records()}
    tp = len(got & yes)
    assert tp / len(got) >= 0.9 and tp / len(yes) >= 0.9
    assert g.stats.answer_calls >= 0.9 * e.stats.answer_calls


def test_the_larger_world_is_deterministic_and_has_its_rows():
    a, b = W.build(n=W.LARGE), W.build(n=W.LARGE)
    assert len(a.world.rows) >= 5000 and a.world.rows == b.world.rows
    assert len({r.name for r in a.world.rows}) == len(a.world.rows)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT _id, name FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes'",
        "SELECT _id FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes' "
        "OR answer(reviews, 'does it have a great view?') = 'Yes'",
        "SELECT name FROM restaurants WHERE rating >= 4 AND answer(reviews, 'is it family-friendly?') = 'Yes' "
        "ORDER BY rating DESC, name",
    ],
    ids=["one", "or", "ordered"],
)
def test_below_the_minimum_g_is_e_row_for_row_and_call_for_call(sql):
    """Under MIN_CANDIDATES candidates G runs as E and says why; this is why the differential test
    (tests/engines/suql/test_differential.py, a 24-row world) compares modes A-F and not G."""
    sb = Sandbox.create(W.build(n=cascade.MIN_CANDIDATES - 1).world.load)
    try:
        e_calls, g_calls = Calls(), Calls()
        e = SuqlEngine(sb, LLM(SimBackend(seed=224)), verify="eager").run(sql, mode="E", emit=e_calls)
        g = SuqlEngine(sb, LLM(SimBackend(seed=224)), verify="eager").run(sql, mode="G", emit=g_calls)
    finally:
        sb.close()
    assert g.rows == e.rows and g.to_verify == e.to_verify and not g.decided_by
    assert g_calls.rows == e_calls.rows
    assert g.plan.cascade is not None and "fewer than" in (g.plan.cascade.fallback or "")


def test_the_engine_does_not_import_scipy_stats():
    """Mode G's normal quantiles come from the standard library: scipy.stats took 0.5 s and 45 MB of every CLI
    command's start (own_data_scale: 1.45 s -> 1.98 s a command at 1,000 rows), mode G used or not."""
    import subprocess
    import sys

    code = "import sys, engines.suql.execute, tui.cli; print('scipy.stats' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(("candidates", "positives"), [(848, 33), (840, 160), (3400, 120), (331, 1), (1000, 500)])
def test_the_recall_proof_floor_is_the_least_sample_a_binomial_test_accepts(candidates, positives):
    from scipy.stats import binom  # the test's reference, not the engine's (which must not import scipy.stats)

    from engines.suql.compiler.cascade_stats import proof_draws

    m = proof_draws(candidates, positives, 0.9, 0.05)
    share = 0.1 * positives / (candidates - positives)
    assert binom.pmf(0, int(m), share) <= 0.025 < binom.pmf(0, int(m) - 1, share)


def test_the_recall_proof_floor_at_the_edges():
    from engines.suql.compiler.cascade_stats import proof_draws

    assert proof_draws(500, 0, 0.9, 0.05) == float("inf")  # no positive: nothing may be left out
    assert proof_draws(500, 50, 1.0, 0.05) == float("inf")  # recall 1: nothing may be left out
    assert proof_draws(100, 95, 0.9, 0.05) == 0.0  # the allowed misses outnumber the negatives


CONJUNCTION = (
    "SELECT _id, name FROM restaurants WHERE answer(reviews, 'is it family-friendly?') = 'Yes' "
    "AND answer(reviews, '{}') = 'Yes' AND location = 'Palo Alto'"
)


def test_a_rare_conjunction_gives_the_cascade_up_after_its_pilot_and_says_why(big):
    sql = CONJUNCTION.format("is parking easy?")
    steps: list[str] = []
    g = _engine(big).run(
        sql, mode="G", emit=lambda ev: steps.append(ev.phase) if isinstance(ev, CallFinished) else None
    )
    e = _engine(big).run(sql, mode="E")
    report = g.plan.cascade
    assert report is not None and report.pilot > 0 and not report.band
    assert "the pilot's" in report.fallback and "more than the sample's" in report.fallback
    assert "not cascaded" in "\n".join(report.lines())
    assert set(steps) == {"pilot", ""}  # the pilot's calls, then E's loop (unmarked)
    assert g.rows == e.rows and g.to_verify == e.to_verify and not g.decided_by
    assert g.stats.answer_calls <= e.stats.answer_calls + report.pilot  # at most the pilot's price


def test_a_sample_that_can_leave_no_row_out_says_how_many_draws_it_would_take(big):
    g = _engine(big).run(CONJUNCTION.format("is it romantic?"), mode="G")
    report = g.plan.cascade
    assert report is not None and not report.fallback and report.reject is None and report.band
    assert report.proof_draws is not None and report.proof_draws > report.draws
    text = "\n".join(report.lines())
    told = (
        "more draws than there are rows: no proxy can leave a row out here"
        if report.proof_draws >= report.pool
        else f"takes ≥ {report.proof_draws:,.0f} draws among them"
    )
    assert "reject: none" in text and "why: with ≈" in text and told in text
    assert g.to_json()["plan"]["cascade"]["recall_proof_draws"] == report.proof_draws


def test_lazy_g_defers_what_e_defers_and_settling_gives_the_eager_result(big):
    """Under lazy verification the cascade's sample and band stop at a row's first Unknown, as E's loop does; the
    pilot is asked in full and teaches the proxy alone, so settling every row gives the eager run exactly."""
    sql = CONJUNCTION.format("is it romantic?")
    engine = SuqlEngine(
        big, LLM(SimBackend(seed=224)), call_budget=10_000, indexes=_INDEXES.setdefault(id(big), IndexCache())
    )
    eager = engine.run(sql, mode="G", verify="eager")
    lazy = engine.run(sql, mode="G", verify="lazy")
    assert lazy.plan.cascade is not None and not lazy.plan.cascade.fallback
    assert lazy.unsettled > 0 and lazy.stats.answer_calls < eager.stats.answer_calls
    assert lazy.known[0].keys() <= eager.known[0].keys()  # nothing eager would not ask
    assert lazy.rows == eager.rows and lazy.decided_by == eager.decided_by
    settled = engine.settle(lazy)
    assert settled.rows == eager.rows and settled.to_verify == eager.to_verify
    assert settled.decided_by == eager.decided_by and settled.known[0] == eager.known[0]
    assert lazy.stats.answer_calls + settled.stats.answer_calls == eager.stats.answer_calls


def test_each_call_says_which_cascade_step_asked_it(big):
    sql = QUERY.format("Menlo Park")
    steps: list[tuple[str, str]] = []

    def emit(event: object) -> None:
        if isinstance(event, CallFinished) and not event.cached:
            steps.append((event.phase, event.row_key or ""))

    g = _engine(big).run(sql, mode="G", emit=emit)
    report = g.plan.cascade
    assert report is not None and report.band is not None
    order = {"pilot": 0, "sample": 1, "band": 2}
    assert [p for p, _ in steps] == sorted((p for p, _ in steps), key=order.__getitem__)  # pilot, sample, band
    assert len({k for p, k in steps if p == "pilot"}) == report.pilot
    assert len({k for p, k in steps if p == "sample"}) == report.sampled
    assert len({k for p, k in steps if p == "band"}) == report.band
    e_phases: list[str] = []
    _engine(big).run(sql, mode="E", emit=lambda ev: e_phases.append(getattr(ev, "phase", "")))
    assert not any(e_phases)  # only the cascade marks its calls
