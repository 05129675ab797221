"""Snapshot tests take their picture once the screen has settled.

A test's ``run_before`` waits for the workers and the animations, but a layout already asked for (a panel that
grew, a scroll that keeps a widget in view) may still be pending: snapshots differed now and then under load
(the Lab panel two lines higher, a scrollbar thumb at its old place).  Every ``snap_compare`` here ends its
``run_before`` by waiting until two exports a moment apart agree (:func:`tui.screenshots.settled_screenshot`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from tui.screenshots import settled_screenshot


@pytest.fixture
def snap_compare(snap_compare: Callable[..., bool]) -> Callable[..., bool]:
    def compare(
        app: Any, *args: Any, run_before: Callable[[Pilot], Awaitable[None] | None] | None = None, **kwargs: Any
    ) -> bool:
        async def settled(pilot: Pilot) -> None:
            if run_before is not None:
                result = run_before(pilot)
                if inspect.isawaitable(result):
                    await result
            await settled_screenshot(pilot, "settling")

        return snap_compare(app, *args, run_before=settled, **kwargs)

    return compare
