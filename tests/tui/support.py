"""Helpers of the app tests: a deterministic app, a way to wait for its workers, async tests."""
from __future__ import annotations

import asyncio
import functools
from typing import Any, Awaitable, Callable

from textual.pilot import Pilot

from engines.settings import Settings
from tui.app import CS224VApp
from tui.screenshots import SIZE, wait_for_workers, zero_clock

__all__ = ["SIZE", "drive", "make_app", "settle", "zero_clock"]


def make_app(**overrides: Any) -> CS224VApp:
    """The app on the sim backend, no answer cache, no latency, a frozen clock, steady cursors."""
    fields: dict[str, Any] = {"backend": "sim", "seed": 224, "cache_enabled": False, "sim_latency_s": 0.0}
    fields.update(overrides)
    settings = Settings(**fields).model_copy(update={"anthropic_api_key": None})
    app = CS224VApp(settings, clock=zero_clock, cursor_blink=False)
    app.animation_level = "none"
    return app


async def settle(pilot: Pilot) -> None:
    """Wait until every worker is done (failed ones included) and their messages are handled."""
    await wait_for_workers(pilot)


def drive(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an ``async def`` test on a fresh event loop (no async pytest plugin needed)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run
