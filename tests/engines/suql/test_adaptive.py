"""The adaptive row loop of modes E and F (engines/suql/compiler/adaptive.py): it learns from the answers as they
arrive, asks a row's conditions least-likely-first and stops a row that can no longer match, and runs on the
pool without a barrier — and none of it changes a result."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from engines.events import CallFinished, CallStarted
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.suql.execute import RowDecided, SuqlEngine
from engines.suql.plan import MODES

STATIC = replace(MODES["E"], name="E-static", feedback=False)
ROMANTIC_GROUPS = (
    "SELECT _id FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes' "
    "AND answer(reviews, 'is it good for groups?') = 'Yes' AND location = 'Mission District'"
)


class Log:
    def __init__(self) -> None:
        self.events: list = []
        self.lock = threading.Lock()

    def __call__(self, e) -> None:
        if isinstance(e, (CallStarted, CallFinished, RowDecided)):
            with self.lock:
                self.events.append(e)

    def calls_by_row(self) -> dict[str, list[tuple[str, str]]]:
        """Per row: (question, verdict) in the order asked."""
        started = {e.call_id: e for e in self.events if isinstance(e, CallStarted)}
        out: dict[str, list[tuple[str, str]]] = {}
        for e in self.events:
            if isinstance(e, CallFinished):
                s = started[e.call_id]
                out.setdefault(s.row_key, []).append((s.prompt, e.verdict))
        return out


def test_learning_from_the_answers_finds_the_matches_in_far_fewer_calls(engine):
    # the example: 181 calls where 6 would do, with the order fixed before the first call
    everything = engine.run(ROMANTIC_GROUPS, mode="A")
    adaptive = engine.run(ROMANTIC_GROUPS + " LIMIT 3", mode="E")
    static = engine.run(ROMANTIC_GROUPS + " LIMIT 3", mode=STATIC)
    assert len(adaptive.rows) == len(static.rows) == 3
    assert set(adaptive.rows) <= set(everything.rows)  # precision unchanged: only real matches
    assert adaptive.stats.answer_calls * 4 < static.stats.answer_calls
    assert "re-ranked as answers arrive" in adaptive.plan.visit_order


def test_a_row_that_cannot_match_is_not_asked_further_under_a_limit(engine):
    log = Log()
    r = engine.run(ROMANTIC_GROUPS + " LIMIT 3", mode="E", emit=log)
    assert len(r.rows) == 3
    per_row = log.calls_by_row()
    stopped = [calls for calls in per_row.values() if calls[0][1] != "Yes"]
    assert stopped  # some rows said No or Unknown first
    assert all(len(calls) == 1 for calls in stopped)  # ... and were not asked the other condition
    # the static loop asks the second condition after an Unknown (Kleene AND: only a No stops a row)
    static_log = Log()
    engine.run(ROMANTIC_GROUPS + " LIMIT 3", mode=STATIC, emit=static_log)
    assert any(len(c) == 2 and c[0][1] == "Unknown" for c in static_log.calls_by_row().values())


@pytest.mark.parametrize("limit", ["", " LIMIT 40"])
def test_list_all_and_an_unmet_limit_decide_every_row_as_mode_a(engine, limit):
    # LIMIT 40 is never met here: the rows stopped early are then decided in full, so the rows to verify are all there
    a = engine.run(ROMANTIC_GROUPS, mode="A")
    e = engine.run(ROMANTIC_GROUPS + limit, mode="E")
    assert sorted(e.rows) == sorted(a.rows) and len(a.rows) < 40
    assert sorted(v["_id"] for v in e.to_verify) == sorted(v["_id"] for v in a.to_verify)
    assert e.to_verify  # the comparison means something


def test_structured_order_with_a_limit_returns_the_top_matches(engine):
    sql = ROMANTIC_GROUPS.replace("SELECT _id", "SELECT _id, rating") + " ORDER BY rating DESC, _id LIMIT 2"
    a = engine.run(sql, mode="A")
    for pool in (1, 3):
        e = SuqlEngine(engine.sandbox, LLM(SimBackend(seed=224)), pool=pool).run(sql, mode="E")
        assert e.rows == a.rows


def test_the_pool_stops_at_the_limit_with_at_most_pool_minus_one_calls_in_flight(sandbox):
    pool = 4
    engine = SuqlEngine(sandbox, LLM(SimBackend(latency_s=0.004)), pool=pool)
    for sql in (
        *(
            f"SELECT _id FROM restaurants WHERE location = 'Mountain View' AND answer(reviews, '{q}') = 'Yes' LIMIT 1"
            for q in ("is it romantic?", "is parking easy?", "does it have a great view?")
        ),
        ROMANTIC_GROUPS + " LIMIT 1",  # two conditions: a row in flight does not ask its second one after the match
    ):
        log = Log()
        r = engine.run(sql, mode="E", emit=log)
        assert len(r.rows) == 1
        matched = [n for n, e in enumerate(log.events) if isinstance(e, RowDecided) and e.truth == "match"]
        assert matched
        after = log.events[matched[0] + 1 :]
        # the speculative calls whose answers go unused: rows already submitted, never a new one
        assert sum(1 for e in after if isinstance(e, CallFinished)) <= pool - 1


def test_the_pool_gives_the_sequential_results_on_list_all(sandbox):
    sequential = SuqlEngine(sandbox, LLM(SimBackend()), pool=1).run(ROMANTIC_GROUPS, mode="E")
    pooled = SuqlEngine(sandbox, LLM(SimBackend(latency_s=0.002)), pool=4).run(ROMANTIC_GROUPS, mode="E")
    assert sorted(pooled.rows) == sorted(sequential.rows)
    assert sorted(v["_id"] for v in pooled.to_verify) == sorted(v["_id"] for v in sequential.to_verify)
