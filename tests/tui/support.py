"""Helpers of the app tests: a deterministic app, a way to wait for its workers, async tests."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from textual.pilot import Pilot

from engines.settings import Settings
from tui.app import CS224VApp
from tui.screenshots import SIZE, wait_for_workers, zero_clock

__all__ = ["SIZE", "EventGate", "drive", "finished_answer_call", "make_app", "open_tab", "settle", "zero_clock"]


def make_app(**overrides: Any) -> CS224VApp:
    """The app on the sim backend, no answer cache, no latency, a frozen clock, steady cursors."""
    fields: dict[str, Any] = {"backend": "sim", "seed": 224, "cache_enabled": False, "sim_latency_s": 0.0}
    fields.update(overrides)
    settings = Settings(**fields).model_copy(update={"anthropic_api_key": None})
    app = CS224VApp(settings, clock=zero_clock, cursor_blink=False)
    app.animation_level = "none"
    return app


async def settle(pilot: Pilot) -> None:
    """Wait until the shown tab is built and every worker is done (failed ones included) and their
    messages are handled."""
    app = pilot.app
    if isinstance(app, CS224VApp):
        await app.open_area(app.active_tab)
    await wait_for_workers(pilot)


def drive(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an ``async def`` test on a fresh event loop (no async pytest plugin needed)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


class EventGate:
    """Holds a tab's engine still after the ``after``-th event that ``counts`` (until its cancel flag is set).

    It wraps the area's ``emit`` (called in the worker thread): the event is posted as usual, then
    the thread waits — a deterministic "mid-run" state.  Esc (or the app closing) sets the flag.
    """

    def __init__(self, area: Any, after: int, counts: Callable[[Any], bool]) -> None:
        self.area = area
        self.after = after
        self.counts = counts
        self.inner = area._emit
        self.seen = 0
        self.paused = threading.Event()

    def __call__(self, event: Any) -> None:
        self.inner(event)
        if self.counts(event):
            self.seen += 1
            if self.seen == self.after:
                cancel = self.area._cancel
                self.paused.set()
                if cancel is not None:
                    cancel.wait(timeout=30)

    def install(self) -> EventGate:
        self.area._emit = self
        return self

    async def wait(self, pilot: Pilot) -> None:
        """Until the engine is held and every event it posted is on screen."""
        for _ in range(1000):
            if self.paused.is_set():
                break
            await pilot.pause(0.01)
        assert self.paused.is_set(), "the engine never reached the gate"
        await pilot.pause()
        await pilot.pause()


def finished_answer_call(event: Any) -> bool:
    """``counts`` for EventGate: a finished answer() call."""
    from engines.events import CallFinished

    return isinstance(event, CallFinished) and event.function == "answer"


async def open_tab(pilot: Pilot, tab_id: str) -> Any:
    """Show tab ``tab_id`` (built on its first show), wait for its session, return its area."""
    app = pilot.app
    assert isinstance(app, CS224VApp)
    await settle(pilot)
    app.action_show_tab(tab_id)
    area = await app.open_area(tab_id)
    await settle(pilot)
    return area
