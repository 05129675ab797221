"""The SUQL tab: SQL plus ``answer()`` and ``summary()``, compiled and run in six modes (lecture 7).

Left: the world and the execution mode, the examples (the lecture's and the SUQL
paper's 100 real queries), the SUQL editor, the WHERE in DNF and the read-back.
Right: running counters, the plan, the results beside the rows "to verify", and
at the bottom the per-row LLM calls streaming in (or the compare-modes table).

All engine work runs in thread workers of the group ``"suql"``.  The engine's
``emit`` callback posts :class:`EngineReported` messages (thread-safe), so the
plan and the calls appear while the query runs; Esc sets the run's cancel flag and
the engine makes no further call.  Elapsed and wall times are read from the app's
injected clock, so screens under test do not change from run to run.

The tab, one idea a module: :mod:`tui.suql` — :class:`SuqlArea`: the layout, the actions, the engine's events
as they stream in, the palette, the examples and the counters; :mod:`tui.suql_keys` — its keys, the SUQL
editor and the help page; :mod:`tui.suql_work` — what the workers do in their threads (the session, a run, a
comparison) and the typed results they return; :mod:`tui.suql_outcomes` — what the tab shows when a job
ends (done, cancelled, refused, failed); :mod:`tui.suql_tables` and :mod:`tui.suql_view` — its tables and
how SUQL and plans are drawn (shared with the HybridQA tab).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import DataTable, OptionList, Select, Static, TabbedContent, TabPane, TextArea
from textual.widgets.option_list import Option

from engines.events import CallFailed, CallFinished, CallStarted
from engines.suql.compare import ModeCompared, ModeOutcome, ModeProgress, ModeProgressed, ModeStarted
from tui.area import EngineReported, PaletteCommand
from tui.history import HistoryArea
from tui.schema_pane import SchemaHost, SchemaPane, SchemaSubject
from tui.suql_keys import BINDINGS, EDITOR_TITLE, HELP, PLAN_HINT, SuqlEditor
from tui.suql_outcomes import SuqlOutcomes
from tui.suql_tables import CompareTable, SuqlCallsTable, SuqlResultsTable
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
    counter,
    is_cancellation,
    pane,
    sql_highlights,
    truncate,
)

if TYPE_CHECKING:
    from engines.compose import SuqlSession
    from engines.settings import Settings
    from engines.suql.compare import Comparison
    from engines.suql.examples import Example
    from engines.suql.execute import SuqlResult
    from engines.suql.plan import Plan
    from tui.pickers import PickItem

EXAMPLE_CHARS = 44
_Progress = ModeProgress
"""The ``emit`` of one mode's run while comparing (the engine's; the tests hold a comparison by this name)."""


class SuqlArea(SchemaHost, SuqlOutcomes, HistoryArea):
    """The SUQL tab (see the module docstring)."""

    AREA_ID = "suql"
    SCHEMA_PANE_ID = "suql-schema"  # Ctrl+T shows or hides it (tui.schema_pane)
    HISTORY_BOXES = {"suql-editor": "suql"}
    STATUS_ID = "suql-status"
    RESULTS_IDS = ("suql-results",)
    USAGE_IN_STATUS = False  # the counters line shows the run's tokens and cost
    RUN_ACTIONS = frozenset({"run", "compare"})  # Esc takes their place in the footer while a query runs
    TITLE = "SUQL"
    HELP = HELP
    BINDINGS = BINDINGS

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self.mode = DEFAULT_MODE
        self._db = settings.db  # your own tables (--db SOURCE): the world the tab opens first, or None
        self.world = settings.db or DEFAULT_WORLD
        self._runner = SuqlRunner(db=self._db, clock=self.clock, now=lambda: self._now(), emit=lambda e: self._emit(e))
        self._modes: tuple[tuple[str, str], ...] = ()
        self._worlds: tuple[tuple[str, str], ...] = ()
        self._lecture: tuple[Example, ...] = ()
        self._paper: tuple[Example, ...] = ()
        self._loaded: Example | None = None  # the example the editor started from
        self._consent: tuple[str, str] | None = None  # (query, mode) warned about: running it again goes ahead
        self._decided: list[tuple[str, str]] = []
        self._compared: list[ModeOutcome] = []
        self._comparing: str | None = None

    def schema_subject(self) -> SchemaSubject | None:
        """What the schema pane describes (tui.schema_pane): your data's description, or the world's tables with the
        enumerations the session's SUQL agent classifies."""
        session = self._runner.session
        if session is None:
            return None
        return SchemaSubject.of_session(session, session.world_name, getattr(session.world, "enum_fields", {}))

    # --- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        from engines.suql.examples import LECTURE

        with Horizontal(id="suql-columns"):
            with Vertical(id="suql-left"):
                with Horizontal(id="suql-controls"):
                    yield TextView("opening the world…", id="suql-opening")
                schema = SchemaPane(id="suql-schema")
                schema.display = self._db is not None  # only over your own data (--db)
                yield schema
                examples = OptionList(id="suql-examples")
                examples.border_title = "Examples · Enter loads one · ^L search"
                yield examples
                editor = SuqlEditor(layout_sql(LECTURE[1].sql), id="suql-editor", soft_wrap=True, tab_behavior="focus")
                editor.cursor_blink = self.cursor_blink
                editor.border_title = EDITOR_TITLE
                editor.border_subtitle = as_text(LECTURE[1].source, one_line=True)
                self._loaded = LECTURE[1]
                yield editor
                yield ErrorBox(id="suql-error")
                yield pane("DNF (the WHERE as OR of ANDs)", SqlView("—", id="suql-dnf"), id="suql-dnf-pane")
                yield pane("Read-back", TextView("—", id="suql-readback"), id="suql-readback-pane")
            with Vertical(id="suql-right"):
                yield Static(id="suql-counters")
                yield pane("Plan", TextView(PLAN_HINT, id="suql-plan"), id="suql-plan-pane")
                with Horizontal(id="suql-tables"):
                    results = SuqlResultsTable(id="suql-results")
                    results.border_title = "Results"
                    yield results
                    verify = SuqlResultsTable(id="suql-verify")
                    verify.border_title = "To verify · condition unknown"
                    yield verify
                with TabbedContent(id="suql-bottom", initial="suql-calls-pane"):
                    with TabPane("LLM calls", id="suql-calls-pane"):
                        yield SuqlCallsTable(id="suql-calls")
                        yield TextView(id="suql-call-detail")
                    with TabPane("Compare modes", id="suql-compare-pane"):
                        yield CompareTable(id="suql-compare")
        yield Static(id="suql-status", markup=False)

    def on_mount(self) -> None:
        self.query_one("#suql-results", ResultsTable).show_nothing("no query yet")
        self.query_one("#suql-verify", ResultsTable).show_nothing()
        self.query_one(SuqlCallsTable).reset("no calls yet")
        self._show_call_detail()
        self.query_one(CompareTable).border_subtitle = "Ctrl+O compares the six modes on the editor's query"
        self._reset_counts()
        self._render_counters()
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
        self._stop_ticker()
        self._runner.close()  # a running query stops at its next call: the database is not closed under it

    def focus_default(self) -> None:
        self.query_one("#suql-editor", SuqlEditor).focus()

    # --- actions (public: the app, the palette and the tests call them) ----------------------------

    def run_query(self, sql: str | None = None) -> bool:
        """Run ``sql`` (default: the editor's text) in the current mode.  False when it cannot start."""
        text = self._query_text(sql, "run")
        if text is None or not self._free("run a query"):
            return False
        self.record_run("suql-editor", text)
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

    def compare_modes(self, sql: str | None = None) -> bool:
        """Run ``sql`` (default: the editor's text) in all six modes and fill the compare table."""
        text = self._query_text(sql, "compare")
        if text is None or not self._free("compare modes"):
            return False
        self.record_run("suql-editor", text)
        self._clear_error()
        self._compared = []
        self._comparing = None
        self.query_one(CompareTable).start(self._modes or tuple((m, "") for m in MODE_NAMES))
        self.query_one("#suql-bottom", TabbedContent).active = "suql-compare-pane"
        self._set_status("comparing the six modes… — Esc cancels", "running")
        cancel = self._cancel = threading.Event()
        self._started = self._now()
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
        """Choose the execution mode of the next run (A–F)."""
        mode = mode.strip().upper()
        if mode not in MODE_NAMES:
            raise ValueError(f"unknown execution mode {mode!r}: choose one of {', '.join(MODE_NAMES)}")
        if mode == self.mode:
            return
        self.mode = mode
        selects = self.query("#suql-mode")
        if selects:
            select = selects.first(Select)
            if select.value != mode:
                select.value = mode
        self._render_counters()
        if not self.is_busy:
            self._set_status(f"mode {mode} — {self._mode_title(mode)} · Ctrl+J runs", "idle")

    def set_world(self, world: str) -> bool:
        """Open a session on another world (its examples replace the list)."""
        if world == self.world:
            return True
        if not self._free("switch the world"):
            self._sync_world_select()
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
        return (*self._lecture, *self._paper)

    def example(self, key: str) -> Example:
        """The first example whose source is ``key`` (``"lecture 7 §2.5"``, ``"SUQL paper #8"``)
        or whose title starts with it (``"family-friendly"``)."""
        for example in self.examples:
            if example.source == key or example.title.startswith(key):
                return example
        raise KeyError(f"no example {key!r} in the {self.world} world")

    def option_id(self, example: Example) -> str:
        """The id of ``example``'s entry in the examples list."""
        for kind, pool in (("lecture", self._lecture), ("paper", self._paper)):
            for i, candidate in enumerate(pool):
                if candidate is example:
                    return f"{kind}-{i}"
        raise KeyError(f"{example.source} is not in the list")

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
        if event.option_list.id != "suql-examples":
            return
        event.stop()
        example = self._example_by_id(event.option.id or "")
        if example is not None:
            self.load_example(example)

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
            "SUQL: compare modes A–F on the query in the editor",
            "Runs it in all six modes and tabulates answer()/summary() calls, rows, to verify and wall time (Ctrl+O).",
            self.compare_modes,
        )
        if self.is_busy:
            yield PaletteCommand("SUQL: cancel the running query", "No further LLM call is made (Esc).", self.cancel)
        for name, title in self._modes or tuple((m, "") for m in MODE_NAMES):
            current = " (current)" if name == self.mode else ""
            yield PaletteCommand(
                f"SUQL: mode {name} — {short_title(title)}{current}",
                title or f"Mode {name}",
                lambda m=name: self.set_mode(m),
            )
        for name, title in self._worlds:
            current = " (current)" if name == self.world else ""
            yield PaletteCommand(f"SUQL: world {name}{current}", title, lambda w=name: self.set_world(w))
        yield PaletteCommand(
            "SUQL: focus the editor", "Write SUQL and run it with Ctrl+Enter or Ctrl+J.", self.focus_default
        )
        yield PaletteCommand(
            "SUQL: focus the examples",
            "Pick an example with ↑/↓ and load it with Enter.",
            lambda: self.query_one("#suql-examples", OptionList).focus(),
        )
        yield from self.history_commands()

    # --- examples and history (tui.history) ---------------------------------------------------------

    def history_origin(self, box_id: str) -> str | None:
        return layout_sql(self._loaded.sql) if self._loaded is not None else None

    def example_items(self) -> list[PickItem]:
        """The world's examples (the lecture's), then the SUQL paper's: title, source, and the query to match."""
        from tui.pickers import PickItem

        return [PickItem(e.title, e.source, e, more=e.sql) for e in self.examples]

    def example_chosen(self, value: Any) -> None:
        self.load_example(value)
        self.query_one("#suql-editor", SuqlEditor).focus()

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

    # --- engine events (main thread) ---------------------------------------------------------------

    def on_engine_reported(self, message: EngineReported) -> None:
        from engines.suql.execute import PlanBuilt, RowDecided

        message.stop()
        event = message.event
        calls = self.query_one(SuqlCallsTable)
        if isinstance(event, CallStarted):
            calls.call_started(event)
        elif isinstance(event, CallFinished):
            calls.call_finished(event)
            if calls.cursor_key == str(event.call_id):
                self._show_call_detail()
            if event.function in ("answer", "summary"):
                self._counts[event.function] += 1
            self._counts["cached"] += int(event.cached)
        elif isinstance(event, CallFailed):
            calls.call_failed(event)
            self._counts["stopped" if is_cancellation(event.error) else "failed"] += 1
            if calls.cursor_key == str(event.call_id):
                self._show_call_detail()
        elif isinstance(event, PlanBuilt):
            self._show_plan(event.plan)
        elif isinstance(event, RowDecided):
            self._decided.append((event.row_key, event.truth))
            self._counts["examined"] += 1
            self._counts[event.truth] = self._counts.get(event.truth, 0) + 1
        elif isinstance(event, (ModeStarted, ModeProgressed, ModeCompared)):
            self._compare_reported(event)
            return
        else:
            return
        self._render_counters()

    def _compare_reported(self, event: ModeStarted | ModeProgressed | ModeCompared) -> None:
        table = self.query_one(CompareTable)
        if isinstance(event, ModeStarted):
            self._comparing = event.mode
            table.running(event.mode)
            done = len(self._compared)
            self._set_status(f"comparing modes… {event.mode} ({done + 1}/{len(MODE_NAMES)}) — Esc cancels", "running")
        elif isinstance(event, ModeProgressed):
            table.running(event.mode, event.answer_calls, event.summary_calls)
        else:
            self._compared.append(event.outcome)
            self._comparing = None
            table.finished(event.outcome)

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
        self._reset_counts()
        self._started = self._now()
        self._counts["running"] = True
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
        self._render_counters()
        self._start_ticker()

    def _reset_counts(self) -> None:
        self._counts = {
            "answer": 0,
            "summary": 0,
            "cached": 0,
            "examined": 0,
            "match": 0,
            "no": 0,
            "to verify": 0,
            "stopped": 0,
            "failed": 0,
            "elapsed": 0.0,
            "running": False,
        }

    def _render_counters(self) -> None:
        c = self._counts
        parts = [
            counter("answer()", f"{c['answer']:,}"),
            counter("summary()", f"{c['summary']:,}"),
            counter("cached", f"{c['cached']:,}"),
            counter("examined", f"{c['examined']:,}"),
        ]
        if c["match"] or c["no"] or c["to verify"]:
            parts[-1] += Content.styled(f" ({c['match']} ✓ · {c['no']} ✗ · {c['to verify']} ?)", "$foreground-muted")
        parts.append(counter("elapsed", f"{c['elapsed']:.2f} s"))
        parts.extend(self.usage_counters())
        self.query_one("#suql-counters", Static).update(Content("   ").join(parts))

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
        if not result.to_verify:
            table.show_nothing("none: every examined row was decided")
            return
        from engines.suql.unknowns import unknown_question

        hidden = {"_row", "unknown", "approximate", "name"}
        others = [k for k in result.to_verify[0] if k not in hidden]
        columns = ["row", "unknown", *(["approx."] if result.approximate else []), *others]
        rows = []
        for rec in result.to_verify:
            label = f"#{rec.get('_row')} {rec['name']}" if "name" in rec else f"#{rec.get('_row')}"
            unknown = "; ".join(unknown_question(u) or u for u in rec.get("unknown") or []) or "—"
            rows.append([label, unknown, *(["≈ yes"] if result.approximate else []), *(rec.get(k) for k in others)])
        table.show_rows(columns, rows)
        if result.approximate:
            table.border_subtitle = f"{count_rows(len(rows))} · approximate (mode {result.mode})"

    def _show_nothing(self, why: str) -> None:
        results = self.query_one("#suql-results", ResultsTable)
        results.show_nothing(why)
        results.border_title = "Results"
        self.query_one("#suql-verify", ResultsTable).show_nothing()
        self.query_one("#suql-readback", Static).update(f"— ({why})")
        self.query_one("#suql-plan", Static).update("—")
        self.query_one("#suql-dnf", SqlView).update("—")
        self._counts["running"] = False
        self._render_counters()

    def _mount_controls(self) -> None:
        """The world and mode selects, built once the engine modules are loaded."""
        controls = self.query_one("#suql-controls", Horizontal)
        if controls.query("#suql-mode"):
            self._sync_world_select()
            return
        controls.query("#suql-opening").remove()
        world = Select(
            [(as_text(name, one_line=True), name) for name, _ in self._worlds],  # a world may be your file's path
            value=self.world,
            allow_blank=False,
            compact=True,
            id="suql-world",
        )
        world.border_title = "World"
        world.tooltip = "The data the queries run on; more worlds join as they are built."
        mode = Select(
            [(f"{name} · {short_title(title)}", name) for name, title in self._modes],
            value=self.mode,
            allow_blank=False,
            compact=True,
            id="suql-mode",
        )
        mode.border_title = "Mode · F7 / Shift+F7"
        mode.tooltip = "\n".join(f"{name} — {title}" for name, title in self._modes)
        controls.mount_all([world, mode])

    def _sync_world_select(self) -> None:
        selects = self.query("#suql-world")
        if selects:
            select = selects.first(Select)
            if select.value != self.world:
                select.value = self.world

    def _fill_examples(self) -> None:
        options: list[Option | None] = []
        if self._lecture:
            options.append(
                Option(
                    Content.styled(
                        f"{'Your data' if self.world == self._db else 'Lecture and notes'} · {len(self._lecture)}",
                        "bold $text-accent",
                    ),
                    disabled=True,
                )
            )
            options.extend(_example_option(f"lecture-{i}", e) for i, e in enumerate(self._lecture))
        if self._paper:
            options.append(None)
            options.append(
                Option(
                    Content.styled(f"SUQL paper · {len(self._paper)} real queries", "bold $text-accent"), disabled=True
                )
            )
            options.extend(_example_option(f"paper-{i}", e) for i, e in enumerate(self._paper))
        elif self.world == PAPER_WORLD:  # the paper's queries are a data set: missing, it says how to get it
            from worlds.data import missing_message

            path = "suql_paper/restaurants_single_turn_SUQL.csv"
            options += [
                None,
                Option(
                    as_text(
                        Content.styled(
                            f"SUQL paper · {missing_message(path, self.settings.data_roots())}", "$text-warning"
                        )
                    ),
                    disabled=True,
                ),
            ]
        examples = self.query_one("#suql-examples", OptionList)
        examples.set_options(options)
        examples.border_subtitle = as_text(
            f"{len(self._lecture) + len(self._paper)} queries · world {self.world}", one_line=True
        )

    def _example_by_id(self, option_id: str) -> Example | None:
        kind, _, index = option_id.partition("-")
        pool = {"lecture": self._lecture, "paper": self._paper}.get(kind, ())
        return pool[int(index)] if index.isdigit() and int(index) < len(pool) else None

    def _mode_title(self, mode: str) -> str:
        return dict(self._modes).get(mode, "")

    def _show_error(self, title: str, message: str) -> None:
        self.query_one("#suql-error", ErrorBox).show(title, message)

    def _clear_error(self) -> None:
        self.query_one("#suql-error", ErrorBox).clear()


def _example_option(option_id: str, example: Example) -> Option:
    source = example.source.replace("SUQL paper ", "").replace("lecture ", "L")
    room = max(8, EXAMPLE_CHARS - len(source) - 1)
    return Option(
        as_text(Content.assemble(truncate(example.title, room), " ", Content.styled(source, "$foreground-muted"))),
        id=option_id,
    )


__all__ = [
    "CompareTable",
    "EngineReported",
    "QueryRan",
    "SuqlArea",
    "SuqlCallsTable",
    "SuqlEditor",
    "layout_sql",
    "plan_content",
    "sql_highlights",
]
