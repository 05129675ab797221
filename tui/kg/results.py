"""What the console, the browser and the stepper share: how SPARQL values read, the results table, the error box."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable, Static

from tui.widgets import DISPLAY_ROWS, ResultsTable, TextView, as_text, count_rows, truncate

LIST_CHARS = 39
"""Characters of a line in the lists on the left (they are 46 wide, with a border and a scrollbar)."""
MUTED = "$foreground-muted"
"""Secondary text in Content (``$text-muted`` is "auto 60%", which Content cannot resolve: it comes out white)."""
WIKIDATA_ENTITY = "http://www.wikidata.org/entity/"
ENTITY_ID = re.compile(r"^[QP]\d+$")


def entity_of(value: Mapping[str, str] | None, *, any_iri: bool = False) -> str | None:
    """The QID/PID of a SPARQL JSON value that is a Wikidata entity, else None; with ``any_iri`` (a graph
    without Wikidata's vocabulary, whose pages are any IRI's) every IRI, as itself."""
    if not value or value.get("type") != "uri":
        return None
    iri = value.get("value", "")
    if iri.startswith(WIKIDATA_ENTITY):
        local = iri[len(WIKIDATA_ENTITY) :]
        if ENTITY_ID.match(local):
            return local
    return iri if any_iri and iri else None


def short_value(value: Mapping[str, str] | None, prefixes: Mapping[str, str] | None = None) -> str:
    """A SPARQL JSON value as a person reads it: entities as their ID, IRIs prefixed (with ``prefixes``, a graph's
    own, else Wikidata's), literals as written."""
    if value is None:
        return "—"
    entity = entity_of(value)
    if entity is not None:
        return entity
    if value.get("type") == "uri":
        from engines.api import compact

        return compact(value.get("value", ""), prefixes)  # a form that pastes back into a query
    return value.get("value", "")


class KgResultsTable(ResultsTable):
    """Query results: entities shown as their IDs (Enter opens the highlighted one), IRIs prefixed."""

    class EntityChosen(Message):
        """Enter (or a click) on a cell that holds an entity."""

        def __init__(self, entity: str) -> None:
            super().__init__()
            self.entity = entity

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._entities: dict[tuple[int, int], str] = {}
        self.any_iri = False
        """The graph has no Wikidata vocabulary: every IRI has a page (the tab sets it when its graph opens)."""
        self.prefixes: Mapping[str, str] | None = None
        """Such a graph's own prefixes (its files' ``@prefix``es), which IRIs are written with; None: Wikidata's."""
        self._kg_result: tuple[list[str], list[Mapping[str, Mapping[str, str]]], bool] | None = None
        self._kg_sort: tuple[int, bool] | None = None  # (column, descending) of the last header click

    def show_bindings(
        self, columns: Sequence[str], bindings: Sequence[Mapping[str, Mapping[str, str]]], *, truncated: bool = False
    ) -> None:
        self._kg_result = (list(columns), list(bindings), truncated)
        self._kg_sort = None
        self._fill(columns, bindings, truncated=truncated)

    def show_nothing(self, subtitle: str = "") -> None:
        self._kg_result = None
        self._kg_sort = None
        super().show_nothing(subtitle)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a column's header: sort every row by that column's values (numbers as numbers, unbound
        last; ▲, again ▼)."""
        if self._kg_result is None:
            return
        event.stop()
        columns, bindings, truncated = self._kg_result
        column = event.column_index
        descending = self._kg_sort == (column, False)
        self._kg_sort = (column, descending)
        name = columns[column]
        bound = [b for b in bindings if name in b]
        bound.sort(key=lambda b: sparql_sort_key(b[name]), reverse=descending)  # stable
        self._fill(columns, bound + [b for b in bindings if name not in b], truncated=truncated)
        self.move_cursor(row=0, column=column, animate=False)

    def export_table(self) -> tuple[list[str], list[list[Any]]]:
        """Every row in the query's order (a sort is a view), each value as the endpoint wrote it."""
        if self._kg_result is None:
            return super().export_table()
        columns, bindings, _ = self._kg_result
        return list(columns), [[b[c]["value"] if c in b else "—" for c in columns] for b in bindings]

    def _fill(
        self, columns: Sequence[str], bindings: Sequence[Mapping[str, Mapping[str, str]]], *, truncated: bool
    ) -> None:
        self.clear(columns=True)
        self._full = []
        self._entities = {}
        muted = self.get_component_rich_style("results-table--null")
        for i, name in enumerate(columns):
            arrow = "" if self._kg_sort is None or self._kg_sort[0] != i else (" ▼" if self._kg_sort[1] else " ▲")
            self.add_column(Text(truncate(name) + arrow))
        for r, binding in enumerate(bindings[:DISPLAY_ROWS]):
            values = [short_value(binding.get(c), self.prefixes) for c in columns]
            full = [binding[c]["value"] if c in binding else "—" for c in columns]
            self._full.append(full)
            for c, column in enumerate(columns):
                entity = entity_of(binding.get(column), any_iri=self.any_iri)
                if entity is not None:
                    self._entities[(r, c)] = entity
            self.add_row(
                *(
                    Text(truncate(v), style=muted if c not in binding else "")
                    for v, c in zip(values, columns, strict=True)
                )
            )
        subtitle = count_rows(len(bindings))
        if truncated:
            subtitle += " (stopped at the row cap)"
        if len(bindings) > DISPLAY_ROWS:
            subtitle += f" · showing the first {DISPLAY_ROWS:,}"
        if self._kg_sort is not None:
            subtitle += f" · sorted by {columns[self._kg_sort[0]]}{' ▼' if self._kg_sort[1] else ' ▲'}"
        if self._entities:
            subtitle += " · Enter on an IRI opens its page" if self.any_iri else " · Enter on an ID opens its page"
        self.border_subtitle = subtitle
        self.tooltip = None

    def entity_at(self, row: int, column: int) -> str | None:
        return self._entities.get((row, column))

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        entity = self.entity_at(*event.coordinate)
        if entity is not None:
            event.stop()
            self.post_message(self.EntityChosen(entity))


def sparql_sort_key(value: Mapping[str, str]) -> tuple[int, Any]:
    """How a header click orders SPARQL values: numbers (a literal Python reads as one) as numbers, then text
    (case folded), then IRIs."""
    text = value.get("value", "")
    if value.get("type") != "uri":
        try:
            number = float(text)
        except ValueError:
            number = None
        if number is not None and number == number:  # not NaN
            return (0, number)
        return (1, text.casefold())
    return (2, text)


def error_box(box_id: str) -> Static:
    box = TextView(id=box_id, classes="kg-error")
    box.border_title = "Error"
    box.display = False
    return box


def show_error(box: Static, title: str, message: str) -> None:
    """Show ``message`` in an error box made by :func:`error_box` (both as text: they quote servers and files)."""
    box.border_title = as_text(title, one_line=True)
    box.update(message)
    box.display = True


__all__ = [
    "ENTITY_ID",
    "LIST_CHARS",
    "MUTED",
    "WIKIDATA_ENTITY",
    "KgResultsTable",
    "entity_of",
    "error_box",
    "short_value",
    "show_error",
]
