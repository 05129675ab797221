"""What the Knowledge-graph tab does with its workers' outcomes, on the main thread: the session opened (the
question list filled) or given another backend, a query's rows and feedback, the search hits, an entity page,
a finished or loaded trajectory in the stepper — and each view's errors in that view's error box.

:class:`KgOutcomes` is a mixin of :class:`tui.kg.tab.KgArea`: each job the tab starts with
:meth:`tui.area.WorkArea.run_engine` names one of these methods as its ``done`` or ``failed`` handler.  The
views render; the tab keeps the state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from tui.area import describe_error
from tui.kg.browser import BrowserView
from tui.kg.console import ConsoleView, FeedbackBar
from tui.kg.results import LIST_CHARS, KgResultsTable
from tui.kg.stepper import StepperView, StepView, question_option, status_line
from tui.widgets import count_rows, truncate

if TYPE_CHECKING:
    from engines.settings import Settings
    from engines.spinach.scoring import Scored
    from engines.spinach.session import SpinachSession
    from engines.spinach.trajectory import Trajectory
    from tui.kg.browser import PageOpened, Searched
    from tui.kg.console import QueryRan
    from worlds.kg import KGQuestion


class KgOutcomes:
    """The done / failed handlers of the Knowledge-graph tab's jobs (a mixin of :class:`tui.kg.tab.KgArea`)."""

    def _opened(self, session: SpinachSession) -> None:
        self._adopt(session)
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
        from engines.kg.dialect import SparqlRefused

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
        from engines.kg.pages import UnknownEntity

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

    def _adopt(self, session: SpinachSession) -> None:
        own = not session.endpoint.wikidata
        dialect = getattr(session.endpoint, "dialect", None)
        for table in self.query(KgResultsTable):  # a graph of its own vocabulary: any IRI opens a page
            table.any_iri = own
            table.prefixes = (
                dialect.namespaces if own and dialect is not None else None
            )  # its IRIs as its files write them
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
