"""The HybridQA tab's command-palette entries, from the tab's public state and actions: run or cancel, the
source, the improvements, the focus, the examples and history pickers, a table."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

from tui.area import PaletteCommand
from tui.hybridqa_work import SOURCES
from tui.widgets import count_rows, truncate

if TYPE_CHECKING:
    from tui.hybridqa import HybridArea


def hybrid_commands(tab: HybridArea) -> Iterator[PaletteCommand]:
    """The tab's palette entries ("HybridQA: …")."""
    question = tab.question
    what = f"“{truncate(question.question, 60)}”" if question else "the chosen question"
    yield PaletteCommand("HybridQA: run the chosen question", f"Runs {what} (Ctrl+J).", tab.run_question)
    if tab.is_busy:
        yield PaletteCommand("HybridQA: cancel the running question", "No further LLM call is made (Esc).", tab.cancel)
    for source in SOURCES:
        current = " (current)" if source == tab.source else ""
        what = (
            "the 50 generated flag-bearer tables"
            if source == "generated"
            else "the real HybridQA dev tables (they run with the claude backend)"
        )
        yield PaletteCommand(
            f"HybridQA: source {source}{current}", f"Show {what} (s).", partial(tab.set_source, source)
        )
    for name, help_text in (
        ("fallback", "answer() tries the row's other passage columns"),
        ("retry", "parse again when nothing comes back"),
    ):
        on = getattr(tab, name)
        yield PaletteCommand(
            f"HybridQA: switch the {name} {'off' if on else 'on'}",
            f"Improvement {'1' if name == 'fallback' else '2'}: {help_text} ({name[0]}).",
            partial(tab.set_improvement, name, not on),
        )
    yield PaletteCommand("HybridQA: focus the questions", "Choose with ↑/↓, run with Enter.", tab.focus_default)
    yield PaletteCommand(
        "HybridQA: focus the rows", "Highlight a linked (underlined) cell to read its passage.", tab.focus_rows
    )
    yield from tab.runs.commands()
    session = tab.session
    if session is not None:
        for t in session.world.tables:
            current = " (current)" if tab.table is not None and t.name == tab.table.name else ""
            yield PaletteCommand(
                f"HybridQA: table {t.table_id}{current}",
                f"{t.title} · {count_rows(len(t.rows))}, {len(t.questions)} questions",
                partial(tab.set_table, t.name),
            )


__all__ = ["hybrid_commands"]
