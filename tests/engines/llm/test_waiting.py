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


def test_a_request_that_waited_for_a_slot_is_not_sent_once_its_operation_is_cancelled():
    """The slot a cancelled request frees must not let another request of the same cancelled operation go out
    before its thread has seen the flag (it did, about one run in fifteen of the claude cancel test): a request
    that waited looks at its operation's flag once it has a slot, and run_async makes that flag current on the
    I/O loop."""
    import asyncio

    from engines.llm import waiting
    from engines.llm.waiting import current_cancel, run_async, slot

    sent: list[int] = []

    async def scenario() -> None:
        gate = asyncio.Semaphore(0)  # the one slot is taken, as by a request in flight
        cancel = threading.Event()

        async def request() -> None:
            waiting._current.set(cancel)  # what run_async does for the task
            async with slot(gate):
                sent.append(1)

        task = asyncio.create_task(request())
        await asyncio.sleep(0)  # it waits for the slot
        cancel.set()  # the operation is cancelled, then the slot is freed (the request in flight aborted)
        gate.release()
        with pytest.raises(Cancelled):
            await task
        async with slot(gate):  # the slot is free again, and an operation that was not cancelled gets it
            sent.append(2)

    asyncio.run(scenario())
    assert sent == [2]

    async def flag() -> threading.Event | None:
        return current_cancel()

    event = threading.Event()
    with cancellable(event):
        assert run_async(flag()) is event  # the caller's flag is current on the I/O loop
    assert run_async(flag()) is None
