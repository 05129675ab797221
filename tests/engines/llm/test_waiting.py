"""A cancel interrupts a backend's wait (simulated latency, retry backoff) at once."""

from __future__ import annotations

import threading
import time

import pytest

from engines.errors import Cancelled
from engines.events import CallFailed
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.llm.waiting import cancellable, pause
from engines.suql.tasks import ANSWER, AnswerInput


def test_pause_without_a_cancel_flag_just_sleeps():
    start = time.perf_counter()
    pause(0.01)
    assert time.perf_counter() - start >= 0.009


def test_pause_raises_when_cancelled():
    flag = threading.Event()
    flag.set()
    with cancellable(flag), pytest.raises(Cancelled):
        pause(5)


def test_esc_during_simulated_latency_stops_the_call():
    cancel = threading.Event()
    events: list = []
    llm = LLM(SimBackend(latency_s=5.0), cancel=cancel, emit=events.append)
    threading.Timer(0.1, cancel.set).start()
    start = time.perf_counter()
    with pytest.raises(Cancelled):
        llm.run(ANSWER, AnswerInput("Our children loved it.", "is it family-friendly?"))
    assert time.perf_counter() - start < 2
    assert isinstance(events[-1], CallFailed)
