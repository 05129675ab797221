"""The entity browser's widgets: an entity page's claims (or a property's examples), the browser's keys (which
tell the tab what was asked in messages), what its workers return."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable, Input, OptionList, Static
from textual.widgets.option_list import Option

from tui.kg.results import LIST_CHARS, MUTED
from tui.widgets import SafeCells, as_text, count_rows, truncate

if TYPE_CHECKING:
    from engines.api import EntityPage, PropertyExample, SearchHit


class ClaimsTable(SafeCells, DataTable):
    """An entity page's claims (or a property's examples); each row may link to an entity."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.links: list[str | None] = []
        self.properties: list[str | None] = []
        self._first_chars = self.FIRST_CHARS

    COMPONENT_CLASSES = {"claims-table--qualifier"}

    def show_claims(self, page: EntityPage, examples: Sequence[PropertyExample] = ()) -> None:
        """The page's claims, each qualifier on a line of its own under the value; for a property,
        statements that use it (subject, then the value and its qualifiers)."""
        self.clear(columns=True)
        self.links, self.properties = [], []
        if examples or page.datatype:
            self.add_column("subject")
            self.add_column(f"{page.id} {truncate(page.label, 30)} →")
            self._first_chars = self._room_for_first([ex.value.render() for ex in examples])
            for ex in examples:
                self._add(ex.subject.render(), ex.value.render(), ex.qualifiers, ex.subject.id, page.id)
            self.border_title = as_text(f"Statements that use {page.id} ({page.label})", one_line=True)
            self.border_subtitle = (
                f"{count_rows(len(examples), 'example')} · Enter opens the subject"
                if examples
                else "no statement uses it"
            )
            return
        self.add_column("property")
        self.add_column("value · qualifiers")
        self._first_chars = self._room_for_first([c.value.render() for c in page.claims])
        for claim in page.claims:
            link = claim.value.id or next((v.id for _, _, v in claim.qualifiers if v.id), None)
            self._add(f"{claim.pid} {claim.property_label}", claim.value.render(), claim.qualifiers, link, claim.pid)
        self.border_title = as_text(f"Claims of {page.id}", one_line=True)
        self.border_subtitle = (
            f"{count_rows(len(page.claims), 'claim')} · Enter follows the value · "
            "o opens the property · Backspace goes back"
        )

    def _add(
        self, first: str, value: str, qualifiers: Sequence[tuple[str, str, Any]], link: str | None, prop: str | None
    ) -> None:
        self.links.append(link)
        self.properties.append(prop)
        cell = Text()
        cell.append(truncate(value, 60), style="underline" if link else "")
        qualifier_style = self.get_component_rich_style("claims-table--qualifier")
        for pid, label, qvalue in qualifiers:
            cell.append(f"\n ↳ {pid} {label}: {truncate(qvalue.render(), 48)}", style=qualifier_style)
        self.add_row(Text(truncate(first, self._first_chars)), cell, height=None)

    FIRST_CHARS = 32
    """Characters of the first column (a property's ID and label, a subject) when the table's width is not known."""

    def _room_for_first(self, values: Sequence[str]) -> int:
        """The first column's characters: what the values leave of the table's width (a property label is cut only
        when the table has no room for it), between 32 and 60."""
        room = self.scrollable_content_region.width
        if room <= 0:
            return self.FIRST_CHARS
        widest = max((min(len(v), 60) for v in values), default=0)
        return max(self.FIRST_CHARS, min(60, room - widest - 4))

    @property
    def current_link(self) -> str | None:
        row = self.cursor_row
        return self.links[row] if 0 <= row < len(self.links) else None

    @property
    def current_property(self) -> str | None:
        row = self.cursor_row
        return self.properties[row] if 0 <= row < len(self.properties) else None


class BrowserView(Horizontal):
    """The browser: its keys (outside the search box), which post :class:`BackRequested` and
    :class:`PropertyRequested` (the tab keeps the pages and opens them), and :meth:`show_hits` and
    :meth:`show_page`, which draw what the tab found."""

    class BackRequested(Message):
        """Backspace (or b, Alt+←): back to the page before this one."""

    class PropertyRequested(Message):
        """o: the page of the highlighted claim's property."""

    BINDINGS = [
        Binding("backspace,b,alt+left", "back", "Back", key_display="⌫/b", tooltip="Back to the page you came from."),
        Binding(
            "o",
            "open_property",
            "Open property",
            key_display="o",
            tooltip="Open the page of the highlighted claim's property.",
        ),
        Binding("slash", "search", "Search", key_display="/", tooltip="Focus the search box."),
    ]

    def action_back(self) -> None:
        self.post_message(self.BackRequested())

    def action_open_property(self) -> None:
        self.post_message(self.PropertyRequested())

    def action_search(self) -> None:
        self.query_one("#kg-search", Input).focus()

    def show_hits(self, text: str, hits: Sequence[SearchHit]) -> None:
        """The hits of a search for ``text``: label, ID, kind and description; how many items and properties."""
        listing = self.query_one("#kg-hits", OptionList)
        options = []
        for hit in hits:
            kind = hit.datatype or "item"
            head = Content.assemble(
                Content.styled(hit.label, "bold"),
                Content.styled(f" ({hit.id})", "$text-primary"),
                Content.styled(f" {kind}", f"{MUTED} italic"),
            )
            description = Content.styled(f"  {truncate(hit.description, LIST_CHARS - 2) or '—'}", MUTED)
            options.append(Option(Content("\n").join([as_text(head, one_line=True), as_text(description)]), id=hit.id))
        listing.set_options(options)
        if text.strip():
            items = sum(h.kind == "item" for h in hits)
            properties = len(hits) - items
            listing.border_subtitle = (
                f"{count_rows(items, 'item')} · {properties or 'no'} propert{'y' if properties == 1 else 'ies'}"
            )
            if not hits:
                listing.border_subtitle = "nothing matches"
        else:
            listing.border_subtitle = ""

    def show_page(self, page: EntityPage, examples: Sequence[PropertyExample], history: Sequence[str]) -> ClaimsTable:
        """An entity's page: its head (label, ID, description, aliases, the way back) and its claims; returns
        the claims table, its cursor on the first row."""
        self.query_one("#kg-browser-error", Static).display = False
        lines = [
            Content.assemble(
                Content.styled(page.label, "bold"),
                Content.styled(f"  {page.id}", "bold $text-primary"),
                Content.styled(f"  {page.datatype} property" if page.datatype else "", MUTED),
            )
        ]
        lines.append(Content.styled(page.description or "(no description)", "italic"))
        if page.aliases:
            lines.append(Content.assemble(Content.styled("also known as ", MUTED), ", ".join(page.aliases)))
        if history:
            trail = " ← ".join(list(history)[-4:][::-1])
            lines.append(Content.styled(f"Backspace: back to {trail}", MUTED))
        self.query_one("#kg-page-head", Static).update(Content("\n").join(lines))
        self.query_one("#kg-page-pane").border_title = as_text(f"Page · {page.label} ({page.id})", one_line=True)
        claims = self.query_one(ClaimsTable)
        claims.show_claims(page, examples)
        claims.move_cursor(row=0)
        return claims


@dataclass(frozen=True)
class Searched:
    text: str
    hits: tuple[SearchHit, ...]


@dataclass(frozen=True)
class PageOpened:
    page: EntityPage
    examples: tuple[PropertyExample, ...]
    came_from: str | None  # the page to go back to (None: a fresh start)


__all__ = ["BrowserView", "ClaimsTable", "PageOpened", "Searched"]
