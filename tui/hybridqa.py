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
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Checkbox, DataTable, OptionList, Select, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from engines.events import CallFailed, CallFinished, CallStarted
from tui.area import EngineReported, PaletteCommand, describe_error
from tui.history import HistoryArea
from tui.hybridqa_tables import PassagesTable, RowsTable
from tui.schema_pane import SchemaHost, SchemaPane, SchemaSubject
from tui.suql_view import layout_sql, plan_content
from tui.widgets import ErrorBox, count_rows, counter, pane, sql_content, truncate

if TYPE_CHECKING:
    from engines.hybridqa.pipeline import HybridAnswer
    from engines.hybridqa.scoring import Score
    from engines.hybridqa.session import HybridSession
    from engines.settings import Settings
    from tui.pickers import PickItem
    from worlds.hybridqa import HybridQuestion, HybridTable

SOURCES: tuple[str, ...] = ("generated", "real")
"""Where the tables come from: the generated flag-bearer world, or the real HybridQA dev tables."""
QUESTION_CHARS = 200
RUN_HINT = "Ctrl+J (or Enter in the list) runs it"
PLAN_HINT = Content.styled(
    "Run a question to see how the SUQL compiler plans the parser's query: the table conditions first, "
    "then the answer() calls on the passages of the rows they leave.",
    "$foreground-muted italic",
)
SUQL_HINT = Content.styled(
    "The parser sees the question and the table's schema only (zero-shot), and writes SUQL. "
    "When nothing comes back it parses again, shown the queries that failed (at most 2 retries).",
    "$foreground-muted italic",
)

ERROR_CLASS_NOTES: dict[str, str] = {
    "format variant": "the gold's answer in another form — the evaluation's fault",
    "gold incomplete": "another of several right answers — the evaluation's fault",
    "gold wrong": "the annotator's gold is not a correct answer — the evaluation's fault",
    "no result": "nothing came back, even after the retries",
    "wrong query": "the query's table conditions or order mean something else",
    "wrong column": "answer() read another passage column than the one holding the fact",
    "reader error": "the query was right; answer() misread a passage",
}
"""What each error class of engines.hybridqa.scoring means, in a few words (lecture 7 §6.4–§6.5)."""


# --- messages (posted from the worker threads) ------------------------------------------------


class PipelineReported(EngineReported):
    """The HybridQA pipeline (or the SUQL engine or the LLM under it) emitted an event."""


# --- what the workers return ----------------------------------------------------------------


@dataclass(frozen=True)
class Opened:
    """A session on one source; ``settings`` are set when a backend switch rebuilt it."""

    source: str
    session: HybridSession
    settings: Settings | None = None


@dataclass(frozen=True)
class Answered:
    """A question run through the pipeline, graded, and how long it took on the injected clock."""

    table: str
    question: HybridQuestion
    answer: HybridAnswer
    score: Score
    elapsed_s: float


# --- the tab ------------------------------------------------------------------------------------


class HybridArea(SchemaHost, HistoryArea):
    """The HybridQA tab (see the module docstring)."""

    REPORTED = PipelineReported
    AREA_ID = "hybridqa"
    SCHEMA_PANE_ID = "hqa-schema"  # the current table; Ctrl+T shows or hides it (tui.schema_pane)
    HISTORY_BOXES = {"hqa-questions": "question"}  # a list, not a box: no ↑/↓ walk, Ctrl+R only
    STATUS_ID = "hqa-status"
    RESULTS_IDS = ("hqa-rows", "hqa-bottom")  # the rows, else the bottom tabs (the calls may show)
    USAGE_IN_STATUS = False  # the counters line shows the run's tokens and cost
    TITLE = "HybridQA"
    BUSY_REASONS = {
        "ask": "a question is running (Esc cancels it)",
        "open": "the tables are being opened",
        "reopen": "the session is being rebuilt",
    }
    HELP = """\
## HybridQA — questions over tables with linked passages (lecture 7 §6)

A HybridQA table links some of its cells to passages (a Games to its host city's page, a flag bearer to
a biography). Here each linked column `X` gains a column `X_Info` holding the passages, so one SUQL query
can combine the table (SQL) and the passages (`answer()`). The pipeline of §6.2: the LLM **parses** the
question into SUQL from the table's schema alone (zero-shot: it sees no rows); the SUQL compiler **runs** it;
when nothing comes back it **parses again** (at most twice), shown the queries that failed; the LLM turns the
rows into a **short answer**, which is scored against the annotator's gold.

**Left:** the source (*generated*: 50 flag-bearer tables of fictional countries at real Olympic Games,
six questions each, one per HybridQA type; *real*: 14 tables of the HybridQA dev set with their
passages and 42 questions), the table, the two improvements, the questions (their type I–VI), the SUQL of
every attempt (a retried one says why) with what it returned, and the read-back.
**Right:** counters (passages read, how many by the fallback, how many said nothing), the question card —
its type, the short answer beside the gold, SQuAD's EM and F1 and, on generated tables, the *human
judgement* (it reads the hidden truth and accepts any right answer in any form; when EM is 0 the error
class says why: the evaluation's fault, or the system's), the plan of the last attempt, and below either
*Rows & passages* (the table; linked cells are underlined: highlight one, or an `_Info` cell, to read its
passage) or *LLM calls* (streaming in: every passage read — row, column, question, value — and whether the
query's answer() or the fallback read it; the line under the table shows the highlighted call in full).

**The improvements** (switch them off for the ablation): *fallback* — when answer() finds nothing in the
column the parser chose, the executor asks the row's other passage columns (the parser never knows);
*retry* — parse again when nothing comes back.

**Real tables and the simulated LLM:** the simulated parser and reader know only the generated worlds, so
with the `sim` backend real tables can be browsed but not run (the tab says so). With `claude` they run.

| key | what it does |
| --- | --- |
| Ctrl+Enter / Ctrl+J, Enter (in the questions) | run the chosen question |
| ↑ / ↓ (in the questions) | choose a question: its type and gold show in the card |
| f / r | switch the fallback / the retry on or off (for the next run) |
| s | switch the source: generated ↔ real tables |
| [ / ] | previous / next table |
| Esc | cancel the running question: no further LLM call; what was read stays on screen |
| Ctrl+L | search every question of every table of the source (words of the question, its type, the table); Enter chooses it (it does not run it) |
| Ctrl+R | the questions you ran (kept across restarts), searchable; Enter chooses it again |
| Tab / Shift+Tab | move between the controls, the questions and the tables |

The questions are the data set's (each has its gold answer), so there is no free question box: ↑ / ↓ in the
list choose among the table's questions, and the history (Ctrl+R) brings back the ones you ran.

In the command palette (Ctrl+P), type *HybridQA* to run, switch the source or an improvement, open a table,
or open the examples (*HybridQA: examples…*) or the history.
"""

    BINDINGS = [
        Binding(
            "ctrl+enter,ctrl+j",
            "run",
            "Run",
            key_display="^⏎/^J",
            tooltip="Run the chosen question through the pipeline (Ctrl+J for terminals without Ctrl+Enter).",
        ),
        Binding(
            "escape", "cancel", "Cancel", tooltip="Cancel the running question: the engine makes no further LLM call."
        ),
        Binding(
            "f",
            "toggle('fallback')",
            "Fallback",
            tooltip="Switch improvement 1 on or off: answer() tries the row's other passage columns.",
        ),
        Binding(
            "r",
            "toggle('retry')",
            "Retry",
            tooltip="Switch improvement 2 on or off: parse again when nothing comes back.",
        ),
        Binding(
            "s", "switch_source", "Source", tooltip="Switch between the generated tables and the real HybridQA tables."
        ),
        Binding(
            "left_square_bracket",
            "step_table(-1)",
            "Prev table",
            key_display="[",
            show=False,
            tooltip="Show the previous table.",
        ),
        Binding(
            "right_square_bracket",
            "step_table(1)",
            "Next table",
            key_display="]",
            show=False,
            tooltip="Show the next table ([ shows the previous one).",
        ),
    ]

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self.source = "generated"
        self.fallback = True
        self.retry = True
        self._sessions: dict[str, HybridSession] = {}
        self._session_lock = threading.Lock()  # opening / swapping sessions
        self._run_lock = threading.Lock()  # held while the engine runs (closing waits for it)
        self._tables: dict[str, str] = {}  # source -> the table shown
        self._questions: dict[str, str] = {}  # table -> the question chosen
        self._table: HybridTable | None = None
        self._question: HybridQuestion | None = None
        self._running_question: HybridQuestion | None = None
        self._result: Answered | None = None
        self._attempts: list[dict[str, Any]] = []
        self._short: str | None = None
        self._opening: str | None = None  # the source whose session is being opened

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
                yield pane("SUQL", Static(SUQL_HINT, id="hqa-suql"), id="hqa-suql-pane")
                yield ErrorBox(id="hqa-error")
                yield pane("Read-back", Static("—", id="hqa-readback", markup=False), id="hqa-readback-pane")
            with Vertical(id="hqa-right"):
                yield Static(id="hqa-counters")
                card = Static(id="hqa-card")
                card.border_title = "Question"
                yield card
                notice = Static(id="hqa-notice", markup=False)
                notice.border_title = "Real tables need the claude backend"
                notice.display = False
                yield notice
                yield pane("Plan", Static(PLAN_HINT, id="hqa-plan"), id="hqa-plan-pane")
                with TabbedContent(id="hqa-bottom", initial="hqa-rows-pane"):
                    with TabPane("Rows & passages", id="hqa-rows-pane"):
                        yield RowsTable(id="hqa-rows")
                        yield pane("Passage", Static("—", id="hqa-passage"), id="hqa-passage-pane")
                    with TabPane("LLM calls · passages read", id="hqa-calls-pane"):
                        yield PassagesTable(id="hqa-calls")
                        yield Static(id="hqa-call-detail")
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
        self.run_engine(lambda: self._open_work(self.source), name="open")

    def on_unmount(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
        self._stop_ticker()
        acquired = self._run_lock.acquire(timeout=2.0)
        try:
            with self._session_lock:
                for session in self._sessions.values():
                    session.close()
                self._sessions.clear()
        finally:
            if acquired:
                self._run_lock.release()

    def focus_default(self) -> None:
        self.query_one("#hqa-questions", OptionList).focus()

    # --- public state -------------------------------------------------------------------------------

    @property
    def session(self) -> HybridSession | None:
        """The session of the current source (None until it is open)."""
        return self._sessions.get(self.source)

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
        self.run_engine(lambda: self._ask_work(source, table, question, improvements, cancel), name="ask")
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
        if source in self._sessions:
            self._adopt_source()
            return True
        self._set_status(f"opening the {source} tables…", "running")
        self._opening = source
        self.run_engine(lambda: self._open_work(source), name="open")
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
        self.run_engine(lambda: self._reopen_work(settings, source), name="reopen")

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

    def commands(self) -> Iterable[PaletteCommand]:
        question = self._question
        what = f"“{truncate(question.question, 60)}”" if question else "the chosen question"
        yield PaletteCommand("HybridQA: run the chosen question", f"Runs {what} (Ctrl+J).", self.run_question)
        if self.is_busy:
            yield PaletteCommand(
                "HybridQA: cancel the running question", "No further LLM call is made (Esc).", self.cancel
            )
        for source in SOURCES:
            current = " (current)" if source == self.source else ""
            what = (
                "the 50 generated flag-bearer tables"
                if source == "generated"
                else "the real HybridQA dev tables (they run with the claude backend)"
            )
            yield PaletteCommand(
                f"HybridQA: source {source}{current}", f"Show {what} (s).", lambda s=source: self.set_source(s)
            )
        for name, help_text in (
            ("fallback", "answer() tries the row's other passage columns"),
            ("retry", "parse again when nothing comes back"),
        ):
            on = getattr(self, name)
            yield PaletteCommand(
                f"HybridQA: switch the {name} {'off' if on else 'on'}",
                f"Improvement {'1' if name == 'fallback' else '2'}: {help_text} ({name[0]}).",
                lambda n=name, v=not on: self.set_improvement(n, v),
            )
        yield PaletteCommand("HybridQA: focus the questions", "Choose with ↑/↓, run with Enter.", self.focus_default)
        yield PaletteCommand(
            "HybridQA: focus the rows", "Highlight a linked (underlined) cell to read its passage.", self._focus_rows
        )
        yield from self.history_commands()
        session = self.session
        if session is not None:
            for t in session.world.tables:
                current = " (current)" if self._table is not None and t.name == self._table.name else ""
                yield PaletteCommand(
                    f"HybridQA: table {t.table_id}{current}",
                    f"{t.title} · {count_rows(len(t.rows))}, {len(t.questions)} questions",
                    lambda n=t.name: self.set_table(n),
                )

    # --- examples and history (tui.history) ---------------------------------------------------------

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
        self._bring_back(*value)

    def history_chosen(self, entry: Any) -> None:
        meta = entry.meta
        self._bring_back(str(meta.get("source", "")), str(meta.get("table", "")), str(meta.get("question_id", "")))

    def _history_label(self, entry: Any, several: bool) -> str:
        return f"{entry.meta.get('source', '?')} · {entry.meta.get('table', '?')}"

    def _bring_back(self, source: str, table: str, question_id: str) -> None:
        """Show ``table`` and choose its question ``question_id`` (of the shown source), without running it."""
        if source != self.source:
            self.notify(
                f"That question is on the {source} tables: switch the source (s), then choose it again.",
                title="HybridQA",
                severity="warning",
            )
            return
        try:
            if self.set_table(table):
                self.choose_question(question_id)
        except KeyError:
            self.notify(f"The question {question_id} of {table} is not here any more.", title="HybridQA")
            return
        self.query_one("#hqa-questions", OptionList).focus()

    # --- worker bodies (run in threads) ------------------------------------------------------------

    def _open(self, settings: Settings, source: str) -> HybridSession:
        from engines.hybridqa.session import open_hybridqa

        return open_hybridqa(settings, source=source, clock=self.clock)

    def _open_work(self, source: str) -> Opened:
        with self._session_lock:
            session = self._sessions.get(source)
            if session is None:
                session = self._sessions[source] = self._open(self.settings, source)
            return Opened(source, session)

    def _reopen_work(self, settings: Settings, source: str) -> Opened:
        fresh = self._open(settings, source)
        with self._session_lock:
            old, self._sessions = self._sessions, {source: fresh}
        with self._run_lock:
            for session in old.values():
                session.close()
        return Opened(source, fresh, settings)

    def _ask_work(
        self, source: str, table: str, question: HybridQuestion, improvements: Any, cancel: threading.Event
    ) -> Answered:
        with self._session_lock:
            session = self._sessions[source]
        with self._run_lock:
            start = self._now()
            answer = session.pipeline.ask(
                table, question.question, improvements=improvements, emit=self._emit, cancel=cancel
            )
            score = session.grade(question, answer)
            return Answered(table, question, answer, score, self._now() - start)

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

    # --- worker outcomes (main thread) ---------------------------------------------------------------

    def worker_succeeded(self, name: str, result: Any) -> None:
        if name in ("open", "reopen"):
            self._opening = None
            opened: Opened = result
            if opened.settings is not None:
                self.settings = opened.settings
            if opened.source == self.source:
                self._adopt_source()
            if name == "reopen":
                self._set_status(f"ready — now using the {self.settings.backend} backend", "idle")
        elif name == "ask":
            self._cancel = None
            self._finish(result)

    def worker_failed(self, name: str, error: BaseException) -> None:
        from engines.errors import Cancelled

        self._stop_ticker()
        if name == "ask":
            self._cancel = None
            self._running_question = None
            self._counts["running"] = False
            self._render_counters()
            if isinstance(error, Cancelled):
                self._cancelled()
                return
            self._show_error("Error", describe_error(error))
            self._render_card(state="error")
            self._set_status("error — see the error pane", "error")
            return
        self._opening = None
        message = describe_error(error)
        if name == "open":
            self._show_error(f"Could not open the {self.source} tables", message)
            if self.source not in self._sessions:  # stay on the tables that are open
                previous = next((s for s in SOURCES if s in self._sessions), None)
                if previous is not None:
                    self.source = previous
                    self._sync_source_select()
                    self._show_notice()
        else:
            self._show_error("Could not rebuild the session", message)
        self._set_status("error — see the error pane", "error")

    def _adopt_source(self) -> None:
        """The current source's session is open: fill the table select and show its table."""
        session = self.session
        assert session is not None
        tables = session.world.tables
        select = self.query_one("#hqa-table", Select)
        with self.prevent(Select.Changed):
            select.set_options([(Content(t.table_id), t.name) for t in tables])
        name = self._tables.get(self.source) or (tables[0].name if tables else None)
        if name is None:
            self._show_error("No tables", f"The {self.source} source holds no table.")
            return
        self._tables[self.source] = name
        self._table = None
        self._show_table(session.world.table(name))
        self._show_notice()

    def _show_table(self, table: HybridTable) -> None:
        self._table = table
        self.schema_changed()  # the schema pane follows the table (tui.schema_pane)
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
            options.set_options([_question_option(q) for q in table.questions])
        options.border_subtitle = f"{len(table.questions)} questions · {truncate(table.table_id, 32)}"
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
        self._stop_ticker()
        self._running_question = None
        self._result = answered
        answer = answered.answer
        self._short = answer.short
        self._counts.update(elapsed=answered.elapsed_s, running=False)
        self._render_counters()
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
        reads = f"{count_rows(self._counts['read'], 'passage')} read ({self._counts['fallback']} by the fallback)"
        retries = count_rows(answer.retries, "retry").replace("retrys", "retries")
        self._set_status(f"done — {' · '.join(parts)} · {reads} · {retries}", "done")

    def _cancelled(self) -> None:
        for attempt in self._attempts:
            if attempt["state"] == "running":
                attempt["state"] = "cancelled"
        self._render_suql()
        self.query_one("#hqa-readback", Static).update("— (cancelled)")
        self._render_card(state="cancelled")
        c = self._counts
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
        from engines.hybridqa.scoring import EVALUATION_CLASSES

        card = self.query_one("#hqa-card", Static)
        question = self._running_question or self._question
        muted = "$foreground-muted"
        if question is None:
            card.border_title = "Question"
            card.update(Content.styled("choose a table and a question", "$foreground-muted italic"))
            return
        if question.qtype:
            from worlds.hybridqa import TYPE_TITLES

            card.border_title = f"Question · type {question.qtype}"
            kind = Content.assemble(
                Content.styled(f"type {question.qtype}  ", "bold $text-accent"),
                Content.styled(TYPE_TITLES.get(question.qtype, ""), "$text-accent"),
            )
        else:
            card.border_title = "Question · real HybridQA"
            kind = Content.styled("a real HybridQA dev question (the dataset does not label its type)", muted)
        result = self._result if self._result is not None and self._result.question is question else None
        hint: Content | None = None
        if state == "running":
            answer = Content.styled("…", muted)
            hint = Content.styled("running… — Esc cancels", "$text-warning")
        elif state == "cancelled":
            answer = Content.styled("cancelled (Esc)", "$text-warning")
        elif state == "error":
            answer = Content.styled("error — see the error pane", "$text-error")
        elif self._short is not None and (result is not None or self._running_question is not None):
            answer = (
                Content.styled(self._short, "bold $text-success")
                if self._short
                else Content.styled("(nothing came back)", "italic $text-warning")
            )
        else:
            answer = Content.styled("—", muted)
            if self.simulated_on_real:
                hint = Content.styled(
                    "not run: the simulated LLM cannot answer on real tables (see below)", "$text-warning"
                )
            else:
                hint = Content.styled(f"not run yet — {RUN_HINT}", "$foreground-muted italic")
        lines = [
            kind,
            Content(truncate(question.question, QUESTION_CHARS)),
            Content.assemble(
                Content.styled("answer ", muted),
                answer,
                Content.styled("   gold ", muted),
                Content.styled(question.gold or "—", "bold"),
            ),
        ]
        if result is not None:
            score = result.score
            em_style = "bold $text-success" if score.em == 1 else "bold $text-error"
            scores = [
                Content.styled("EM ", muted),
                Content.styled(f"{score.em:.0f}", em_style),
                Content.styled("   F1 ", muted),
                Content.styled(f"{score.f1:.2f}", "bold"),
                Content.styled("   human judgement ", muted),
            ]
            if score.judged is None:
                scores.append(Content.styled("— (real tables have no hidden truth)", muted))
            else:
                scores.append(
                    Content.styled("✓ correct", "bold $text-success")
                    if score.judged
                    else Content.styled("✗ wrong", "bold $text-error")
                )
            if score.error:
                fault = "$text-warning" if score.error in EVALUATION_CLASSES else "$text-error"
                scores += [
                    Content.styled("   ", muted),
                    Content.styled(score.error, f"bold {fault}"),
                    Content.styled(f": {ERROR_CLASS_NOTES.get(score.error, '')}", muted),
                ]
            lines.append(Content.assemble(*scores))
        elif hint is not None:
            lines.append(hint)
        card.update(Content("\n").join(lines))

    def _render_suql(self) -> None:
        pane = self.query_one("#hqa-suql-pane")
        view = self.query_one("#hqa-suql", Static)
        if not self._attempts:
            pane.border_title = "SUQL"
            pane.border_subtitle = ""
            view.update(SUQL_HINT)
            return
        muted = "$foreground-muted"
        blocks: list[Content] = []
        last = self._attempts[-1]["number"]
        for attempt in self._attempts:
            n = attempt["number"]
            head = [Content.styled(f"attempt {n}", "bold $text-accent")]
            state = attempt["state"]
            if state == "running":
                head.append(Content.styled(" · running…", "$text-warning"))
            elif state == "cancelled":
                head.append(Content.styled(" · cancelled", "$text-warning"))
            elif attempt.get("error"):
                head.append(Content.styled(f" · ✗ could not run: {truncate(attempt['error'], 60)}", "$text-error"))
            elif attempt.get("empty"):
                what = "no rows" if not attempt.get("rows") else "no value in the rows"
                head.append(Content.styled(f" · ✗ {what}", "$text-error"))
            else:
                rows = attempt.get("rows") or ()
                values = [str(v) for row in rows for v in row if v is not None and str(v).strip()]
                shown = ", ".join(truncate(v, 24) for v in values[:3]) + (", …" if len(values) > 3 else "")
                head.append(Content.styled(f" · ✓ {count_rows(len(rows))}: ", "$text-success"))
                head.append(Content.styled(shown, "bold"))
            if "retried" in attempt:
                head.append(Content.styled(" → retried", "bold $text-warning"))
            elif n == last and state == "done" and self._running_question is None and self._result is not None:
                head.append(Content.styled(" · final", muted))
            blocks.append(Content.assemble(*head))
            blocks.append(sql_content(layout_sql(attempt["suql"])))
        view.update(Content("\n").join(blocks))
        retries = len(self._attempts) - 1
        pane.border_title = f"SUQL · {count_rows(len(self._attempts), 'attempt')}"
        pane.border_subtitle = (
            "no retry"
            if retries == 0
            else f"{retries} {'retry' if retries == 1 else 'retries'} · nothing came back before"
        )

    def _show_plan(self, plan: Any, attempt: int | None = None) -> None:
        self.query_one("#hqa-plan", Static).update(plan_content(plan))
        n = attempt if attempt is not None else (self._attempts[-1]["number"] if self._attempts else 1)
        self.query_one("#hqa-plan-pane").border_title = f"Plan · attempt {n}"

    def _show_passage(self) -> None:
        rows = self.query_one("#hqa-rows", RowsTable)
        title, body = rows.passage()
        self.query_one("#hqa-passage-pane").border_title = title
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


def _question_option(question: HybridQuestion) -> Option:
    badge = f"{question.qtype:<4}" if question.qtype else "·   "
    return Option(
        Content.assemble(Content.styled(badge, "bold $text-accent"), question.question), id=question.question_id
    )


__all__ = ["Answered", "HybridArea", "Opened", "PassagesTable", "PipelineReported", "RowsTable"]
