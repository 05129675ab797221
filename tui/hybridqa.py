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
``emit`` posts the typed message of each event the tab shows (:data:`REPORTS`,
:mod:`tui.messages`; thread-safe), so the panes fill while a question runs; Esc sets
the run's cancel flag and the engine makes no further call.  Elapsed time and latencies
come from the app's injected clock.

With the simulated LLM a real table can be browsed but not run: the simulated reader
knows only the generated worlds (the session says so, and the tab shows its message).

The tab, one idea a module: :mod:`tui.hybridqa` — :class:`HybridArea`, the tab's state in one class: the
layout, the actions, the pipeline's events as they stream in, the outcomes of its jobs, its examples and
history; :mod:`tui.hybridqa_keys` — its keys, the hints that name them and the help page;
:mod:`tui.hybridqa_palette` — its palette entries (from the tab's public state and actions);
:mod:`tui.hybridqa_work` — what the workers do in their threads (the sessions, a question run and graded) and
the typed results they return; :mod:`tui.hybridqa_panes` — the parts that keep their own state (the counters
line, the SUQL attempts); :mod:`tui.hybridqa_card` — what the question card and the SUQL attempts say;
:mod:`tui.hybridqa_tables` — the rows and the passages read.  What it shares with the other tabs it owns: its
history (:class:`~tui.history.BoxHistory`), its schema pane and its status line.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Checkbox, DataTable, OptionList, Select, Static, TabbedContent, TabPane

from tui import messages as m
from tui.area import PaletteCommand, StatusLine, WorkArea, describe_error
from tui.history import HISTORY_BINDINGS, BoxHistory, HistoryEntry
from tui.hybridqa_card import question_card, question_option
from tui.hybridqa_keys import BINDINGS, HELP, PLAN_HINT, RUN_HINT
from tui.hybridqa_palette import hybrid_commands
from tui.hybridqa_panes import AttemptsPane, HybridCounters
from tui.hybridqa_tables import PassagesTable, RowsTable
from tui.hybridqa_work import SOURCES, Answered, HybridRunner, Opened
from tui.schema_pane import SCHEMA_BINDING, SchemaPane, SchemaSubject
from tui.suql_view import plan_content
from tui.widgets import ErrorBox, TextView, as_text, count_rows, pane, truncate

if TYPE_CHECKING:
    from engines.api import HybridSession, Settings
    from tui.pickers import PickItem
    from worlds.hybridqa import HybridQuestion, HybridTable


def _reports() -> dict[type[Any], m.MessageOf]:
    from engines.api import PlanBuilt, QueryFinished
    from engines.api import hybridqa_events as E

    return {
        **m.llm_calls(),
        E.PassageRead: m.PassageRead,
        E.FallbackTried: m.FallbackTried,
        E.QuestionParsed: m.QuestionParsed,
        E.AttemptExecuted: m.AttemptExecuted,
        E.Retried: m.Retried,
        PlanBuilt: m.PlanBuilt,
        QueryFinished: m.SuqlQueryFinished,
        E.AnswerShortened: m.AnswerShortened,
    }


REPORTS = m.Reports(_reports)
"""The pipeline's events the tab shows (and the SUQL engine's and the LLM's under it), each as its typed message."""

TABLE_TITLE = "Table · [ previous · ] next"
"""The table chooser's title: what it is and its two keys (it said "Table · [ ]")."""


class HybridArea(WorkArea):
    """The HybridQA tab (see the module docstring)."""

    AREA_ID = "hybridqa"
    HISTORY_BOXES = {"hqa-questions": "question"}  # a list, not a box: no ↑/↓ walk, Ctrl+R only
    STATUS_ID = "hqa-status"
    RESULTS_IDS = ("hqa-rows", "hqa-bottom")  # the rows, else the bottom tabs (the calls may show)
    USAGE_IN_STATUS = False  # the counters line shows the run's tokens and cost
    RUN_ACTIONS = frozenset({"run"})  # Esc takes its place in the footer while a question runs
    REPORTS = REPORTS
    TITLE = "HybridQA"
    HELP = HELP
    # Ctrl+T shows or hides the schema pane: the current table (tui.schema_pane)
    BINDINGS = [*HISTORY_BINDINGS, *BINDINGS, SCHEMA_BINDING]

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
        self._short: str | None = None
        self._opening: str | None = None  # the source whose session is being opened
        self._bring_back_later: tuple[str, str, str] | None = None  # a question of the source being opened
        self.runs = self.box_history = BoxHistory(
            self,
            settings,
            name=self.AREA_ID,
            title=self.TITLE,
            boxes=self.HISTORY_BOXES,
            examples=self.example_items,
            label=lambda entry, several: f"{entry.meta.get('source', '?')} · {entry.meta.get('table', '?')}",
        )

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
                    table: Select[str] = Select([], prompt="opening…", compact=True, id="hqa-table")
                    table.border_title = as_text(TABLE_TITLE, one_line=True)  # brackets as text, not markup
                    table.tooltip = "The table the questions are about: [ shows the previous one, ] the next."
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
                yield SchemaPane(id="hqa-schema")  # Ctrl+T (tui.schema_pane)
                questions = OptionList(id="hqa-questions")
                questions.border_title = "Questions · Enter runs · ^L all · ^R ran"
                yield questions
                yield AttemptsPane(id="hqa-suql-pane")
                yield ErrorBox(id="hqa-error")
                yield pane("Read-back", TextView("—", id="hqa-readback"), id="hqa-readback-pane")
            with Vertical(id="hqa-right"):
                yield HybridCounters(clock=self.clock or time.perf_counter, id="hqa-counters")
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
        yield StatusLine(id="hqa-status")

    def on_mount(self) -> None:
        self.query_one(PassagesTable).reset("no calls yet")
        self.query_one("#hqa-call-detail", Static).update(self.query_one(PassagesTable).detail(None))
        self.query_one("#hqa-rows", RowsTable).border_title = "Rows"
        self.counters.reset()
        self.counters.redraw()
        self._render_card()
        self._set_status("opening the generated tables…", "running")
        self._opening = self.source
        source = self.source
        self._open_source(lambda: self._open_work(source))

    def on_unmount(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
        # the counters line stops its own ticker when it unmounts (it may be gone from the DOM by now)
        self._runner.close()  # a running question stops at its next call: no session is closed under it

    def focus_default(self) -> None:
        self.query_one("#hqa-questions", OptionList).focus()

    def focus_rows(self) -> None:
        """Show the rows and focus them."""
        self.query_one("#hqa-bottom", TabbedContent).active = "hqa-rows-pane"
        self.query_one("#hqa-rows", RowsTable).focus()

    def commands(self) -> Iterable[PaletteCommand]:
        return hybrid_commands(self)

    @property
    def counters(self) -> HybridCounters:
        """The run's counters line."""
        return self.query_one(HybridCounters)

    @property
    def attempts(self) -> AttemptsPane:
        """The pane of the run's SUQL attempts."""
        return self.query_one(AttemptsPane)

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
        from engines.api import Improvements

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
        self.runs.record("hqa-questions", question.question, meta)
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
            if self.attempts.attempts:  # the panes showed another question's run
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
        self.counters.redraw()

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

    def action_toggle_improvement(self, name: str) -> None:
        # not action_toggle: that is Textual's own (DOMNode.action_toggle flips any attribute), which this overrode
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

    def action_toggle_schema(self) -> None:
        pane = self.query_one(SchemaPane)
        if pane.display and pane.has_focus:
            self.focus_default()
        pane.toggle(self.schema_subject())

    # --- examples and history (tui.history) -----------------------------------------------------------

    def example_items(self) -> list[PickItem]:
        """Every question of every table of the source: the question, its type and table (the title matched)."""
        from tui.pickers import PickItem

        session = self.session
        if session is None:
            return []
        return [
            PickItem(
                q.question,
                f"{f'type {q.qtype}' if q.qtype else 'real'} · {t.table_id}",
                (self.source, t.name, q.question_id),
                more=t.title,
            )
            for t in session.world.tables
            for q in t.questions
        ]

    def example_chosen(self, value: Any) -> None:
        """Choose the question ``(source, table, question id)`` (not run)."""
        self._bring_back(*value)

    def history_chosen(self, entry: HistoryEntry) -> None:
        """Choose the question a run of the history asked (not run)."""
        meta = entry.meta
        self._bring_back(str(meta.get("source", "")), str(meta.get("table", "")), str(meta.get("question_id", "")))

    def on_example_chosen(self, message: m.ExampleChosen) -> None:
        self.example_chosen(message.value)

    def on_history_chosen(self, message: m.HistoryChosen) -> None:
        self.history_chosen(message.entry)

    def _bring_back(self, source: str, table: str, question_id: str) -> None:
        """Show ``table`` and choose its question ``question_id``, without running it; on the other source it
        switches the source first (opening its tables the first time) and chooses the question once they are shown."""
        if source != self.source:
            if source not in SOURCES:
                self.notify(f"That question is on tables this version has no source for ({source}).", title="HybridQA")
                return
            self._bring_back_later = (source, table, question_id)
            if not self.set_source(source):  # busy: the tab said why
                self._bring_back_later = None
            return  # the source's tables are shown now or once opened: _adopt_source brings the question back
        try:
            if self.set_table(table):
                self.choose_question(question_id)
        except KeyError:
            self.notify(f"The question {question_id} of {table} is not here any more.", title="HybridQA")
            return
        self.query_one("#hqa-questions", OptionList).focus()

    # --- worker bodies (in their threads): the runner's, on the tab's settings ----------------------------

    def _open_work(self, source: str) -> Opened:
        return self._runner.open(self.settings, source)

    def _reopen_work(self, settings: Settings, source: str) -> Opened:
        return self._runner.reopen(settings, source)

    def _ask_work(
        self, source: str, table: str, question: HybridQuestion, improvements: Any, cancel: threading.Event
    ) -> Answered:
        return self._runner.ask(source, table, question, improvements, cancel)

    # --- engine events (main thread): the typed messages of REPORTS --------------------------------

    def on_llm_call_started(self, message: m.LlmCallStarted) -> None:
        event = message.event
        self.query_one(PassagesTable).call_started(event)
        self.counters.add("calls")
        self._reported(str(event.call_id))

    def on_llm_call_finished(self, message: m.LlmCallFinished) -> None:
        self.query_one(PassagesTable).call_finished(message.event)
        self._reported(str(message.event.call_id))

    def on_llm_call_failed(self, message: m.LlmCallFailed) -> None:
        self.query_one(PassagesTable).call_failed(message.event)
        self._reported(str(message.event.call_id))

    def on_passage_read(self, message: m.PassageRead) -> None:
        event = message.event
        detail_key = self.query_one(PassagesTable).passage_read(
            event.row_key, event.column, event.question, event.reason
        )
        self.counters.add("read")
        self.counters.add("fallback", int(event.reason.startswith("fallback")))
        self.counters.add("silent", int(event.value is None))
        self._reported(detail_key)

    def on_fallback_tried(self, message: m.FallbackTried) -> None:
        self.counters.add("tried")
        self._reported()

    def on_question_parsed(self, message: m.QuestionParsed) -> None:
        event = message.event
        self.attempts.parsed(event.attempt, event.suql)
        self.counters.counts["attempts"] = event.attempt
        self._render_suql()
        self._reported()

    def on_attempt_executed(self, message: m.AttemptExecuted) -> None:
        self.attempts.executed(message.event)
        self._render_suql()
        self._reported()

    def on_retried(self, message: m.Retried) -> None:
        self.attempts.retried(message.event.attempt, message.event.reason)
        self.query_one(PassagesTable).retried()
        self._render_suql()
        self._reported()

    def on_plan_built(self, message: m.PlanBuilt) -> None:
        self._show_plan(message.event.plan)
        self._reported()

    def on_suql_query_finished(self, message: m.SuqlQueryFinished) -> None:
        self.query_one("#hqa-readback", Static).update(message.event.readback or "—")
        self._reported()

    def on_answer_shortened(self, message: m.AnswerShortened) -> None:
        self._short = message.event.short
        self._render_card()
        self._reported()

    def _reported(self, detail_key: str | None = None) -> None:
        """After an event: the highlighted call's detail if the event was about it, and the counters."""
        calls = self.query_one(PassagesTable)
        if detail_key is not None and calls.cursor_key == detail_key:
            self._show_call_detail()
        self.counters.redraw()

    # --- worker outcomes (main thread): each job's done / failed handlers ------------------------------

    def _opened(self, opened: Opened) -> None:
        self._opening = None
        if opened.settings is not None:
            self.settings = opened.settings
        if opened.source == self.source:
            self._adopt_source()

    def _reopened(self, opened: Opened) -> None:
        self._opened(opened)
        self._set_status(f"ready — now using the {self.settings.backend} backend", "idle")

    def _answered(self, answered: Answered) -> None:
        self._cancel = None
        self._finish(answered)

    def _ask_failed(self, error: BaseException) -> None:
        from engines.api import Cancelled

        self._cancel = None
        self._running_question = None
        self.counters.stop()
        if isinstance(error, Cancelled):
            self._cancelled()
            return
        self._show_error("Error", describe_error(error))
        self._render_card(state="error")
        self._set_status("error — see the error pane", "error")

    def _open_failed(self, error: BaseException) -> None:
        self.counters.stop_ticking()
        self._opening = None
        self._bring_back_later = None
        self._show_error(f"Could not open the {self.source} tables", describe_error(error))
        if self.source not in self._runner.sessions:  # stay on the tables that are open
            previous = next((s for s in SOURCES if s in self._runner.sessions), None)
            if previous is not None:
                self.source = previous
                self._sync_source_select()
                self._show_notice()
        self._set_status("error — see the error pane", "error")

    def _reopen_failed(self, error: BaseException) -> None:
        self.counters.stop_ticking()
        self._opening = None
        self._show_error("Could not rebuild the session", describe_error(error))
        self._set_status("error — see the error pane", "error")

    def _adopt_source(self) -> None:
        """The current source's session is open: fill the table select and show its table."""
        session = self.session
        assert session is not None
        tables = session.world.tables
        select = self.query_one("#hqa-table", Select)
        with self.prevent(Select.Changed):
            select.set_options([(as_text(t.table_id, one_line=True), t.name) for t in tables])
        name = self._tables.get(self.source) or (tables[0].name if tables else None)
        if name is None:
            self._show_error("No tables", f"The {self.source} source holds no table.")
            return
        self._tables[self.source] = name
        self._table = None
        self._show_table(session.world.table(name))
        self._show_notice()
        later, self._bring_back_later = self._bring_back_later, None
        if later is not None and later[0] == self.source:  # a question of this source was chosen before it opened
            self._bring_back(*later)

    def _show_table(self, table: HybridTable) -> None:
        self._table = table
        self.query_one(SchemaPane).track(self.schema_subject())  # the schema pane follows the table
        self._question = None
        self._result = None
        self._short = None
        self._sync_table_select()
        rows = self.query_one("#hqa-rows", RowsTable)
        rows.show_table(table)
        row, column = rows.first_linked_cell()
        rows.move_cursor(row=row, column=column, animate=False)
        self._show_passage()
        options = self.query_one("#hqa-questions", OptionList)
        with self.prevent(OptionList.OptionHighlighted):
            options.set_options([question_option(q) for q in table.questions])
        options.border_subtitle = as_text(
            f"{len(table.questions)} questions · {truncate(table.table_id, 32)}", one_line=True
        )
        self._clear_run()
        self.query_one("#hqa-bottom", TabbedContent).active = "hqa-rows-pane"
        chosen = self._questions.get(table.name) or (table.questions[0].question_id if table.questions else None)
        if chosen is not None:
            self.choose_question(chosen)
        else:
            self._render_card()
        if self.simulated_on_real:
            self._set_status(
                f"{truncate(table.table_id, 48)} — browse its rows and passages; the sim backend cannot "
                "run real tables (claude can)",
                "idle",
            )
        elif chosen is None:
            self._set_status(f"{table.table_id} has no questions", "idle")

    def _finish(self, answered: Answered) -> None:
        self.counters.stop_ticking()
        self._running_question = None
        self._result = answered
        answer = answered.answer
        self._short = answer.short
        self.counters.stop(elapsed=answered.elapsed_s)
        self._render_suql()
        calls = self.query_one(PassagesTable)
        self.call_after_refresh(calls.scroll_end, animate=False)
        if answer.final.plan is not None:
            self._show_plan(answer.final.plan, answer.final.number)
        self.query_one("#hqa-readback", Static).update(answer.final.readback or "— (the query could not run)")
        self._render_card()
        score = answered.score
        parts = [f"EM {score.em:.0f}", f"F1 {score.f1:.2f}"]
        if score.judged is not None:
            parts.append("judged correct" if score.judged else "judged wrong")
        counts = self.counters.counts
        reads = f"{count_rows(counts['read'], 'passage')} read ({counts['fallback']} by the fallback)"
        retries = count_rows(answer.retries, "retry").replace("retrys", "retries")
        self._set_status(f"done — {' · '.join(parts)} · {reads} · {retries}", "done")

    def _cancelled(self) -> None:
        self.attempts.cancelled()
        self._render_suql()
        self.query_one("#hqa-readback", Static).update("— (cancelled)")
        self._render_card(state="cancelled")
        c = self.counters.counts
        self._set_status(
            f"cancelled — {count_rows(c['calls'], 'LLM call')} made, "
            f"{count_rows(c['read'], 'passage')} read; no further calls",
            "cancelled",
        )

    # --- view helpers -------------------------------------------------------------------------------

    def _begin_run(self, question: HybridQuestion) -> None:
        self._running_question = question
        self._result = None
        self._short = None
        self.attempts.clear_attempts()
        self.query_one("#hqa-plan", Static).update("…")
        self.query_one("#hqa-readback", Static).update("…")
        self.query_one(PassagesTable).reset()
        self._show_call_detail()
        self.query_one("#hqa-bottom", TabbedContent).active = "hqa-calls-pane"
        self._render_suql()
        self._render_card(state="running")
        self.counters.begin()

    def _clear_run(self) -> None:
        """Another table: no run to show."""
        self.attempts.clear_attempts()
        self.counters.reset()
        self.counters.redraw()
        self._render_suql()
        self.query_one("#hqa-plan", Static).update(PLAN_HINT)
        self.query_one("#hqa-plan-pane").border_title = "Plan"
        self.query_one("#hqa-readback", Static).update("—")
        self.query_one(PassagesTable).reset("no calls yet")
        self._show_call_detail()
        self._clear_error()

    @property
    def counts(self) -> dict[str, Any]:
        """The run's counts: LLM calls, passages read, read by the fallback, that said nothing, attempts, elapsed."""
        return dict(self.counters.counts)

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
        self.attempts.show(final=self._running_question is None and self._result is not None)

    def _show_plan(self, plan: Any, attempt: int | None = None) -> None:
        self.query_one("#hqa-plan", Static).update(plan_content(plan))
        last = self.attempts.last_number
        n = attempt if attempt is not None else (last if last is not None else 1)
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
        from engines.api import SIM_KNOWS_GENERATED_ONLY

        notice = self.query_one("#hqa-notice", Static)
        on = self.simulated_on_real
        notice.display = on
        self.query_one("#hqa-plan-pane").display = not on
        if on:
            notice.update(SIM_KNOWS_GENERATED_ONLY)

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


__all__ = ["REPORTS", "Answered", "HybridArea", "Opened", "PassagesTable", "RowsTable"]
