"""The Knowledge-graph tab itself, its state in one class: its layout, its public actions, the messages of its
widgets and of the agent, what it shows when its workers' jobs end, its examples and history.

Its keys and help are :mod:`tui.kg.keys`, its palette entries :mod:`tui.kg.palette` (from the tab's public state
and actions), what its workers do :mod:`tui.kg.work`.

The views' widgets live in :mod:`tui.kg.console`, :mod:`tui.kg.browser` and :mod:`tui.kg.stepper`: they render
what the tab tells them and post what the user asked (``BrowserView.BackRequested``,
``StepperView.StepRequested``, …); they never call the tab.  The stepper's state is a
:class:`~tui.kg.stepper_model.StepperModel`; scoring a trajectory is the engine's
(:mod:`engines.spinach.scoring`), and so are the examples (:mod:`engines.kg.examples`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
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
from textual.widgets.option_list import OptionDoesNotExist

from engines.api import CallStarted, EngineError, Scored, SparqlExample
from engines.api import sparql_examples_for as examples_for
from tui import messages as m
from tui.area import PaletteCommand, StatusLine, WorkArea, describe_error
from tui.history import HISTORY_BINDINGS, BoxHistory, HistoryEntry
from tui.kg.browser import BrowserView, ClaimsTable, PageOpened, Searched
from tui.kg.console import (
    EDITOR_TITLE,
    ConsoleView,
    FeedbackBar,
    QueryRan,
    example_option,
)
from tui.kg.keys import BINDINGS, HELP, VIEWS
from tui.kg.palette import kg_commands
from tui.kg.results import (
    ENTITY_ID,
    MUTED,
    KgResultsTable,
    error_box,
    show_error,
)
from tui.kg.sparql import SparqlEditor
from tui.kg.stepper import (
    QuestionList,
    StepperView,
    StepStrip,
    StepView,
    category_of,
    status_line,
)
from tui.kg.stepper_model import StepperModel
from tui.kg.work import KgRunner
from tui.widgets import SqlEditor, TextBox, TextView, as_text, count_rows

if TYPE_CHECKING:
    from engines.api import EntityPage, GraphSource, SearchHit, Settings, SpinachSession, Step, Trajectory
    from tui.pickers import PickItem


def _reports() -> dict[type[Any], m.MessageOf]:
    from engines.api import AgentStarted, StepTaken

    def policy_asked(event: CallStarted) -> m.PolicyAsked | None:
        return m.PolicyAsked(event) if event.function == "policy" else None

    # RolledBack: the rolled-back step carries its reason; the LLM's CallFinished: nothing new
    return {AgentStarted: m.AgentStarted, StepTaken: m.StepTaken, CallStarted: policy_asked}


REPORTS = m.Reports(_reports)
"""The agent's events the stepper shows, each as its typed message."""


class KgArea(WorkArea):
    """The Knowledge-graph tab (see the module docstring)."""

    AREA_ID = "kg"
    HISTORY_BOXES = {"kg-editor": "sparql"}
    STATUS_ID = "kg-status"
    RESULTS_IDS = ("kg-results", "kg-answer-rows")
    REPORTS = REPORTS
    GROUPS = ("session", "console", "search", "page", "stepper")
    TITLE = "Knowledge graph"
    HELP = HELP
    BINDINGS = [*HISTORY_BINDINGS, *BINDINGS]

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self._view_status: dict[str, tuple[str, str]] = {}  # view -> its last status ("" -> the default)
        self._runner = KgRunner(clock=self.clock, now=lambda: self._now(), emit=lambda e: self._emit(e))
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
        # the built-in world's examples, or ones that mean something on the user's graph (--rdf / --endpoint)
        self._examples = examples_for(settings)
        first = self._examples[0]
        self._editor_origin = (first.query, f"{first.title} · {first.source}")  # as composed
        self.runs = self.box_history = BoxHistory(
            self,
            settings,
            name=self.AREA_ID,
            title=self.TITLE,
            boxes=self.HISTORY_BOXES,
            origin=self.history_origin,
            examples=self.example_items,
        )

    # --- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with TabbedContent(id="kg-views", initial="kg-console"):
            with TabPane("SPARQL console", id="kg-console"):
                with ConsoleView(id="kg-console-columns"):
                    listed = self._examples
                    examples = OptionList(*(example_option(i, e) for i, e in enumerate(listed)), id="kg-examples")
                    examples.border_title = "Examples · Enter loads one · ^L search"
                    examples.border_subtitle = f"{len(listed)} queries" + (
                        "" if listed[0].source != "any graph" else " for any graph"
                    )
                    yield examples
                    with Vertical(id="kg-console-right"):
                        editor = SparqlEditor(listed[0].query, id="kg-editor", soft_wrap=True, tab_behavior="focus")
                        editor.cursor_blink = self.cursor_blink
                        editor.graph = lambda: self._runner.graph  # completion and the ID's label: the tab's graph
                        editor.border_title = EDITOR_TITLE
                        editor.border_subtitle = as_text(f"{listed[0].title} · {listed[0].source}", one_line=True)
                        yield editor
                        yield FeedbackBar(id="kg-feedback")
                        yield error_box("kg-console-error")
                        results = KgResultsTable(id="kg-results")
                        results.border_title = "Results"
                        yield results
            with TabPane("Entity browser", id="kg-browser"):
                with BrowserView(id="kg-browser-columns"):
                    with Vertical(id="kg-browser-left"):
                        search = TextBox(placeholder="a label, an alias, a QID or a PID", id="kg-search")
                        search.border_title = "Search · Enter opens the first hit"
                        yield search
                        hits = OptionList(id="kg-hits")
                        hits.border_title = "Hits · Enter opens a page"
                        yield hits
                    with Vertical(id="kg-browser-right"):
                        head = VerticalScroll(TextView(id="kg-page-head"), id="kg-page-pane", classes="pane")
                        head.border_title = "Page"
                        yield head
                        yield error_box("kg-browser-error")
                        yield ClaimsTable(id="kg-claims")
            with TabPane("Trajectory stepper", id="kg-stepper"):
                with StepperView(id="kg-stepper-columns"):
                    with Vertical(id="kg-stepper-left"):
                        questions = QuestionList(id="kg-questions")
                        questions.border_title = "Questions · Enter runs the agent"
                        yield questions
                        load = TextBox(placeholder="path/to/trajectory.json", id="kg-load")
                        load.border_title = "Load a trajectory · Enter"
                        yield load
                    with Vertical(id="kg-stepper-right"):
                        yield TextView(id="kg-run-head")
                        yield StepStrip(id="kg-strip")
                        yield TextView(id="kg-budget")
                        yield error_box("kg-stepper-error")
                        with StepView(id="kg-step"):
                            yield TextView(id="kg-step-title")
                            yield TextView(id="kg-step-banner")
                            for name in ("thought", "action", "argument"):
                                with Horizontal(classes="kg-field"):
                                    yield Static(name.capitalize(), classes="kg-label")
                                    yield TextView(id=f"kg-step-{name}")
                            with Horizontal(classes="kg-field"):
                                yield Static("Observation", classes="kg-label")
                                yield TextView(id="kg-step-feedback")
                            yield TextView(id="kg-step-observation")
                        with Vertical(id="kg-answer"):
                            yield TextView(id="kg-answer-head")
                            answer = KgResultsTable(id="kg-answer-rows")
                            yield answer
        yield StatusLine(id="kg-status")

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
        self.run_engine(
            self._open_work, name="open", done=self._opened, failed=self._session_failed, busy=None, group="session"
        )

    def on_unmount(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
        self._runner.close()  # the SPARQL worker process is killed, not waited for

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

    def commands(self) -> Iterable[PaletteCommand]:
        return kg_commands(self)

    # --- public state (the palette and the tests read it) ----------------------------------------------

    @property
    def stepper(self) -> StepperModel:
        """The stepper's model: the trajectory shown, the step, the run."""
        return self._stepper

    @property
    def back_to(self) -> str | None:
        """The page Backspace goes back to (None: none)."""
        return self._history[-1] if self._history else None

    @property
    def loaded(self) -> tuple[Trajectory, ...]:
        """Every trajectory of the file loaded last."""
        return tuple(self._loaded)

    @property
    def loaded_name(self) -> str:
        """The name of the file loaded last."""
        return self._loaded_name

    def focus_trajectory_path(self) -> None:
        """Focus the stepper's box for the path of a trajectory file."""
        self.query_one("#kg-load", Input).focus()

    # --- workers: one exclusive group per view, so the views do not stop each other -------------------

    @property
    def is_running(self) -> bool:
        """True while the agent runs on a question (the stepper's only busy work)."""
        return self.group_busy("stepper") is not None

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
        self.run_engine(
            lambda: self._reopen_work(settings),
            name="reopen",
            done=self._reopened,
            failed=self._session_failed,
            busy="the session is being rebuilt",
            group="session",
        )

    # console

    def load_example(self, example: SparqlExample) -> None:
        """Put an example in the editor (without running it)."""
        self._put_in_editor(example.query, f"{example.title.removeprefix('↳ ')} · {example.source}")
        if example in self._examples:
            self.query_one("#kg-examples", OptionList).highlighted = self._examples.index(example)
        self._set_status(f"loaded “{example.title}” — Ctrl+J runs it", "idle")

    def _put_in_editor(self, text: str, source: str) -> None:
        editor = self.query_one("#kg-editor", SparqlEditor)
        self._editor_origin = (text, source)
        editor.text = text
        editor.border_subtitle = as_text(source, one_line=True)

    def example(self, key: str) -> SparqlExample:
        """The first example whose title contains ``key``."""
        for example in self._examples:
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
        self.runs.record("kg-editor", text)
        self.query_one(FeedbackBar).show(None, "running…")
        self.query_one("#kg-results", KgResultsTable).show_nothing("running…")
        self._set_status("running the query…", "running")
        self.run_engine(
            lambda: self._query_work(text),
            name="query",
            done=self._show_query,
            failed=self._query_failed,
            busy="a query is running",
            group="console",
        )
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
        self.run_engine(
            lambda: self._search_work(text),
            name="search",
            done=self._show_hits,
            failed=self._browser_failed,
            busy=None,
            group="search",
        )

    def open_entity(self, entity: str, *, push: bool = True) -> None:
        """Open the page of ``entity`` (a QID or PID; on a graph of its own vocabulary any IRI) in the browser; ``push``
        keeps the current page to go back to."""
        came_from = self._page.id if push and self._page is not None and self._page.id != entity else None
        self._set_status(f"opening {entity}…", "running")
        self.run_engine(
            lambda: self._page_work(entity, came_from),
            name="page",
            done=self._show_page,
            failed=self._browser_failed,
            busy=None,
            group="page",
        )

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
        try:
            question = self._runner.question(question_id)  # None while the graph is being opened
        except EngineError as error:  # an id not in the question sets, or a graph that has none
            message = describe_error(error)
            self._show_error("kg-stepper-error", "Could not run the agent", message)
            self._show_stepper()
            self.show_view("stepper")
            self._set_status(f"error — {message}", "error")
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
        self.run_engine(
            lambda: self._run_work(question_id, cancel),
            name="run",
            done=self._ran,
            failed=lambda error: self._stepper_failed(error, "Could not run the agent"),
            busy="the agent is running (Esc stops it)",
            group="stepper",
            cancelled=self._run_cancelled,
        )
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
        self.run_engine(
            lambda: self._load_work(path),
            name="load",
            done=self._loaded_file,
            failed=lambda error: self._stepper_failed(error, "Could not load the trajectory"),
            busy=None,
            group="stepper",
        )
        return True

    def show_loaded(self, n: int) -> None:
        """Show the ``n``-th (0-based) trajectory of the last file loaded."""
        if 0 <= n < len(self._loaded) and not self.is_running:
            trajectory = self._loaded[n]
            self._loaded_pos = n
            source = self._loaded_source(n)
            others = len(self._loaded) - 1
            self.run_engine(
                lambda: self._score_work(trajectory, source, others),
                name="load",
                done=self._show_loaded_one,
                failed=lambda error: self._stepper_failed(error, "Could not load the trajectory"),
                busy=None,
                group="stepper",
            )

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
            self.load_example(self._examples[int(option_id.removeprefix("example-"))])
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
            try:
                q = self._session.question(event.option.id)
            except EngineError:  # not a question of the sets: running it says why
                return
            self._set_status(f"{q.id} · {category_of(q)} · {q.question} — Enter runs it", "idle")

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area.id != "kg-editor":
            return
        text, source = self._editor_origin
        if source and event.text_area.text != text:
            event.text_area.border_subtitle = as_text(f"edited from {source}", one_line=True)
        elif source:
            event.text_area.border_subtitle = as_text(source, one_line=True)

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

    def on_browser_view_back_requested(self, message: BrowserView.BackRequested) -> None:
        message.stop()
        self.back()

    def on_browser_view_property_requested(self, message: BrowserView.PropertyRequested) -> None:
        message.stop()
        self.open_claim_property()

    def on_stepper_view_step_requested(self, message: StepperView.StepRequested) -> None:
        message.stop()
        self.step(message.delta)

    def on_stepper_view_edge_requested(self, message: StepperView.EdgeRequested) -> None:
        message.stop()
        self.step_to_edge(message.last)

    def on_stepper_view_full_observation_requested(self, message: StepperView.FullObservationRequested) -> None:
        message.stop()
        self.toggle_full_observation()

    def on_stepper_view_run_requested(self, message: StepperView.RunRequested) -> None:
        message.stop()
        self.run_highlighted_question()

    def on_stepper_view_explore_requested(self, message: StepperView.ExploreRequested) -> None:
        message.stop()
        self.explore_step()

    def on_stepper_view_gold_requested(self, message: StepperView.GoldRequested) -> None:
        message.stop()
        self.gold_to_console()

    def on_stepper_view_pick_requested(self, message: StepperView.PickRequested) -> None:
        message.stop()
        self.pick_trajectory()

    def on_example_chosen(self, message: m.ExampleChosen) -> None:
        self.example_chosen(message.value)

    def on_history_chosen(self, message: m.HistoryChosen) -> None:
        self.history_chosen(message.entry)

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

    # --- worker bodies (threads): the runner's, on the tab's settings ------------------------------------

    @property
    def _session(self) -> SpinachSession | None:
        return self._runner.session

    def _open_work(self) -> GraphSource:
        return self._runner.open(self.settings)

    def _reopen_work(self, settings: Settings) -> tuple[Settings, SpinachSession]:
        return self._runner.reopen(settings)

    def _query_work(self, query: str) -> QueryRan:
        return self._runner.query(self.settings, query)

    def _search_work(self, text: str) -> Searched:
        return self._runner.search(self.settings, text)

    def _page_work(self, entity: str, came_from: str | None) -> PageOpened:
        return self._runner.page(self.settings, entity, came_from)

    def _run_work(self, question_id: str, cancel: threading.Event) -> Scored:
        return self._runner.run(self.settings, question_id, cancel)

    def _load_work(self, path: str) -> tuple[list[Trajectory], str, Scored]:
        return self._runner.load(self.settings, path)

    def _score_work(self, trajectory: Trajectory, source: str, others: int) -> Scored:
        return self._runner.score(self.settings, trajectory, source, others)

    # --- engine events (main thread): the typed messages of REPORTS -------------------------------------------

    def on_agent_started(self, message: m.AgentStarted) -> None:
        if self._stepper.running:  # (else a stale event of a run that was stopped and replaced)
            event = message.event
            self._stepper.started(event.policy, event.budget, event.total_budget)
            self._show_stepper()

    def on_step_taken(self, message: m.StepTaken) -> None:
        if self._stepper.running:
            self._stepper.took(message.event.step)
            self._show_stepper()

    def on_policy_asked(self, message: m.PolicyAsked) -> None:
        if self._stepper.running:
            self._stepper.asking_policy()
            self._show_stepper()

    # --- examples and history (tui.history) -------------------------------------------------------------------

    def history_origin(self, box_id: str) -> str | None:
        return self._editor_origin[0]

    def history_chosen(self, entry: HistoryEntry) -> None:
        """Put a query run before back into the editor (not run)."""
        self.show_view("console")
        self._put_in_editor(entry.text, "from the history")
        self.query_one("#kg-editor", SparqlEditor).focus()

    def example_items(self) -> list[PickItem]:
        """The console's SPARQL examples, then the stepper's questions (simple and forum-style)."""
        from tui.pickers import PickItem

        items = [
            PickItem(e.title.removeprefix("↳ "), f"SPARQL · {e.source} · {e.expect}", ("sparql", e), more=e.query)
            for e in self._examples
        ]
        if self._session is not None:
            items += [
                PickItem(q.question, f"question {q.id} · {category_of(q)}", ("question", q.id))
                for q in self._session.questions.all()
            ]
        return items

    def example_chosen(self, value: Any) -> None:
        """An example: a SPARQL query into the editor, a question highlighted in the stepper (neither run)."""
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

    # --- worker outcomes (main thread): each job's done / failed handlers; the views render -------------------

    def _opened(self, graph: GraphSource) -> None:
        self._adopt(graph)
        self._set_status("ready — F7 steps through the views: console · entity browser · trajectory stepper", "idle")

    def _reopened(self, result: tuple[Settings, SpinachSession]) -> None:
        settings, session = result
        self.settings = settings
        self._set_status(f"ready — the agent now uses the {settings.backend} backend", "idle")

    def _ran(self, scored: Scored) -> None:
        self._stepper.running = False
        self._cancel = None
        self._stepper.finish(scored)
        self._show_finished(scored)

    def _run_cancelled(self) -> None:
        self._stepper.running = False

    def _loaded_file(self, loaded: tuple[list[Trajectory], str, Scored]) -> None:
        self._loaded, self._loaded_name, scored = loaded
        self._loaded_pos = 0
        self._show_loaded_one(scored)

    def _show_loaded_one(self, scored: Scored) -> None:
        self._hide_error("kg-stepper-error")
        self._stepper.load(scored)
        self._show_finished(scored)
        self.query_one(StepView).focus()

    def _query_failed(self, error: BaseException) -> None:
        from engines.api import SparqlRefused

        message = describe_error(error)
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

    def _browser_failed(self, error: BaseException) -> None:
        from engines.api import UnknownEntity

        message = describe_error(error)
        title = "No such entity" if isinstance(error, UnknownEntity) else "Error"
        self._show_error("kg-browser-error", title, message)
        self._set_status(f"{title.lower()} — {message}", "error")

    def _stepper_failed(self, error: BaseException, title: str) -> None:
        self._stepper.running = False
        self._cancel = None
        self._show_error("kg-stepper-error", title, describe_error(error))
        self._show_stepper()
        self._set_status("error — see the error pane", "error")

    def _session_failed(self, error: BaseException) -> None:
        message = describe_error(error)
        self._set_status(f"error — {message}", "error")
        self._show_error("kg-console-error", "Could not open the knowledge graph", message)

    def _adopt(self, graph: GraphSource) -> None:
        """The graph opened: how its IRIs are shown, and the question sets the stepper lists (the built-in world's,
        whose session was opened with its graph; a user's graph has none)."""
        own = not graph.wikidata
        dialect = graph.dialect
        for table in self.query(KgResultsTable):  # a graph of its own vocabulary: any IRI opens a page
            table.any_iri = own
            table.prefixes = dialect.namespaces if own else None  # its IRIs as its files write them
        session = self._session
        questions = (session.questions.simple, session.questions.forum) if session is not None else ((), ())
        self.query_one(StepperView).show_questions(*questions)

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
