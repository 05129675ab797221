"""The Knowledge-graph tab itself: its layout, its workers and their outcomes, its palette.

The views' widgets live in :mod:`tui.kg.console`, :mod:`tui.kg.browser` and :mod:`tui.kg.stepper`;
the stepper's state is a :class:`~tui.kg.stepper_model.StepperModel`; scoring a trajectory is the
engine's (:mod:`engines.spinach.scoring`), and so are the examples (:mod:`engines.kg.examples`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import (
    DataTable,
    Input,
    OptionList,
    Static,
    TabbedContent,
    TabPane,
    TextArea,
)
from textual.widgets.option_list import Option, OptionDoesNotExist
from textual.worker import Worker, WorkerState

from engines.events import CallStarted
from engines.kg.examples import EXAMPLES, SparqlExample
from engines.spinach.agent import BUDGET, TOTAL_BUDGET
from engines.spinach.scoring import Scored, score_loaded, score_run
from tui.area import EngineReported, PaletteCommand, describe_error
from tui.history import HistoryArea
from tui.kg.browser import BrowserView, ClaimsTable, PageOpened, Searched
from tui.kg.console import (
    EDITOR_TITLE,
    ConsoleView,
    FeedbackBar,
    QueryRan,
    example_option,
)
from tui.kg.results import (
    ENTITY_ID,
    LIST_CHARS,
    MUTED,
    KgResultsTable,
    error_box,
    show_error,
)
from tui.kg.sparql import SparqlEditor
from tui.kg.stepper import (
    StepperView,
    StepStrip,
    StepView,
    category_of,
    question_option,
    status_line,
)
from tui.kg.stepper_model import StepperModel
from tui.widgets import SqlEditor, count_rows, truncate

if TYPE_CHECKING:
    from engines.kg.pages import EntityPage, SearchHit
    from engines.settings import Settings
    from engines.spinach.session import SpinachSession
    from engines.spinach.trajectory import Step, Trajectory
    from tui.pickers import PickItem
    from worlds.kg import KGQuestion

VIEWS: tuple[tuple[str, str, str], ...] = (
    ("console", "SPARQL console", "f7"),
    ("browser", "Entity browser", "f7"),
    ("stepper", "Trajectory stepper", "f7"),
)
"""The tab's views: (name, title, key); F7 / Shift+F7 step through them (F2 … F6 are the app's tab keys)."""


class AgentReported(EngineReported):
    """The SPINACH agent (or its LLM) emitted an event."""


class KgArea(HistoryArea):
    """The Knowledge-graph tab (see the module docstring)."""

    AREA_ID = "kg"
    HISTORY_BOXES = {"kg-editor": "sparql"}
    STATUS_ID = "kg-status"
    RESULTS_IDS = ("kg-results", "kg-answer-rows")
    REPORTED = AgentReported
    TITLE = "Knowledge graph"
    HELP = f"""\
## Knowledge graph — SPARQL, entity pages and the SPINACH agent (lecture 8)

A fictional, Wikidata-like graph (QIDs from Q1000, Wikidata's real PIDs) with the seven quirks of §1.4:
the query one writes from the question's words is legal SPARQL, but often wrong or incomplete.
Three views — the tab bar under the tabs, or **F7 / Shift+F7** (next / previous view):

**SPARQL console.** Wikidata's dialect: the usual prefixes are built in (`wd:`, `wdt:`, `p:`, `ps:`, `pq:`,
`rdfs:`, …), `SERVICE wikibase:label` gives `?xLabel` and `?xDescription`, Blazegraph's named subqueries
(`WITH {{ … }} AS %x` / `INCLUDE %x`) and `hint:` triples are accepted. Each run gets one of the **four
feedbacks** of §1.5 — *rows*, *empty*, *syntax error*, *timeout* — shown lit above the results; updates,
`LOAD` and remote `SERVICE` are *refused* (nothing runs, the editor keeps your text). The examples pair the
right query for each quirk with the naive one. Enter on an ID in the results opens its page.

**Entity browser.** Type in the search box (labels and aliases, like Wikidata's search; a QID or PID opens
directly), Enter on a hit opens its page: label, description, aliases and every claim with its qualifiers
(the year of an award is a P585 qualifier, quirk 5). Enter on a claim follows its value to that entity;
**o** opens the claim's property (a property's page lists statements that use it); **Backspace** goes back.

**Trajectory stepper.** The simple (40) and forum-style (56, in 8 categories) questions. Enter (or **r**)
runs the SPINACH agent on the highlighted one with the app's backend (*sim*: the seeded expert procedure
acting with the real tools on the real graph; *claude*), and the steps appear as they are taken; Esc stops
it. Or type the path of a trajectory JSON (saved by `cs224v-tui spinach --save`, or one of SPINACH's own
logs) in the box below the list and press Enter. Then step through it: each step shows the thought, the
action, its argument and the observation exactly as the agent saw it (**v**: all of it), the budgets
({BUDGET} actions in the state, {TOTAL_BUDGET} in all), and rolled-back steps — a repeat, or a stop while the last query had
returned no rows — marked ↺ with the reason: they are kept in the trajectory but left the state, and the policy was
asked again. At the last step: the answer rows with row-wise F1 and EM against the gold answer.

| key | what it does |
| --- | --- |
| F7 / Shift+F7 | the next / previous view: the console → the browser → the stepper, also while typing |
| Ctrl+Enter / Ctrl+J | run the query in the editor |
| Enter (examples, hits, questions) | load the example / open the page / run the agent on the question |
| Enter (on a claim, on an ID in the results) | follow the link to that entity's page |
| o · Backspace or b · / | open the claim's property · back · the search box (browser) |
| → or n · ← or p · Home · End | next · previous · first · last step (stepper) |
| v | the step's whole observation, or only its first lines |
| e | explore the step: its query in the console, its page or search in the browser |
| g | the question's gold SPARQL in the console |
| t | list and search every trajectory of the file loaded (Enter shows one) |
| Esc | stop the running agent: it takes no further action |
| Ctrl+L | the examples: the console's SPARQL examples and the stepper's questions, searchable; Enter loads one |
| ↑ / ↓ (at the console editor's first / last line, while it holds no edits of yours) | the queries run before |
| Ctrl+R | search the SPARQL run before (kept across restarts); Enter puts it in the editor |

In the command palette (Ctrl+P), type *Knowledge graph* to switch views, open the examples or the history,
load a trajectory or stop a run. The examples (Ctrl+L) hold the console's queries and every question of the
stepper: Enter on a query puts it in the editor, on a question highlights it in the stepper (Enter there runs
the agent). A file of many trajectories (SPINACH's own run logs hold one per question):
**t** lists and searches them all. SPINACH's logs keep each query's result as it ran on Wikidata: the stepper
shows those logged rows (and the answer's) rather than running a query meant for a graph this is not.
"""

    BINDINGS = [
        Binding(
            "f7",
            "cycle_view(1)",
            "View",
            key_display="F7",
            priority=True,
            tooltip="The next view: console → browser → stepper → console, even while typing.",
        ),
        Binding(
            "shift+f7",
            "cycle_view(-1)",
            "Previous view",
            key_display="Shift+F7",
            priority=True,
            show=False,
            tooltip="The previous view, even while typing.",
        ),
        Binding("escape", "cancel", "Stop run", tooltip="Stop the running agent: it takes no further action."),
    ]

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self._view_status: dict[str, tuple[str, str]] = {}  # view -> its last status ("" -> the default)
        self._session: SpinachSession | None = None
        self._session_lock = threading.Lock()
        self._busy: dict[str, Worker[Any]] = {}
        # browser
        self._history: list[str] = []
        self._page: EntityPage | None = None
        self._hits: tuple[SearchHit, ...] = ()
        self._hits_for = ""  # the text the hits are for
        self._open_first = False  # Enter before the hits came: open the first one when they do
        # stepper
        self._stepper = StepperModel()
        self._loaded: list[Trajectory] = []  # every trajectory of the file loaded last
        self._loaded_name = ""
        self._loaded_pos = 0  # the one shown
        self._editor_origin = (EXAMPLES[0].query, f"{EXAMPLES[0].title} · {EXAMPLES[0].source}")  # as composed

    # --- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with TabbedContent(id="kg-views", initial="kg-console"):
            with TabPane("SPARQL console", id="kg-console"):
                with ConsoleView(id="kg-console-columns"):
                    examples = OptionList(*(example_option(i, e) for i, e in enumerate(EXAMPLES)), id="kg-examples")
                    examples.border_title = "Examples · Enter loads one · ^L search"
                    examples.border_subtitle = f"{len(EXAMPLES)} queries"
                    yield examples
                    with Vertical(id="kg-console-right"):
                        editor = SparqlEditor(EXAMPLES[0].query, id="kg-editor", soft_wrap=False, tab_behavior="focus")
                        editor.cursor_blink = self.cursor_blink
                        editor.border_title = EDITOR_TITLE
                        editor.border_subtitle = f"{EXAMPLES[0].title} · {EXAMPLES[0].source}"
                        yield editor
                        yield FeedbackBar(id="kg-feedback")
                        yield error_box("kg-console-error")
                        results = KgResultsTable(id="kg-results")
                        results.border_title = "Results"
                        yield results
            with TabPane("Entity browser", id="kg-browser"):
                with BrowserView(id="kg-browser-columns"):
                    with Vertical(id="kg-browser-left"):
                        search = Input(placeholder="a label, an alias, a QID or a PID", id="kg-search")
                        search.border_title = "Search · Enter opens the first hit"
                        yield search
                        hits = OptionList(id="kg-hits")
                        hits.border_title = "Hits · Enter opens a page"
                        yield hits
                    with Vertical(id="kg-browser-right"):
                        head = VerticalScroll(Static(id="kg-page-head"), id="kg-page-pane", classes="pane")
                        head.border_title = "Page"
                        yield head
                        yield error_box("kg-browser-error")
                        yield ClaimsTable(id="kg-claims")
            with TabPane("Trajectory stepper", id="kg-stepper"):
                with StepperView(id="kg-stepper-columns"):
                    with Vertical(id="kg-stepper-left"):
                        questions = OptionList(id="kg-questions")
                        questions.border_title = "Questions · Enter runs the agent"
                        yield questions
                        load = Input(placeholder="path/to/trajectory.json", id="kg-load")
                        load.border_title = "Load a trajectory · Enter"
                        yield load
                    with Vertical(id="kg-stepper-right"):
                        yield Static(id="kg-run-head")
                        yield StepStrip(id="kg-strip")
                        yield Static(id="kg-budget")
                        yield error_box("kg-stepper-error")
                        with StepView(id="kg-step"):
                            yield Static(id="kg-step-title")
                            yield Static(id="kg-step-banner")
                            for name in ("thought", "action", "argument"):
                                with Horizontal(classes="kg-field"):
                                    yield Static(name.capitalize(), classes="kg-label")
                                    yield Static(id=f"kg-step-{name}")
                            with Horizontal(classes="kg-field"):
                                yield Static("Observation", classes="kg-label")
                                yield Static(id="kg-step-feedback")
                            yield Static(id="kg-step-observation", markup=False)
                        with Vertical(id="kg-answer"):
                            yield Static(id="kg-answer-head")
                            answer = KgResultsTable(id="kg-answer-rows")
                            yield answer
        yield Static(id="kg-status", markup=False)

    def on_mount(self) -> None:
        self.query_one(FeedbackBar).show(None)
        self.query_one("#kg-results", KgResultsTable).show_nothing("no query yet")
        self.query_one("#kg-page-head", Static).update(
            Content.styled(
                "Search for an entity on the left (try Ashford: two cities share the name), or press Enter on an ID "
                "in the console's results.",
                f"{MUTED} italic",
            )
        )
        self.query_one(ClaimsTable).border_title = "Claims"
        self._show_stepper()
        self._set_status("opening the knowledge graph…", "running")
        self._start("session", self._open_work, name="open", busy=False)

    def on_unmount(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def export_sources(self) -> list[Any]:
        """The shown tables, and in the stepper the trajectory (one row a step) after them."""
        from tui.export import dataclass_source

        sources = super().export_sources()
        if self.view == "stepper" and self._stepper.steps:
            sources.append(dataclass_source("trajectory", "Trajectory · steps", self._stepper.steps))
        return sources

    def focus_default(self) -> None:
        view = self.view
        if view == "console":
            self.query_one("#kg-editor", SparqlEditor).focus()
        elif view == "browser":
            self.query_one("#kg-search", Input).focus()
        elif self._stepper.steps or self._stepper.running:
            self.query_one(StepView).focus()
        else:
            self.query_one("#kg-questions", OptionList).focus()

    # --- workers: one exclusive group per view, so the views do not stop each other -------------------

    def _start(self, view: str, work: Any, *, name: str, busy: bool = True) -> Worker[Any]:
        worker = self.run_worker(
            work, name=name, group=f"{self.AREA_ID}-{view}", thread=True, exclusive=True, exit_on_error=False
        )
        if busy:
            self._busy[view] = worker
        return worker

    @property
    def is_busy(self) -> bool:
        """True while the agent runs, a query runs or the session is rebuilt."""
        return any(not w.is_finished for w in self._busy.values())

    @property
    def is_running(self) -> bool:
        """True while the agent runs on a question."""
        worker = self._busy.get("stepper")
        return worker is not None and worker.name == "run" and not worker.is_finished

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one handler of this tab's worker outcomes: results go on screen, errors too."""
        worker = event.worker
        if not (worker.group or "").startswith(f"{self.AREA_ID}-"):
            return
        event.stop()
        if event.state == WorkerState.SUCCESS:
            self.worker_succeeded(worker.name, worker.result)
        elif event.state == WorkerState.ERROR:
            assert worker.error is not None
            self.worker_failed(worker.name, worker.error)
        elif event.state == WorkerState.CANCELLED and worker.name == "run":
            self._stepper.running = False
        self.refresh_bindings()

    # --- the public actions (the palette, the keys and the tests call them) ----------------------------

    @property
    def view(self) -> str:
        return (self.query_one("#kg-views", TabbedContent).active or "kg-console").removeprefix("kg-")

    def show_view(self, name: str) -> None:
        """Show the ``console``, the ``browser`` or the ``stepper`` and focus its main widget."""
        if name not in {v for v, _, _ in VIEWS}:
            raise ValueError(f"unknown view {name!r}")
        app = self.app
        if getattr(app, "active_area", self) is not self and hasattr(app, "action_show_tab"):
            app.action_show_tab(self.AREA_ID)  # called from the palette on another tab
        self.query_one("#kg-views", TabbedContent).active = f"kg-{name}"
        self.focus_default()

        def again() -> None:
            # In the frame that first shows the tab, the view can fall back to the first one and the
            # focused widget can be blurred by a late Hide: once on screen, make sure of both.
            tabs = self.query_one("#kg-views", TabbedContent)
            if tabs.active != f"kg-{name}":
                tabs.active = f"kg-{name}"
            self.focus_default()

        self.call_after_refresh(lambda: self.call_after_refresh(again))

    def action_view(self, name: str) -> None:
        self.show_view(name)

    def action_cycle_view(self, step: int) -> None:
        names = [name for name, _, _ in VIEWS]
        self.show_view(names[(names.index(self.view) + step) % len(names)])

    def action_cancel(self) -> None:
        self.cancel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return True if self.is_running else False
        return super().check_action(action, parameters)

    def cancel(self) -> bool:
        """Stop the running agent: it checks the flag before every policy call."""
        return self.request_cancel("stopping the agent… (no further action is taken)", running=self.is_running)

    def use_settings(self, settings: Settings) -> None:
        """Another backend: the same graph, a new LLM for the policy."""
        self.settings = settings
        if self._session is None:
            return
        self._set_status(f"switching to the {settings.backend} backend…", "running")
        self._start("session", lambda: self._reopen_work(settings), name="reopen")

    # console

    def load_example(self, example: SparqlExample) -> None:
        """Put an example in the editor (without running it)."""
        self._put_in_editor(example.query, f"{example.title.removeprefix('↳ ')} · {example.source}")
        if example in EXAMPLES:
            self.query_one("#kg-examples", OptionList).highlighted = EXAMPLES.index(example)
        self._set_status(f"loaded “{example.title}” — Ctrl+J runs it", "idle")

    def _put_in_editor(self, text: str, source: str) -> None:
        editor = self.query_one("#kg-editor", SparqlEditor)
        self._editor_origin = (text, source)
        editor.text = text
        editor.border_subtitle = source

    def example(self, key: str) -> SparqlExample:
        """The first example whose title contains ``key``."""
        for example in EXAMPLES:
            if key in example.title:
                return example
        raise KeyError(f"no example {key!r}")

    def run_query(self, query: str | None = None, *, source: str = "") -> bool:
        """Run ``query`` (default: the editor's text, else it goes in the editor, from ``source``) on the graph."""
        editor = self.query_one("#kg-editor", SparqlEditor)
        text = editor.text if query is None else query
        if query is not None:
            self._put_in_editor(query, source)
        if not text.strip():
            self._show_error(
                "kg-console-error", "Nothing to run", "The editor is empty: write a SPARQL query or pick an example."
            )
            return False
        self._hide_error("kg-console-error")
        self.record_run("kg-editor", text)
        self.query_one(FeedbackBar).show(None, "running…")
        self.query_one("#kg-results", KgResultsTable).show_nothing("running…")
        self._set_status("running the query…", "running")
        self._start("console", lambda: self._query_work(text), name="query")
        return True

    # browser

    def search(self, text: str) -> None:
        """Fill the hits with what matches ``text`` (as search_wikidata does)."""
        box = self.query_one("#kg-search", Input)
        if box.value != text:
            with box.prevent(Input.Changed):
                box.value = text
                box.cursor_position = len(text)
        if not text.strip():
            self._show_hits(Searched(text, ()))
            return
        self._start("search", lambda: self._search_work(text), name="search", busy=False)

    def open_entity(self, entity: str, *, push: bool = True) -> None:
        """Open the page of ``entity`` (a QID or PID) in the browser; ``push`` keeps the current page to go back to."""
        came_from = self._page.id if push and self._page is not None and self._page.id != entity else None
        self._set_status(f"opening {entity}…", "running")
        self._start("page", lambda: self._page_work(entity, came_from), name="page", busy=False)

    def follow_link(self) -> bool:
        """Follow the highlighted claim's value to its page."""
        claims = self.query_one(ClaimsTable)
        link = claims.current_link
        if link is None:
            self.notify("This value is not an entity: there is no page to follow.", title="Knowledge graph")
            return False
        self.open_entity(link)
        return True

    def open_claim_property(self) -> bool:
        prop = self.query_one(ClaimsTable).current_property
        if prop is None:
            return False
        self.open_entity(prop)
        return True

    def back(self) -> bool:
        """Back to the page before this one."""
        if not self._history:
            self.notify("No page to go back to.", title="Knowledge graph")
            return False
        self.open_entity(self._history.pop(), push=False)
        return True

    # stepper

    def run_question(self, question_id: str) -> bool:
        """Run the agent on one of the question sets' questions; its steps stream into the stepper."""
        if self.is_running:
            self.notify(
                "The agent is running: press Esc to stop it first.", title="Knowledge graph", severity="warning"
            )
            return False
        session = self._session
        question = None
        if session is not None:
            try:
                question = session.question(question_id)
            except KeyError:
                self.notify(
                    f"There is no question {question_id!r} in the question sets.",
                    title="Knowledge graph",
                    severity="warning",
                )
                return False
        self._hide_error("kg-stepper-error")
        self._stepper.begin(question.question if question else question_id, question, policy=self.settings.backend)
        self._stepper.running = True
        self._show_stepper()
        cancel = self._cancel = threading.Event()
        questions = self.query_one("#kg-questions", OptionList)
        try:
            index = questions.get_option_index(question_id)
        except OptionDoesNotExist:  # the list is not filled yet
            index = None
        if index is not None and questions.highlighted != index:
            # Not the user's move: its "Enter runs it" hint must not land on the run's status line
            # (the message is handled after a fast run has already finished).
            with self.prevent(OptionList.OptionHighlighted):
                questions.highlighted = index
        self._set_status(f"running the agent on {question_id} ({self.settings.backend})… — Esc stops it", "running")
        self._start("stepper", lambda: self._run_work(question_id, cancel), name="run")
        self.query_one(StepView).focus()
        self.refresh_bindings()
        return True

    def run_highlighted_question(self) -> bool:
        questions = self.query_one("#kg-questions", OptionList)
        if questions.highlighted is None:
            return False
        option = questions.get_option_at_index(questions.highlighted)
        return self.run_question(option.id) if option.id else False

    def load_trajectory(self, path: str) -> bool:
        """Load a trajectory JSON (ours or a SPINACH log) into the stepper."""
        if self.is_running:
            self.notify(
                "The agent is running: press Esc to stop it first.", title="Knowledge graph", severity="warning"
            )
            return False
        path = path.strip()
        if not path:
            self._show_error("kg-stepper-error", "Nothing to load", "Type the path of a trajectory JSON file.")
            return False
        box = self.query_one("#kg-load", Input)
        if box.value != path:
            box.value = path
        self._set_status(f"loading {path}…", "running")
        self._start("stepper", lambda: self._load_work(path), name="load", busy=False)
        return True

    def show_loaded(self, n: int) -> None:
        """Show the ``n``-th (0-based) trajectory of the last file loaded."""
        if 0 <= n < len(self._loaded) and not self.is_running:
            trajectory = self._loaded[n]
            self._loaded_pos = n
            source = self._loaded_source(n)
            others = len(self._loaded) - 1
            self._start("stepper", lambda: self._score_work(trajectory, source, others), name="load", busy=False)

    def _loaded_source(self, n: int) -> str:
        """The file's name, and which of its trajectories this is when it holds several."""
        return self._loaded_name if len(self._loaded) < 2 else f"{self._loaded_name} · {n + 1} of {len(self._loaded)}"

    def pick_trajectory(self) -> bool:
        """The searchable list of every trajectory of the file loaded; the one chosen is shown."""
        from tui.kg.stepper import TrajectoryPicker

        if not self._loaded:
            self.notify(
                "Load a trajectory file first: type its path in the box under the questions.", title="Knowledge graph"
            )
            return False

        def chosen(n: int | None) -> None:
            if n is not None:
                self.show_loaded(n)

        self.app.push_screen(TrajectoryPicker(self._loaded, self._loaded_name, self._loaded_pos), chosen)
        return True

    def step(self, delta: int) -> None:
        """Move ``delta`` steps (→ is +1, ← is -1)."""
        if self._stepper.step(delta):
            self._show_stepper()

    def step_to_edge(self, last: bool) -> None:
        if self._stepper.to_edge(last):
            self._show_stepper()

    def toggle_full_observation(self) -> None:
        self._stepper.toggle_full()
        self.query_one(StepperView).show_step(self._stepper)

    def explore_step(self) -> bool:
        """This step elsewhere: its query in the console, its page or its search in the browser."""
        step = self.current_step
        if step is None:
            return False
        arg = step.argument.strip().strip("'\"`")
        if step.action == "execute_sparql" and step.logged is not None:
            # a SPINACH log's query was meant for Wikidata: its logged rows are in the step; it is not run here
            self.show_view("console")
            self._put_in_editor(step.argument, f"step {step.index} of the trajectory (logged, not run)")
            self.notify(
                "SPINACH ran this query on Wikidata: its logged rows are in the step. It is in the editor; "
                "Ctrl+J runs it on this graph.",
                title="Knowledge graph",
            )
            return True
        if step.action == "execute_sparql":
            self.show_view("console")
            return self.run_query(step.argument, source=f"step {step.index} of the trajectory")
        if step.action in ("get_wikidata_entry", "get_property_examples") and arg:
            self.show_view("browser")
            self.open_entity(arg.split(":")[-1])
            return True
        if step.action == "search_wikidata" and arg:
            self.show_view("browser")
            self.search(arg)
            return True
        return False

    def gold_to_console(self) -> bool:
        question = self._stepper.question
        if question is None:
            self.notify(
                "This trajectory's question is not in the question sets: it has no gold query.", title="Knowledge graph"
            )
            return False
        self.show_view("console")
        return self.run_query(question.gold_sparql, source=f"gold query of {question.id}")

    @property
    def current_step(self) -> Step | None:
        return self._stepper.current_step

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(self._stepper.steps)

    @property
    def position(self) -> int:
        """The index of the step shown (0-based; -1 when there is none)."""
        return self._stepper.pos

    # --- events from the widgets ------------------------------------------------------------------------

    def on_sql_editor_run_requested(self, event: SqlEditor.RunRequested) -> None:
        event.stop()
        self.run_query()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option.id or ""
        if event.option_list.id == "kg-examples":
            self.load_example(EXAMPLES[int(option_id.removeprefix("example-"))])
            self.query_one("#kg-editor", SparqlEditor).focus()
        elif event.option_list.id == "kg-hits":
            self.open_entity(option_id)
        elif event.option_list.id == "kg-questions":
            self.run_question(option_id)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if (
            event.option_list.id == "kg-questions"
            and event.option.id
            and self._session is not None
            and not self.is_running
        ):
            event.stop()
            q = self._session.question(event.option.id)
            self._set_status(f"{q.id} · {category_of(q)} · {q.question} — Enter runs it", "idle")

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area.id != "kg-editor":
            return
        text, source = self._editor_origin
        if source and event.text_area.text != text:
            event.text_area.border_subtitle = f"edited from {source}"
        elif source:
            event.text_area.border_subtitle = source

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "kg-search":
            event.stop()
            self.search(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "kg-search":
            text = event.value.strip()
            entity = text.split(":")[-1].upper() if text else ""
            if ENTITY_ID.match(entity):
                self.open_entity(entity)
            elif self._hits and self._hits_for == text:
                self.open_entity(self._hits[0].id)
            elif text:
                self._open_first = True
                self.search(text)
        elif event.input.id == "kg-load":
            self.load_trajectory(event.value)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "kg-claims":
            event.stop()
            self.follow_link()

    def on_kg_results_table_entity_chosen(self, event: KgResultsTable.EntityChosen) -> None:
        event.stop()
        self.show_view("browser")
        self.open_entity(event.entity)

    def on_step_strip_step_chosen(self, event: StepStrip.StepChosen) -> None:
        event.stop()
        if self._stepper.goto(event.index):
            self._show_stepper()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content.id == "kg-views":
            event.stop()
            # each view has its own status line: the console's "done — 3 rows" does not speak for the browser
            shown = self._view_status.get(self.view) or self._view_status.get("")
            if shown is not None and not self.is_running and self.is_mounted:
                super()._set_status(*shown)

    def _set_status(self, text: str, state: str) -> None:
        if text.startswith("ready — F7"):
            self._view_status.clear()
            self._view_status[""] = (text, state)  # what a view says before it did anything
        else:
            self._view_status[self.view] = (text, state)
        super()._set_status(text, state)

    # --- palette -----------------------------------------------------------------------------------------

    def commands(self) -> Iterable[PaletteCommand]:
        t = self.TITLE
        for name, title, key in VIEWS:
            yield PaletteCommand(
                f"{t}: show the {title.lower()}",
                f"{key.upper()} / Shift+{key.upper()} step through the views.",
                lambda n=name: self.show_view(n),
            )
        yield PaletteCommand(
            f"{t}: run the query in the console",
            "Runs the editor's SPARQL (Ctrl+J).",
            lambda: (self.show_view("console"), self.run_query()),
        )
        if self.is_running:
            yield PaletteCommand(f"{t}: stop the running agent", "It takes no further action (Esc).", self.cancel)
        yield from self.history_commands()
        yield PaletteCommand(
            f"{t}: search entities", "Focus the browser's search box.", lambda: self.show_view("browser")
        )
        if self._history:
            yield PaletteCommand(
                f"{t}: back to {self._history[-1]}", "The page before this one (Backspace).", self.back
            )
        yield PaletteCommand(
            f"{t}: load a trajectory JSON",
            "Focus the path box of the stepper.",
            lambda: (self.show_view("stepper"), self.query_one("#kg-load", Input).focus()),
        )
        if self._loaded:
            yield PaletteCommand(
                f"{t}: list and search the {len(self._loaded)} trajector{'y' if len(self._loaded) == 1 else 'ies'} of {self._loaded_name}",
                "A searchable list of every trajectory in the file; Enter shows one (t).",
                lambda: (self.show_view("stepper"), self.pick_trajectory()),
            )
        if self._stepper.steps:
            yield PaletteCommand(f"{t}: toggle the full observation", "v", self.toggle_full_observation)
            yield PaletteCommand(
                f"{t}: explore this step",
                "Its query in the console, its page or search in the browser (e).",
                self.explore_step,
            )
        if self._stepper.question is not None:
            yield PaletteCommand(
                f"{t}: gold query of {self._stepper.question.id} in the console", "g", self.gold_to_console
            )

    # --- examples and history (tui.history) ----------------------------------------------------------------

    def history_origin(self, box_id: str) -> str | None:
        return self._editor_origin[0]

    def history_chosen(self, entry: Any) -> None:
        self.show_view("console")
        self._put_in_editor(entry.text, "from the history")
        self.query_one("#kg-editor", SparqlEditor).focus()

    def example_items(self) -> list[PickItem]:
        """The console's SPARQL examples, then the stepper's questions (simple and forum-style)."""
        from tui.pickers import PickItem

        items = [
            PickItem(e.title.removeprefix("↳ "), f"SPARQL · {e.source} · {e.expect}", ("sparql", e), more=e.query)
            for e in EXAMPLES
        ]
        if self._session is not None:
            items += [
                PickItem(q.question, f"question {q.id} · {category_of(q)}", ("question", q.id))
                for q in self._session.questions.all()
            ]
        return items

    def example_chosen(self, value: Any) -> None:
        kind, what = value
        if kind == "sparql":
            self.show_view("console")
            self.load_example(what)
            self.query_one("#kg-editor", SparqlEditor).focus()
            return
        self.show_view("stepper")
        questions = self.query_one("#kg-questions", OptionList)
        try:
            questions.highlighted = questions.get_option_index(what)
        except OptionDoesNotExist:
            return
        questions.focus()

    # --- worker bodies (threads) ---------------------------------------------------------------------------

    def _open(self, settings: Settings) -> SpinachSession:
        from engines.llm.client import llm_from_settings
        from engines.spinach.session import open_spinach

        llm = llm_from_settings(settings, clock=self.clock or time.perf_counter)
        return open_spinach(settings, llm=llm)

    def _session_now(self) -> SpinachSession:
        with self._session_lock:
            if self._session is None:
                self._session = self._open(self.settings)
            return self._session

    def _open_work(self) -> SpinachSession:
        return self._session_now()

    def _reopen_work(self, settings: Settings) -> tuple[Settings, SpinachSession]:
        from engines.llm.client import llm_from_settings

        session = self._session_now()
        fresh = session.with_llm(llm_from_settings(settings, clock=self.clock or time.perf_counter))
        fresh.settings = settings
        with self._session_lock:
            self._session = fresh
        return settings, fresh

    def _query_work(self, query: str) -> QueryRan:
        session = self._session_now()
        start = self._now()
        result = session.endpoint.execute(query)
        return QueryRan(result, self._now() - start)

    def _search_work(self, text: str) -> Searched:
        return Searched(text, self._session_now().endpoint.search(text))

    def _page_work(self, entity: str, came_from: str | None) -> PageOpened:
        endpoint = self._session_now().endpoint
        page = endpoint.page(entity)
        examples = endpoint.property_examples(page.id, 8) if page.datatype else ()
        return PageOpened(page, tuple(examples), came_from)

    def _run_work(self, question_id: str, cancel: threading.Event) -> Scored:
        session = self._session_now()
        question = session.question(question_id)
        trajectory = session.agent.run(question.question, emit=self._emit, cancel=cancel)
        return score_run(session, trajectory, question)

    def _load_work(self, path: str) -> tuple[list[Trajectory], str, Scored]:
        from engines.spinach.trajectory import load

        trajectories = load(Path(path).expanduser())
        if not trajectories:
            from engines.spinach.trajectory import TrajectoryError

            raise TrajectoryError(f"{path} holds no trajectory.")
        name = Path(path).name
        source = name if len(trajectories) < 2 else f"{name} · 1 of {len(trajectories)}"
        return trajectories, name, self._score_work(trajectories[0], source, len(trajectories) - 1)

    def _score_work(self, trajectory: Trajectory, source: str, others: int) -> Scored:
        return score_loaded(self._session_now(), trajectory, source=source, others=others)

    # --- engine events (main thread) -------------------------------------------------------------------------

    def on_agent_reported(self, message: AgentReported) -> None:
        from engines.spinach.events import AgentStarted, StepTaken

        message.stop()
        event = message.event
        if not self._stepper.running:
            return  # a stale event of a run that was stopped and replaced
        if isinstance(event, AgentStarted):
            self._stepper.started(event.policy, event.budget, event.total_budget)
        elif isinstance(event, StepTaken):
            self._stepper.took(event.step)
        elif isinstance(event, CallStarted) and event.function == "policy":
            self._stepper.asking_policy()
        else:
            return  # RolledBack: the rolled-back step carries its reason; the LLM's CallFinished: nothing new
        self._show_stepper()

    # --- worker outcomes (main thread) -----------------------------------------------------------------------

    def worker_succeeded(self, name: str, result: Any) -> None:
        if name == "open":
            self._adopt(result)
            self._set_status(
                "ready — F7 steps through the views: console · entity browser · trajectory stepper", "idle"
            )
        elif name == "reopen":
            settings, session = result
            self.settings = settings
            self._session = session
            self._set_status(f"ready — the agent now uses the {settings.backend} backend", "idle")
        elif name == "query":
            self._show_query(result)
        elif name == "search":
            self._show_hits(result)
        elif name == "page":
            self._show_page(result)
        elif name == "run":
            self._stepper.running = False
            self._cancel = None
            self._stepper.finish(result)
            self._show_finished(result)
        elif name == "load":
            if isinstance(result, tuple):
                self._loaded, self._loaded_name, scored = result
                self._loaded_pos = 0
            else:
                scored = result
            self._hide_error("kg-stepper-error")
            self._stepper.load(scored)
            self._show_finished(scored)
            self.query_one(StepView).focus()

    def worker_failed(self, name: str, error: BaseException) -> None:
        from engines.kg.dialect import SparqlRefused
        from engines.kg.pages import UnknownEntity

        message = describe_error(error)
        if name == "query":
            if isinstance(error, SparqlRefused):
                self.query_one(FeedbackBar).show("refused")
                self._show_error("kg-console-error", "Refused — nothing ran", message)
                self.query_one("#kg-results", KgResultsTable).show_nothing("refused")
                self._set_status("refused — the editor keeps the query: change it and run it again", "error")
            else:
                self.query_one(FeedbackBar).show(None)
                self._show_error("kg-console-error", "Error", message)
                self.query_one("#kg-results", KgResultsTable).show_nothing("error")
                self._set_status("error — see the error pane", "error")
        elif name in ("page", "search"):
            title = "No such entity" if isinstance(error, UnknownEntity) else "Error"
            self._show_error("kg-browser-error", title, message)
            self._set_status(f"{title.lower()} — {message}", "error")
        elif name in ("run", "load"):
            self._stepper.running = False
            self._cancel = None
            self._show_error(
                "kg-stepper-error",
                "Could not run the agent" if name == "run" else "Could not load the trajectory",
                message,
            )
            self._show_stepper()
            self._set_status("error — see the error pane", "error")
        else:
            self._set_status(f"error — {message}", "error")
            self._show_error("kg-console-error", "Could not open the knowledge graph", message)

    def _adopt(self, session: SpinachSession) -> None:
        self._session = session
        options: list[Option | None] = []
        from worlds.kg import CATEGORIES

        simple = session.questions.simple
        options.append(Option(Content.styled(f"Simple · {len(simple)} questions", "bold $text-accent"), disabled=True))
        options.extend(question_option(q) for q in simple)
        by_category: dict[str, list[KGQuestion]] = {}
        for q in session.questions.forum:
            by_category.setdefault(q.category, []).append(q)
        for category, questions in by_category.items():
            options.append(None)
            options.append(
                Option(
                    Content.assemble(
                        Content.styled(f"{category} ", "bold $text-accent"),
                        Content.styled(
                            truncate(CATEGORIES.get(category, ""), LIST_CHARS - len(category) - 1), "$text-accent"
                        ),
                    ),
                    disabled=True,
                )
            )
            options.extend(question_option(q) for q in questions)
        questions_list = self.query_one("#kg-questions", OptionList)
        questions_list.set_options(options)
        questions_list.border_subtitle = f"{len(simple)} simple · {len(session.questions.forum)} forum-style"

    # --- console and browser: the views render, the tab keeps the state ---------------------------------------

    def _show_query(self, ran: QueryRan) -> None:
        self._set_status(*self.query_one(ConsoleView).show_query(ran))

    def _show_hits(self, searched: Searched) -> None:
        box = self.query_one("#kg-search", Input)
        if searched.text != box.value:
            return  # a later keystroke has started another search
        self._hits = searched.hits
        self._hits_for = searched.text.strip()
        self.query_one(BrowserView).show_hits(searched.text, searched.hits)
        if self._open_first and searched.hits:
            self._open_first = False
            self.open_entity(searched.hits[0].id)

    def _show_page(self, opened: PageOpened) -> None:
        page = opened.page
        if opened.came_from is not None:
            self._history.append(opened.came_from)
        self._page = page
        claims = self.query_one(BrowserView).show_page(page, opened.examples, self._history)
        if self.view == "browser":
            claims.focus()
        self._set_status(
            f"{page.label} ({page.id}) — {count_rows(len(page.claims), 'claim')}"
            f"{' · ' + count_rows(len(self._history), 'page') + ' to go back to' if self._history else ''}",
            "idle",
        )

    # --- stepper ---------------------------------------------------------------------------------------------

    @property
    def _scored(self) -> Scored | None:
        """The trajectory shown, scored (None while a run has not finished)."""
        return self._stepper.scored

    def _show_stepper(self) -> None:
        self.query_one(StepperView).show(self._stepper)

    def _show_finished(self, scored: Scored) -> None:
        """The model has the whole trajectory: show it, its error if it has one, and how it ended."""
        self._show_stepper()
        trajectory = scored.trajectory
        if trajectory.error:
            self._show_error("kg-stepper-error", "The agent stopped with an error", trajectory.error)
        self._set_status(*status_line(self._stepper))

    # --- helpers ---------------------------------------------------------------------------------------------

    def _show_error(self, box_id: str, title: str, message: str) -> None:
        show_error(self.query_one(f"#{box_id}", Static), title, message)

    def _hide_error(self, box_id: str) -> None:
        self.query_one(f"#{box_id}", Static).display = False
