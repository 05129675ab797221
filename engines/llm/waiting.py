"""Waiting that a cancel can interrupt.

``LLM`` (engines.llm.client) makes the running operation's cancel flag current while a
backend works; backends wait with :func:`pause` (simulated latency, retry backoff), so Esc
stops a wait at once instead of after it, and run their HTTP requests with :func:`run_async`,
so Esc also aborts a request in flight (the coroutine is cancelled on the shared I/O loop,
which closes its connection) instead of waiting for the response or the timeout.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import os
import threading
import time
from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

from engines.errors import Cancelled

T = TypeVar("T")

#: How often a wait in :func:`run_async` looks at the cancel flag (so Esc acts within this).
POLL_S = 0.05

_current: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("cs224v_cancel", default=None)


@contextmanager
def cancellable(cancel: threading.Event | None) -> Iterator[None]:
    token = _current.set(cancel)
    try:
        yield
    finally:
        _current.reset(token)


def current_cancel() -> threading.Event | None:
    """The cancel flag of the running operation (``None`` outside :func:`cancellable`)."""
    return _current.get()


def pause(seconds: float) -> None:
    """Sleep, but raise :class:`Cancelled` as soon as the current operation is cancelled."""
    cancel = _current.get()
    if cancel is None:
        time.sleep(seconds)
        return
    if cancel.wait(seconds):
        raise Cancelled()


# --- the I/O loop ------------------------------------------------------------------------


class _IOLoop:
    """An asyncio event loop running forever on a daemon thread of this process."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="cs224v-io", daemon=True)
        self.thread.start()

    def usable(self) -> bool:
        return self.pid == os.getpid() and self.thread.is_alive() and not self.loop.is_closed()


_io: _IOLoop | None = None
_io_lock = threading.Lock()


def io_loop() -> asyncio.AbstractEventLoop:
    """The process's shared I/O loop, started on first use (and again in a forked child).

    Async clients (the Anthropic SDK's) must only ever be used on this loop: their connection
    pools belong to it.
    """
    global _io
    with _io_lock:
        if _io is None or not _io.usable():
            _io = _IOLoop()
        return _io.loop


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the I/O loop and wait for its result (or exception) in this thread.

    If the current operation is cancelled meanwhile, the coroutine is cancelled (an HTTP request
    in flight is aborted and its connection closed) and :class:`Cancelled` is raised within
    :data:`POLL_S` seconds.  An interrupt of this thread (KeyboardInterrupt) cancels it too.
    """
    cancel = _current.get()
    if cancel is not None and cancel.is_set():
        coro.close()
        raise Cancelled()
    future = asyncio.run_coroutine_threadsafe(_with_cancel(coro, cancel), io_loop())
    try:
        if cancel is None:
            return future.result()
        while True:
            try:
                return future.result(timeout=POLL_S)
            except concurrent.futures.TimeoutError:
                if future.done():  # it finished just now, or itself raised a TimeoutError
                    return future.result()
                if cancel.is_set():
                    raise Cancelled() from None
    except BaseException:
        future.cancel()
        raise


async def _with_cancel(coro: Coroutine[Any, Any, T], cancel: threading.Event | None) -> T:
    """``coro`` with the caller's cancel flag current on the I/O loop too (see :func:`slot`)."""
    _current.set(cancel)  # the task runs in a copy of the loop's context: this stays with the task
    return await coro


@asynccontextmanager
async def slot(semaphore: asyncio.Semaphore) -> AsyncIterator[None]:
    """One of a backend's request slots (``llm_concurrency``).  A request that waited for a slot looks at its
    operation's cancel flag once it has one: cancelled meanwhile, it is not sent (:class:`Cancelled`).  Without
    this, the slot a cancelled request frees could go to a request of the same cancelled operation before its
    thread has seen the flag."""
    async with semaphore:
        cancel = _current.get()
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        yield
