"""The per-query budget of LLM calls: a run stops at it with partial, correct rows and a clear
message; estimate_calls is an upper bound on what a run makes."""

from __future__ import annotations

import pytest

from engines.events import CallFinished
from engines.llm.cache import AnswerCache
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.suql.execute import SuqlEngine
from engines.suql.plan import MODES

ALL_MODES = [*MODES, "B-duckdb"]
# many candidates, a summary() for every match: far more than a handful of calls
ROMANTIC = (
    "SELECT _id, summary(reviews) FROM restaurants "
    "WHERE location IN ('Palo Alto', 'Mountain View') AND answer(reviews, 'is it romantic?') = 'Yes'"
)
ESTIMATED = [
    ROMANTIC,
    "SELECT name, summary(reviews) FROM restaurants WHERE answer(reviews, 'is it family-friendly?') = 'Yes' "
    "AND location = 'Palo Alto' LIMIT 1",
    "SELECT name FROM restaurants WHERE location = 'Mountain View' AND (answer(reviews, 'is it romantic?') = 'Yes' "
    "OR answer(reviews, 'does it have a great view?') = 'Yes') ORDER BY rating DESC LIMIT 3",
    "SELECT name, summary(reviews) FROM restaurants WHERE location = 'Palo Alto' LIMIT 2",
    "SELECT COUNT(*) FROM restaurants WHERE location = 'Menlo Park' AND answer(reviews, 'is it good for groups?') = 'Yes'",
    "SELECT s.name FROM (SELECT * FROM restaurants WHERE location = 'Palo Alto' AND answer(reviews, 'is it cheap?') = 'Yes') s "
    "WHERE answer(s.reviews, 'is it romantic?') = 'Yes'",
    "SELECT name FROM restaurants WHERE location = 'Sunnyvale' ORDER BY answer(reviews, 'is it quiet?') LIMIT 2",
]


def real_calls(events) -> int:
    return sum(1 for e in events if isinstance(e, CallFinished) and not e.cached)


@pytest.fixture(scope="module")
def full(sandbox):
    """The complete answer of ROMANTIC in each mode (no budget to speak of)."""
    engine = SuqlEngine(sandbox, LLM(SimBackend(seed=224)))
    return {m: engine.run(ROMANTIC, mode=m) for m in ALL_MODES}


@pytest.mark.parametrize("pool", [1, 3])
@pytest.mark.parametrize("mode", ALL_MODES)
def test_a_run_stops_at_the_budget_with_correct_partial_rows(sandbox, full, mode, pool):
    assert not full[mode].budget_exhausted and full[mode].message == ""
    engine = SuqlEngine(sandbox, LLM(SimBackend(seed=224)), pool=pool, call_budget=5)
    events: list = []
    result = engine.run(ROMANTIC, mode=mode, emit=events.append)
    assert real_calls(events) <= 5
    assert result.stats.answer_calls + result.stats.summary_calls - result.stats.cached_calls <= 5
    assert result.budget_exhausted
    assert result.message == (
        "Stopped after 5 LLM calls (the per-query budget, CS224V_SUQL_CALL_BUDGET): the results are partial."
    )
    data = result.to_json()
    assert data["budget_exhausted"] is True and data["message"] == result.message
    # every row returned really satisfies the query: it is in the complete answer
    complete = {r[0] for r in full[mode].rows}
    assert {r[0] for r in result.rows} <= complete
    assert len(result.rows) < len(complete)


def test_partial_rows_are_returned(sandbox, full):
    """A budget large enough for a few matches returns them (table order, mode C: structured first)."""
    engine = SuqlEngine(sandbox, LLM(SimBackend(seed=224)), call_budget=40)
    result = engine.run(ROMANTIC, mode="C")
    assert result.budget_exhausted
    complete = dict((r[0], r[1]) for r in full["C"].rows)
    assert result.rows and {r[0] for r in result.rows} <= set(complete)
    for _id, summary in result.rows:  # a summary was made or left unknown, never wrong
        assert summary is None or summary == complete[_id]


def test_a_run_within_the_budget_is_not_flagged(sandbox):
    engine = SuqlEngine(sandbox, LLM(SimBackend(seed=224)), call_budget=10_000)
    result = engine.run(ROMANTIC, mode="A")
    assert not result.budget_exhausted and result.message == ""
    exact = SuqlEngine(
        sandbox, LLM(SimBackend(seed=224)), call_budget=result.stats.answer_calls + result.stats.summary_calls
    )
    again = exact.run(ROMANTIC, mode="A")  # exactly the calls it needs: not exhausted
    assert not again.budget_exhausted and again.rows == result.rows


def test_cached_answers_do_not_count(sandbox, tmp_path):
    with AnswerCache(tmp_path) as cache:
        engine = SuqlEngine(sandbox, LLM(SimBackend(seed=224), cache=cache), call_budget=5)
        first = engine.run(ROMANTIC, mode="C")
        assert first.budget_exhausted and first.stats.cached_calls == 0
        events: list = []
        second = engine.run(ROMANTIC, mode="C", emit=events.append)
        assert second.budget_exhausted
        assert second.stats.cached_calls >= 5  # the first run's answers, for free
        assert real_calls(events) == 5  # and five new ones


def test_the_budget_reaches_the_engine_from_the_settings():
    from engines.compose import open_suql
    from engines.settings import Settings

    session = open_suql(Settings(suql_call_budget=7))
    try:
        assert session.engine.call_budget == 7
        result = session.engine.run(ROMANTIC, mode="A")
        assert result.budget_exhausted and "Stopped after 7 LLM calls" in result.message
    finally:
        session.close()


@pytest.mark.parametrize("mode", ALL_MODES)
def test_the_estimate_is_an_upper_bound(sandbox, mode):
    engine = SuqlEngine(sandbox, LLM(SimBackend(seed=224)))
    for q in ESTIMATED:
        result = engine.run(q, mode=mode)
        made = result.stats.answer_calls + result.stats.summary_calls
        estimate = engine.estimate_calls(q, mode)
        assert made <= estimate, (q, made, estimate)
    assert engine.estimate_calls("SELECT name FROM restaurants WHERE rating > 4", mode) == 0


def test_the_estimate_counts_candidates_not_the_table(sandbox, world):
    engine = SuqlEngine(sandbox, LLM(SimBackend(seed=224)))
    palo_alto = sum(r.location == "Palo Alto" for r in world.rows)
    q = "SELECT name FROM restaurants WHERE location = 'Palo Alto' AND answer(reviews, 'is it cheap?') = 'Yes'"
    assert engine.estimate_calls(q, "C") == palo_alto  # structured conditions first
    assert engine.estimate_calls(q, "A") == len(world.rows)  # naive: every row
    assert engine.estimate_calls(q, "F") == min(palo_alto, engine.cap)  # the retrieval cap
    assert (
        engine.estimate_calls(
            q.replace("'Yes'", "'Yes' LIMIT 1").replace("SELECT name", "SELECT name, summary(reviews)"), "E"
        )
        == palo_alto + 1
    )  # LIMIT bounds the SELECT-list calls, not the WHERE's
