"""A searchable picker: a modal list with a search box — type to filter, ↑/↓ choose, Enter picks, Esc closes.

The examples picker (Ctrl+L) and the history picker (Ctrl+R) of every tab are :class:`SearchPicker`s of
:class:`PickItem`s; the picker dismisses with the chosen item's ``value`` (None on Esc).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui.widgets import TextBox, as_text

LINE_CHARS = 160
"""Characters of an item's text shown on its line (a multi-line query is shown on one line)."""


@dataclass(frozen=True)
class PickItem:
    """One entry: its text (a question, a query), a muted label (its source, its kind) and what picking it
    hands back."""

    text: str
    label: str
    value: Any
    more: str = ""  # matched too, not shown (an example's query)

    @property
    def haystack(self) -> str:
        return folded(f"{self.text} {self.label} {self.more}")


def folded(text: str) -> str:
    """``text`` for matching: case and accents dropped (``Café`` matches ``cafe``)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def matching(items: Sequence[PickItem], search: str) -> list[int]:
    """The positions of the items holding every word of ``search`` (any case or accent, in the text or the
    label)."""
    words = folded(search).split()
    haystacks = [item.haystack for item in items]
    return [i for i, hay in enumerate(haystacks) if all(w in hay for w in words)]


def one_line(text: str, limit: int = LINE_CHARS) -> str:
    """``text`` on one line (runs of white space as one space), cut at ``limit`` characters with ``…``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class SearchPicker(ModalScreen[Any]):
    """A searchable list of :class:`PickItem` (see the module docstring)."""

    SHOWN = 300
    """Matches listed at once; typing narrows the rest."""
    # CSS, not DEFAULT_CSS: the app's own ``Screen`` rule would win over a default one (an opaque background)
    CSS = """
    SearchPicker {
        align: center middle;
        background: $background 60%;
    }
    SearchPicker > #picker-dialog {
        width: 120;
        max-width: 95%;
        height: 80%;
        border: round $primary;
        border-title-color: $text-primary;
        border-title-style: bold;
        background: $surface;
        padding: 0 1;
    }
    /* the search box is a box of its own inside the dialog, a column in from the dialog's border: Input's default
       tall border, drawn against the dialog's, read as one ragged double border */
    SearchPicker #picker-search {
        padding: 0 1;
        border: round $primary 50%;
        border-title-color: $text-muted;
        background: $surface;
    }
    SearchPicker #picker-search:focus {
        border: round $accent;
    }
    SearchPicker #picker-list {
        height: 1fr;
        border-subtitle-color: $text-muted;
    }
    SearchPicker #picker-hint {
        color: $text-muted;
        padding: 0 1;
    }
    """
    BINDINGS = [
        Binding("escape", "close", "Close", tooltip="Close the list; nothing changes."),
        Binding("down", "move(1)", "Next", show=False, tooltip="Highlight the next entry."),
        Binding("up", "move(-1)", "Previous", show=False, tooltip="Highlight the previous entry."),
    ]

    def __init__(
        self, title: str, items: Sequence[PickItem], *, placeholder: str, hint: str, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.title_text = title
        self.items = list(items)
        self.placeholder = placeholder
        self.hint = hint
        self.shown: list[int] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-dialog") as dialog:
            dialog.border_title = as_text(f"{self.title_text} · {len(self.items)}", one_line=True)
            search = TextBox(placeholder=self.placeholder, id="picker-search")
            # the app's choice (steady cursors for the snapshot tests): a blinking cursor is drawn or not by when
            # the picture is taken, half a second apart
            search.cursor_blink = bool(getattr(self.app, "cursor_blink", True))
            search.border_title = "Search · Enter picks the highlighted one"
            yield search
            yield OptionList(id="picker-list")
            yield Static(self.hint, id="picker-hint", markup=False)

    def on_mount(self) -> None:
        self.refilter("")
        self.query_one("#picker-search", Input).focus()

    def refilter(self, search: str) -> None:
        found = matching(self.items, search)
        self.shown = found[: self.SHOWN]
        options = self.query_one("#picker-list", OptionList)
        options.set_options(self._option(n) for n in self.shown)
        more = len(found) - len(self.shown)
        options.border_subtitle = f"{len(found)} of {len(self.items)} match" + (
            f" · {more} not listed: type to narrow" if more else ""
        )
        if self.shown:
            options.highlighted = 0

    def _option(self, n: int) -> Option:
        item = self.items[n]
        parts = [Content(one_line(item.text))]
        if item.label:
            parts.append(Content.styled(f"  {item.label}", "$foreground-muted"))
        return Option(as_text(Content.assemble(*parts), one_line=True), id=f"pick-{n}")  # history: a file's lines

    @property
    def highlighted_item(self) -> PickItem | None:
        index = self.query_one("#picker-list", OptionList).highlighted
        return self.items[self.shown[index]] if index is not None and 0 <= index < len(self.shown) else None

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.refilter(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._pick(self.highlighted_item)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = event.option_index
        self._pick(self.items[self.shown[index]] if 0 <= index < len(self.shown) else None)

    def _pick(self, item: PickItem | None) -> None:
        if item is not None:
            self.dismiss(item.value)

    def action_move(self, step: int) -> None:
        options = self.query_one("#picker-list", OptionList)
        if step > 0:
            options.action_cursor_down()
        else:
            options.action_cursor_up()

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["PickItem", "SearchPicker", "folded", "matching", "one_line"]
