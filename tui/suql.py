"""The SUQL tab: SQL plus ``answer()`` and ``summary()``, compiled and run in seven modes (lecture 7).

Left: the world and the execution mode, the examples (the lecture's and the SUQL
paper's 100 real queries), the SUQL editor, the WHERE in DNF and the read-back.
Right: running counters, the plan, the results beside the rows "to verify", and
at the bottom the per-row LLM calls streaming in (or the compare-modes table).

All engine work runs in thread workers of the group ``"suql"``.  The engine's
``emit`` callback posts the typed message of each event the tab shows (:data:`REPORTS`,
:mod:`tui.messages`; thread-safe), so the plan and the calls appear while the query
runs; Esc sets the run's cancel flag and the engine makes no further call.  Elapsed
and wall times are read from the app's injected clock, so screens under test do not
change from run to run.

The tab, one idea a module: :mod:`tui.suql` — :class:`SuqlArea`, the tab's state in one class: the layout,
the actions, the engine's events as they stream in, what it shows when a job ends (done, cancelled, refused,
failed), the palette and the examples; :mod:`tui.suql_keys` — its keys, the SUQL editor and the help page;
:mod:`tui.suql_work` — what the workers do in their threads (the session, a run, a comparison) and the typed
results they return; :mod:`tui.suql_panes` — the parts that keep their own state (the counters line, the
examples list, the world and mode switches); :mod:`tui.suql_tables` and :mod:`tui.suql_view` — its tables
(the comparison keeps its progress) and how SUQL and plans are drawn (shared with the HybridQA tab).  What it
shares with the other tabs it owns: its history (:class:`~tui.history.BoxHistory`), its schema pane and its
status line.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, OptionList, Select, Static, TabbedContent, TabPane, TextArea

from engines.api import ModeProgress
from tui import messages as m
from tui.area import PaletteCommand, StatusLine, WorkArea, describe_error
from tui.history import HISTORY_BINDINGS, BoxHistory, HistoryEntry
from tui.schema_pane import SCHEMA_BINDING, SchemaPane, SchemaSubject
from tui.suql_keys import BINDINGS, EDITOR_TITLE, HELP, PLAN_HINT, SuqlEditor
from tui.suql_panes import EXAMPLE_CHARS, SuqlControls, SuqlCounters, SuqlExamples
from tui.suql_tables import CompareTable, SuqlCallsTable, SuqlResultsTable, VerifyTable
from tui.suql_view import layout_sql, plan_content, short_title
from tui.suql_work import (
    DEFAULT_MODE,
    DEFAULT_WORLD,
    MODE_NAMES,
    PAPER_WORLD,
    NeedsConsent,
    Opened,
    QueryRan,
    SuqlRunner,
)
from tui.widgets import (
    ErrorBox,
    ResultsTable,
    SqlEditor,
    SqlView,
    TextView,
    as_text,
    count_rows,
    is_cancellation,
    location_in,
    pane,
    sql_highlights,
)

if TYPE_CHECKING:
    from engines.api import Comparison, Example, Plan, Settings, SuqlResult, SuqlSession
    from tui.pickers import PickItem

_Progress = ModeProgress
"""The ``emit`` of one mode's run while comparing (the engine's; the tests hold a comparison by this name)."""


def proxy_decided(result: SuqlResult) -> int:
    """Mode G: the candidate rows the proxy decided without a call.  Mode E asks every candidate row of a query
    without LIMIT (G's only case) at least once, so each is at least one call saved against E."""
    report = result.plan.cascade
    return 0 if report is None else report.accepted + report.rejected


def _reports() -> dict[type[Any], m.MessageOf]:
    from engines.api import ModeCompared, ModeProgressed, ModeStarted, PlanBuilt, RowDecided

    return {
        **m.llm_calls(),
        PlanBuilt: m.PlanBuilt,
        RowDecided: m.RowDecided,
        ModeStarted: m.ModeStarted,
        ModeProgressed: m.ModeProgressed,
        ModeCompared: m.ModeCompared,
    }


REPORTS = m.Reports(_reports)
"""The SUQL engine's events the tab shows, each as its typed message."""


class SuqlArea(WorkArea):
    """The SUQL tab (see the module docstring)."""

    AREA_ID = "suql"
    HISTORY_BOXES = {"suql-editor": "suql"}
    STATUS_ID = "suql-status"
    RESULTS_IDS = ("suql-results",)
    USAGE_IN_STATUS = False  # the counters line shows the run's tokens and cost
    RUN_ACTIONS = frozenset({"run", "compare"})  # Esc takes their place in the footer while a query runs
    REPORTS = REPORTS
    TITLE = "SUQL"
    HELP = HELP
    BINDINGS = [*HISTORY_BINDINGS, *BINDINGS, SCHEMA_BINDING]  # Ctrl+T: the schema pane (tui.schema_pane)

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self.mode = DEFAULT_MODE
        self._db = settings.db  # your own tables (--db SOURCE): the world the tab opens first, or None
        self.world = settings.db or DEFAULT_WORLD
        self._runner = SuqlRunner(db=self._db, clock=self.clock, now=lambda: self._now(), emit=lambda e: self._emit(e))
        self._modes: tuple[tuple[str, str], ...] = ()
        self._worlds: tuple[tuple[str, str], ...] = ()
        self._loaded: Example | None = None  # the example the editor started from
        self._consent: tuple[str, str] | None = None  # (query, mode) warned about: running it again goes ahead
        self._decided: list[tuple[str, str]] = []
        self._result: SuqlResult | None = None  # the last query's result: its rows to verify can be settled
        self.runs = self.box_history = BoxHistory(
            self,
            settings,
            name=self.AREA_ID,
            title=self.TITLE,
            boxes=self.HISTORY_BOXES,
            origin=self.history_origin,
            examples=self.example_items,
        )

    def schema_subject(self) -> SchemaSubject | None:
        """What the schema pane describes (tui.schema_pane): your data's description, or the world's tables with the
        enumerations the session's SUQL agent classifies."""
        session = self._runner.session
        if session is None:
            return None
        return SchemaSubject.of_session(session, session.world_name, getattr(session.world, "enum_fields", {}))

    # --- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        from engines.api import LECTURE

        with Horizontal(id="suql-columns"):
            with Vertical(id="suql-left"):
                with SuqlControls(id="suql-controls"):
                    yield TextView("opening the world…", id="suql-opening")
                yield SchemaPane(id="suql-schema", shown=self._db is not None)  # at first only over your data (--db)
                examples = SuqlExamples(id="suql-examples")
                examples.border_title = "Examples · Enter loads one · ^L search"
                yield examples
                editor = SuqlEditor(layout_sql(LECTURE[1].sql), id="suql-editor", soft_wrap=True, tab_behavior="focus")
                editor.data_bind(tab_working=SuqlArea.working)  # its Run is off the footer while a query runs
                editor.cursor_blink = self.cursor_blink
                editor.schema = self.schema_subject  # completion: the tables and columns the schema pane shows
                editor.border_title = EDITOR_TITLE
                editor.border_subtitle = as_text(LECTURE[1].source, one_line=True)
                self._loaded = LECTURE[1]
                yield editor
                yield ErrorBox(id="suql-error")
                yield pane("DNF (the WHERE as OR of ANDs)", SqlView("—", id="suql-dnf"), id="suql-dnf-pane")
                yield pane("Read-back", TextView("—", id="suql-readback"), id="suql-readback-pane")
            with Vertical(id="suql-right"):
                yield SuqlCounters(clock=self.clock or time.perf_counter, id="suql-counters")
                yield pane("Plan", TextView(PLAN_HINT, id="suql-plan"), id="suql-plan-pane")
                with Horizontal(id="suql-tables"):
                    results = SuqlResultsTable(id="suql-results")
                    results.border_title = "Results"
                    yield results
                    verify = VerifyTable(id="suql-verify")
                    verify.border_title = "To verify · condition unknown"
                    yield verify
                with TabbedContent(id="suql-bottom", initial="suql-calls-pane"):
                    with TabPane("LLM calls", id="suql-calls-pane"):
                        yield SuqlCallsTable(id="suql-calls")
                        yield TextView(id="suql-call-detail")
                    with TabPane("Compare modes", id="suql-compare-pane"):
                        yield CompareTable(id="suql-compare")
        yield StatusLine(id="suql-status")

    def on_mount(self) -> None:
        self.query_one("#suql-results", ResultsTable).show_nothing("no query yet")
        self.query_one("#suql-verify", ResultsTable).show_nothing()
        self.query_one(SuqlCallsTable).reset("no calls yet")
        self._show_call_detail()
        self.query_one(CompareTable).border_subtitle = "Ctrl+O compares the seven modes on the editor's query"
        self.counters.reset()
        self.counters.redraw()
        self._set_status("opening the world…", "running")
        self.run_engine(
            self._open_work,
            name="open",
            done=self._opened_first,
            failed=lambda error: self._failed(error, "Could not open the world"),
            busy="the world is being opened",
        )

    def on_unmount(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
        # the counters line stops its own ticker when it unmounts (it may be gone from the DOM by now)
        self._runner.close()  # a running query stops at its next call: the database is not closed under it

    def focus_default(self) -> None:
        self.query_one("#suql-editor", SuqlEditor).focus()

    @property
    def counters(self) -> SuqlCounters:
        """The run's counters line."""
        return self.query_one(SuqlCounters)

    @property
    def _counts(self) -> dict[str, Any]:
        """The run's counts (the counters line's)."""
        return self.counters.counts

    # --- actions (public: the app, the palette and the tests call them) ----------------------------

    def run_query(self, sql: str | None = None) -> bool:
        """Run ``sql`` (default: the editor's text) in the current mode.  False when it cannot start."""
        text = self._query_text(sql, "run")
        if text is None or not self._free("run a query"):
            return False
        self.runs.record("suql-editor", text)
        self._clear_error()
        mode = self.mode
        consented = self._consent == (text, mode)  # the same query again, after the warning
        self._consent = None
        self._begin_run()
        self._set_status(f"running in mode {self.mode}… — Esc cancels", "running")
        cancel = self._cancel = threading.Event()
        self.run_engine(
            lambda: self._query_work(text, mode, cancel, consented),
            name="query",
            done=self._query_done,
            failed=lambda error: self._run_failed(error, compare=False),
            busy="a query is running (Esc cancels it)",
        )
        self.refresh_bindings()
        return True

    def settle(self, rows: tuple[int, ...] | None = None) -> bool:
        """Settle the last result's rows to verify (``rows``: their positions in the pane; ``None``: all): their
        remaining conditions are asked, the calls streaming in as verification calls.  False when it cannot
        start (nothing to settle, or the tab is busy)."""
        result = self._result
        if result is None or result.settled or not self._free("verify rows"):
            if result is not None and result.settled:
                self._set_status("nothing to verify: the rows to verify are settled", "idle")
            return False
        what = "every row to verify" if rows is None else f"{count_rows(len(rows))} to verify"
        self._set_status(f"verifying {what}… — Esc cancels", "running")
        self.counters.begin()
        cancel = self._cancel = threading.Event()
        self.run_engine(
            lambda: self._runner.settle(self._session_now(), result, rows, cancel),
            name="settle",
            done=self._settle_done,
            failed=lambda error: self._settle_failed(error, result),
            busy="rows are being verified (Esc cancels)",
        )
        self.refresh_bindings()
        return True

    def on_verify_table_settle_requested(self, message: VerifyTable.SettleRequested) -> None:
        message.stop()
        self.settle(message.rows)

    def _settle_failed(self, error: BaseException, before: SuqlResult) -> None:
        """Verifying stopped (Esc, or an error): the result it started from stays on screen, still settleable."""
        from engines.api import Cancelled

        if not isinstance(error, Cancelled):
            self._run_failed(error, compare=False)
            return
        self._cancel = None
        self.counters.stop(elapsed=self.counters.since_start())
        self._result = before
        self._show_to_verify(before)
        self._set_status("verification cancelled — the rows to verify stay as they were (not yet settled)", "cancelled")

    def _settle_done(self, ran: QueryRan) -> None:
        self._cancel = None
        self._finish_query(ran)

    def compare_modes(self, sql: str | None = None) -> bool:
        """Run ``sql`` (default: the editor's text) in all seven modes and fill the compare table."""
        text = self._query_text(sql, "compare")
        if text is None or not self._free("compare modes"):
            return False
        self.runs.record("suql-editor", text)
        self._clear_error()
        self.query_one(CompareTable).start(self._modes or tuple((name, "") for name in MODE_NAMES))
        self.query_one("#suql-bottom", TabbedContent).active = "suql-compare-pane"
        self._set_status("comparing the seven modes… — Esc cancels", "running")
        cancel = self._cancel = threading.Event()
        self.counters.started = self._now()
        self.run_engine(
            lambda: self._compare_work(text, cancel),
            name="compare",
            done=self._compare_done,
            failed=lambda error: self._run_failed(error, compare=True),
            busy="the modes are being compared (Esc cancels)",
        )
        self.refresh_bindings()
        return True

    def cancel(self) -> bool:
        """Ask the running query (or comparison) to stop: the engine makes no further call."""
        return self.request_cancel("cancelling… (no further LLM call is made)")

    def set_mode(self, mode: str) -> None:
        """Choose the execution mode of the next run (A–G)."""
        mode = mode.strip().upper()
        if mode not in MODE_NAMES:
            raise ValueError(f"unknown execution mode {mode!r}: choose one of {', '.join(MODE_NAMES)}")
        if mode == self.mode:
            return
        self.mode = mode
        self.query_one(SuqlControls).show_mode(mode)
        self.counters.mode = mode  # the counts stay, labelled as the last run's (tui.suql_panes.SuqlCounters)
        self.counters.redraw()
        if not self.is_busy:
            self._set_status(f"mode {mode} — {self._mode_title(mode)} · Ctrl+J runs", "idle")

    def set_world(self, world: str) -> bool:
        """Open a session on another world (its examples replace the list)."""
        if world == self.world:
            return True
        if not self._free("switch the world"):
            self.query_one(SuqlControls).show_world(self.world)
            return False
        self._set_status(f"opening the {world} world…", "running")
        settings = self.settings
        self._reopen(lambda: self._reopen_work(settings, world))
        return True

    def load_example(self, example: Example) -> None:
        """Put an example's query in the editor (laid out on several lines), without running it."""
        editor = self.query_one("#suql-editor", SuqlEditor)
        editor.text = layout_sql(example.sql)
        editor.border_subtitle = as_text(example.source, one_line=True)
        self._loaded = example
        if not self.is_busy:
            self._set_status(f"loaded {example.source} — Ctrl+J runs it in mode {self.mode}", "idle")

    @property
    def examples(self) -> tuple[Example, ...]:
        """The examples in the list: the world's (the lecture's), then the SUQL paper's."""
        return self.query_one(SuqlExamples).examples

    def example(self, key: str) -> Example:
        """The first example whose source is ``key`` (``"lecture 7 §2.5"``, ``"SUQL paper #8"``)
        or whose title starts with it (``"family-friendly"``)."""
        for example in self.examples:
            if example.source == key or example.title.startswith(key):
                return example
        raise KeyError(f"no example {key!r} in the {self.world} world")

    def option_id(self, example: Example) -> str:
        """The id of ``example``'s entry in the examples list."""
        return self.query_one(SuqlExamples).option_id(example)

    def use_settings(self, settings: Settings) -> None:
        """Rebuild the session with ``settings`` (another backend), on the same world."""
        self._set_status(f"switching to the {settings.backend} backend…", "running")
        world = self.world
        self._reopen(lambda: self._reopen_work(settings, world))

    def _reopen(self, work: Callable[[], tuple[Settings, Opened]]) -> None:
        self.run_engine(
            work,
            name="reopen",
            done=self._reopened,
            failed=self._reopen_failed,
            busy="the session is being rebuilt",
        )

    def action_run(self) -> None:
        self.run_query()

    def action_compare(self) -> None:
        self.compare_modes()

    def action_cancel(self) -> None:
        self.cancel()

    def action_mode(self, mode: str) -> None:
        self.set_mode(mode)

    def action_cycle_mode(self, step: int) -> None:
        self.set_mode(MODE_NAMES[(MODE_NAMES.index(self.mode) + step) % len(MODE_NAMES)])

    def on_sql_editor_run_requested(self, event: SqlEditor.RunRequested) -> None:
        event.stop()
        self.run_query(event.sql)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if not isinstance(event.option_list, SuqlExamples):
            return
        event.stop()
        example = event.option_list.by_id(event.option.id or "")
        if example is not None:
            self.load_example(example)

    def action_toggle_schema(self) -> None:
        pane = self.query_one(SchemaPane)
        if pane.display and pane.has_focus:
            self.focus_default()
        pane.toggle(self.schema_subject())

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.value is Select.BLANK:
            return
        if event.select.id == "suql-mode":
            self.set_mode(str(event.value))
        elif event.select.id == "suql-world":
            self.set_world(str(event.value))

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area.id != "suql-editor" or self._loaded is None:
            return
        if event.text_area.text != layout_sql(self._loaded.sql):
            event.text_area.border_subtitle = as_text(f"edited from {self._loaded.source}", one_line=True)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "suql-calls":
            self._show_call_detail()

    def _show_call_detail(self) -> None:
        calls = self.query_one(SuqlCallsTable)
        self.query_one("#suql-call-detail", Static).update(calls.detail(calls.cursor_key))

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.id == "suql-bottom":
            event.stop()

    def commands(self) -> Iterable[PaletteCommand]:
        yield PaletteCommand(
            "SUQL: run the query in the editor", f"Runs it in mode {self.mode} (Ctrl+J).", self.run_query
        )
        yield PaletteCommand(
            "SUQL: compare modes A–G on the query in the editor",
            "Runs it in all seven modes and tabulates answer()/summary() calls, rows, to verify and wall time (Ctrl+O).",
            self.compare_modes,
        )
        if self.is_busy:
            yield PaletteCommand("SUQL: cancel the running query", "No further LLM call is made (Esc).", self.cancel)
        for name, title in self._modes or tuple((mode, "") for mode in MODE_NAMES):
            current = " (current)" if name == self.mode else ""
            yield PaletteCommand(
                f"SUQL: mode {name} — {short_title(title)}{current}",
                title or f"Mode {name}",
                partial(self.set_mode, name),
            )
        for name, title in self._worlds:
            current = " (current)" if name == self.world else ""
            yield PaletteCommand(f"SUQL: world {name}{current}", title, partial(self.set_world, name))
        yield PaletteCommand(
            "SUQL: focus the editor", "Write SUQL and run it with Ctrl+Enter or Ctrl+J.", self.focus_default
        )
        yield PaletteCommand(
            "SUQL: focus the examples",
            "Pick an example with ↑/↓ and load it with Enter.",
            lambda: self.query_one("#suql-examples", OptionList).focus(),
        )
        yield from self.runs.commands()

    # --- examples and history (tui.history) ---------------------------------------------------------

    def history_origin(self, box_id: str) -> str | None:
        return layout_sql(self._loaded.sql) if self._loaded is not None else None

    def example_items(self) -> list[PickItem]:
        """The world's examples (the lecture's), then the SUQL paper's: title, source, and the query to match."""
        from tui.pickers import PickItem

        return [PickItem(e.title, e.source, e, more=e.sql) for e in self.examples]

    def example_chosen(self, value: Any) -> None:
        """Load the example into the editor (not run) and focus it."""
        self.load_example(value)
        self.query_one("#suql-editor", SuqlEditor).focus()

    def history_chosen(self, entry: HistoryEntry) -> None:
        """Put a query run before back into the editor (not run)."""
        self.runs.put_back(entry)

    def on_example_chosen(self, message: m.ExampleChosen) -> None:
        self.example_chosen(message.value)

    def on_history_chosen(self, message: m.HistoryChosen) -> None:
        self.history_chosen(message.entry)

    # --- worker bodies (in their threads): the runner's, on the tab's settings and world ---------------

    def _session_now(self) -> SuqlSession:
        return self._runner.current(self.settings, self.world)

    def _open_work(self) -> Opened:
        return self._runner.open(self.settings, self.world)

    def _reopen_work(self, settings: Settings, world: str) -> tuple[Settings, Opened]:
        return self._runner.reopen(settings, world)

    def _query_work(
        self, sql: str, mode: str, cancel: threading.Event, consented: bool = False
    ) -> QueryRan | NeedsConsent:
        return self._runner.query(self._session_now(), sql, mode, cancel, consented)

    def _compare_work(self, sql: str, cancel: threading.Event) -> Comparison:
        return self._runner.compare(self._session_now(), sql, cancel)

    # --- engine events (main thread): the typed messages of REPORTS ---------------------------------

    def on_llm_call_started(self, message: m.LlmCallStarted) -> None:
        self.query_one(SuqlCallsTable).call_started(message.event)
        self.counters.redraw()

    def on_llm_call_finished(self, message: m.LlmCallFinished) -> None:
        event = message.event
        calls = self.query_one(SuqlCallsTable)
        calls.call_finished(event)
        if calls.cursor_key == str(event.call_id):
            self._show_call_detail()
        if event.function in ("answer", "summary"):
            self.counters.add(event.function)
        self.counters.add("cached", int(event.cached))
        self.counters.redraw()

    def on_llm_call_failed(self, message: m.LlmCallFailed) -> None:
        event = message.event
        calls = self.query_one(SuqlCallsTable)
        calls.call_failed(event)
        self.counters.add("stopped" if is_cancellation(event.error) else "failed")
        if calls.cursor_key == str(event.call_id):
            self._show_call_detail()
        self.counters.redraw()

    def on_plan_built(self, message: m.PlanBuilt) -> None:
        self._show_plan(message.event.plan)
        self.counters.redraw()

    def on_row_decided(self, message: m.RowDecided) -> None:
        event = message.event
        self._decided.append((event.row_key, event.truth))
        self.counters.add("examined")
        self.counters.add(event.truth)
        self.counters.redraw()

    def on_mode_started(self, message: m.ModeStarted) -> None:
        table = self.query_one(CompareTable)
        table.mode_started(message.event.mode)
        done = len(table.outcomes)
        self._set_status(
            f"comparing modes… {message.event.mode} ({done + 1}/{len(MODE_NAMES)}) — Esc cancels", "running"
        )

    def on_mode_progressed(self, message: m.ModeProgressed) -> None:
        event = message.event
        self.query_one(CompareTable).running(event.mode, event.answer_calls, event.summary_calls)

    def on_mode_compared(self, message: m.ModeCompared) -> None:
        self.query_one(CompareTable).mode_compared(message.event.outcome)

    # --- worker outcomes (main thread): each job's done / failed handlers ------------------------------

    def _opened_first(self, opened: Opened) -> None:
        self._adopt(opened)
        self._set_status(f"ready — Ctrl+J runs the query in mode {self.mode} · Ctrl+O compares modes", "idle")

    def _reopened(self, result: tuple[Settings, Opened]) -> None:
        settings, opened = result
        self.settings = settings
        self._result = None  # its answers are the old session's: not settled on the new one
        changed_world = opened.session.world_name != self.world
        self._adopt(opened)
        if changed_world:
            self._world_changed()
            self._set_status(f"ready — world {self.world} · pick an example or write a query", "idle")
        else:
            self._set_status(f"ready — now using the {settings.backend} backend", "idle")

    def _query_done(self, result: QueryRan | NeedsConsent) -> None:
        self._cancel = None
        if isinstance(result, NeedsConsent):
            self._ask_consent(result)
        else:
            self._finish_query(result)

    def _compare_done(self, comparison: Comparison) -> None:
        self._cancel = None
        self._finish_compare(comparison)

    def _reopen_failed(self, error: BaseException) -> None:
        self.query_one(SuqlControls).show_world(self.world)
        self._failed(error, "Could not open the session")

    def _run_failed(self, error: BaseException, *, compare: bool) -> None:
        """A query or a comparison failed: a refused or wrong query is shown at its place in the editor."""
        from engines.api import Cancelled, SqlError, SqlRefused

        self._cancel = None
        if isinstance(error, SqlError) and not isinstance(error, Cancelled):
            self.counters.stop_ticking()
            self._show_query_error(error, refused=isinstance(error, SqlRefused), compare=compare)
            return
        if compare and not isinstance(error, Cancelled):
            self.query_one(CompareTable).stop_early("✗ error")
        self._failed(error, "Error", compare=compare)
        if not isinstance(error, Cancelled):
            self._show_nothing("error")

    def _failed(self, error: BaseException, title: str, *, compare: bool = False) -> None:
        """Any error of the tab's work, shown in the error pane (a cancelled run keeps what it decided)."""
        from engines.api import Cancelled

        self.counters.stop_ticking()
        if isinstance(error, Cancelled):
            if compare:
                self._cancelled_compare()
            else:
                self._cancelled_query()
            return
        self._show_error(title, describe_error(error))
        self._set_status("error — see the error pane", "error")

    def _adopt(self, opened: Opened) -> None:
        self.world = opened.session.world_name
        self._modes = opened.modes
        self._worlds = opened.worlds
        self.query_one(SuqlControls).show(self._worlds, self._modes, self.world, self.mode)
        missing = None
        if not opened.paper and self.world == PAPER_WORLD:  # the paper's queries are a data set: how to get it
            from worlds.data import missing_message

            missing = missing_message("suql_paper/restaurants_single_turn_SUQL.csv", self.settings.data_roots())
        self.query_one(SuqlExamples).fill(
            opened.lecture, opened.paper, world=self.world, own=self.world == self._db, missing_paper=missing
        )
        self._show_schema(opened.session)

    def _show_schema(self, session: SuqlSession) -> None:
        """The schema browser shows your data's tables while the tab is on them (hidden on a built-in world);
        on first opening them, the editor's lecture example gives way to the first example of your data."""
        pane = self.query_one(SchemaPane)
        source = getattr(session, "source", None)
        first = pane.subject is None or pane.subject.ready is None  # your data was not showing
        pane.track(self.schema_subject(), default=source is not None)  # your data's shows at first, a world's on ^T
        if source is not None and first and self.examples:
            from engines.api import LECTURE

            editor = self.query_one("#suql-editor", SuqlEditor)
            if editor.text == layout_sql(LECTURE[1].sql):
                self.load_example(self.examples[0])

    def _world_changed(self) -> None:
        """Another world: empty the panes; an unedited example gives way to the new world's first."""
        editor = self.query_one("#suql-editor", SuqlEditor)
        unedited = self._loaded is not None and editor.text == layout_sql(self._loaded.sql)
        if (unedited or not editor.text.strip()) and self.examples:
            self.load_example(self.examples[0])
        self.counters.reset()
        self.counters.redraw()
        self._result = None  # its rows to verify belong to the other world
        self._show_nothing("no query yet")
        self.query_one("#suql-plan", Static).update(PLAN_HINT)
        self.query_one("#suql-readback", Static).update("—")
        self.query_one(SuqlCallsTable).reset("no calls yet")
        self._show_call_detail()
        self._clear_error()

    def _ask_consent(self, needs: NeedsConsent) -> None:
        self.counters.stop()
        self._consent = (needs.sql, needs.mode)
        self._set_status(
            f"not run: this query may make up to {needs.expected:,} LLM calls to the paid {self.settings.backend} "
            f"backend (more than {self.settings.suql_confirm_calls:,}) — Ctrl+J again runs it",
            "error",
        )

    def _finish_query(self, ran: QueryRan) -> None:
        self.counters.stop_ticking()
        result = self._result = ran.result
        self._show_plan(result.plan)
        self._show_dnf(result.dnf)
        self.query_one("#suql-readback", Static).update(result.readback)
        results = self.query_one("#suql-results", ResultsTable)
        results.show_rows(result.columns, result.rows, truncated=result.truncated)
        if result.approximate:
            results.border_title = "Results ≈ approximate"
            results.border_subtitle = (
                f"{count_rows(len(result.rows))} · cap {result.plan.cap}: not every candidate examined"
            )
        else:
            results.border_title = "Results"
        if result.decided_by:  # mode G: who decided each row; the proxy's are never the LLM's verdict
            rows = tuple((*r, by) for r, by in zip(result.rows, result.decided_by))
            results.show_rows((*result.columns, "decided by"), rows, truncated=result.truncated)
            results.border_title = f"Results · {result.decided_by.count('proxy')} matched by the proxy, not the LLM"
        self._show_to_verify(result)
        s = result.stats
        self.counters.stop(
            answer=s.answer_calls,
            summary=s.summary_calls,
            cached=s.cached_calls,
            examined=s.rows_examined,
            elapsed=ran.elapsed_s,
            verification=s.verification_calls,
            proxy=proxy_decided(result),
        )
        parts = [count_rows(len(result.rows))]
        if result.to_verify:
            unsettled = (
                "" if result.settled else f" ({result.unsettled} not yet settled: Enter / V in the pane verifies)"
            )
            parts.append(f"{len(result.to_verify)} to verify{unsettled}")
        if result.approximate:
            parts.append("approximate")
        if result.decided_by:
            parts.append(f"{result.decided_by.count('proxy')} by the proxy")
        if getattr(result, "budget_exhausted", False):
            parts.append(result.message)
        self._set_status(f"done — {' · '.join(parts)} · mode {result.mode}", "done")

    def _finish_compare(self, comparison: Comparison) -> None:
        self.counters.stop_ticking()
        table = self.query_one(CompareTable)
        failed = comparison.failed
        subtitle = f"{len(comparison.modes)} modes"
        best = comparison.fewest_answer_calls()
        if best is not None:
            subtitle += f" · fewest answer() calls: {', '.join(best[0])} ({best[1]:,})"
        if comparison.approximate:
            subtitle += " · ≈ approximate (retrieval cap)"
        table.border_subtitle = subtitle
        if failed:
            self._set_status(f"compared — {', '.join(failed)} failed (see the note column)", "error")
        else:
            self._set_status(f"compared the seven modes — {subtitle}", "done")

    def _cancelled_query(self) -> None:
        counts = self.counters.counts
        calls = counts["answer"] + counts["summary"]
        self.counters.stop(elapsed=self.counters.since_start())
        rows = [(label, truth) for label, truth in self._decided]
        results = self.query_one("#suql-results", ResultsTable)
        results.show_rows(("row", "decided"), rows)
        results.border_title = "Results · cancelled"
        results.border_subtitle = f"{count_rows(len(rows))} decided before Esc"
        self.query_one("#suql-verify", ResultsTable).show_nothing("cancelled: no final query ran")
        self.query_one("#suql-readback", Static).update("— (cancelled)")
        stopped = f" ({counts['stopped']} in flight stopped)" if counts["stopped"] else ""
        self._set_status(
            f"cancelled — {count_rows(calls, 'LLM call')} made{stopped}, {count_rows(len(rows))} decided; no further calls",
            "cancelled",
        )

    def _cancelled_compare(self) -> None:
        table = self.query_one(CompareTable)
        table.stop_early("stopped")
        table.border_subtitle = "cancelled"
        done = table.compared
        ran = f"compared {', '.join(done)}" if done else "no mode finished"
        self._set_status(f"cancelled — {ran}; no further calls", "cancelled")

    def _show_query_error(self, error: Any, *, refused: bool, compare: bool) -> None:
        """A query the engine refused or could not run; the editor keeps its text."""
        editor = self.query_one("#suql-editor", SuqlEditor)
        text = editor.text
        where = ""
        if error.line is not None and error.column is not None:
            if error.sql is not None and _bare(error.sql) != _bare(text):
                where = "in the SQL the compiler generated"
            else:
                where = f"at line {error.line}, column {error.column}"
                editor.cursor_location = location_in(text, error.line, error.column)
        title = "Refused — nothing ran" if refused else "SUQL error"
        if where:
            title = f"{title} {where}"
        self._show_error(title, error.message)
        self._show_nothing("refused" if refused else "error")
        if compare:
            self.query_one(CompareTable).cannot_run()
        self._set_status(
            "refused — fix the query in the editor"
            if refused
            else "error — fix the query in the editor and run it again",
            "error",
        )

    # --- view helpers -------------------------------------------------------------------------------

    def _query_text(self, sql: str | None, what: str) -> str | None:
        text = self.query_one("#suql-editor", SuqlEditor).text if sql is None else sql
        if not text.strip():
            self._show_error(
                "Nothing to run", f"The editor is empty: write a SUQL query (or pick an example) to {what}."
            )
            return None
        return text

    def _begin_run(self) -> None:
        """Empty the panes for a new run and start the elapsed counter."""
        self._decided = []
        self._result = None
        self.query_one("#suql-dnf", SqlView).update("…")
        self.query_one("#suql-plan", Static).update("…")
        self.query_one("#suql-readback", Static).update("…")
        results = self.query_one("#suql-results", ResultsTable)
        results.show_nothing("running…")
        results.border_title = "Results"
        self.query_one("#suql-verify", ResultsTable).show_nothing()
        self.query_one(SuqlCallsTable).reset()
        self._show_call_detail()
        self.query_one("#suql-bottom", TabbedContent).active = "suql-calls-pane"
        self.counters.ran_mode = self.counters.mode = self.mode
        self.counters.begin()

    def _show_plan(self, plan: Plan) -> None:
        self.query_one("#suql-plan", Static).update(plan_content(plan))
        self._show_dnf(plan.dnf)

    def _show_dnf(self, dnf: str) -> None:
        view = self.query_one("#suql-dnf", SqlView)
        if dnf:
            view.show_sql(dnf)
        else:
            view.show_note("— no answer() in the WHERE: nothing to normalise")

    def _show_to_verify(self, result: SuqlResult) -> None:
        table = self.query_one("#suql-verify", ResultsTable)
        table.border_title = "To verify · condition unknown"
        if not result.to_verify:
            table.show_nothing("none: every examined row was decided")
            return
        from engines.api import unknown_question

        def questions(conditions: Any) -> str:
            return "; ".join(unknown_question(u) or u for u in conditions or []) or "—"

        hidden = {"_row", "unknown", "approximate", "name", "not_asked", "settled"}
        others = [k for k in result.to_verify[0] if k not in hidden]
        lazy = not result.settled
        columns = ["row", "unknown", *(["not asked"] if lazy else []), *(["approx."] if result.approximate else [])]
        columns += others
        rows = []
        for rec in result.to_verify:
            label = f"#{rec.get('_row')} {rec['name']}" if "name" in rec else f"#{rec.get('_row')}"
            not_asked = [questions(rec.get("not_asked")) if "settled" in rec else "—"] if lazy else []
            rows.append(
                [
                    label,
                    questions(rec.get("unknown")),
                    *not_asked,
                    *(["≈ yes"] if result.approximate else []),
                    *(rec.get(k) for k in others),
                ]
            )
        table.show_rows(columns, rows)
        if lazy:
            table.border_title = "To verify · not yet settled"
            table.border_subtitle = f"{count_rows(len(rows))} · lazy: may shrink when verified (Enter / V)"
        elif result.approximate:
            table.border_subtitle = f"{count_rows(len(rows))} · approximate (mode {result.mode})"

    def _show_nothing(self, why: str) -> None:
        results = self.query_one("#suql-results", ResultsTable)
        results.show_nothing(why)
        results.border_title = "Results"
        self.query_one("#suql-verify", ResultsTable).show_nothing()
        self.query_one("#suql-readback", Static).update(f"— ({why})")
        self.query_one("#suql-plan", Static).update("—")
        self.query_one("#suql-dnf", SqlView).update("—")
        self.counters.counts["running"] = False
        self.counters.redraw()

    def _mode_title(self, mode: str) -> str:
        return dict(self._modes).get(mode, "")

    def _show_error(self, title: str, message: str) -> None:
        self.query_one("#suql-error", ErrorBox).show(title, message)

    def _clear_error(self) -> None:
        self.query_one("#suql-error", ErrorBox).clear()


def _bare(sql: str) -> str:
    return sql.strip().rstrip(";").strip()


__all__ = [
    "EXAMPLE_CHARS",
    "REPORTS",
    "CompareTable",
    "QueryRan",
    "SuqlArea",
    "SuqlCallsTable",
    "SuqlEditor",
    "layout_sql",
    "plan_content",
    "sql_highlights",
]
