"""The bounded pool (engines/suql/compiler/rows.py, adaptive.py, asker.py): the calls in flight never exceed the
pool, the sample phase of modes C/D runs on it rather than before it, a LIMIT stops it with at most pool - 1
unused calls, and a LIMIT without ORDER BY returns the same rows whatever order the answers arrive in."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import replace

import pytest

from engines.events import CallFinished, CallStarted
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.suql.execute import RowDecided, SuqlEngine
from engines.suql.plan import MODES

STATIC = replace(MODES["E"], name="E-static", feedback=False)
TWO = (
    "SELECT _id FROM restaurants WHERE location = 'Mission District' AND answer(reviews, 'is it romantic?') = 'Yes' "
    "AND answer(reviews, 'is it good for groups?') = 'Yes'"
)


class Backend:
    """What the simulated LLM's calls do in time: each sleeps (a seeded random span), and the calls in flight are
    counted, in the order the calls start."""

    def __init__(self, seed: int = 0, most_s: float = 0.004) -> None:
        self.rng = random.Random(seed)
        self.most_s = most_s
        self.lock = threading.Lock()
        self.now = 0
        self.at_start: list[int] = []  # per call, in start order: the calls in flight, itself included

    def sleep(self, _: float) -> None:
        with self.lock:
            self.now += 1
            self.at_start.append(self.now)
            span = self.rng.uniform(0.0, self.most_s)
        time.sleep(span)
        with self.lock:
            self.now -= 1

    def engine(self, sandbox, pool: int) -> SuqlEngine:
        return SuqlEngine(sandbox, LLM(SimBackend(seed=224, latency_s=1.0, sleep=self.sleep)), pool=pool)


class Log:
    def __init__(self) -> None:
        self.events: list = []
        self.lock = threading.Lock()

    def __call__(self, e) -> None:
        if isinstance(e, (CallStarted, CallFinished, RowDecided)):
            with self.lock:
                self.events.append(e)

    def finished_after_first_match(self) -> int:
        first = next(n for n, e in enumerate(self.events) if isinstance(e, RowDecided) and e.truth == "match")
        return sum(1 for e in self.events[first + 1 :] if isinstance(e, CallFinished))


@pytest.mark.parametrize("mode", ["C", "D", "E", STATIC])
def test_calls_in_flight_never_exceed_the_pool_and_the_rows_are_mode_as(engine, sandbox, mode):
    a = engine.run(TWO, mode="A")
    timing = Backend()
    r = timing.engine(sandbox, pool=3).run(TWO, mode=mode)
    assert sorted(r.rows) == sorted(a.rows) and a.rows
    assert sorted(v["_id"] for v in r.to_verify) == sorted(v["_id"] for v in a.to_verify)
    assert timing.at_start and max(timing.at_start) <= 3
    if mode != "E":  # the static loops' calls are the sequential run's: the pool changes when they are made, not which
        assert r.stats.answer_calls == engine.run(TWO, mode=mode).stats.answer_calls


@pytest.mark.parametrize("mode", ["C", STATIC])
def test_the_sample_phase_runs_on_the_pool(sandbox, mode):
    # modes C/D/E-static first evaluate a sample of 8 rows in full (16 calls here); it used to run before the pool
    timing = Backend(most_s=0.01)
    timing.engine(sandbox, pool=3).run(TWO, mode=mode)
    assert len(timing.at_start) > 16
    assert max(timing.at_start[:16]) >= 2  # the sample's calls overlap
    assert max(timing.at_start) <= 3


@pytest.mark.parametrize("mode", ["D", STATIC, "E"])
def test_a_limit_stops_the_pool_with_at_most_pool_minus_one_unused_calls(sandbox, mode):
    pool = 4
    for sql in (
        "SELECT _id FROM restaurants WHERE location = 'Mountain View' AND answer(reviews, 'is it romantic?') = 'Yes' "
        "LIMIT 1",
        TWO + " LIMIT 1",
    ):
        timing, log = Backend(), Log()
        r = timing.engine(sandbox, pool=pool).run(sql, mode=mode, emit=log)
        assert len(r.rows) == 1
        assert log.finished_after_first_match() <= pool - 1
        assert max(timing.at_start) <= pool


@pytest.mark.parametrize("mode", ["E", "D"])
def test_a_limit_without_order_by_returns_the_same_rows_whatever_order_the_answers_arrive_in(sandbox, engine, mode):
    # every run's calls take other (seeded) times, so the answers arrive in another order each run
    matches = set(engine.run(TWO, mode="A").rows)
    for sql, k in ((TWO + " LIMIT 3", 3), (TWO.replace("Mission District", "Sunnyvale") + " LIMIT 2", 2)):
        got = set()
        for seed in range(5):
            r = Backend(seed=seed, most_s=0.006).engine(sandbox, pool=4).run(sql, mode=mode)
            assert len(r.rows) == k
            got.add(tuple(r.rows))
        assert len(got) == 1, got  # the same rows on every run
        if "Mission" in sql:
            assert set(got.pop()) <= matches  # ... and real matches
