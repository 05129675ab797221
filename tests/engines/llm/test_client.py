"""The LLM wrapper: call events, the answer cache, cancellation, backend choice."""

from __future__ import annotations

import threading

import pytest

from engines.errors import Cancelled, ConfigurationError, LLMError
from engines.events import CallFailed, CallFinished, CallStarted
from engines.llm.cache import AnswerCache
from engines.llm.client import LLM, backend_from_settings, llm_from_settings
from engines.llm.sim import SimBackend
from engines.settings import Settings
from engines.suql.tasks import ANSWER, SUMMARY, AnswerInput, SummaryInput

TEXT = "Came for dinner. Our children loved it."


def test_every_call_emits_started_and_finished():
    events: list = []
    ticks = iter([10.0, 10.25])
    llm = LLM(SimBackend(), emit=events.append, clock=lambda: next(ticks))
    a = llm.run(ANSWER, AnswerInput(TEXT, "is it family-friendly?"), row_key="r1")
    assert a.value == "Yes"
    started, finished = events
    assert isinstance(started, CallStarted) and started.function == "answer" and started.row_key == "r1"
    assert isinstance(finished, CallFinished) and finished.call_id == started.call_id
    assert finished.verdict == "Yes" and finished.evidence == ("Our children loved it.",)
    assert finished.latency_s == pytest.approx(0.25) and finished.cached is False
    assert llm.counter.counts == {"answer": 1}


def test_cache_hits_are_reported_and_keyed_on_the_backend(tmp_path):
    cache = AnswerCache(tmp_path)
    events: list = []
    first = LLM(SimBackend(seed=1), cache=cache, emit=events.append)
    first.run(ANSWER, AnswerInput(TEXT, "is it family-friendly?"))
    first.run(ANSWER, AnswerInput(TEXT, "is it family-friendly?"))  # the same key
    first.run(ANSWER, AnswerInput(TEXT, "Is it family-friendly"))  # another question: the key holds it exactly
    assert [e.cached for e in events if isinstance(e, CallFinished)] == [False, True, False]
    other_seed = LLM(SimBackend(seed=2), cache=cache, emit=events.append)
    other_seed.run(ANSWER, AnswerInput(TEXT, "is it family-friendly?"))
    assert [e.cached for e in events if isinstance(e, CallFinished)][-1] is False
    summary = first.run(SUMMARY, SummaryInput(TEXT))
    assert first.run(SUMMARY, SummaryInput(TEXT)) == summary and first.counter.cached == 2


def test_cancel_is_checked_before_each_call():
    cancel = threading.Event()
    llm = LLM(SimBackend(), cancel=cancel)
    llm.run(SUMMARY, SummaryInput(TEXT))
    cancel.set()
    with pytest.raises(Cancelled):
        llm.run(SUMMARY, SummaryInput(TEXT))


def test_bind_shares_the_counter_and_changes_the_listener():
    seen: list = []
    llm = LLM(SimBackend())
    bound = llm.bind(seen.append)
    bound.run(SUMMARY, SummaryInput(TEXT))
    assert len(seen) == 2 and llm.counter.counts == {"summary": 1}


def test_backend_bugs_become_clear_errors():
    class Broken(SimBackend):
        def run(self, task, input):
            if task is SUMMARY:
                raise ZeroDivisionError("oops")
            return super().run(task, input)

    events: list = []
    with pytest.raises(LLMError, match="sim backend failed in summary"):
        LLM(Broken(), emit=events.append).run(SUMMARY, SummaryInput(TEXT))
    assert isinstance(events[-1], CallFailed)


def test_backend_choice_from_settings(monkeypatch):
    assert isinstance(backend_from_settings(Settings()), SimBackend)
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        backend_from_settings(Settings(backend="claude"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert backend_from_settings(Settings(backend="claude")).name == "claude"


def test_settings_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("CS224V_SIM_LATENCY_S", "0.25")
    monkeypatch.setenv("CS224V_BACKEND", "sim")
    s = Settings()
    assert s.sim_latency_s == 0.25
    llm = llm_from_settings(s)
    assert llm.backend.latency_s == 0.25 and llm.cache is not None
