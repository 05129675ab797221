"""A tab's stats line: the counts of the run that goes on (or of the last one), its elapsed time and its tokens.

:class:`RunCounters` is a widget the tab owns (the SUQL and HybridQA tabs: their ``…-counters`` line).  It holds
the run's counts, the time the run started on the tab's clock (a fixed one in tests), and the run's
:class:`~tui.area.RunUsage`; while the run goes on it refreshes the elapsed time ten times a second.  A tab
subclasses it to say what it counts (:meth:`RunCounters.zero`) and how the line reads
(:meth:`RunCounters.parts`); the tab counts (:meth:`RunCounters.add`, :meth:`RunCounters.stop`) and the line
redraws when asked (:meth:`RunCounters.redraw`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from tui.area import RunUsage

TICK_S = 0.1
"""How often the elapsed time is refreshed while a run goes on."""


class RunCounters(Static):
    """The counts of a run, its elapsed time and its tokens and cost, on one line (see the module docstring).

    ``clock`` is the tab's (the app's injected clock, else ``time.perf_counter``).
    """

    SEPARATOR: ClassVar[str] = "   "
    """What stands between two items of the line."""

    def __init__(self, *, clock: Callable[[], float], id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.counts: dict[str, Any] = self.zero()
        self.started = 0.0
        self.usage = RunUsage()
        self._ticker: Timer | None = None

    # --- what a tab says ---------------------------------------------------------------------------

    def zero(self) -> dict[str, Any]:
        """The counts before a run: the tab's own, with ``elapsed`` (seconds) and ``running``."""
        return {"elapsed": 0.0, "running": False}

    def parts(self) -> list[Content]:
        """The line's items from :attr:`counts` (the usage follows them)."""
        return [counter("elapsed", f"{self.counts['elapsed']:.2f} s")]

    # --- counting ------------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return bool(self.counts.get("running"))

    def reset(self) -> None:
        """Zero every count (the line is redrawn by :meth:`redraw`)."""
        self.counts = self.zero()

    def begin(self) -> None:
        """A run begins: counts from zero, its start time now, the elapsed time ticking."""
        self.reset()
        self.started = self.clock()
        self.counts["running"] = True
        self.redraw()
        self.stop_ticking()
        self._ticker = self.set_interval(TICK_S, self._tick)

    def add(self, key: str, n: int = 1) -> None:
        """Count ``n`` more of ``key``."""
        self.counts[key] = self.counts.get(key, 0) + n

    def since_start(self) -> float:
        """Seconds since the run began, on the tab's clock."""
        return self.clock() - self.started

    def stop(self, **counts: Any) -> None:
        """The run ended: the ticking stops, ``counts`` (the engine's final figures) replace the ones counted."""
        self.stop_ticking()
        self.counts.update(counts, running=False)
        self.redraw()

    def stop_ticking(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def show_usage(self, usage: RunUsage) -> None:
        """The run's tokens and cost so far (its LLM calls)."""
        self.usage = usage
        self.redraw()

    # --- drawing -------------------------------------------------------------------------------------

    def _tick(self) -> None:
        if self.running:
            self.counts["elapsed"] = self.since_start()
            self.redraw()

    def usage_parts(self) -> list[Content]:
        """The run's tokens and cost as items of the line (``tokens ≈1,234 in · 56 out``, ``cost $0.0031``); none
        before the run's first LLM call."""
        usage = self.usage
        if not usage.calls:
            return []
        if not usage.billed:  # the sim's estimated tokens: no cost
            return [counter("tokens (estimated)" if usage.estimated else "tokens", usage.tokens_text())]
        return [counter("tokens", usage.tokens_text()), counter("cost", usage.cost_text())]

    def redraw(self) -> None:
        self.update(Content(self.SEPARATOR).join([*self.parts(), *self.usage_parts()]))

    def on_unmount(self) -> None:
        self.stop_ticking()


def counter(label: str, value: str) -> Content:
    """One item of the line: ``label`` muted, ``value`` bold (:func:`tui.widgets.counter`)."""
    from tui.widgets import counter as item

    return item(label, value)


__all__ = ["TICK_S", "RunCounters", "counter"]
