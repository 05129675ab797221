"""engines.suql.compare: one query run in every mode, each mode's line checked against a run of its own."""

from __future__ import annotations

import threading

import pytest

from engines.errors import Cancelled, EngineError
from engines.events import CallFinished
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.suql.compare import Comparison, ModeCompared, ModeProgressed, ModeStarted, compare_modes, row_multiset
from engines.suql.execute import SuqlEngine
from engines.suql.language import SuqlError

ROMANTIC = (
    "SELECT name, rating FROM restaurants WHERE location = 'Mountain View' AND (answer(reviews, 'is it romantic?') "
    "= 'Yes' OR answer(reviews, 'does it have a great view?') = 'Yes') ORDER BY rating DESC LIMIT 3"
)
FAMILY = (
    "SELECT name FROM restaurants WHERE answer(reviews, 'is it family-friendly?') = 'Yes' "
    "AND location = 'Palo Alto' LIMIT 1"
)


def fresh(sandbox) -> SuqlEngine:
    return SuqlEngine(sandbox, LLM(SimBackend(seed=224)))


@pytest.fixture(scope="module")
def romantic(sandbox) -> tuple[Comparison, list]:
    events: list = []
    return compare_modes(fresh(sandbox), ROMANTIC, emit=events.append, clock=lambda: 0.0), events


def test_every_mode_is_what_a_run_of_its_own_reports(sandbox, romantic):
    comparison, _ = romantic
    assert [o.mode for o in comparison.modes] == list("ABCDEFG")
    assert comparison.reference == "A" and comparison.failed == ()
    for outcome in comparison.modes:
        alone = fresh(sandbox).run(ROMANTIC, mode=outcome.mode)  # no answers cached from other modes
        assert outcome.answer_calls == alone.stats.answer_calls, outcome.mode
        assert outcome.rows == len(alone.rows) and outcome.to_verify == len(alone.to_verify)
        assert outcome.approximate == alone.approximate
        assert outcome.result is not None and outcome.result.rows == alone.rows
        assert outcome.wall_s == 0.0  # the injected clock
    calls = {o.mode: o.answer_calls for o in comparison.modes}
    assert calls["A"] > calls["C"] > calls["E"]
    assert comparison.fewest_answer_calls() == (
        tuple(m for m, n in calls.items() if n == min(calls.values())),
        min(calls.values()),
    )


def test_agreement_is_judged_against_mode_a(romantic):
    comparison, _ = romantic
    assert comparison.outcome("A").agrees is None  # the reference itself
    expected = row_multiset(comparison.outcome("A").result)
    for outcome in comparison.modes[1:]:
        assert outcome.agrees == (row_multiset(outcome.result) == expected), outcome.mode
    assert [comparison.outcome(m).agrees for m in "BCDE"] == [True] * 4  # exact modes, ORDER BY … LIMIT
    assert comparison.outcome("F").approximate
    assert not comparison.limit_without_order


def test_a_limit_without_order_is_said(sandbox):
    comparison = compare_modes(fresh(sandbox), FAMILY, modes="AE")
    assert comparison.limit_without_order
    assert comparison.to_json()["limit_without_order"] is True
    e = comparison.outcome("E")
    assert e.agrees is False and e.rows == comparison.outcome("A").rows == 1  # another family-friendly row


def test_row_multiset_ignores_order_but_counts_repeats(romantic):
    result = romantic[0].outcome("A").result
    from dataclasses import replace

    assert row_multiset(replace(result, rows=tuple(reversed(result.rows)))) == row_multiset(result)
    assert row_multiset(replace(result, rows=result.rows + result.rows[:1])) != row_multiset(result)


def test_progress_events(romantic):
    comparison, events = romantic
    assert not any(isinstance(e, CallFinished) for e in events)  # per-call events are counted, not forwarded
    started = [e.mode for e in events if isinstance(e, ModeStarted)]
    compared = [e.outcome for e in events if isinstance(e, ModeCompared)]
    assert started == list("ABCDEFG") and tuple(compared) == comparison.modes
    a = [e for e in events if isinstance(e, ModeProgressed) and e.mode == "A"]
    total = comparison.outcome("A").answer_calls + comparison.outcome("A").summary_calls
    assert len(a) == total // 10
    assert all(e.answer_calls + e.summary_calls == 10 * (i + 1) for i, e in enumerate(a))
    # each mode's events come between its start and its line
    for mode in "ABCDEFG":
        at = [
            i
            for i, e in enumerate(events)
            if getattr(e, "mode", None) == mode or (isinstance(e, ModeCompared) and e.outcome.mode == mode)
        ]
        assert isinstance(events[at[0]], ModeStarted) and isinstance(events[at[-1]], ModeCompared)


def test_a_query_that_cannot_compile_runs_no_mode(sandbox):
    events: list = []
    with pytest.raises(SuqlError, match="answer\\(\\) takes a text and a question"):
        compare_modes(fresh(sandbox), "SELECT name FROM restaurants WHERE answer(reviews) = 'Yes'", emit=events.append)
    assert events == []
    with pytest.raises(SuqlError, match="Unknown execution mode"):
        compare_modes(fresh(sandbox), ROMANTIC, modes=["Z"])


class FailingIn(SuqlEngine):
    """A real engine whose runs in ``modes`` fail as the backend failing would."""

    def __init__(self, sandbox, modes: str) -> None:
        super().__init__(sandbox, LLM(SimBackend(seed=224)))
        self.failing = modes

    def run(self, sql, *, mode="E", **kwargs):
        if mode in self.failing:
            raise EngineError(f"the backend failed in mode {mode}")
        return super().run(sql, mode=mode, **kwargs)


def test_a_failing_mode_is_recorded_and_the_others_still_run(sandbox):
    comparison = compare_modes(FailingIn(sandbox, "C"), ROMANTIC, modes="ACD")
    assert comparison.failed == ("C",)
    c = comparison.outcome("C")
    assert not c.ok and c.error == "the backend failed in mode C" and c.agrees is None and c.result is None
    assert c.to_json()["status"] == "failed"
    assert comparison.outcome("D").agrees is True and comparison.outcome("D").answer_calls > 0
    assert "C" not in comparison.fewest_answer_calls()[0]


def test_no_agreement_without_the_reference(sandbox):
    failed_reference = compare_modes(FailingIn(sandbox, "A"), ROMANTIC, modes="AC")
    assert [o.agrees for o in failed_reference.modes] == [None, None]
    not_run = compare_modes(fresh(sandbox), ROMANTIC, modes="CD")
    assert [o.mode for o in not_run.modes] == ["C", "D"] and [o.agrees for o in not_run.modes] == [None, None]


def test_the_reference_runs_first(sandbox):
    comparison = compare_modes(fresh(sandbox), ROMANTIC, modes="DBC", reference="C")
    assert [o.mode for o in comparison.modes] == ["C", "D", "B"]
    assert comparison.outcome("C").agrees is None and comparison.outcome("D").agrees is True


def test_cancel_stops_the_comparison(sandbox):
    cancel = threading.Event()
    started: list[str] = []

    def emit(event) -> None:
        if isinstance(event, ModeStarted):
            started.append(event.mode)
        if isinstance(event, ModeProgressed) and event.mode == "B":
            cancel.set()

    with pytest.raises(Cancelled):
        compare_modes(
            fresh(sandbox),
            "SELECT name FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes'",
            emit=emit,
            cancel=cancel,
        )
    assert started == ["A", "B"]  # B stopped at its next call; C never began
    cancel.set()
    with pytest.raises(Cancelled):
        compare_modes(fresh(sandbox), ROMANTIC, cancel=cancel)
