"""The Knowledge-graph tab's command-palette entries, from the tab's public state and actions: the views, the
console's query, stopping the agent, the examples and history pickers, the browser's way back, a trajectory file,
the step shown."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

from tui.area import PaletteCommand, in_turn
from tui.kg.keys import VIEWS

if TYPE_CHECKING:
    from tui.kg.tab import KgArea


def kg_commands(tab: KgArea) -> Iterator[PaletteCommand]:
    """The tab's palette entries ("Knowledge graph: …")."""
    t = tab.TITLE
    for name, title, key in VIEWS:
        yield PaletteCommand(
            f"{t}: show the {title.lower()}",
            f"{key.upper()} / Shift+{key.upper()} step through the views.",
            partial(tab.show_view, name),
        )
    yield PaletteCommand(
        f"{t}: run the query in the console",
        "Runs the editor's SPARQL (Ctrl+J).",
        in_turn(partial(tab.show_view, "console"), tab.run_query),
    )
    if tab.is_running:
        yield PaletteCommand(f"{t}: stop the running agent", "It takes no further action (Esc).", tab.cancel)
    yield from tab.runs.commands()
    yield PaletteCommand(f"{t}: search entities", "Focus the browser's search box.", partial(tab.show_view, "browser"))
    if tab.back_to is not None:
        yield PaletteCommand(f"{t}: back to {tab.back_to}", "The page before this one (Backspace).", tab.back)
    yield PaletteCommand(
        f"{t}: load a trajectory JSON",
        "Focus the path box of the stepper.",
        in_turn(partial(tab.show_view, "stepper"), tab.focus_trajectory_path),
    )
    if tab.loaded:
        yield PaletteCommand(
            f"{t}: list and search the {len(tab.loaded)} trajector{'y' if len(tab.loaded) == 1 else 'ies'} of {tab.loaded_name}",
            "A searchable list of every trajectory in the file; Enter shows one (t).",
            in_turn(partial(tab.show_view, "stepper"), tab.pick_trajectory),
        )
    if tab.stepper.steps:
        yield PaletteCommand(f"{t}: toggle the full observation", "v", tab.toggle_full_observation)
        yield PaletteCommand(
            f"{t}: explore this step",
            "Its query in the console, its page or search in the browser (e).",
            tab.explore_step,
        )
    if tab.stepper.question is not None:
        yield PaletteCommand(f"{t}: gold query of {tab.stepper.question.id} in the console", "g", tab.gold_to_console)


__all__ = ["kg_commands"]
