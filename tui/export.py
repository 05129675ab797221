"""Export and copy: what a tab can export or copy, the export prompt, the cell view and the copy menu.

- :func:`table_sources` finds the tables of a tab that show something (results, rows to verify, LLM calls,
  a HybridQA table…); a tab adds its own (the knowledge graph's trajectory) through
  :meth:`tui.area.WorkArea.export_sources`.  Each is an :class:`ExportSource`: a name for the file, a title,
  columns and rows (the full values, not the cut ones the table shows).
- :class:`ExportScreen` is the path prompt (F9): a default file in ``~/cs224v-exports/`` named after the tab, the
  table and the time; the extension picks the format; the file is written by :func:`engines.export.export_rows`.
  An existing file is replaced only after a second Enter; any error is shown in the prompt, which stays open
  with the path as typed.
- :class:`CellView` shows the highlighted cell (or the highlighted row of a calls table) in full, scrollable (v).
- :class:`CopyMenu` (Shift+F9) lists what can be copied: the highlighted cell, its row, the query, the read-back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import DataTable, Input, OptionList, Select, Static, TextArea
from textual.widgets.input import Selection
from textual.widgets.option_list import Option

from tui.widgets import TextBox, TextView, as_text

if TYPE_CHECKING:
    from engines.api import Exported

EXPORT_DIR = Path("~") / "cs224v-exports"
"""Where the export prompt proposes to write by default (``~`` expanded when written; the app's
``export_dir``)."""
FORMATS_HINT = ".csv · .json · .jsonl · .parquet"
DEFAULT_EXT = ".csv"
"""The format of a name typed without an extension."""


@dataclass
class ExportSource:
    """Something a tab can export: ``name`` goes into the file name, ``title`` into the prompt."""

    name: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    widget: Widget | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        from tui.widgets import count_rows

        return f"{self.title} · {count_rows(len(self.rows))}"


def slug(text: str) -> str:
    """``"To verify · condition unknown"`` -> ``"to-verify"`` (the part before a ``·``, file-name safe)."""
    head = re.split(r"\s[·≈(]\s?", text, maxsplit=1)[0]
    return re.sub(r"[^a-z0-9]+", "-", head.lower()).strip("-") or "table"


def _plain(label: Any) -> str:
    return getattr(label, "plain", None) or str(label)


def _title_text(markup: str) -> str:
    """The text of a border title: Textual gives a title back as markup (a data title is set as text, so its
    brackets come back escaped)."""
    from textual.content import Content

    try:
        return Content.from_markup(markup).plain
    except Exception:  # not markup Textual wrote: the text as it is
        return markup


def table_title(table: DataTable) -> str:
    """What a person calls the table: its border title, else the tab it sits in, else its id."""
    title = _title_text(table.border_title or "")
    if not title:
        from textual.widgets import TabbedContent, TabPane

        pane = next((n for n in table.ancestors if isinstance(n, TabPane)), None)
        tabs = next((n for n in table.ancestors if isinstance(n, TabbedContent)), None)
        if pane is not None and pane.id and tabs is not None:
            try:
                title = _plain(tabs.get_tab(pane.id).label)
            except Exception:  # no such tab: fall back to the id
                title = ""
    return title or (table.id or type(table).__name__)


def table_data(table: DataTable) -> tuple[list[str], list[list[Any]]]:
    """The columns and rows of ``table``: the full values when the table keeps them (the shared tables of
    tui.widgets: ``export_table()``), else the text of its cells."""
    exporter = getattr(table, "export_table", None)
    if callable(exporter):
        return exporter()
    columns = [_plain(c.label) for c in table.ordered_columns]
    rows = [[_cell_text(table, r, c, v) for c, v in enumerate(table.get_row_at(r))] for r in range(table.row_count)]
    return columns, rows


def _cell_text(table: DataTable, row: int, column: int, shown: Any) -> str:
    """The text of a cell as the table was given it: a table of ``tui.widgets.SafeCells`` shows control
    characters escaped, but exports and copies keep them as they are."""
    raw = getattr(table, "raw_cell", None)
    given = raw(row, column) if callable(raw) else None
    return _plain(shown) if given is None else given


def is_shown(widget: Widget) -> bool:
    """Displayed, and in no hidden tab or view (every ancestor displayed)."""
    return widget.is_mounted and all(n.display for n in widget.ancestors_with_self if isinstance(n, Widget))


def table_sources(area: Widget) -> list[ExportSource]:
    """Every table of ``area`` that shows, with columns: the focused one first."""
    focused = area.screen.focused if area.is_mounted else None
    sources = []
    for table in area.query(DataTable):
        if not is_shown(table) or not table.columns:
            continue
        title = table_title(table)
        columns, rows = table_data(table)
        if not columns:
            continue
        sources.append(ExportSource(slug(title), title, columns, rows, table))
    sources.sort(key=lambda s: s.widget is not focused)
    return sources


def dataclass_source(name: str, title: str, items: Sequence[Any]) -> ExportSource:
    """Frozen dataclass records (a trajectory's steps) as a source: one row a record, one column a field."""
    from dataclasses import asdict, fields

    if not items:
        return ExportSource(name, title, [], [])
    columns = [f.name for f in fields(items[0])]
    rows = [[asdict(item)[c] for c in columns] for item in items]
    return ExportSource(name, title, columns, rows)


def default_path(tab: str, source: ExportSource, now: datetime, *, folder: Path = EXPORT_DIR, ext: str = ".csv") -> str:
    """``~/cs224v-exports/suql-results-20261201-190412.csv``."""
    return str(folder / f"{slug(tab)}-{source.name}-{now:%Y%m%d-%H%M%S}{ext}")


# --- where F9 writes: the path typed, under the rules of the command line's --out ----------------------


class TargetRefused(ValueError):
    """A path the export prompt will not write to; the message is one line for a person."""


CODE_ROOTS = tuple(Path(__file__).resolve().parent.parent / name for name in ("engines", "tui", "worlds"))
"""This program's own source folders: an export never lands in them."""


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()  # follows symlinks: a link to a source is the source
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def read_files(paths: Sequence[Path]) -> list[Path]:
    """The files the app reads, from the paths it was given (--db, --rdf): a folder stands for the files in it."""
    found: list[Path] = []
    for path in paths:
        try:
            if path.is_dir():
                found += [p for p in path.iterdir() if p.is_file()][:10_000]
            else:
                found.append(path)
        except OSError:
            continue
    return found


def export_target(typed: str, folder: Path = EXPORT_DIR, reads: Sequence[Path] = ()) -> Path:
    """Where the export prompt writes ``typed``: an absolute path (or ``~/…``) where it says, also when typed
    over the proposed file name (``~/cs224v-exports//tmp/x.csv`` is ``/tmp/x.csv``); a relative one under the
    exports ``folder``.  Refused (:class:`TargetRefused`) as the command line's ``--out`` is: a path outside the
    exports folder whose folder does not exist (a typo grows no tree of folders), a file that is a folder or
    not a regular file, a symbolic link (never written through nor replaced), one of the files the app reads
    (``reads``, compared by device and inode), or a file among this program's source code."""
    text = typed.strip()
    if "\x00" in text:
        raise TargetRefused("the file name holds a NUL character")
    prefix = str(folder).rstrip("/") + "/"
    inside = True
    if text.startswith(prefix):
        rest = text[len(prefix) :].lstrip()
        if rest.startswith(("/", "~")):  # an absolute path typed over the proposed name
            text, inside = rest, False
    elif text.startswith(("/", "~")):
        inside = False
    if inside:
        rest = text[len(prefix) :] if text.startswith(prefix) else text
        target = folder.expanduser() / rest
    else:
        target = Path(text).expanduser()
    shown = str(target)
    if inside and not target.resolve().is_relative_to(folder.expanduser().resolve()):
        raise TargetRefused(f"{rest} leaves the exports folder {folder}: type a path starting with / or ~ instead")
    if target.is_symlink():
        raise TargetRefused(f"{shown} is a symbolic link: an export is never written through one; give another name")
    if target.is_dir():
        raise TargetRefused(f"{shown} is a folder: give a file name")
    if not inside and not target.parent.is_dir():
        raise TargetRefused(f"the folder {target.parent} does not exist")
    resolved = target.resolve()
    if any(resolved.is_relative_to(root) for root in CODE_ROOTS):
        raise TargetRefused(f"{shown} is among this program's source files: give another place")
    identity = _identity(target)
    if identity is not None and any(_identity(source) == identity for source in reads):
        raise TargetRefused(f"{shown} is a file the app reads: writing there would replace your data")
    return target


# --- the highlighted cell ---------------------------------------------------------------------


def cursor_cell(table: DataTable) -> tuple[str, str] | None:
    """The highlighted cell in full: (what it is, its text); for a row cursor, the whole row, a field a line."""
    if not table.row_count or not table.columns:
        return None
    row, column = table.cursor_coordinate
    if table.cursor_type == "row":
        fields = cursor_row(table)
        if fields is None:
            return None
        return f"{table_title(table)} · row {row + 1}", "\n".join(f"{name}: {value}" for name, value in fields)
    full = getattr(table, "full_cell", None)
    value = full(row, column) if callable(full) else None
    if value is None:
        value = _cell_text(table, row, column, table.get_cell_at(table.cursor_coordinate))
    name = _plain(table.ordered_columns[column].label) if column < len(table.ordered_columns) else "?"
    return f"{table_title(table)} · row {row + 1} · {name}", value


def cursor_row(table: DataTable) -> list[tuple[str, str]] | None:
    """The highlighted row in full: (column, value) pairs."""
    if not table.row_count or not table.columns:
        return None
    row = table.cursor_coordinate.row
    full = getattr(table, "full_row", None)
    fields = full(row) if callable(full) else None
    if fields is None:
        names = [_plain(c.label) for c in table.ordered_columns]
        fields = list(zip(names, (_cell_text(table, row, c, v) for c, v in enumerate(table.get_row_at(row)))))
    return fields


def row_tsv(fields: Sequence[tuple[str, str]]) -> str:
    """A row as one tab-separated line (tabs and line breaks inside values become spaces)."""
    return "\t".join(re.sub(r"[\t\r\n]+", " ", value) for _, value in fields)


def row_json(table: DataTable, fields: Sequence[tuple[str, str]]) -> str:
    """The highlighted row as one JSON object with its values typed as F9's JSON export writes them (numbers
    stay numbers, lists lists): from the table's rows as the engine returned them when it keeps them and they
    line up with the rows shown; else the text of each cell."""
    from engines.api import to_jsonable

    exporter = getattr(table, "export_table", None)
    row = table.cursor_coordinate.row
    if callable(exporter):
        columns, rows = exporter()
        if len(rows) == table.row_count and 0 <= row < len(rows) and len(columns) == len(rows[row]):
            typed = {str(c): to_jsonable(v) for c, v in zip(columns, rows[row])}
            return json.dumps(typed, ensure_ascii=False)
    return json.dumps(dict(fields), ensure_ascii=False)


# --- what can be copied -----------------------------------------------------------------------


@dataclass(frozen=True)
class CopyItem:
    """One entry of the copy menu."""

    title: str
    text: str


QUERY_IDS: dict[str, str] = {"hqa-suql": "SUQL"}
"""Query panes that are not a SqlView or an editor: id -> what the menu calls them."""


def _static_text(static: Static) -> str:
    return _plain(static.content).strip()


def copy_items(area: Widget) -> list[CopyItem]:
    """What the copy menu offers in ``area``: the focused table's highlighted cell and row, every query
    shown (SQL views, editors), the read-back."""
    from tui.widgets import SqlView

    items: list[CopyItem] = []
    focused = area.screen.focused if area.is_mounted else None
    tables = [t for t in area.query(DataTable) if is_shown(t) and t.row_count]
    table = focused if isinstance(focused, DataTable) and focused in tables else (tables[0] if tables else None)
    if table is not None:
        cell = cursor_cell(table)
        if cell is not None and table.cursor_type != "row":
            items.append(CopyItem(f"Cell — {cell[0]}", cell[1]))
        fields = cursor_row(table)
        if fields:
            title = f"{table_title(table)} · row {table.cursor_coordinate.row + 1}"
            items.append(CopyItem(f"Row, tab-separated — {title}", row_tsv(fields)))
            items.append(CopyItem(f"Row as JSON — {title}", row_json(table, fields)))
    for widget in area.query(Widget):
        if not is_shown(widget):
            continue
        if isinstance(widget, SqlView) and widget.sql.strip():
            items.append(CopyItem(f"Query — {_pane_title(widget)}", widget.sql.strip()))
        elif isinstance(widget, TextArea) and widget.text.strip():
            items.append(CopyItem(f"Query — {_pane_title(widget)}", widget.text.strip()))
        elif isinstance(widget, Static) and widget.id in QUERY_IDS:
            text = _static_text(widget)
            if text and text != "—":
                items.append(CopyItem(f"Query — {QUERY_IDS[widget.id]}", text))
        elif isinstance(widget, Static) and (widget.id or "").endswith("readback"):
            text = _static_text(widget)
            if text and text != "—":
                items.append(CopyItem("Read-back", text))
    return items


def _pane_title(widget: Widget) -> str:
    for node in widget.ancestors_with_self:
        title = getattr(node, "border_title", None)
        if title:
            return _title_text(title).split(" · ")[0]
    return widget.id or type(widget).__name__


# --- screens ------------------------------------------------------------------------------------


class ExportScreen(ModalScreen["Exported | None"]):
    """The export prompt: which table (when the tab has several), the path, Enter writes, Esc cancels."""

    BINDINGS = [Binding("escape", "close", "Cancel", tooltip="Close the prompt without writing anything.")]

    def __init__(
        self,
        tab: str,
        sources: Sequence[ExportSource],
        now: datetime,
        *,
        folder: Path = EXPORT_DIR,
        reads: Sequence[Path] = (),
    ) -> None:
        super().__init__()
        self.reads = read_files(reads)  # the files the app reads (--db, --rdf): never written over
        self.tab = tab
        self.sources = list(sources)
        self.now = now
        self.folder = folder
        self.source = self.sources[0]
        self._confirm: str | None = None  # the path whose replacement a second Enter confirms

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog") as dialog:
            dialog.border_title = f"Export — {self.tab}"
            if len(self.sources) > 1:
                yield Select(
                    [(as_text(s.label, one_line=True), i) for i, s in enumerate(self.sources)],  # a title names data
                    value=0,
                    allow_blank=False,
                    compact=True,
                    id="export-source",
                )
            else:
                yield TextView(self.source.label, id="export-source-label")
            path = TextBox(
                default_path(self.tab, self.source, self.now, folder=self.folder),
                id="export-path",
                select_on_focus=False,
            )
            path.border_title = "File · the extension picks the format"
            yield path
            hint = f"Enter writes · Esc cancels · formats: {FORMATS_HINT} (no extension: {DEFAULT_EXT})"
            yield Static(hint, id="export-hint", markup=False)
            yield TextView("", id="export-message")  # an error quotes the path typed

    def on_mount(self) -> None:
        path = self.query_one("#export-path", Input)
        path.cursor_blink = getattr(self.app, "cursor_blink", True)
        path.focus()
        self.call_after_refresh(self._select_name)

    def _select_name(self) -> None:
        """Select the file's name: typing replaces it (``rows.parquet``, or ``rows`` for CSV), keeping the folder."""
        path = self.query_one("#export-path", Input)
        start = len(path.value) - len(Path(path.value).name)
        path.selection = Selection(start, len(path.value))

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id != "export-source" or not isinstance(event.value, int):
            return
        path = self.query_one("#export-path", Input)
        old_default = default_path(self.tab, self.source, self.now, folder=self.folder, ext=Path(path.value).suffix)
        self.source = self.sources[event.value]
        if path.value == old_default:  # not edited: follow the table
            path.value = default_path(self.tab, self.source, self.now, folder=self.folder, ext=Path(path.value).suffix)
        self._message("")

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "export-path" and event.value != self._confirm:
            self._confirm = None
            self._message("")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.write(event.value)

    def write(self, path: str) -> Exported | None:
        """Write the chosen source to ``path`` (a second call with the same existing path replaces it)."""
        from engines.api import ExportError, ExportExists, export_rows

        path = path.strip()
        if not path:
            self._message("Type a file name (ending in .csv, .json, .jsonl or .parquet).", error=True)
            return None
        if not Path(path).suffix and not path.endswith(("/", "~")):
            path += DEFAULT_EXT  # a bare name: CSV
        try:
            target = export_target(path, self.folder, self.reads)
        except TargetRefused as e:
            self._confirm = None
            self._message(f"Cannot write there: {e}.", error=True)
            return None
        try:
            done = export_rows(target, self.source.columns, self.source.rows, overwrite=self._confirm == path)
        except ExportExists as e:
            self._confirm = path
            self._message(f"{e.path} exists: Enter again replaces it, or change the name.", error=True)
            return None
        except ExportError as e:
            self._confirm = None
            self._message(str(e), error=True)
            return None
        self.dismiss(done)
        return done

    def _message(self, text: str, *, error: bool = False) -> None:
        message = self.query_one("#export-message", Static)
        message.update(text)
        message.set_class(error, "-error")

    def action_close(self) -> None:
        self.dismiss(None)


class CellView(ModalScreen[None]):
    """A value in full, scrollable; Esc closes, Ctrl+C copies it."""

    BINDINGS = [
        Binding("escape,v", "close", "Close", tooltip="Close the view."),
        Binding("ctrl+c", "copy", "Copy", key_display="^C", tooltip="Copy the whole value to the clipboard."),
    ]

    def __init__(self, title: str, value: str) -> None:
        super().__init__()
        self.title_text = title
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(id="cell-dialog") as dialog:
            dialog.border_title = as_text(self.title_text, one_line=True)  # names a table, a row and a column
            lines = self.value.count("\n") + 1
            dialog.border_subtitle = f"{len(self.value):,} characters" + (f" · {lines:,} lines" if lines > 1 else "")
            with VerticalScroll(id="cell-scroll"):  # shown as text, escaped (tui.terminal); copied as it is
                yield TextView(self.value or "(empty)", id="cell-value")
            yield Static("Esc closes · ↑/↓ PgUp/PgDn scroll · Ctrl+C copies", id="cell-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#cell-scroll").focus()

    def action_copy(self) -> None:
        copy_text(self, self.value, self.title_text)

    def action_close(self) -> None:
        self.dismiss(None)


class CopyMenu(ModalScreen[CopyItem | None]):
    """What can be copied in the tab: Enter copies the highlighted entry, Esc closes."""

    BINDINGS = [Binding("escape", "close", "Close", tooltip="Close the menu without copying.")]

    def __init__(self, items: Sequence[CopyItem]) -> None:
        super().__init__()
        self.items = list(items)

    def compose(self) -> ComposeResult:
        from tui.widgets import truncate

        with Vertical(id="copy-dialog") as dialog:
            dialog.border_title = "Copy to the clipboard"
            yield OptionList(  # a cell's text and a title are data: shown as text, never read as markup
                *(
                    Option(as_text(f"{item.title}\n  {truncate(item.text, 70)}"), id=str(i))
                    for i, item in enumerate(self.items)
                ),
                id="copy-options",
            )
            yield Static("Enter copies · Esc closes", id="copy-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#copy-options", OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        item = self.items[int(event.option.id or 0)]
        copy_text(self, item.text, item.title.split(" — ")[0])
        self.dismiss(item)

    def action_close(self) -> None:
        self.dismiss(None)


def copy_text(node: DOMNode, text: str, what: str) -> None:
    """Put ``text`` on the clipboard (OSC 52, which tmux and most terminals pass on) and say so."""
    app = node.app
    app.copy_to_clipboard(text)
    lines = text.count("\n") + 1
    size = f"{len(text):,} characters" + (f", {lines:,} lines" if lines > 1 else "")
    app.notify(f"{what} ({size}).", title="Copied", timeout=3)


__all__ = [
    "EXPORT_DIR",
    "CellView",
    "CopyItem",
    "CopyMenu",
    "ExportScreen",
    "ExportSource",
    "copy_items",
    "copy_text",
    "cursor_cell",
    "cursor_row",
    "dataclass_source",
    "default_path",
    "export_target",
    "table_sources",
]
