"""Waiting that a cancel can interrupt.

``LLM`` (engines.llm.client) makes the running operation's cancel flag current while a
backend works; backends wait with :func:`pause` (simulated latency, retry backoff), so Esc
stops a wait at once instead of after it.
"""
from __future__ import annotations

import contextvars
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from engines.errors import Cancelled

_current: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("cs224v_cancel", default=None)


@contextmanager
def cancellable(cancel: threading.Event | None) -> Iterator[None]:
    token = _current.set(cancel)
    try:
        yield
    finally:
        _current.reset(token)


def pause(seconds: float) -> None:
    """Sleep, but raise :class:`Cancelled` as soon as the current operation is cancelled."""
    cancel = _current.get()
    if cancel is None:
        time.sleep(seconds)
        return
    if cancel.wait(seconds):
        raise Cancelled()
