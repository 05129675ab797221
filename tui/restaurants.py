"""The Restaurants tab: a dialogue with the Text-to-SQL agent of lecture 6 (§3.4).

Left: the dialogue, the question box and a raw-SQL editor.  Right: one pane per
step of the agent — the input classifier, the SQL the parser wrote, the SQL after
``classify()`` rewrote enum values, the read-back sentence, the results and the
LLM calls as they stream in.

All engine work runs in thread workers of the group ``"restaurants"``.  The
agent's ``emit`` callback posts the typed message of each event (:data:`REPORTS`,
:mod:`tui.messages`; thread-safe), so the panes fill while the turn runs; Esc sets
the turn's cancel flag and the engine stops at once, an LLM call in flight included
(engines.llm.waiting: the simulated latency and a real request are abandoned).

The tab's state is :class:`RestaurantsArea`'s; what it shares with other tabs it owns:
the history of what was asked and run (:class:`~tui.history.BoxHistory`), the schema
pane (:class:`~tui.schema_pane.SchemaPane`) and the status line.  Its parts tell it
what happened in messages: Enter in the question box (:class:`~tui.messages.QuestionSubmitted`),
Ctrl+Enter in the editor (``SqlEditor.RunRequested``), a picker's choice.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widget import AwaitMount, Widget
from textual.widgets import Input, Select, Static

from engines.api import COURSE_DIALOGUE, SAMPLE_DIALOGUE, events
from tui import messages as m
from tui.area import PaletteCommand, StatusLine, WorkArea, describe_error
from tui.history import HISTORY_BINDINGS, BoxHistory, HistoryEntry
from tui.schema_pane import SCHEMA_BINDING, SchemaPane, SchemaSubject, first_table_sql
from tui.widgets import (
    CallsTable,
    QuestionBox,
    ResultsTable,
    SqlEditor,
    SqlView,
    TextView,
    as_text,
    count_rows,
    location_in,
)

if TYPE_CHECKING:
    from engines.api import RestaurantSession, Settings, TurnResult
    from engines.api import SqlQueryResult as QueryResult
    from tui.pickers import PickItem

CLASSIFY_METHODS: tuple[str, ...] = ("exact", "similarity", "llm_all", "retrieve_llm")
"""The methods of ``engines.sql.classify`` (lecture 6 §3.3)."""

SAMPLE_QUESTIONS: tuple[str, ...] = (
    "Show me a café in Palo Alto",
    "Any coffee shop in Mountain View?",
    "Where can I get sichuan food in Sunnyvale?",
    "Cheap bbq in the Mission District",
    "What are the 3 best rated italian restaurants in Menlo Park?",
)
"""Single questions where ``classify()`` has work to do (lecture 6 §3.2)."""

SAMPLE_SQL = "SELECT name, rating, price FROM restaurants\nWHERE location = 'Palo Alto'\nORDER BY rating DESC LIMIT 5"
"""What the raw-SQL editor holds at first: a query to run or edit."""
QUESTION_PLACEHOLDER = "Ask about restaurants — e.g. Show me a café in Palo Alto"
EDITOR_TITLE = "Raw SQL · Ctrl+Enter or Ctrl+J runs it"
DIALOGUE_HINT = (
    "Ask about the 600 restaurants of Palo Alto, Mountain View, Menlo Park, Sunnyvale, "
    "Bernal Heights and the Mission District — or press Ctrl+P for the lecture's sample dialogue."
)


WORLDS: dict[str, str] = {
    "restaurants": "restaurants · Text-to-SQL",
    "restaurants-suql": "restaurants · SUQL agent",
    "courses": "courses · SUQL agent",
}
"""What the agent talks about, and which agent: the 600 restaurants with the Text-to-SQL agent
(lecture 6) or the SUQL agent (lecture 7 §4), or the course assistant's C1-C6 (a SUQL agent)."""
OWN_DATA_WORLDS: dict[str, str] = {
    "restaurants": "your data · Text-to-SQL",
    "restaurants-suql": "your data · SUQL agent",
}
"""With ``--db SOURCE`` the two restaurant agents talk about your tables instead."""
OWN_DATA_PLACEHOLDER = "Ask about your data — name a table, a column or one of its values"
OWN_DATA_HINT = (
    "Ask about your own tables (the Schema pane above shows what the engine found: each column's type and "
    "role). With the sim backend the agent is a weak, honest reader: it understands column names, the values "
    "of small enumerations and numbers; for real answers run the app with a real backend (--backend claude)."
)
TO_VERIFY_SHOWN = 5
"""Rows a reply lists as "to verify" (the rest are counted)."""
SUQL_HINT = (
    " The SUQL agent turns wishes no column holds (family-friendly, spicy, a view, open late) into "
    "answer() conditions over the reviews; rows whose reviews do not say come back as to verify."
)
SUQL_QUESTIONS: tuple[str, ...] = (
    "Find me a spicy vegan place in Sunnyvale with a view",
    "Any chinese restaurants in Mountain View that are open late?",
    "A family-friendly italian restaurant in Palo Alto",
)
"""Single questions where the SUQL agent writes answer() conditions (lecture 7 §4)."""
COURSE_SQL = (
    "SELECT o.course_id, o.term, m.day, m.start_min, m.end_min\nFROM offerings o JOIN meetings m ON m.offering_id = o.id\n"
    "ORDER BY o.course_id, m.day"
)
COURSE_PLACEHOLDER = "Ask about courses — e.g. Which autumn courses fit my schedule and are practical?"
COURSE_HINT = (
    "Ask about the courses C1-C6: which fit your schedule (and are practical), whether a course is practical, "
    "when it meets, its prerequisites, how many courses have reviews. Unknown answers come back as to verify."
)


REPORTS = m.Reports(
    lambda: {
        **m.llm_calls(),
        events.TurnStarted: m.TurnStarted,
        events.InputClassified: m.InputClassified,
        events.QueryParsed: m.QueryParsed,
        events.ValuesClassified: m.ValuesClassified,
        events.QueryRewritten: m.QueryRewritten,
        events.QueryExecuted: m.QueryExecuted,
        events.QueryFailed: m.QueryFailed,
        events.ReadBackWritten: m.ReadBackWritten,
    }
)
"""The agent's events the tab shows, each as its typed message (the rest, ``TurnFinished``, it does not)."""


@dataclass(frozen=True)
class SqlRan:
    """What a raw-SQL worker returns."""

    sql: str
    result: QueryResult
    readback: str


class RestaurantsArea(WorkArea):
    """The Restaurants tab (see the module docstring)."""

    AREA_ID = "restaurants"
    HISTORY_BOXES = {"question": "question", "sql-editor": "sql"}
    RESULTS_IDS = ("results",)
    REPORTS = REPORTS
    TITLE = "Restaurants"
    HELP = """\
## Restaurants — the Text-to-SQL agent (lecture 6)

A dialogue with an agent over one table of 600 restaurants. **Left:** the dialogue (newest at the
bottom), the question box and a raw-SQL editor. **Right:** what each step of the agent did —
*Input classifier* (does the turn need the database, and why), *SQL (parser)* (what the semantic
parser wrote), *SQL (after classify)* (the statement that ran, with the values `classify()` chose,
e.g. `coffee → coffee & tea, cafe`), *Read-back* (the query said back in words), *Results* (the rows;
long values are cut at 40 characters, highlight a cell to see all of it) and *LLM calls* (every call,
streaming in as it starts and finishes: its input, output, latency and whether the cache answered).

**The pipeline.** Each utterance goes to the input classifier; a turn that needs no data is answered
directly. Otherwise the semantic parser writes one SQL query from the utterance, the dialogue so far
and the schema; `classify()` maps the enum values the user said onto the real ones (`'coffee'` becomes
`'coffee & tea'` or `'cafe'`) using the method you choose (`exact`, `similarity`, `llm_all`,
`retrieve_llm`); the statement runs in a sandboxed, read-only DuckDB; a read-back sentence is written
from the query, and the reply is written only from the rows — no rows, no made-up answer.

| key | what it does |
| --- | --- |
| Enter (in the question box) | ask the question |
| Ctrl+Enter / Ctrl+J (in the SQL editor) | run the SQL through the sandbox (no LLM) |
| ↑ / ↓ (in the empty question box; at the editor's first / last line) | the questions asked / the SQL run before |
| Ctrl+R | search what you asked or ran (the focused box's history); Enter puts it back in the box |
| Ctrl+L | the examples: the sample dialogue, sample questions, sample SQL; Enter loads one |
| Esc | stop the running turn at once, even in the middle of an LLM call (what it showed stays) |
| Tab / Shift+Tab | move between the question box, the editor and the tables |

**World.** The selector above the dialogue chooses the agent and its world. *restaurants · SUQL agent*
is lecture 7 §4's agent: the same dialogue loop writing SUQL, so wishes no column holds (family-friendly,
spicy, a view) become `answer()` conditions over the reviews, run by the SUQL compiler; rows whose
reviews do not say come back *to verify*. *courses · SUQL agent* is the course assistant (notes
002-003, C1-C6): which courses fit your schedule (the `NOT EXISTS` conflict check), whether they are
practical, meetings, prerequisites and counts. Switching clears the dialogue; raw SQL runs on the
chosen world.

**History.** What you ask and the SQL you run are kept (in the user data folder, per tab) and come back
after a restart: ↑ in the empty question box shows the last question asked, ↑ again the one before; in the
SQL editor ↑ walks the SQL run before only from the editor's first line, and only while the editor holds no
edits of yours (the sample, an example, a query just run), so it never takes a cursor move; ↓ walks back, and
past the newest the text you started from returns. Ctrl+R searches it all.

In the command palette (Ctrl+P), type *Restaurants* for the sample dialogue of the lecture (one turn at
a time), the examples and the history, clearing the dialogue, the SQL editor and the classify method.
"""

    BINDINGS = [
        *HISTORY_BINDINGS,
        Binding(
            "escape",
            "cancel",
            "Cancel",
            tooltip="Stop the running turn at once, even in the middle of an LLM call.",
        ),
        SCHEMA_BINDING,  # Ctrl+T shows or hides the schema pane (tui.schema_pane)
    ]

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self._session: RestaurantSession | None = None
        self._session_lock = threading.Lock()
        self._classified: list[events.ValuesClassified] = []  # what classify() did in this turn
        self._rewritten = False  # this turn reached the classify() rewrite
        self._pending_utterance: str | None = None  # the question of the running turn
        self._sample_turn = 0
        self._world = "restaurants"  # what the agent talks about, and which agent (WORLDS)
        self._db = settings.db  # your own tables (--db SOURCE) instead of the restaurants, or None
        self._sql_origin = SAMPLE_SQL  # the SQL the app put in the editor (↑ may replace it unedited)
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
        enumerations the agent classifies."""
        session = self._session
        if session is None:
            return None
        return SchemaSubject.of_session(session, self._world, getattr(session.agent, "enum_fields", {}))

    # --- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="rest-columns"):
            with Vertical(id="rest-left"):
                world = Select(
                    [(f"World · {self._world_label(name)}", name) for name in WORLDS],
                    value=self._world,
                    allow_blank=False,
                    compact=True,
                    id="rest-world",
                )
                world.tooltip = (
                    "What the agent talks about, and which agent: the restaurants with the Text-to-SQL agent "
                    "or the SUQL agent, or the course assistant's C1-C6."
                )
                yield world
                yield SchemaPane(id="rest-schema", shown=self._db is not None)  # at first only over your data (--db)
                dialogue = VerticalScroll(id="dialogue")
                dialogue.border_title = "Dialogue"
                dialogue.border_subtitle = f"classify: {self.settings.classify_method}"
                with dialogue:
                    yield Static(OWN_DATA_HINT if self._db else DIALOGUE_HINT, id="dialogue-hint", markup=False)
                editor = SqlEditor(SAMPLE_SQL, id="sql-editor", soft_wrap=True, tab_behavior="focus")
                editor.cursor_blink = self.cursor_blink
                editor.schema = self.schema_subject  # completion: the tables and columns the schema pane shows
                editor.border_title = EDITOR_TITLE
                yield editor
                error = TextView(id="error")
                error.border_title = "Error"
                error.display = False
                yield error
            with Vertical(id="rest-right"):
                yield _pane("Input classifier", TextView("—", id="route"), id="route-pane")
                with Horizontal(id="sql-row"):
                    yield _pane("SQL (parser)", SqlView("—", id="sql-parsed"), id="parsed-pane")
                    yield _pane("SQL (after classify)", SqlView("—", id="sql-rewritten"), id="rewritten-pane")
                yield _pane("Read-back", TextView("—", id="readback"), id="readback-pane")
                results = ResultsTable(id="results")
                results.border_title = "Results"
                yield results
                calls = CallsTable(id="calls")
                calls.border_title = "LLM calls"
                yield calls
        question = QuestionBox(placeholder=OWN_DATA_PLACEHOLDER if self._db else QUESTION_PLACEHOLDER, id="question")
        question.cursor_blink = self.cursor_blink
        question.border_title = "Question · Enter asks · ↑ history · ^R search · ^L examples"
        yield question
        yield StatusLine(id="status")

    def on_mount(self) -> None:
        self.query_one(ResultsTable).show_nothing("no query yet")
        self.query_one(CallsTable).reset("no calls yet")
        self._set_status("opening your data…" if self._db else "opening the restaurant database…", "running")
        self.run_engine(self._open_session, name="open", done=self._opened, failed=self._open_failed, busy=None)

    def on_unmount(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
        # Quitting never waits for a session being opened (the lock is held while it is built): that one is
        # left to the process's end; an open one is closed now.
        if not self._session_lock.acquire(blocking=False):
            return
        try:
            if self._session is not None:
                self._session.close()
                self._session = None
        finally:
            self._session_lock.release()

    def focus_default(self) -> None:
        self.query_one("#question", Input).focus()

    # --- actions (public: the app, the palette and the tests call them) ----------------------

    def ask(self, utterance: str) -> bool:
        """Start a turn of the dialogue.  False (and a notice) when another one runs."""
        utterance = utterance.strip()
        if not utterance:
            return False
        if not self._free("ask"):
            return False
        self._clear_error()
        self.runs.record("question", utterance)
        self._add_entry("user", "You", utterance)
        self._pending_utterance = utterance
        self._set_status("running… — Esc cancels", "running")
        self._cancel = threading.Event()
        cancel = self._cancel
        self.run_engine(
            lambda: self._ask_work(utterance, cancel),
            name="turn",
            done=self._finish_turn,
            failed=self._turn_failed,
            busy="a turn is running (Esc cancels it)",
        )
        self.refresh_bindings()
        return True

    def run_sql(self, sql: str | None = None) -> bool:
        """Run ``sql`` (default: the editor's text) through the sandbox, without the LLM."""
        text = self.query_one("#sql-editor", SqlEditor).text if sql is None else sql
        if not text.strip():
            self._show_error("Nothing to run", "The SQL editor is empty: write a SELECT query first.")
            return False
        if not self._free("run SQL"):
            return False
        self._clear_error()
        self.runs.record("sql-editor", text)
        self._set_status("running the SQL…", "running")
        self.run_engine(
            lambda: self._sql_work(text),
            name="sql",
            done=self._finish_sql,
            failed=self._sql_failed,
            busy="a query is running",
        )
        return True

    def cancel(self) -> bool:
        """Stop the running turn at once (an LLM call in flight is abandoned)."""
        return self.request_cancel("stopping…")

    def clear_dialogue(self) -> None:
        """Forget the dialogue (the agent's history too) and empty the panes."""
        if not self._free("clear the dialogue"):
            return
        if self._session is not None:
            self._session.agent.reset()
        self._sample_turn = 0
        dialogue = self.query_one("#dialogue", VerticalScroll)
        dialogue.query(".entry").remove()
        dialogue.query_one("#dialogue-hint").display = True
        self._reset_panes(blank="—")
        self.query_one(ResultsTable).show_nothing()
        self.query_one(CallsTable).reset()
        self._clear_error()
        self._set_status("dialogue cleared — ready", "idle")

    @property
    def sample_dialogue(self) -> tuple[str, ...]:
        """The sample dialogue of the current world: lecture 6 §3.4's, or the course assistant's."""
        return COURSE_DIALOGUE if self._world == "courses" else SAMPLE_DIALOGUE

    def ask_next_sample_turn(self) -> None:
        """Ask the next turn of the world's sample dialogue (after the last, start over)."""
        dialogue = self.sample_dialogue
        if self._sample_turn >= len(dialogue):
            self.clear_dialogue()
            if self.is_busy:
                return
        if self.ask(dialogue[self._sample_turn]):
            self._sample_turn += 1

    def load_question(self, question: str) -> None:
        """Put ``question`` in the question box (without asking it)."""
        box = self.query_one("#question", Input)
        box.value = question
        box.cursor_position = len(question)
        box.focus()

    def focus_sql_editor(self) -> None:
        self.query_one("#sql-editor", SqlEditor).focus()

    def set_classify_method(self, method: str) -> None:
        """Choose how ``classify()`` maps enum values from the next turn on."""
        if method not in CLASSIFY_METHODS:
            raise ValueError(f"unknown classify method {method!r}")
        self.settings = self.settings.model_copy(update={"classify_method": method})
        if self._session is not None:
            self._session.agent.classify_method = method
        self.query_one("#dialogue").border_subtitle = f"classify: {method}"
        self.notify(f"classify() now uses the {method} method.", title="Restaurants")

    def set_world(self, world: str) -> bool:
        """Talk about another world: the session is rebuilt and the dialogue cleared."""
        if world not in WORLDS:
            raise ValueError(f"unknown world {world!r}")
        if world == self._world:
            return False
        if not self._free("switch the world"):
            self.query_one("#rest-world", Select).value = self._world
            return False
        self._world = world
        self.query_one("#rest-world", Select).value = world
        self.clear_dialogue()
        courses = world == "courses"
        own = self._db is not None and not courses
        self.query_one("#question", Input).placeholder = (
            COURSE_PLACEHOLDER if courses else OWN_DATA_PLACEHOLDER if own else QUESTION_PLACEHOLDER
        )
        hint = OWN_DATA_HINT if own else DIALOGUE_HINT
        self.query_one("#dialogue-hint", Static).update(
            COURSE_HINT if courses else hint + (SUQL_HINT if world == "restaurants-suql" and not own else "")
        )
        editor = self.query_one("#sql-editor", SqlEditor)
        if editor.text in (SAMPLE_SQL, COURSE_SQL):
            editor.text = self._sql_origin = COURSE_SQL if courses else SAMPLE_SQL
        self._set_status(f"opening {self._world_label(world)}…", "running")
        settings = self.settings
        self.run_engine(
            lambda: self._reopen_work(settings, carry=False),
            name="world",
            done=self._world_opened,
            failed=lambda error: self._fail(error, f"Could not open {self._world_label(self._world)}"),
            busy="the session is being rebuilt for the new world",
        )
        return True

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id != "rest-world" or event.value is Select.BLANK:
            return
        event.stop()
        self.set_world(str(event.value))

    def use_settings(self, settings: Settings) -> None:
        """Rebuild the session with ``settings`` (another backend); the dialogue carries over."""
        settings = settings.model_copy(update={"classify_method": self.settings.classify_method})
        self._set_status(f"switching to the {settings.backend} backend…", "running")
        self.run_engine(
            lambda: self._reopen_work(settings),
            name="reopen",
            done=self._reopened,
            failed=lambda error: self._fail(error, "Could not switch the backend"),
            busy="the session is being rebuilt for the new backend",
        )

    def action_cancel(self) -> None:
        self.cancel()

    def action_toggle_schema(self) -> None:
        pane = self.query_one(SchemaPane)
        if pane.display and pane.has_focus:
            self.focus_default()
        pane.toggle(self.schema_subject())

    def on_question_submitted(self, message: m.QuestionSubmitted) -> None:
        message.stop()
        if self.ask(message.text):
            message.box.value = ""

    def on_sql_editor_run_requested(self, event: SqlEditor.RunRequested) -> None:
        event.stop()
        self.run_sql(event.sql)

    def commands(self) -> Iterable[PaletteCommand]:
        dialogue = self.sample_dialogue
        n = len(dialogue)
        which = (
            "the course assistant's sample dialogue (note 003)"
            if self._world == "courses"
            else "the 8-turn dialogue of lecture 6 §3.4"
        )
        if self._sample_turn < n:
            turn = dialogue[self._sample_turn]
            yield PaletteCommand(
                f"Restaurants: ask sample turn {self._sample_turn + 1}/{n} — {turn}",
                f"The next turn of {which}, asked now.",
                self.ask_next_sample_turn,
            )
        else:
            yield PaletteCommand(
                f"Restaurants: restart the sample dialogue — {dialogue[0]}",
                f"Clears the dialogue and asks turn 1 of {which} again.",
                self.ask_next_sample_turn,
            )
        yield from self.runs.commands()
        for world, label in WORLDS.items():
            current = " (current)" if world == self._world else ""
            yield PaletteCommand(
                f"Restaurants: agent and world — {label}{current}",
                "Switch the agent and its world (the dialogue is cleared).",
                partial(self.set_world, world),
            )
        yield PaletteCommand(
            "Restaurants: clear the dialogue",
            "Forget every turn (the agent's history too) and empty the panes.",
            self.clear_dialogue,
        )
        yield PaletteCommand(
            "Restaurants: focus the raw SQL editor",
            "Write a SELECT and run it with Ctrl+Enter or Ctrl+J.",
            self.focus_sql_editor,
        )
        for method in CLASSIFY_METHODS:
            current = " (current)" if method == self.settings.classify_method else ""
            yield PaletteCommand(
                f"Restaurants: classify method {method}{current}",
                _METHOD_HELP[method],
                partial(self.set_classify_method, method),
            )

    # --- examples and history (tui.history) ----------------------------------------------------------

    def history_origin(self, box_id: str) -> str | None:
        return self._sql_origin if box_id == "sql-editor" else None

    def example_items(self) -> list[PickItem]:
        """The sample dialogue's turns, the world's sample questions (into the question box) and its sample
        SQL (into the editor)."""
        from tui.pickers import PickItem

        dialogue = self.sample_dialogue
        which = "course dialogue" if self._world == "courses" else "lecture 6 dialogue"
        items = [PickItem(q, f"{which} {i}/{len(dialogue)}", ("question", q)) for i, q in enumerate(dialogue, 1)]
        questions = {"restaurants": SAMPLE_QUESTIONS, "restaurants-suql": SUQL_QUESTIONS + SAMPLE_QUESTIONS}
        if self._db is None:
            items += [PickItem(q, "sample question", ("question", q)) for q in questions.get(self._world, ())]
        sql = self._sql_origin if self._db is not None else COURSE_SQL if self._world == "courses" else SAMPLE_SQL
        items.append(PickItem(sql, "SQL editor", ("sql", sql)))
        return items

    def on_history_chosen(self, message: m.HistoryChosen) -> None:
        self.history_chosen(message.entry)

    def on_example_chosen(self, message: m.ExampleChosen) -> None:
        self.example_chosen(message.value)

    def history_chosen(self, entry: HistoryEntry) -> None:
        """Put a run back: a question into the box, SQL into the editor (not run)."""
        self.runs.put_back(entry)

    def example_chosen(self, value: Any) -> None:
        """Load an example: a question into the box, SQL into the editor (not run)."""
        kind, text = value
        if kind == "sql":
            editor = self.query_one("#sql-editor", SqlEditor)
            editor.text = self._sql_origin = text
            editor.focus()
        else:
            self.load_question(text)

    # --- worker bodies (run in threads) -----------------------------------------------------------

    def _session_now(self) -> RestaurantSession:
        """The open session, opening it first if needed (thread-safe)."""
        with self._session_lock:
            if self._session is None:
                self._session = self._open(self.settings)
            return self._session

    def _open(self, settings: Settings) -> RestaurantSession:
        from engines.api import open_restaurants

        if self._world == "courses":
            from engines.api import open_courses_agent

            return open_courses_agent(settings, clock=self.clock)  # type: ignore[return-value]

        suql = self._world == "restaurants-suql"
        if self._db is not None:  # your own tables: the same agents over the engine's description of them
            return open_restaurants(settings, clock=self.clock, suql=suql, source=self._db)
        return open_restaurants(settings, clock=self.clock, suql=suql)

    def _world_label(self, world: str) -> str:
        """The selector's words for a world: with --db, the two agents talk about your data."""
        if self._db is not None and world in OWN_DATA_WORLDS:
            return OWN_DATA_WORLDS[world]
        return WORLDS[world]

    def _show_schema(self) -> None:
        """The schema browser shows the open source's tables (hidden for a built-in world)."""
        source = getattr(self._session, "source", None)
        # your data's shows at first, a world's on Ctrl+T
        self.query_one(SchemaPane).track(self.schema_subject(), default=source is not None)
        if source is not None and source.schema.tables:
            editor = self.query_one("#sql-editor", SqlEditor)
            if editor.text in (SAMPLE_SQL, COURSE_SQL):
                editor.text = self._sql_origin = first_table_sql(source.schema)

    def _open_session(self) -> None:
        self._session_now()

    def _ask_work(self, utterance: str, cancel: threading.Event) -> TurnResult:
        session = self._session_now()
        return session.agent.ask(utterance, emit=self._emit, cancel=cancel)

    def _sql_work(self, sql: str) -> SqlRan:
        from engines.api import run_sql

        session = self._session_now()
        result, readback = run_sql(session.sandbox, sql)
        return SqlRan(sql, result, readback)

    def _reopen_work(self, settings: Settings, *, carry: bool = True) -> Settings:
        with self._session_lock:
            fresh = self._open(settings)
            old, self._session = self._session, fresh
        if old is not None:
            if carry:
                fresh.agent.history.extend(old.agent.history)
            old.close()
        return settings

    # --- engine events (main thread): the typed messages of REPORTS --------------------------------

    def on_llm_call_started(self, message: m.LlmCallStarted) -> None:
        self.query_one(CallsTable).call_started(message.event)

    def on_llm_call_finished(self, message: m.LlmCallFinished) -> None:
        self.query_one(CallsTable).call_finished(message.event)

    def on_llm_call_failed(self, message: m.LlmCallFailed) -> None:
        self.query_one(CallsTable).call_failed(message.event)

    def on_turn_started(self, message: m.TurnStarted) -> None:
        self._classified = []
        self._rewritten = False
        self.query_one(CallsTable).reset()
        self._reset_panes(blank="…")
        self.query_one(ResultsTable).show_nothing("…")
        self._set_status(f"running… turn {message.event.turn} — Esc cancels", "running")

    def on_input_classified(self, message: m.InputClassified) -> None:
        event = message.event
        self._show_route(event.needs_database, event.reason)
        if not event.needs_database:
            note = "not needed — the agent answers without the database"
            self.query_one("#sql-parsed", SqlView).show_note(note)
            self.query_one("#sql-rewritten", SqlView).show_note(note)
            self.query_one("#readback", Static).update("— (no query)")
            self.query_one(ResultsTable).show_nothing("no query")

    def on_query_parsed(self, message: m.QueryParsed) -> None:
        self.query_one("#sql-parsed", SqlView).show_sql(message.event.sql)

    def on_values_classified(self, message: m.ValuesClassified) -> None:
        self._classified.append(message.event)

    def on_query_rewritten(self, message: m.QueryRewritten) -> None:
        self._rewritten = True
        self.query_one("#sql-rewritten", SqlView).show_sql(message.event.sql, self._mapping_lines())

    def on_query_executed(self, message: m.QueryExecuted) -> None:
        event = message.event
        self.query_one(ResultsTable).show_rows(event.columns, event.rows, truncated=event.truncated)

    def on_query_failed(self, message: m.QueryFailed) -> None:
        self._show_error("The agent's query failed", message.event.message)
        self.query_one(ResultsTable).show_nothing("the query failed")
        if not self._rewritten:
            self.query_one("#sql-rewritten", SqlView).show_note("— the parser's query failed before classify()")
        self.query_one("#readback", Static).update("— (the query failed)")

    def on_read_back_written(self, message: m.ReadBackWritten) -> None:
        event = message.event
        sentence: str | Content = event.sentence
        if event.not_understood:  # the query leaves part of the question out: marked beside the read-back
            said = ", ".join(f"'{p}'" for p in event.not_understood)
            sentence = Content(event.sentence) + Content.styled(f"  ⚠ not understood: {said}", "$text-warning")
        self.query_one("#readback", Static).update(sentence)

    def _mapping_lines(self) -> list[Content]:
        """What ``classify()`` did: one line per value it mapped, the values kept as said on one line."""
        if not self._classified:
            return [Content.styled("classify(): no enum values in the query", "$foreground-muted")]
        method = self._classified[0].method
        lines = [Content.from_markup("[b]classify()[/b] [$text-muted]· $method[/]", method=method)]
        kept: list[str] = []
        for v in self._classified:
            if not v.chosen:
                lines.append(
                    Content.from_markup(
                        "[b]$value[/b] [$text-error]→ no value matched[/] [$text-muted]($field; kept as written)[/]",
                        value=v.value,
                        field=v.field,
                    )
                )
            elif len(v.chosen) == 1 and v.chosen[0].casefold() == v.value.casefold():
                kept.append(v.value)
            else:
                lines.append(
                    Content.from_markup(
                        "[b]$value[/b] → [$text-success]$chosen[/] [$text-muted]($field)[/]",
                        value=v.value,
                        chosen=", ".join(v.chosen),
                        field=v.field,
                    )
                )
        if kept:
            lines.append(Content.from_markup("[$text-muted]✓ as said: $kept[/]", kept=", ".join(kept)))
        return lines

    # --- worker outcomes (main thread) ----------------------------------------------------------

    def _opened(self, _: None) -> None:
        self._show_schema()
        if not self.is_busy:
            self._set_status("ready — Enter asks, Ctrl+Enter runs the SQL", "idle")

    def _reopened(self, settings: Settings) -> None:
        self._show_schema()
        self.settings = settings
        self._set_status(f"ready — now using the {settings.backend} backend", "idle")

    def _world_opened(self, _: Settings) -> None:
        self._show_schema()
        self._set_status(f"ready — {self._world_label(self._world)}", "idle")

    def _open_failed(self, error: BaseException) -> None:
        self._fail(error, "Could not open your data" if self._db else "Could not open the restaurant database")

    def _turn_failed(self, error: BaseException) -> None:
        self._cancel = None
        self._fail(error, "Error", turn=True)

    def _sql_failed(self, error: BaseException) -> None:
        from engines.api import Cancelled, SqlError, SqlRefused

        if isinstance(error, SqlError) and not isinstance(error, Cancelled):
            self._show_sql_error(error, refused=isinstance(error, SqlRefused))
        else:
            self._fail(error, "Error")

    def _fail(self, error: BaseException, title: str, *, turn: bool = False) -> None:
        """Any error of the tab's work, shown in the error pane (a cancelled turn gives its question back)."""
        from engines.api import Cancelled

        if isinstance(error, Cancelled):
            if self._pending_utterance is not None:
                self._add_entry("note", "Stopped", "The turn was stopped (Esc); it is not part of the dialogue.")
                self._restore_question()
            self._set_status("stopped", "cancelled")
            return
        message = describe_error(error)
        if turn and self._pending_utterance is not None:
            self._add_entry("note", "Error", f"The turn failed: {message}")
            self._restore_question()
        self._show_error(title, message)
        self._set_status("error — see the error pane", "error")

    def _finish_turn(self, turn: TurnResult) -> None:
        self._cancel = None
        self._pending_utterance = None
        if turn.needs_database and turn.error is None:
            subtitle = count_rows(len(turn.rows))
        elif turn.needs_database:
            subtitle = "query failed"
        else:
            subtitle = "no database"
        reply = turn.reply
        if turn.to_verify:
            from engines.api import unknown_phrase

            shown = turn.to_verify[:TO_VERIFY_SHOWN]
            unknown = "; ".join(
                f"{r.get('course_id') or r.get('name') or r.get('_row')} "
                f"(unknown {' or '.join(unknown_phrase(p) for p in r.get('unknown', [])) or 'condition'})"
                for r in shown
            )
            more = len(turn.to_verify) - len(shown)
            if more:
                unknown += f"; and {more} more"
            reply += f"\nTo verify — neither confirmed nor excluded: {unknown}"
        self._reply_to_show = self._add_entry("agent", "Agent", reply, subtitle=subtitle)  # kept in view when stacked
        if turn.error is not None:
            self._set_status("done — the query failed (see the error)", "error")
        elif turn.needs_database:
            self._set_status(f"done — {count_rows(len(turn.rows))}", "done")
        else:
            self._set_status("done — answered without the database", "done")

    def _finish_sql(self, ran: SqlRan) -> None:
        result = ran.result
        self._classified = []
        self.query_one("#route", Static).update(
            Content.styled("— raw SQL from the editor: no input classifier", "$foreground-muted italic")
        )
        self.query_one("#sql-parsed", SqlView).show_sql(
            ran.sql, [Content.styled("as written in the editor", "$foreground-muted")]
        )
        self.query_one("#sql-rewritten", SqlView).show_sql(
            result.sql,
            [Content.styled("the DuckDB SQL that ran (classify() does not rewrite raw SQL)", "$foreground-muted")],
        )
        self.query_one("#readback", Static).update(ran.readback)
        self.query_one(ResultsTable).show_rows(result.columns, result.rows, truncated=result.truncated)
        self.query_one(CallsTable).reset("raw SQL: no LLM calls")
        self._set_status(f"done — {count_rows(len(result.rows))}", "done")

    def _show_sql_error(self, error: Any, *, refused: bool) -> None:
        """A refused or failing statement from the editor; the editor keeps its text."""
        editor = self.query_one("#sql-editor", SqlEditor)
        text = editor.text
        where = ""
        if error.line is not None and error.column is not None:
            where = f"line {error.line}, column {error.column}"
            if error.sql is not None and error.sql.strip() != text.strip():
                where += " of the DuckDB SQL it became"
            else:
                editor.cursor_location = location_in(text, error.line, error.column)
        title = "Refused — nothing ran" if refused else "SQL error"
        if where:
            title = f"{title} at {where}"
        self._show_error(title, error.message)
        # no pane keeps the previous query: it did not run this time
        why = "refused" if refused else "error"
        self._classified = []
        self.query_one("#route", Static).update(
            Content.styled("— raw SQL from the editor: no input classifier", "$foreground-muted italic")
        )
        self.query_one("#sql-parsed", SqlView).show_sql(
            text, [Content.styled(f"as written in the editor · {title.lower()}", "$foreground-muted")]
        )
        self.query_one("#sql-rewritten", SqlView).show_note(f"— nothing ran ({why})")
        self.query_one("#readback", Static).update(f"— ({why}: nothing ran)")
        self.query_one(ResultsTable).show_nothing(why)
        self.query_one(CallsTable).reset("raw SQL: no LLM calls")
        self._set_status("refused" if refused else "SQL error — fix it in the editor and run it again", "error")

    # --- small view helpers ----------------------------------------------------------------------

    _reply_to_show: tuple[Widget, AwaitMount] | None = None

    def _show_results(self) -> None:
        """After a turn, the reply is what was asked for: when the panes stack (80 columns, or under 32 rows) the
        agent's reply is scrolled into view, its first line at the top, rather than the results table below it
        (the status line says how many rows it holds; Tab or the wheel reaches it). Raw SQL shows its table."""
        pending, self._reply_to_show = self._reply_to_show, None
        stacked = self.screen.has_class("-narrow") or self.screen.has_class("-short")
        if pending is not None and stacked:
            # the reply may not be mounted yet (mounting is asynchronous): scroll once it is, never to the table
            self.call_later(self._reveal_reply, *pending)
            return
        super()._show_results()

    async def _reveal_reply(self, reply: Widget, mounted: AwaitMount) -> None:
        """The reply's first line at the dialogue's top, then the dialogue's top in the stack's view (one scroll
        each: Textual's scroll_visible through two nested scrolls reads the inner one's old offset); again once
        the reply's height is known, after the next refresh."""
        await mounted
        self._scroll_to_reply(reply)
        self.call_after_refresh(self._scroll_to_reply, reply)

    def _add_entry(self, kind: str, title: str, text: str, *, subtitle: str = "") -> tuple[Widget, AwaitMount]:
        """Add an entry at the dialogue's end and scroll to it; the entry and its mount, awaitable."""
        dialogue = self.query_one("#dialogue", VerticalScroll)
        dialogue.query_one("#dialogue-hint").display = False
        header = Content.from_markup("[b]$title[/b]", title=title)
        if subtitle:
            header += Content.styled(f" · {subtitle}", "$foreground-muted")
        entry = TextView(Content("\n").join([header, Content(text)]), classes=f"entry entry-{kind}")
        mounted = dialogue.mount(entry)
        dialogue.call_after_refresh(dialogue.scroll_end, animate=False)
        return entry, mounted

    def _scroll_to_reply(self, reply: Widget) -> None:
        if reply.is_mounted:
            self.query_one("#dialogue", VerticalScroll).scroll_to_widget(reply, animate=False, top=True)
            self.query_one("#rest-columns").scroll_to_widget(self.query_one("#dialogue"), animate=False, top=True)

    def _restore_question(self) -> None:
        """Give a turn that did not finish its question back, unless the box holds new text."""
        utterance, self._pending_utterance = self._pending_utterance, None
        box = self.query_one("#question", Input)
        if utterance and not box.value:
            box.value = utterance
            box.cursor_position = len(utterance)

    def _reset_panes(self, *, blank: str) -> None:
        self.query_one("#route", Static).update(blank)
        self.query_one("#sql-parsed", SqlView).update(blank)
        self.query_one("#sql-rewritten", SqlView).update(blank)
        self.query_one("#readback", Static).update(blank)

    def _show_route(self, needs_database: bool, reason: str) -> None:
        verdict = "needs the database" if needs_database else "no database needed"
        style = "$text-success" if needs_database else "$text-accent"
        self.query_one("#route", Static).update(
            Content.from_markup(f"[b {style}]$verdict[/] — $reason", verdict=verdict, reason=reason)
        )

    def _show_error(self, title: str, message: str) -> None:
        error = self.query_one("#error", Static)
        error.border_title = as_text(title, one_line=True)
        error.update(message)
        error.display = True

    def _clear_error(self) -> None:
        self.query_one("#error", Static).display = False


def _pane(title: str, body: Static, *, id: str) -> VerticalScroll:
    """A scrollable pane with a border title around ``body``."""
    pane = VerticalScroll(body, id=id, classes="pane")
    pane.border_title = title
    return pane


_METHOD_HELP = {
    "exact": "Only values spelled like the real ones (ignoring case and accents) match.",
    "similarity": "Values whose character trigrams look alike (rescues 'sichuan' ≈ 'szechuan').",
    "llm_all": "The LLM sees every value of the field and picks (best recall; prompt grows with the enum).",
    "retrieve_llm": "The 5 most similar values by trigrams, then the LLM picks among them.",
}
