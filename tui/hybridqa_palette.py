"""The HybridQA tab's command-palette entries, its examples (every question of every table of the source,
searchable) and its history (the questions run, brought back without running them).

:class:`HybridPalette` is a mixin of :class:`tui.hybridqa.HybridArea`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from textual.widgets import OptionList

from tui.area import PaletteCommand
from tui.hybridqa_work import SOURCES
from tui.widgets import count_rows, truncate

if TYPE_CHECKING:
    from tui.pickers import PickItem


class HybridPalette:
    """The palette, examples and history of the HybridQA tab (a mixin of :class:`tui.hybridqa.HybridArea`)."""

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
