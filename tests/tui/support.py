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

__all__ = [
    "SIZE",
    "EventGate",
    "drive",
    "finished_answer_call",
    "make_app",
    "open_tab",
    "settle",
    "steady",
    "zero_clock",
]


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


async def steady(pilot: Pilot, *, frames: int = 3, limit_s: float = 5.0) -> None:
    """Settle, then wait until the screen draws the same picture ``frames`` times running (bounded by
    ``limit_s``): a snapshot taken after it does not depend on how far a scroll, a chunked table or a
    deferred refresh had got on a busy machine.  Raises when the screen never stops changing."""
    await settle(pilot)
    # redraw every widget once: a widget drawn while a neighbour's scrollbar briefly took a column (a tab's
    # underline, say) keeps that picture until something repaints it, and how long the scrollbar stayed
    # depends on the machine's load
    for widget in pilot.app.screen.walk_children(with_self=True):
        widget.refresh(layout=True)
        # a scrollbar's thumb is drawn from the sizes it was last told, and Textual tells them on two paths that
        # disagree by the other bar's row (Widget._scroll_update and the compositor's arrangement): which ran
        # last depends on the load.  Tell them once more, as the compositor does
        view = widget.scrollable_content_region
        if widget.show_vertical_scrollbar:
            bar = widget.vertical_scrollbar
            bar.window_virtual_size, bar.window_size = widget.virtual_size.height, view.height
            bar.position = widget.scroll_y
            bar.refresh()
        if widget.show_horizontal_scrollbar:
            bar = widget.horizontal_scrollbar
            bar.window_virtual_size, bar.window_size = widget.virtual_size.width, view.width
            bar.position = widget.scroll_x
            bar.refresh()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    last, same = None, 0
    while same < frames:
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.02)
        shot = pilot.app.export_screenshot()
        same = same + 1 if shot == last else 0
        last = shot
        if loop.time() > deadline:
            raise AssertionError(f"the screen kept changing for {limit_s} s")


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
