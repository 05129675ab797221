"""The HybridQA tab: questions over tables whose cells link to passages (lecture 7 §6).

Left: the source (the generated flag-bearer tables, or the real HybridQA tables of
``../shared/data/hybridqa``) and the table, the two improvements of §6.2 (fallback,
retry), the table's questions, the SUQL of every attempt (retries marked, with what
each returned) and the read-back.  Right: running counters (passages read and why),
the question card (its HybridQA type, the short answer beside the gold, EM/F1 and
the human judgement), the plan, and below either the table's rows with the passage
of the highlighted cell, or the LLM calls streaming in (every passage read: which
row, which ``_Info`` column, the value, and whether the query or the fallback read it).

All engine work runs in thread workers of the group ``"hybridqa"``.  The pipeline's
``emit`` posts :class:`PipelineReported` messages (thread-safe), so the panes fill
while a question runs; Esc sets the run's cancel flag and the engine makes no further
call.  Elapsed time and latencies come from the app's injected clock.

With the simulated LLM a real table can be browsed but not run: the simulated reader
knows only the generated worlds (the session says so, and the tab shows its message).

The tab, one idea a module: :mod:`tui.hybridqa` — :class:`HybridArea`: the layout, the actions, the pipeline's
events as they stream in, the outcomes of its jobs and the palette; :mod:`tui.hybridqa_keys` — its keys, the
hints that name them and the help page; :mod:`tui.hybridqa_work` — what the workers do in their threads (the
sessions, a question run and graded) and the typed results they return; :mod:`tui.hybridqa_card` — what the
question card and the SUQL attempts say; :mod:`tui.hybridqa_tables` — the rows and the passages read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Checkbox, DataTable, OptionList, Select, Static, TabbedContent, TabPane

from engines.events import CallFailed, CallFinished, CallStarted
from tui.area import EngineReported
from tui.history import HistoryArea
from tui.hybridqa_card import question_card, suql_attempts
from tui.hybridqa_keys import BINDINGS, HELP, PLAN_HINT, RUN_HINT, SUQL_HINT
from tui.hybridqa_outcomes import HybridOutcomes
from tui.hybridqa_palette import HybridPalette
from tui.hybridqa_tables import PassagesTable, RowsTable
from tui.hybridqa_work import SOURCES, Answered, HybridRunner, Opened
from tui.schema_pane import SchemaHost, SchemaPane, SchemaSubject
from tui.suql_view import plan_content
from tui.widgets import ErrorBox, TextView, as_text, counter, pane

if TYPE_CHECKING:
    from engines.hybridqa.session import HybridSession
    from engines.settings import Settings
    from worlds.hybridqa import HybridQuestion, HybridTable

# --- messages (posted from the worker threads) ------------------------------------------------


class PipelineReported(EngineReported):
    """The HybridQA pipeline (or the SUQL engine or the LLM under it) emitted an event."""


# --- the tab ------------------------------------------------------------------------------------


class HybridArea(SchemaHost, HybridOutcomes, HybridPalette, HistoryArea):
    """The HybridQA tab (see the module docstring)."""

    REPORTED = PipelineReported
    AREA_ID = "hybridqa"
    SCHEMA_PANE_ID = "hqa-schema"  # the current table; Ctrl+T shows or hides it (tui.schema_pane)
    HISTORY_BOXES = {"hqa-questions": "question"}  # a list, not a box: no ↑/↓ walk, Ctrl+R only
    STATUS_ID = "hqa-status"
    RESULTS_IDS = ("hqa-rows", "hqa-bottom")  # the rows, else the bottom tabs (the calls may show)
    USAGE_IN_STATUS = False  # the counters line shows the run's tokens and cost
    RUN_ACTIONS = frozenset({"run"})  # Esc takes its place in the footer while a question runs
    TITLE = "HybridQA"
    HELP = HELP
    BINDINGS = BINDINGS

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self.source = "generated"
        self.fallback = True
        self.retry = True
        self._runner = HybridRunner(clock=self.clock, now=lambda: self._now(), emit=lambda e: self._emit(e))
        self._tables: dict[str, str] = {}  # source -> the table shown
        self._questions: dict[str, str] = {}  # table -> the question chosen
        self._table: HybridTable | None = None
        self._question: HybridQuestion | None = None
        self._running_question: HybridQuestion | None = None
        self._result: Answered | None = None
        self._attempts: list[dict[str, Any]] = []
        self._short: str | None = None
        self._opening: str | None = None  # the source whose session is being opened
        self._bring_back_later: tuple[str, str, str] | None = None  # a question of the source being opened

    def schema_subject(self) -> SchemaSubject | None:
        """What the schema pane describes (tui.schema_pane): the current table (the pipeline classifies nothing)."""
        session, table = self.session, self._table
        if session is None or table is None:
            return None
        return SchemaSubject(
            ("table", self.source, table.name),
            table.table_id,
            kind=f"a {self.source} HybridQA table",
            gate=session.sandbox,
            enum_fields={},
            tables=(table.name,),
        )

    # --- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="hqa-columns"):
            with Vertical(id="hqa-left"):
                with Horizontal(id="hqa-controls"):
                    source = Select(
                        [(s, s) for s in SOURCES], value=self.source, allow_blank=False, compact=True, id="hqa-source"
                    )
                    source.border_title = "Source · s"
                    source.tooltip = (
                        "generated: the 50 flag-bearer tables · real: the HybridQA dev tables (claude runs them)"
                    )
                    yield source
                    table = Select([], prompt="opening…", compact=True, id="hqa-table")
                    table.border_title = "Table · [ ]"
                    yield table
                with Horizontal(id="hqa-switches"):
                    yield Checkbox(
                        "fallback (f)",
                        self.fallback,
                        compact=True,
                        id="hqa-fallback",
                        tooltip="Improvement 1: when answer() finds nothing in the column the parser chose, "
                        "read the row's other passage columns.",
                    )
                    yield Checkbox(
                        "retry (r)",
                        self.retry,
                        compact=True,
                        id="hqa-retry",
                        tooltip="Improvement 2: when nothing comes back, parse again (at most twice).",
                    )
                schema = SchemaPane(id="hqa-schema")
                schema.display = False  # Ctrl+T (tui.schema_pane)
                yield schema
                questions = OptionList(id="hqa-questions")
                questions.border_title = "Questions · Enter runs · ^L all · ^R ran"
                yield questions
                yield pane("SUQL", TextView(SUQL_HINT, id="hqa-suql"), id="hqa-suql-pane")
                yield ErrorBox(id="hqa-error")
                yield pane("Read-back", TextView("—", id="hqa-readback"), id="hqa-readback-pane")
            with Vertical(id="hqa-right"):
                yield Static(id="hqa-counters")
                card = TextView(id="hqa-card")
                card.border_title = "Question"
                yield card
                notice = TextView(id="hqa-notice")
                notice.border_title = "Real tables need the claude backend"
                notice.display = False
                yield notice
                yield pane("Plan", TextView(PLAN_HINT, id="hqa-plan"), id="hqa-plan-pane")
                with TabbedContent(id="hqa-bottom", initial="hqa-rows-pane"):
                    with TabPane("Rows & passages", id="hqa-rows-pane"):
                        yield RowsTable(id="hqa-rows")
                        yield pane("Passage", TextView("—", id="hqa-passage"), id="hqa-passage-pane")
                    with TabPane("LLM calls · passages read", id="hqa-calls-pane"):
                        yield PassagesTable(id="hqa-calls")
                        yield TextView(id="hqa-call-detail")
        yield Static(id="hqa-status", markup=False)

    def on_mount(self) -> None:
        self.query_one(PassagesTable).reset("no calls yet")
        self.query_one("#hqa-call-detail", Static).update(self.query_one(PassagesTable).detail(None))
        self.query_one("#hqa-rows", RowsTable).border_title = "Rows"
        self._reset_counts()
        self._render_counters()
        self._render_card()
        self._set_status("opening the generated tables…", "running")
        self._opening = self.source
        source = self.source
        self._open_source(lambda: self._open_work(source))

    def on_unmount(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
        self._stop_ticker()
        self._runner.close()  # a running question stops at its next call: no session is closed under it

    def focus_default(self) -> None:
        self.query_one("#hqa-questions", OptionList).focus()

    # --- public state -------------------------------------------------------------------------------

    @property
    def session(self) -> HybridSession | None:
        """The session of the current source (None until it is open)."""
        return self._runner.sessions.get(self.source)

    @property
    def table(self) -> HybridTable | None:
        return self._table

    @property
    def question(self) -> HybridQuestion | None:
        return self._question

    @property
    def result(self) -> Answered | None:
        """The last question run to the end (answer, score, time)."""
        return self._result

    @property
    def simulated_on_real(self) -> bool:
        session = self.session
        return session is not None and session.simulated_on_real

    # --- actions (public: the app, the palette and the tests call them) ----------------------------

    def run_question(self, question: HybridQuestion | None = None) -> bool:
        """Run ``question`` (default: the chosen one) with the current improvements.  False when it cannot start."""
        from engines.hybridqa.pipeline import Improvements

        question = question or self._question
        session = self.session
        if question is None or session is None or self._table is None:
            self.notify("Choose a table and a question first.", title="HybridQA", severity="warning")
            return False
        if not self._free("run a question"):
            return False
        if session.simulated_on_real:
            self._show_notice()
            self.notify(
                "The simulated LLM knows only the generated tables: real ones run with claude "
                "(Ctrl+P → LLM: use claude).",
                title="HybridQA: not run",
                severity="warning",
            )
            self._set_status(
                "not run — the simulated LLM knows only the generated tables; switch to claude (Ctrl+P → LLM)", "error"
            )
            return False
        if question is not self._question:
            self.choose_question(question.question_id)
        self._clear_error()
        improvements = Improvements(fallback=self.fallback, retry=self.retry)
        self._begin_run(question)
        self._set_status(f"running ({improvements.label})… — Esc cancels", "running")
        cancel = self._cancel = threading.Event()
        table = self._table.name
        source = self.source
        meta = {"source": source, "table": table, "question_id": question.question_id}
        self.record_run("hqa-questions", question.question, meta)
        self.run_engine(
            lambda: self._ask_work(source, table, question, improvements, cancel),
            name="ask",
            done=self._answered,
            failed=self._ask_failed,
            busy="a question is running (Esc cancels it)",
        )
        self.refresh_bindings()
        return True

    def cancel(self) -> bool:
        """Ask the running question to stop: the engine makes no further LLM call."""
        return self.request_cancel("cancelling… (no further LLM call is made)")

    def set_source(self, source: str) -> bool:
        """Show the generated tables or the real ones (opening their session the first time)."""
        if source not in SOURCES:
            raise ValueError(f"unknown source {source!r}: choose one of {', '.join(SOURCES)}")
        if source == self.source and (self.session is not None or self._opening == source):
            return True
        if not self._free("switch the source"):
            self._sync_source_select()
            return False
        self.source = source
        self._sync_source_select()
        if source in self._runner.sessions:
            self._adopt_source()
            return True
        self._set_status(f"opening the {source} tables…", "running")
        self._opening = source
        self._open_source(lambda: self._open_work(source))
        return True

    def set_table(self, name: str) -> bool:
        """Show the table ``name`` (its DuckDB name or its dataset id) of the current source."""
        session = self.session
        if session is None:
            return False
        table = session.world.table(name)
        if self._table is not None and table.name == self._table.name:
            return True
        if not self._free("switch the table"):
            self._sync_table_select()
            return False
        self._tables[self.source] = table.name
        self._show_table(table)
        return True

    def step_table(self, step: int) -> None:
        session = self.session
        if session is None or self._table is None:
            return
        names = [t.name for t in session.world.tables]
        index = names.index(self._table.name) if self._table.name in names else 0
        self.set_table(names[(index + step) % len(names)])

    def choose_question(self, question_id: str) -> None:
        """Make ``question_id`` (of the shown table) the chosen question: the card shows its type and gold."""
        if self._table is None:
            return
        question = next((q for q in self._table.questions if q.question_id == question_id), None)
        if question is None:
            raise KeyError(f"no question {question_id!r} on table {self._table.name}")
        if question is self._question:
            return
        self._question = question
        self._questions[self._table.name] = question_id
        options = self.query_one("#hqa-questions", OptionList)
        index = options.get_option_index(question_id)
        if options.highlighted != index:
            with self.prevent(OptionList.OptionHighlighted):
                options.highlighted = index
        if not self.is_busy:
            self._result = None
            self._short = None
            if self._attempts:  # the panes showed another question's run
                self._clear_run()
            self._render_card()
            if question.qtype:
                from worlds.hybridqa import TYPE_TITLES

                self._set_status(f"type {question.qtype} — {TYPE_TITLES.get(question.qtype, '')} · {RUN_HINT}", "idle")
            else:
                self._set_status(f"a real HybridQA question · {RUN_HINT}", "idle")
            if self.simulated_on_real:
                self._set_status("browsing — the sim backend cannot run real tables (claude can)", "idle")

    def set_improvement(self, name: str, on: bool) -> None:
        """Switch ``"fallback"`` or ``"retry"`` on or off for the next run."""
        if name not in ("fallback", "retry"):
            raise ValueError(f"unknown improvement {name!r}: fallback or retry")
        setattr(self, name, on)
        box = self.query_one(f"#hqa-{name}", Checkbox)
        if box.value != on:
            with self.prevent(Checkbox.Changed):
                box.value = on
        if not self.is_busy:
            self._set_status(f"{name} {'on' if on else 'off'} for the next run · {RUN_HINT}", "idle")
        self._render_counters()

    def use_settings(self, settings: Settings) -> None:
        """Rebuild the session of the current source with ``settings`` (another backend)."""
        self._set_status(f"switching to the {settings.backend} backend…", "running")
        source = self.source
        self.run_engine(
            lambda: self._reopen_work(settings, source),
            name="reopen",
            done=self._reopened,
            failed=self._reopen_failed,
            busy="the session is being rebuilt",
        )

    def _open_source(self, work: Callable[[], Opened]) -> None:
        self.run_engine(
            work, name="open", done=self._opened, failed=self._open_failed, busy="the tables are being opened"
        )

    # --- bindings and events ------------------------------------------------------------------------

    def action_run(self) -> None:
        self.run_question()

    def action_cancel(self) -> None:
        self.cancel()

    def action_toggle(self, name: str) -> None:
        self.set_improvement(name, not getattr(self, name))

    def action_switch_source(self) -> None:
        self.set_source(SOURCES[(SOURCES.index(self.source) + 1) % len(SOURCES)])

    def action_step_table(self, step: int) -> None:
        self.step_table(step)

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.value is Select.NULL:
            return
        if event.select.id == "hqa-source":
            self.set_source(str(event.value))
        elif event.select.id == "hqa-table":
            self.set_table(str(event.value))

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        name = (event.checkbox.id or "").removeprefix("hqa-")
        if name in ("fallback", "retry"):
            self.set_improvement(name, event.value)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id != "hqa-questions":
            return
        event.stop()
        if event.option.id:
            self.choose_question(event.option.id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id != "hqa-questions":
            return
        event.stop()
        if event.option.id:
            self.choose_question(event.option.id)
            self.run_question()

    def on_data_table_cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        if event.data_table.id == "hqa-rows":
            event.stop()
            self._show_passage()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "hqa-calls":
            event.stop()
            self._show_call_detail()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.id == "hqa-bottom":
            event.stop()

    # --- worker bodies (in their threads): the runner's, on the tab's settings ----------------------------

    def _open_work(self, source: str) -> Opened:
        return self._runner.open(self.settings, source)

    def _reopen_work(self, settings: Settings, source: str) -> Opened:
        return self._runner.reopen(settings, source)

    def _ask_work(
        self, source: str, table: str, question: HybridQuestion, improvements: Any, cancel: threading.Event
    ) -> Answered:
        return self._runner.ask(source, table, question, improvements, cancel)

    # --- engine events (main thread) ---------------------------------------------------------------

    def on_pipeline_reported(self, message: PipelineReported) -> None:
        from engines.hybridqa import events as E
        from engines.suql.execute import PlanBuilt, QueryFinished

        message.stop()
        event = message.event
        calls = self.query_one(PassagesTable)
        counts = self._counts
        detail_key: str | None = None
        if isinstance(event, CallStarted):
            calls.call_started(event)
            counts["calls"] += 1
            detail_key = str(event.call_id)
        elif isinstance(event, CallFinished):
            calls.call_finished(event)
            detail_key = str(event.call_id)
        elif isinstance(event, CallFailed):
            calls.call_failed(event)
            detail_key = str(event.call_id)
        elif isinstance(event, E.PassageRead):
            detail_key = calls.passage_read(event.row_key, event.column, event.question, event.reason)
            counts["read"] += 1
            counts["fallback"] += int(event.reason.startswith("fallback"))
            counts["silent"] += int(event.value is None)
        elif isinstance(event, E.FallbackTried):
            counts["tried"] += 1
        elif isinstance(event, E.QuestionParsed):
            self._attempts.append({"number": event.attempt, "suql": event.suql, "state": "running"})
            counts["attempts"] = event.attempt
            self._render_suql()
        elif isinstance(event, E.AttemptExecuted):
            for attempt in self._attempts:
                if attempt["number"] == event.attempt:
                    attempt.update(
                        state="done",
                        rows=event.rows,
                        columns=event.columns,
                        empty=event.empty,
                        error=event.error,
                        answer_calls=event.answer_calls,
                    )
            self._render_suql()
        elif isinstance(event, E.Retried):
            for attempt in self._attempts:
                if attempt["number"] == event.attempt - 1:
                    attempt["retried"] = event.reason
            calls.retried()
            self._render_suql()
        elif isinstance(event, PlanBuilt):
            self._show_plan(event.plan)
        elif isinstance(event, QueryFinished):
            self.query_one("#hqa-readback", Static).update(event.readback or "—")
        elif isinstance(event, E.AnswerShortened):
            self._short = event.short
            self._render_card()
        else:
            return
        if detail_key is not None and calls.cursor_key == detail_key:
            self._show_call_detail()
        self._render_counters()

    # --- view helpers -------------------------------------------------------------------------------

    def _begin_run(self, question: HybridQuestion) -> None:
        self._running_question = question
        self._result = None
        self._short = None
        self._attempts = []
        self._reset_counts()
        self._started = self._now()
        self._counts["running"] = True
        self.query_one("#hqa-plan", Static).update("…")
        self.query_one("#hqa-readback", Static).update("…")
        self.query_one(PassagesTable).reset()
        self._show_call_detail()
        self.query_one("#hqa-bottom", TabbedContent).active = "hqa-calls-pane"
        self._render_suql()
        self._render_card(state="running")
        self._render_counters()
        self._start_ticker()

    def _clear_run(self) -> None:
        """Another table: no run to show."""
        self._attempts = []
        self._reset_counts()
        self._render_counters()
        self._render_suql()
        self.query_one("#hqa-plan", Static).update(PLAN_HINT)
        self.query_one("#hqa-plan-pane").border_title = "Plan"
        self.query_one("#hqa-readback", Static).update("—")
        self.query_one(PassagesTable).reset("no calls yet")
        self._show_call_detail()
        self._clear_error()

    def _reset_counts(self) -> None:
        self._counts = {
            "calls": 0,
            "read": 0,
            "fallback": 0,
            "silent": 0,
            "tried": 0,
            "attempts": 0,
            "elapsed": 0.0,
            "running": False,
        }

    @property
    def counts(self) -> dict[str, Any]:
        """The run's counts: LLM calls, passages read, read by the fallback, that said nothing, attempts, elapsed."""
        return dict(self._counts)

    def _render_counters(self) -> None:
        c = self._counts
        muted = "$foreground-muted"
        read = counter("passages read", f"{c['read']:,}") + Content.styled(
            f" ({c['fallback']:,} by the fallback, {c['silent']:,} said nothing)", muted
        )
        parts = [read, counter("attempts", f"{c['attempts']}"), counter("elapsed", f"{c['elapsed']:.2f} s")]
        parts.extend(self.usage_counters())
        self.query_one("#hqa-counters", Static).update(Content("  ").join(parts))

    def _render_card(self, state: str = "") -> None:
        title, lines = question_card(
            self._running_question or self._question,
            result=self._result,
            short=self._short,
            running=self._running_question is not None,
            simulated_on_real=self.simulated_on_real,
            state=state,
        )
        card = self.query_one("#hqa-card", Static)
        card.border_title = as_text(title, one_line=True)
        card.update(lines)

    def _render_suql(self) -> None:
        final = self._running_question is None and self._result is not None
        title, subtitle, lines = suql_attempts(self._attempts, final=final)
        pane = self.query_one("#hqa-suql-pane")
        pane.border_title = as_text(title, one_line=True)
        pane.border_subtitle = as_text(subtitle, one_line=True)
        self.query_one("#hqa-suql", Static).update(lines)

    def _show_plan(self, plan: Any, attempt: int | None = None) -> None:
        self.query_one("#hqa-plan", Static).update(plan_content(plan))
        n = attempt if attempt is not None else (self._attempts[-1]["number"] if self._attempts else 1)
        self.query_one("#hqa-plan-pane").border_title = f"Plan · attempt {n}"

    def _show_passage(self) -> None:
        rows = self.query_one("#hqa-rows", RowsTable)
        title, body = rows.passage()
        self.query_one("#hqa-passage-pane").border_title = as_text(title, one_line=True)  # names a column and a row
        self.query_one("#hqa-passage", Static).update(body)
        self.query_one("#hqa-passage-pane", VerticalScroll).scroll_home(animate=False)

    def _show_call_detail(self) -> None:
        calls = self.query_one(PassagesTable)
        self.query_one("#hqa-call-detail", Static).update(calls.detail(calls.cursor_key))

    def _show_notice(self) -> None:
        from engines.hybridqa.session import SIM_KNOWS_GENERATED_ONLY

        notice = self.query_one("#hqa-notice", Static)
        on = self.simulated_on_real
        notice.display = on
        self.query_one("#hqa-plan-pane").display = not on
        if on:
            notice.update(SIM_KNOWS_GENERATED_ONLY)

    def _focus_rows(self) -> None:
        self.query_one("#hqa-bottom", TabbedContent).active = "hqa-rows-pane"
        self.query_one("#hqa-rows", RowsTable).focus()

    def _sync_source_select(self) -> None:
        select = self.query_one("#hqa-source", Select)
        if select.value != self.source:
            with self.prevent(Select.Changed):
                select.value = self.source

    def _sync_table_select(self) -> None:
        select = self.query_one("#hqa-table", Select)
        if self._table is not None and select.value != self._table.name:
            with self.prevent(Select.Changed):
                select.value = self._table.name

    def _show_error(self, title: str, message: str) -> None:
        self.query_one("#hqa-error", ErrorBox).show(title, message)

    def _clear_error(self) -> None:
        self.query_one("#hqa-error", ErrorBox).clear()


__all__ = ["Answered", "HybridArea", "Opened", "PassagesTable", "PipelineReported", "RowsTable"]
