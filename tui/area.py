"""What every tab of the app is: a *work area* widget.

A work area owns one engine session (opened in a thread worker), shows what the
engine reports, and offers its actions to the command palette.  The app knows the
areas only through this interface, so adding a tab is adding one module with a
:class:`WorkArea` subclass (and one line in ``tui.app.AREAS``).

Every piece of engine work runs in a thread worker of the area's group (the
area's id), started with :meth:`WorkArea.run_engine`.  Worker outcomes reach
exactly one handler, :meth:`WorkArea.on_worker_state_changed`, which hands
results to :meth:`WorkArea.worker_succeeded` and turns *any* error into a visible
error inside the tab through :meth:`WorkArea.worker_failed` — a failing query
never ends the app.

Usage: every finished LLM call an engine reports (a :class:`~engines.events.CallFinished`) also posts a
:class:`UsageRecorded`, which adds its tokens and estimated cost to the area's :attr:`WorkArea.run_usage`
(the run that goes on, or the last one; a new busy worker starts it from zero) and bubbles on to the app,
which sums the session's usage in the header.  The run's usage is shown on the status line (or, in a tab
with a stats line of its own, :attr:`WorkArea.USAGE_IN_STATUS` false, there: :meth:`WorkArea.usage_counters`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from textual.content import Content

    from engines.settings import Settings

Clock = Callable[[], float]


@dataclass
class RunUsage:
    """Tokens and estimated cost summed over LLM calls (a run's, or the session's): what the API reported,
    or for the simulated backend its estimate on the rendered prompt (``estimated``)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cost_usd: float | None = None  # None while no call had a price
    estimated: int = 0  # calls whose tokens are the simulated backend's estimate
    unpriced: int = 0  # calls with tokens but no price

    def add(self, event: Any) -> None:
        """Add one :class:`~engines.events.CallFinished` (its tokens may be None: a cached answer, no usage)."""
        self.calls += 1
        self.input_tokens += event.input_tokens or 0
        self.output_tokens += event.output_tokens or 0
        self.cached_input_tokens += event.cached_input_tokens or 0
        self.estimated += int(bool(event.estimated))
        if event.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + event.cost_usd
        elif event.input_tokens is not None or event.output_tokens is not None:
            self.unpriced += 1

    @property
    def approx(self) -> str:
        """``≈`` when some of the tokens are estimates (the simulated backend), else nothing."""
        return "≈" if self.estimated else ""

    def tokens_text(self) -> str:
        """``≈1,234 in · 56 out`` (and ``(300 cached)`` after the input when some was cached)."""
        a = self.approx
        cached = f" ({self.cached_input_tokens:,} cached)" if self.cached_input_tokens else ""
        return f"{a}{self.input_tokens:,} in{cached} · {a}{self.output_tokens:,} out"

    def cost_text(self) -> str:
        """``≈$0.0031`` (estimated from the settings' price table; ``≈`` for the sim's estimated tokens),
        ``$?`` when no call had a price."""
        if self.cost_usd is None:
            return "$?"
        return f"{self.approx}${self.cost_usd:,.4f}"

    def line(self) -> str:
        """``tokens ≈1,234 in · 56 out · ≈$0.0031``."""
        return f"tokens {self.tokens_text()} · {self.cost_text()}"

    def short(self) -> str:
        """For the header: ``≈1,290 tokens · ≈$0.0031``."""
        return f"{self.approx}{self.input_tokens + self.output_tokens:,} tokens · {self.cost_text()}"


@dataclass(frozen=True)
class PaletteCommand:
    """One command-palette entry, titled "Area: action"."""

    title: str
    help: str
    callback: Callable[[], Any]


def describe_error(error: BaseException) -> str:
    """The message a person should read for an error a worker raised.

    Engine errors carry a message meant for people and are shown as they are;
    anything else is a bug, shown with its type so it can be reported.
    """
    from engines.errors import EngineError

    if isinstance(error, EngineError):
        return str(error) or type(error).__name__
    return f"Unexpected {type(error).__name__}: {error}"


class WorkArea(Widget):
    """Base class of the widgets that fill the app's tabs.

    Subclasses set :attr:`AREA_ID` (the tab id), :attr:`TITLE` (the tab label) and
    :attr:`HELP` (Markdown for the help screen) and implement
    :meth:`worker_succeeded`, :meth:`worker_failed`, :meth:`use_settings` and
    :meth:`commands`.
    """

    AREA_ID: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    HELP: ClassVar[str] = ""
    STATUS_ID: ClassVar[str] = "status"  # the Static that says idle / running / done / cancelled / error
    STATUS_STATES: ClassVar[tuple[str, ...]] = ("idle", "running", "done", "cancelled", "error")
    RESULTS_IDS: ClassVar[tuple[str, ...]] = ()  # the tables a "done" status speaks of: scrolled into view then
    REPORTED: ClassVar[type[EngineReported]]  # the message engine events arrive in (set below the class)
    BUSY_REASONS: ClassVar[dict[str, str]] = {}  # worker name -> what a "cannot … now" notice says is running
    USAGE_IN_STATUS: ClassVar[bool] = True  # the run's usage on the status line; False: the tab's stats line shows it

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        cursor_blink: bool = True,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id or f"{self.AREA_ID}-area", classes=classes)
        self.settings = settings
        self.clock = clock
        self.cursor_blink = cursor_blink
        self._busy_worker: Worker[Any] | None = None
        self._cancel: threading.Event | None = None  # the running work's cancel flag
        self._ticker: Timer | None = None
        self._counts: dict[str, Any] = {}
        self._started = 0.0
        self.run_usage = RunUsage()  # the tokens and cost of the run that goes on (or of the last one)
        self._status: tuple[str, str] | None = None  # the status line's own text and state (usage aside)

    # --- engine events and time ---------------------------------------------------------------

    def _emit(self, event: Any) -> None:
        """An engine's event callback (called in the worker thread): post it to this area (a finished
        LLM call's usage first, so the tab's handler of the call sees it counted)."""
        from engines.events import CallFinished  # loaded by then: an engine is running

        if isinstance(event, CallFinished):
            self.post_message(UsageRecorded(event))
        self.post_message(self.REPORTED(event))

    # --- tokens and cost --------------------------------------------------------------------------

    def on_usage_recorded(self, message: UsageRecorded) -> None:
        """Count a finished call in the run's usage and show it (the message bubbles on to the app)."""
        self.run_usage.add(message.event)
        self._render_usage()

    def _render_usage(self) -> None:
        if self.USAGE_IN_STATUS:
            if self._status is not None:
                self._show_status(*self._status)
        else:
            self._render_counters()

    def usage_counters(self) -> list[Content]:
        """The run's tokens and cost as items of a stats line (``tokens ≈1,234 in · 56 out``, ``cost ≈$0.0031``);
        none before the run's first LLM call."""
        from tui.widgets import counter

        usage = self.run_usage
        if not usage.calls:
            return []
        return [counter("tokens", usage.tokens_text()), counter("cost", usage.cost_text())]

    def _now(self) -> float:
        """The app's clock (a fixed one in tests), else ``time.perf_counter``."""
        return (self.clock or time.perf_counter)()

    # --- an elapsed-time counter while a run goes on ---------------------------------------------

    def _start_ticker(self) -> None:
        """Refresh the run's counters ten times a second (``_counts["elapsed"]`` since ``_started``)."""
        self._stop_ticker()
        self._ticker = self.set_interval(0.1, self._tick)

    def _tick(self) -> None:
        if self._counts.get("running"):
            self._counts["elapsed"] = self._now() - self._started
            self._render_counters()

    def _stop_ticker(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def _render_counters(self) -> None:
        """Areas with a run counter line draw it here."""

    # --- status and cancellation ------------------------------------------------------------

    def _free(self, what: str) -> bool:
        """True when nothing runs; otherwise a notice says what is running (nothing typed is lost)."""
        if not self.is_busy:
            return True
        running = self._busy_worker.name if self._busy_worker is not None else ""
        why = self.BUSY_REASONS.get(running, "the tab is busy")
        self.notify(f"Cannot {what} now: {why}.", severity="warning", title=self.TITLE)
        return False

    def _set_status(self, text: str, state: str) -> None:
        """Show ``text`` in the status line, styled by ``state`` (one of STATUS_STATES); the run's tokens and
        cost follow it while a run goes on and after it (not when idle), unless the tab's stats line shows them."""
        self._status = (text, state)
        self._show_status(text, state)
        if state == "done":
            self.call_after_refresh(self._show_results)

    def _show_status(self, text: str, state: str) -> None:
        status = self.query_one(f"#{self.STATUS_ID}", Static)
        if self.USAGE_IN_STATUS and self.run_usage.calls and state != "idle":
            text = f"{text} · {self.run_usage.line()}"
        status.update(text)
        for name in self.STATUS_STATES:
            status.set_class(name == state, f"-{name}")

    def _show_results(self) -> None:
        """Scroll the first shown results table into view (a stacked narrow or short layout may hide it):
        a status that says the results exist never points at a table out of sight."""
        for table_id in self.RESULTS_IDS:
            for table in self.query(f"#{table_id}"):
                shown = all(node.display for node in table.ancestors_with_self if isinstance(node, Widget))
                if shown and table.is_mounted:
                    table.scroll_visible(animate=False)
                    return

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc (``cancel``) shows in the footer only while something it can stop runs."""
        if action == "cancel":  # hidden while there is nothing to stop (80 columns: room for the others)
            return True if self._cancel is not None and self.is_busy else False
        return True

    def request_cancel(self, status: str, *, running: bool | None = None) -> bool:
        """Set the running work's cancel flag and say so; False when nothing runs.

        The engine checks the flag before its next LLM call (or step), so what it already
        decided stays on screen.
        """
        if self._cancel is None or not (self.is_busy if running is None else running):
            return False
        self._cancel.set()
        self._set_status(status, "running")
        return True

    # --- workers ----------------------------------------------------------------------------

    @property
    def is_busy(self) -> bool:
        """True while a query, a turn or a session rebuild runs in this area."""
        return self._busy_worker is not None and not self._busy_worker.is_finished

    def run_engine(self, work: Callable[[], Any], *, name: str, busy: bool = True) -> Worker[Any]:
        """Run ``work`` in a thread worker of this area's group.

        ``busy`` workers (turns, queries, rebuilds) make :attr:`is_busy` true until they end;
        background ones (warming up the session) do not.
        """
        worker = self.run_worker(
            work,
            name=name,
            group=self.AREA_ID,
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )
        if busy:
            self._busy_worker = worker
            self.run_usage = RunUsage()  # a new run (a turn, a query, an experiment) counts from zero
            if self.is_mounted:
                self._render_usage()
        return worker

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one handler of worker outcomes: results go on screen, errors too."""
        worker = event.worker
        if worker.group != self.AREA_ID:
            return
        event.stop()
        if worker.is_finished and worker is self._busy_worker:
            self._busy_worker = None
        if event.state == WorkerState.SUCCESS:
            self.worker_succeeded(worker.name, worker.result)
        elif event.state == WorkerState.ERROR:
            error = worker.error
            assert error is not None
            self.worker_failed(worker.name, error)
        self.refresh_bindings()

    def worker_succeeded(self, name: str, result: Any) -> None:
        """A worker named ``name`` returned ``result``."""

    def worker_failed(self, name: str, error: BaseException) -> None:
        """A worker named ``name`` raised ``error``: show it inside the tab."""
        raise NotImplementedError

    # --- the app's view of an area -----------------------------------------------------------

    def use_settings(self, settings: Settings) -> None:
        """Adopt new settings (another backend): rebuild the session."""
        raise NotImplementedError

    def commands(self) -> Iterable[PaletteCommand]:
        """Command-palette entries of this area ("Title: action")."""
        return ()

    def export_sources(self) -> list[Any]:
        """What F9 can export here (:class:`tui.export.ExportSource`): every table that shows, the focused one
        first.  A tab adds what is not a table (the knowledge graph's trajectory)."""
        from tui.export import table_sources

        return table_sources(self)

    def focus_default(self) -> None:
        """Focus the widget a user of this tab most likely wants (called when the tab shows)."""

    def tab_shown(self) -> None:
        """The tab shows again (after another one showed): areas refresh what may have gone stale."""


class EngineReported(Message):
    """An engine emitted an event (posted from the worker thread that runs it)."""

    def __init__(self, event: Any) -> None:
        super().__init__()
        self.event = event


class UsageRecorded(Message):
    """An LLM call finished (posted from the worker thread): its tokens and cost, for the run and the session."""

    def __init__(self, event: Any) -> None:
        super().__init__()
        self.event = event  # an engines.events.CallFinished


WorkArea.REPORTED = EngineReported
