"""What every tab of the app is: a *work area* widget.

A work area owns one engine session (opened in a thread worker), shows what the
engine reports, and offers its actions to the command palette.  The app knows the
areas only through this interface, so adding a tab is adding one module with a
:class:`WorkArea` subclass (and one line in ``tui.app.AREAS``).

Every piece of engine work runs in a thread worker of one of the area's groups (:attr:`WorkArea.GROUPS`),
started with :meth:`WorkArea.run_engine`, which takes the handlers of that work's outcome: ``done`` gets the
work's typed result (a dataclass of the tab's, or the engine's), ``failed`` the error it raised.  Worker outcomes
reach exactly one router, :meth:`WorkArea.on_worker_state_changed`, which hands each to the handlers its work was
started with; a work started without a ``failed`` handler gets :meth:`WorkArea.show_failure`, which puts the
error on the status line.  Any error becomes a visible error inside the tab — a failing query never ends the app.

What an engine reports while it runs: the worker hands the engine the area's :meth:`WorkArea._emit` as its
``emit`` callback; in the worker thread each event becomes its typed message (:attr:`WorkArea.REPORTS`, a
:class:`tui.messages.Reports` table: one message class per outcome the tab handles differently), posted to the
area, whose ``on_…`` handler shows it.

Usage: every finished LLM call an engine reports (a :class:`~engines.events.CallFinished`) also posts a
:class:`UsageRecorded`, which adds its tokens and estimated cost to the area's :attr:`WorkArea.run_usage`
(the run that goes on, or the last one; a new busy worker starts it from zero) and bubbles on to the app,
which sums the session's usage in the header.  The run's usage is shown on the status line (or, in a tab
with a stats line of its own, :attr:`WorkArea.USAGE_IN_STATUS` false, there: a :class:`tui.counters.RunCounters`).

What every tab shares it owns, as parts with typed interfaces rather than as mixins: its status line
(:class:`StatusLine`), its history of runs (a :class:`tui.history.BoxHistory` in :attr:`WorkArea.box_history`,
whose keys' actions are here), a schema pane or a counters line where it has them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from tui.messages import NO_REPORTS, Reports

if TYPE_CHECKING:
    from engines.api import Settings
    from tui.history import BoxHistory, HistoryStore

Clock = Callable[[], float]
R = TypeVar("R")


@dataclass
class RunUsage:
    """Tokens and estimated cost summed over LLM calls (a run's, or the session's): what the API reported,
    or for the simulated backend its estimate on the rendered prompt (``estimated``).  The simulated backend
    costs nothing: its calls are never priced, and a run of its calls alone shows no cost at all."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cost_usd: float | None = None  # None while no call had a price
    estimated: int = 0  # calls whose tokens are the simulated backend's estimate
    unpriced: int = 0  # calls with tokens but no price
    cached_real: int = 0  # calls of a real backend answered from the answer cache: nothing billed

    def add(self, event: Any, *, real: bool = False) -> None:
        """Add one :class:`~engines.events.CallFinished` (its tokens may be None: a cached answer, no usage);
        ``real``: it was asked of a real backend (a cached answer then cost $0, not an unknown amount)."""
        self.calls += 1
        self.cached_real += int(bool(event.cached) and real)
        self.input_tokens += event.input_tokens or 0
        self.output_tokens += event.output_tokens or 0
        self.cached_input_tokens += event.cached_input_tokens or 0
        self.estimated += int(bool(event.estimated))
        if event.estimated:  # the sim's estimate: no bill, and not a call missing its price
            return
        if event.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + event.cost_usd
        elif event.input_tokens is not None or event.output_tokens is not None:
            self.unpriced += 1

    @property
    def billed(self) -> bool:
        """Some call of a real backend had tokens (priced or not): a cost is shown; never for the sim's alone."""
        return self.cost_usd is not None or self.unpriced > 0 or self.cached_real > 0

    @property
    def approx(self) -> str:
        """``≈`` when some of the tokens are estimates (the simulated backend), else nothing."""
        return "≈" if self.estimated else ""

    def tokens_text(self) -> str:
        """``≈1,234 in · ≈56 out`` (and ``(300 cached)`` after the input when some was cached)."""
        a = self.approx
        cached = f" ({self.cached_input_tokens:,} cached)" if self.cached_input_tokens else ""
        return f"{a}{self.input_tokens:,} in{cached} · {a}{self.output_tokens:,} out"

    def cost_text(self) -> str:
        """``$0.0031`` (estimated from the settings' price table, for the calls of a real backend), ``$0 (cached)``
        when they all came from the answer cache, ``$?`` when such a call had no price; empty when no call of a real backend had tokens (the sim costs nothing)."""
        if not self.billed:
            return ""
        if self.cost_usd is None and self.unpriced == 0:  # every call of the real backend came from the cache
            return "$0 (cached)"
        if self.cost_usd is None:
            return "$?"
        return f"${self.cost_usd:,.4f}"

    def line(self) -> str:
        """``tokens 1,234 in · 56 out · $0.0031``; the sim's ``tokens (estimated) ≈1,234 in · ≈56 out``."""
        if not self.billed:
            return f"tokens{' (estimated)' if self.estimated else ''} {self.tokens_text()}"
        return f"tokens {self.tokens_text()} · {self.cost_text()}"

    def short(self) -> str:
        """For the header: ``1,290 tokens · $0.0031``; the sim's ``≈1,290 tokens (est.)`` (short: the header of an
        80-column terminal has room for it)."""
        tokens = f"{self.approx}{self.input_tokens + self.output_tokens:,} tokens"
        if not self.billed:
            return f"{tokens} (est.)" if self.estimated else tokens
        return f"{tokens} · {self.cost_text()}"


@dataclass(frozen=True)
class PaletteCommand:
    """One command-palette entry, titled "Area: action"."""

    title: str
    help: str
    callback: Callable[[], Any]


def in_turn(*steps: Callable[[], object]) -> Callable[[], object]:
    """A palette callback that runs ``steps`` in order and returns what the last returned."""

    def run() -> object:
        result: object = None
        for step in steps:
            result = step()
        return result

    return run


@dataclass(frozen=True)
class Job(Generic[R]):
    """One piece of engine work in flight, and where its outcome goes (see :meth:`WorkArea.run_engine`)."""

    done: Callable[[R], object]  # gets the work's result
    failed: Callable[[BaseException], object]  # gets the error it raised (a Cancelled one included)
    busy: str | None  # what a "cannot … now" notice says is running; None: background work
    cancelled: Callable[[], object] | None = None  # the worker was cancelled (replaced in its group, unmounted)


def describe_error(error: BaseException) -> str:
    """The message a person should read for an error a worker raised.

    Engine errors carry a message meant for people and are shown as they are;
    anything else is a bug, shown with its type so it can be reported.
    """
    from engines.api import EngineError

    if isinstance(error, EngineError):
        return str(error) or type(error).__name__
    return f"Unexpected {type(error).__name__}: {error}"


class WorkArea(Widget):
    """Base class of the widgets that fill the app's tabs.

    Subclasses set :attr:`AREA_ID` (the tab id), :attr:`TITLE` (the tab label) and
    :attr:`HELP` (Markdown for the help screen), start their engine work with :meth:`run_engine` (each with
    its own outcome handlers), and override :meth:`use_settings` (when they hold a session built from the
    settings) and :meth:`commands` (their palette entries).
    """

    AREA_ID: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    HELP: ClassVar[str] = ""
    STATUS_ID: ClassVar[str] = "status"  # the StatusLine that says idle / running / done / cancelled / error
    RESULTS_IDS: ClassVar[tuple[str, ...]] = ()  # the tables a "done" status speaks of: scrolled into view then
    REPORTS: ClassVar[Reports] = NO_REPORTS  # which typed message each engine event the tab shows becomes
    GROUPS: ClassVar[tuple[str, ...]] = ("",)  # the worker groups the area owns (one exclusive worker each)
    USAGE_IN_STATUS: ClassVar[bool] = True  # the run's usage on the status line; False: the tab's stats line shows it
    RUN_ACTIONS: ClassVar[frozenset[str]] = frozenset()  # actions that start a run: off the footer while one goes on

    working: reactive[bool] = reactive(False)
    """True while busy work runs (what :attr:`is_busy` says), for the tab's widgets to bind to (``data_bind``)."""

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
        self._jobs: dict[Worker[Any], Job[Any]] = {}  # the workers this area started, still to report
        self._busy: dict[str, Worker[Any]] = {}  # group -> its busy worker (the last one started)
        self._cancel: threading.Event | None = None  # the running work's cancel flag
        self.run_usage = RunUsage()  # the tokens and cost of the run that goes on (or of the last one)
        self._status: tuple[str, str] | None = None  # the status line's own text and state (usage aside)
        self.box_history: BoxHistory | None = None  # the tab's history of runs and examples, if it keeps one

    # --- engine events and time ---------------------------------------------------------------

    def _emit(self, event: Any) -> None:
        """An engine's event callback (called in the worker thread that consumes the engine's event stream): post
        the typed message of ``event`` to this area (:attr:`REPORTS`; a finished LLM call's usage first, so the
        tab's handler of the call sees it counted)."""
        from engines.api import CallFinished  # loaded by then: an engine is running

        if isinstance(event, CallFinished):
            self.post_message(UsageRecorded(event, real=self.settings.backend != "sim"))
        message = self.REPORTS.message_for(event)
        if message is not None:
            self.post_message(message)

    # --- tokens and cost --------------------------------------------------------------------------

    def on_usage_recorded(self, message: UsageRecorded) -> None:
        """Count a finished call in the run's usage and show it (the message bubbles on to the app)."""
        self.run_usage.add(message.event, real=message.real)
        self._render_usage()

    def _render_usage(self) -> None:
        if self.USAGE_IN_STATUS:
            if self._status is not None:
                self._show_status(*self._status)
            return
        from tui.counters import RunCounters

        for counters in self.query(RunCounters):
            counters.show_usage(self.run_usage)

    def _now(self) -> float:
        """The app's clock (a fixed one in tests), else ``time.perf_counter``."""
        return (self.clock or time.perf_counter)()

    # --- status and cancellation ------------------------------------------------------------

    def _free(self, what: str) -> bool:
        """True when nothing runs; otherwise a notice says what is running (nothing typed is lost)."""
        if not self.is_busy:
            return True
        why = next(
            (self._jobs[w].busy for w in self._busy.values() if not w.is_finished and w in self._jobs),
            None,
        )
        why = why or "the tab is busy"
        self.notify(f"Cannot {what} now: {why}.", severity="warning", title=self.TITLE)
        return False

    def _set_status(self, text: str, state: str) -> None:
        """Show ``text`` in the status line, styled by ``state`` (one of :attr:`StatusLine.STATES`); the run's tokens and
        cost follow it while a run goes on and after it (not when idle), unless the tab's stats line shows them."""
        self._status = (text, state)
        self._show_status(text, state)
        if state == "done":
            self.call_after_refresh(self._show_results)

    def _show_status(self, text: str, state: str) -> None:
        if self.USAGE_IN_STATUS and self.run_usage.calls and state != "idle":
            text = f"{text} · {self.run_usage.line()}"
        self.query_one(f"#{self.STATUS_ID}", StatusLine).show(text, state)

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
        """Esc (``cancel``) shows in the footer only while something it can stop runs, and takes the place of the
        keys that start a run (:attr:`RUN_ACTIONS`): a run cannot start while one goes on, and at 80 columns
        the footer has room for the app's keys beside them."""
        if action == "cancel":  # hidden while there is nothing to stop (80 columns: room for the others)
            return True if self._cancel is not None and self.is_busy else False
        if action in self.RUN_ACTIONS and self.is_busy:
            return False
        if action == "history":  # ↑/↓ walk the focused box's history, else the key is the box's own
            step = parameters[0] if parameters else -1
            return self.box_history is not None and self.box_history.can_walk(int(step))  # type: ignore[call-overload]
        if action in ("history_picker", "examples_picker"):
            return self.box_history is not None
        return True

    def request_cancel(self, status: str, *, running: bool | None = None) -> bool:
        """Set the running work's cancel flag and say so; False when nothing runs.

        The engine checks the flag before its next LLM call (or step), and an LLM call in flight is abandoned at
        once (engines.llm.waiting: the simulated latency, a real request), so what it already decided stays on screen.
        """
        if self._cancel is None or not (self.is_busy if running is None else running):
            return False
        self._cancel.set()
        self._set_status(status, "running")
        return True

    # --- workers ----------------------------------------------------------------------------

    @property
    def is_busy(self) -> bool:
        """True while a query, a turn or a session rebuild runs in this area (in any of its groups)."""
        return any(not worker.is_finished for worker in self._busy.values())

    def group_busy(self, group: str = "") -> Worker[Any] | None:
        """The busy worker running in ``group``, or None."""
        worker = self._busy.get(group)
        return worker if worker is not None and not worker.is_finished else None

    def run_engine(
        self,
        work: Callable[[], R],
        *,
        name: str,
        done: Callable[[R], object],
        failed: Callable[[BaseException], object] | None = None,
        busy: str | None = "the tab is busy",
        group: str = "",
        cancelled: Callable[[], object] | None = None,
    ) -> Worker[R]:
        """Run ``work`` in a thread worker of this area's ``group`` (one of :attr:`GROUPS`; a new work stops the
        group's previous one); its result goes to ``done``, an error it raises to ``failed`` (default:
        :meth:`show_failure`), a cancelled worker to ``cancelled``.

        ``busy`` work (turns, queries, rebuilds) makes :attr:`is_busy` true until it ends, and says what a
        "cannot … now" notice names as running; background work (``busy=None``, warming up the session) does not.
        """
        if group not in self.GROUPS:
            raise ValueError(f"{type(self).__name__} owns the worker groups {self.GROUPS}, not {group!r}")
        worker = self.run_worker(
            work,
            name=name,
            group=f"{self.AREA_ID}-{group}" if group else self.AREA_ID,
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )
        self._jobs[worker] = Job(done, failed or self.show_failure, busy, cancelled)
        if busy is not None:
            self._busy[group] = worker
            self.working = True
            self.run_usage = RunUsage()  # a new run (a turn, a query, an experiment) counts from zero
            if self.is_mounted:
                self._render_usage()
        return worker

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one router of worker outcomes: each goes to the handlers its work was started with."""
        worker = event.worker
        job = self._jobs.get(worker)
        if job is None:  # not a worker of this area's engine work
            return
        event.stop()
        if worker.is_finished:
            del self._jobs[worker]
            self.working = self.is_busy
        if event.state == WorkerState.SUCCESS:
            job.done(worker.result)
        elif event.state == WorkerState.ERROR:
            error = worker.error
            assert error is not None
            job.failed(error)
        elif event.state == WorkerState.CANCELLED and job.cancelled is not None:
            job.cancelled()
        self.refresh_bindings()

    def show_failure(self, error: BaseException) -> None:
        """The failure handler of work started without one: the error on the status line."""
        from engines.api import Cancelled

        if isinstance(error, Cancelled):
            self._set_status("cancelled", "cancelled")
        else:
            self._set_status(f"error — {describe_error(error)}", "error")

    # --- the app's view of an area -----------------------------------------------------------

    def use_settings(self, settings: Settings) -> None:
        """Adopt new settings (another backend).  An area holding a session built from them rebuilds it."""
        self.settings = settings

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

    # --- the history of runs (a tab that keeps one owns a tui.history.BoxHistory) -----------------------

    @property
    def history(self) -> HistoryStore:
        """The tab's history of runs, read the first time it is needed."""
        if self.box_history is None:
            raise LookupError(f"the {self.TITLE} tab keeps no history")
        return self.box_history.store

    def action_history(self, step: int) -> None:
        """↑ / ↓ (``tui.history.HISTORY_BINDINGS``): the focused box's previous or next run."""
        if self.box_history is not None:
            self.box_history.walk(step)

    def action_history_picker(self) -> None:
        """Ctrl+R: search what was run in this tab."""
        if self.box_history is not None:
            self.box_history.open_history()

    def action_examples_picker(self) -> None:
        """Ctrl+L: search this tab's examples."""
        if self.box_history is not None:
            self.box_history.open_examples()


class StatusLine(Static):
    """A tab's status line: what the tab is doing (idle, running, done, cancelled, error), styled by that state
    (the classes ``-idle`` … ``-error``).  The text is shown as text: it quotes file names, errors, questions."""

    STATES: ClassVar[tuple[str, ...]] = ("idle", "running", "done", "cancelled", "error")

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id, markup=False)
        self.full_text = ""  # what was said; the line shows as many of its phrases as fit, the tooltip all of it

    def show(self, text: str, state: str) -> None:
        """Say ``text``, styled as ``state`` (one of :attr:`STATES`): cut at a phrase's end with "…" when it does not
        fit the line (:func:`tui.phrases.fit_phrase`), the whole of it in the tooltip."""
        self.full_text = text
        self._fit()
        for name in self.STATES:
            self.set_class(name == state, f"-{name}")

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        from tui.phrases import fit_phrase
        from tui.widgets import as_text

        width = self.content_region.width if self.is_mounted and self.size.width else 0
        shown = fit_phrase(self.full_text, width) if width else self.full_text
        self.update(as_text(shown))
        self.tooltip = as_text(self.full_text) if shown != self.full_text else None


class UsageRecorded(Message):
    """An LLM call finished (posted from the worker thread): its tokens and cost, for the run and the session."""

    def __init__(self, event: Any, *, real: bool = False) -> None:
        super().__init__()
        self.event = event  # an engines.events.CallFinished
        self.real = real  # asked of a real backend (not the simulated one)
