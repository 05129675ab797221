"""The Knowledge-graph tab's command-palette entries, its examples (the console's SPARQL and the stepper's
questions, searchable) and its history (the SPARQL run, brought back into the editor).

:class:`KgPalette` is a mixin of :class:`tui.kg.tab.KgArea`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from textual.widgets import Input, OptionList
from textual.widgets.option_list import OptionDoesNotExist

from tui.area import PaletteCommand
from tui.kg.keys import VIEWS
from tui.kg.sparql import SparqlEditor
from tui.kg.stepper import category_of

if TYPE_CHECKING:
    from tui.pickers import PickItem


class KgPalette:
    """The palette, examples and history of the Knowledge-graph tab (a mixin of :class:`tui.kg.tab.KgArea`)."""

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
            for e in self._examples
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
