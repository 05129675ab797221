"""Widgets every work area can reuse: SQL view and editor, results and LLM-call tables,
the error box, titled panes and the counter line.

They know how to *show* engine output (``engines.events`` records, result rows);
they hold no engine logic.  Styles live in ``app.tcss``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any, ClassVar, cast

from rich.cells import cell_len
from rich.highlighter import Highlighter
from rich.markup import escape as escape_markup
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content, Span
from textual.coordinate import Coordinate
from textual.highlight import highlight
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from engines.api import CallFailed, CallFinished, CallStarted
from tui.editor import QueryEditor, editor_bindings
from tui.terminal import MULTILINE, UNSAFE, escape_char, terminal_safe

CELL_CHARS = 40
"""Longest text a results cell shows; longer values end in an ellipsis."""
DISPLAY_ROWS = 1_000
"""Most rows the results table holds (the count above it is still the full one)."""


# --- text helpers ------------------------------------------------------------------------


def truncate(text: str, width: int = CELL_CHARS) -> str:
    """``text`` on one line, at most ``width`` characters (the last one ``…`` when cut).  The cut falls
    after a whole word when one ends in the last third of the room, so a label is not cut mid-word.
    Control characters, C1 and bidi controls show escaped (:func:`tui.terminal.terminal_safe`)."""
    flat = terminal_safe(" ".join(str(text).split()))
    if len(flat) <= width:
        return flat
    room = max(0, width - 1)
    space = flat.rfind(" ", 0, room + 1)
    if space >= room * 2 // 3:
        return flat[:space].rstrip(" ,;:—-") + "…"
    return flat[:room] + "…"


def display_value(value: Any) -> str:
    """A database value as a person reads it: lists comma-separated, NULL as ``NULL``."""
    from engines.api import to_jsonable  # loaded by then: a query has run

    plain = to_jsonable(value)
    if plain is None:
        return "NULL"
    if isinstance(plain, bool):
        return "true" if plain else "false"
    if isinstance(plain, list):
        return ", ".join("NULL" if v is None else v if isinstance(v, str) else json.dumps(v) for v in plain)
    if isinstance(plain, dict):
        return json.dumps(plain, ensure_ascii=False)
    if isinstance(plain, float):
        return f"{plain:g}"
    return str(plain)


def safe_text(text: Text, keep: str = MULTILINE) -> Text:
    """``text`` with its control characters, C1 and bidi controls shown escaped (those in ``keep`` kept: line
    feeds and tabs by default), each escape in the style of the character it stands for; ``text`` itself when it
    holds none."""
    plain = text.plain
    if UNSAFE.search(plain) is None:
        return text
    out = text.blank_copy()
    last = 0
    for m in UNSAFE.finditer(plain):
        if m.group() in keep:
            continue
        if m.start() > last:
            out.append_text(text[last : m.start()])
        piece = text[m.start() : m.end()]
        escaped = Text(escape_char(m.group()), style=piece.style)
        for span in piece.spans:
            escaped.stylize(span.style)
        out.append_text(escaped)
        last = m.end()
    if last < len(plain):
        out.append_text(text[last:])
    return out


def safe_content(content: Content, keep: str = MULTILINE) -> Content:
    """:func:`safe_text` for a :class:`~textual.content.Content`: its control characters, C1 and bidi controls
    shown escaped (those in ``keep`` kept), each escape in the styles of the character it stands for (the app's
    own styling stays); ``content`` itself when it holds none."""
    plain = content.plain
    if UNSAFE.search(plain) is None:
        return content
    pieces: list[Content] = []
    last = 0
    for m in UNSAFE.finditer(plain):
        if m.group() in keep:
            continue
        if m.start() > last:
            pieces.append(content[last : m.start()])
        escaped = escape_char(m.group())
        styles = content[m.start() : m.end()].spans
        pieces.append(Content(escaped, spans=[Span(0, len(escaped), span.style) for span in styles]))
        last = m.end()
    if last < len(plain):
        pieces.append(content[last:])
    return Content("").join(pieces)


def as_text(value: Any, *, one_line: bool = False) -> Content:
    """Text that comes from data (a value, a file or table name, a model's reply, a server's message) as the app
    shows it anywhere outside a table: never read as markup (a value's ``[b]`` or ``[link=…]`` stays text), its
    control characters, C1 and bidi controls escaped (:func:`tui.terminal.terminal_safe`).  ``one_line`` (a border
    title, a list entry) escapes line feeds and tabs too; otherwise they are kept.  A ``Content`` or ``Text`` the
    app styled keeps its styles."""
    keep = "" if one_line else MULTILINE
    if isinstance(value, Content):
        return safe_content(value, keep)
    if isinstance(value, Text):
        return safe_content(Content.from_rich_text(value), keep)
    return Content(terminal_safe(str(value), keep=keep))


class TextView(Static):
    """A :class:`Static` for text that holds data (a read-back, a passage, an error, a plan, a status line):
    a ``str`` is never read as markup, and what is drawn passes through :func:`as_text` (control characters, C1 and
    bidi controls escaped; line feeds and tabs kept), whatever ``update`` was given.  :attr:`content` keeps what
    was given, which copying reads: the clipboard gets the text as it is."""

    def __init__(self, content: Any = "", **kwargs: Any) -> None:
        kwargs["markup"] = False
        super().__init__(content, **kwargs)
        self._drawn: tuple[object, Any] | None = None  # (what was given, what is drawn of it)

    def render(self) -> Any:
        given = self.content
        if self._drawn is None or self._drawn[0] is not given:
            if isinstance(given, (str, Content, Text)):
                # a str is escaped before it becomes Content, which would drop its BEL, backspace and CR unseen
                drawn: Any = as_text(given)
            else:
                visual = self.visual
                drawn = safe_content(visual) if isinstance(visual, Content) else visual
            self._drawn = (given, drawn)
        return self._drawn[1]


def _picture(ch: str) -> str:
    n = ord(ch)
    if n < 0x20:
        return chr(0x2400 + n)  # the control pictures: ␛ for ESC, ␇ for BEL
    return "\u2421" if n == 0x7F else "\ufffd"  # ␡ for DEL; � for C1, bidi controls and lone surrogates


def pictured(text: str, keep: str = MULTILINE) -> str:
    """``text`` for a box that edits it: each control character, C1 and bidi control (except those in ``keep``)
    replaced by one visible character, a control picture (``␛`` for ESC) or ``�``.  The length stays, so the
    cursor and the selection stay on their characters; the text itself (what runs, what is kept) is not changed."""
    if UNSAFE.search(text) is None:
        return text
    return UNSAFE.sub(lambda m: m.group() if m.group() in keep else _picture(m.group()), text)


class ControlPictures(Highlighter):
    """An :class:`~textual.widgets.Input`'s highlighter that draws its value through :func:`pictured`: a value
    from a history file or a trajectory's path sends the terminal no escape sequence."""

    def highlight(self, text: Text) -> None:
        plain = text.plain
        if UNSAFE.search(plain) is not None:
            text.plain = pictured(plain, keep="")  # the same length: the spans stay where they are


class TextBox(Input):
    """An :class:`~textual.widgets.Input` that draws control characters, C1 and bidi controls as visible pictures
    (:class:`ControlPictures`); its value is what was typed or put in it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("highlighter", ControlPictures())
        super().__init__(*args, **kwargs)


class QuestionBox(TextBox):
    """A box a question is typed in: Enter posts :class:`~tui.messages.QuestionSubmitted` with the text as typed
    (the tab decides whether it is asked, and empties the box when it is)."""

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input is not self:
            return
        event.stop()
        from tui.messages import QuestionSubmitted

        self.post_message(QuestionSubmitted(self, event.value))


def safe_cell(cell: Any) -> Any:
    """A table cell (or column label) as it may reach the terminal: text with control characters, C1 and bidi
    controls shown escaped; other renderables as they are."""
    if isinstance(cell, str):  # DataTable reads a str cell or label as markup: a value's "[b]" or "[link=…]" is text
        return escape_markup(terminal_safe(cell, keep=MULTILINE))
    if isinstance(cell, Text):
        return safe_text(cell)
    if isinstance(cell, Content) and UNSAFE.search(cell.plain) is not None:
        return safe_text(Text(cell.plain))  # (no table fills cells with Content; its styles are not kept)
    return cell


class SafeCells:
    """A :class:`DataTable` mixin (before ``DataTable`` in the bases): every cell, row label and column label added
    or updated is shown through :func:`safe_cell`, so data never sends the terminal an escape sequence.  The text as
    given is kept (:meth:`raw_cell`) for export and copy, which keep the data as it is."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._raw_cells: dict[tuple[Any, Any], str] = {}

    def _remember(self, row_key: Any, column_key: Any, given: Any, shown: Any) -> None:
        if shown is not given:
            self._raw_cells[(row_key, column_key)] = getattr(given, "plain", None) or str(given)
        else:
            self._raw_cells.pop((row_key, column_key), None)

    def add_column(self, label: Any, *args: Any, **kwargs: Any) -> Any:
        return super().add_column(safe_cell(label), *args, **kwargs)  # type: ignore[misc]

    def add_row(self, *cells: Any, **kwargs: Any) -> Any:
        shown = [safe_cell(c) for c in cells]
        if kwargs.get("label") is not None:
            kwargs["label"] = safe_cell(kwargs["label"])
        key = super().add_row(*shown, **kwargs)  # type: ignore[misc]
        table = cast(DataTable, self)
        for column, given, safe in zip(table.ordered_columns, cells, shown):
            self._remember(key, column.key, given, safe)
        return key

    def update_cell(self, row_key: Any, column_key: Any, value: Any, **kwargs: Any) -> None:
        shown = safe_cell(value)
        super().update_cell(row_key, column_key, shown, **kwargs)  # type: ignore[misc]
        self._remember(row_key, column_key, value, shown)

    def clear(self, columns: bool = False) -> Any:
        self._raw_cells = {}
        return super().clear(columns)  # type: ignore[misc]

    def raw_cell(self, row: int, column: int) -> str | None:
        """The text of the cell at (row, column) as it was given, when showing it escaped something (else None)."""
        table = cast(DataTable, self)
        try:
            key = table.coordinate_to_cell_key(Coordinate(row, column))
        except Exception:  # no such cell
            return None
        return self._raw_cells.get((key.row_key, key.column_key))


def count_rows(n: int, noun: str = "row") -> str:
    """``"1 row"``, ``"13 rows"``, ``"10,000 rows"``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def sql_content(sql: str) -> Content:
    """SQL highlighted with the theme's colours."""
    return highlight(sql.strip(), language="sql")


VERDICT_STYLES = {"yes": "bold $text-success", "no": "$text-error", "unknown": "italic $text-warning"}
"""How an LLM verdict (Yes / No / Unknown) is styled in a call's detail line."""


def verdict_style(verdict: str, default: str = "bold") -> str:
    """The style of ``verdict`` (any case, surrounding blanks ignored); ``default`` for other text."""
    return VERDICT_STYLES.get(verdict.strip().lower(), default)


def is_cancellation(error: str) -> bool:
    """A failed call's message says it was cancelled (the message of engines.errors.Cancelled)."""
    return error.strip().rstrip(".").lower() == "cancelled"


def evidence_text(evidence: Sequence[str]) -> str:
    """The sentences an answer relied on, each once (``×2`` when several texts say it)."""
    if not evidence:
        return "—"
    counts: dict[str, int] = {}
    for sentence in evidence:
        counts[sentence] = counts.get(sentence, 0) + 1
    return " … ".join(s if n == 1 else f"{s} (×{n})" for s, n in counts.items())


def counter(label: str, value: str) -> Content:
    """One item of a counter line: a muted label and a bold value (``answer() 12``)."""
    return Content.assemble(Content.styled(label + " ", "$foreground-muted"), Content.styled(value, "bold"))


# --- panes ---------------------------------------------------------------------------------


def location_in(text: str, line: int, column: int) -> tuple[int, int]:
    """The editor location (0-based row, column) of an error's 1-based line and column, kept inside ``text``."""
    lines = text.split("\n") or [""]
    row = min(max(line - 1, 0), len(lines) - 1)
    return row, min(max(column - 1, 0), len(lines[row]))


def run_binding(tooltip: str, description: str = "Run") -> Binding:
    """Ctrl+Enter runs (Ctrl+J in terminals that send no Ctrl+Enter): one key and one label in every tab."""
    return Binding("ctrl+enter,ctrl+j", "run", description, key_display="^⏎/^J", tooltip=tooltip)


def pane(title: str, body: Static, *, id: str) -> VerticalScroll:
    """``body`` in a titled, scrolling pane (class ``pane``)."""
    scroll = VerticalScroll(body, id=id, classes="pane")
    scroll.border_title = title
    return scroll


class ErrorBox(TextView):
    """A tab's error pane: hidden until :meth:`show` puts a title and a message in it (both shown as text: a
    message quotes a server, a file name or a value)."""

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self.border_title = "Error"
        self.display = False

    def show(self, title: str, message: str) -> None:
        self.border_title = as_text(title, one_line=True)
        self.update(message)
        self.display = True

    def clear(self) -> None:
        self.display = False


# --- SQL view and editor -----------------------------------------------------------------


class SqlView(TextView):
    """Read-only, highlighted SQL with optional note lines under it (:attr:`sql`: the SQL shown, for copying).
    The SQL is the user's, a model's or a file's: it is shown as text (:class:`TextView`)."""

    sql: str = ""

    def show_sql(self, sql: str, notes: Iterable[Content | str] = ()) -> None:
        self.sql = sql
        parts: list[Content] = [sql_content(sql)]
        extra = [n if isinstance(n, Content) else Content(n) for n in notes]
        parts.extend(extra)
        self.update(Content("\n").join(parts))

    def show_note(self, note: str) -> None:
        """No SQL to show: a muted one-line explanation instead."""
        self.sql = ""
        self.update(Content.styled(note, "$foreground-muted italic"))


_KEYWORDS = frozenset(
    """select from where and or not in is null as on join left right inner outer full cross natural using group by
    order having limit offset distinct asc desc with union all except intersect case when then else end like ilike
    between any some array exists true false cast nulls first last over partition recursive lateral interval""".split()
)
_TOKEN = re.compile(
    r"(?P<comment>--.*)|(?P<string>'(?:[^']|'')*'?)|(?P<quoted>\"[^\"]*\"?)|(?P<number>\b\d+(?:\.\d+)?\b)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)(?P<call>\s*\()?|(?P<operator>@>|<@|::|\|\||[=<>!]+|[*+/%-])"
)
LLM_FUNCTIONS = frozenset({"answer", "summary"})


def sql_highlights(line: str) -> list[tuple[int, int, str]]:
    """Highlight ranges of one line of SQL or SUQL: (start byte, end byte, TextArea theme name).

    ``answer()`` and ``summary()`` get their own colour, so the LLM calls stand out.
    """
    out: list[tuple[int, int, str]] = []

    def add(start: int, end: int, name: str) -> None:
        out.append((len(line[:start].encode()), len(line[:end].encode()), name))

    for m in _TOKEN.finditer(line):
        kind = m.lastgroup if m.lastgroup != "call" else "word"
        if m.group("word") is not None:
            word = m.group("word")
            start, end = m.span("word")
            if m.group("call") is not None:
                add(start, end, "method.call" if word.lower() in LLM_FUNCTIONS else "function.call")
            elif word.lower() in _KEYWORDS:
                add(start, end, "keyword")
        elif kind == "comment":
            add(*m.span(), "comment")
        elif kind == "string":
            add(*m.span(), "string")
        elif kind == "number":
            add(*m.span(), "number")
        elif kind == "operator":
            add(*m.span(), "keyword.operator")
    return out


class SqlEditor(QueryEditor):
    """The SQL editor (textual-textarea's, see :mod:`tui.editor`); Ctrl+Enter (or Ctrl+J) posts
    :class:`SqlEditor.RunRequested`.  Highlighted from :func:`line_highlights` (SQL here; subclasses highlight
    other languages); completes the tab's tables and columns, keywords and functions (:attr:`schema` is the tab's
    ``schema_subject``: what its schema pane describes), and in the SUQL editor answer() and summary()."""

    BINDINGS = [
        run_binding(
            "Run the SQL in this editor through the sandbox (Ctrl+J for terminals without Ctrl+Enter).", "Run SQL"
        ),
        *editor_bindings(),  # after Run: the footer shows them in this order
    ]
    SUQL: ClassVar[bool] = False
    """Whether answer() and summary() are offered."""

    class RunRequested(Message):
        """The user asked to run the editor's SQL."""

        def __init__(self, editor: SqlEditor, sql: str) -> None:
            super().__init__()
            self.editor = editor
            self.sql = sql

        @property
        def control(self) -> SqlEditor:
            return self.editor

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.schema: Callable[[], Any] | None = None
        self._tables: tuple[Any, list[tuple[str, list[str]]]] | None = None

    def line_highlights(self, line: str) -> list[tuple[int, int, str]]:
        return sql_highlights(line)

    def drawn_line(self, line: str) -> str:
        """A line as drawn: its control characters, C1 and bidi controls as visible pictures (:func:`pictured`;
        tabs kept), so a query from a history file, a log or an example sends the terminal no escape sequence."""
        return pictured(line) if UNSAFE.search(line) is not None else line

    def schema_tables(self) -> list[tuple[str, list[str]]]:
        """The tables and columns of the tab's source now (read once per source; in the completion's thread)."""
        subject = self.schema() if self.schema is not None else None
        if subject is None:
            return []
        if self._tables is not None and self._tables[0] == subject.key:
            return self._tables[1]
        tables = subject_tables(subject)
        self._tables = (subject.key, tables)
        return tables

    def suggestions(self, word: str) -> Sequence[Any]:
        from engines.api import sql_suggestions

        return sql_suggestions(word, self.schema_tables(), suql=self.SUQL)


def subject_tables(subject: Any) -> list[tuple[str, list[str]]]:
    """The (table, columns) of a schema pane's subject (``tui.schema_pane.SchemaSubject``): a description made
    already, what a lazily described source knows so far, or the world's tables from its gate."""
    description = subject.ready
    if description is None and subject.data is not None:
        description = subject.data.schema
    if description is not None:
        tables = [(t.qualified, [c.name for c in t.columns]) for t in description.tables]
    elif subject.gate is not None:
        tables = [
            (name if schema in (None, "main") else f"{schema}.{name}", [c for c, _ in columns])
            for schema, name, columns in subject.gate.tables()
        ]
    else:
        tables = []
    if subject.tables is not None:
        wanted = set(subject.tables)
        tables = [t for t in tables if t[0] in wanted]
    return tables


# --- tables ------------------------------------------------------------------------------


class FreshWidths:
    """A DataTable mixin: repaint once the column widths are measured.

    DataTable measures new rows when it is idle, but cells painted before that
    stay cached at the old widths (the cache key does not hold the widths); a repaint
    in between (the elapsed counter ticks) would leave columns cut to their labels.
    """

    async def _on_idle(self, event: Any) -> None:
        table = cast(DataTable, self)
        before = [c.get_render_width(table) for c in table.columns.values()]
        await DataTable._on_idle(table, event)  # measure now; the base handler then finds nothing to do
        if before != [c.get_render_width(table) for c in table.columns.values()]:
            table.notify_style_update()  # drops the render caches and repaints


class RowCursor:
    """A DataTable mixin for tables that stream rows in: a new row is followed, and the
    highlighted row's key is at hand."""

    def follow_row(self, *cells: Any, key: str) -> None:
        """Add a row of ``cells`` under ``key`` and move the cursor onto it."""
        table = cast(DataTable, self)
        table.add_row(*cells, key=key)
        table.move_cursor(row=table.row_count - 1, animate=False)

    @property
    def cursor_key(self) -> str | None:
        """The key of the highlighted row (a call id in the calls tables); None when the table is empty."""
        table = cast(DataTable, self)
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value


FIRST_ROWS = 60
"""Rows a results table draws at once; the rest (up to :data:`DISPLAY_ROWS`) are added in chunks of
:data:`ROW_CHUNK` after each repaint, so a large result's first frame does not wait for them."""
ROW_CHUNK = 200
MIN_CELL_CHARS = 16
"""Narrowest a long column is cut to (with "…") so that the columns after it fit the table's width; a value of
this many characters or fewer is never cut."""
MAX_DECIMALS = 3
"""Most decimals a column of numbers shows (one rule per column: every number in it with as many)."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def column_decimals(values: Iterable[Any]) -> int | None:
    """How many decimals a column of numbers shows, the same for every number in it: enough for its most
    precise value up to :data:`MAX_DECIMALS` (more when a non-zero value would read as 0), 0 for whole numbers
    and a column of ints.  None when the column is not all numbers (NULLs aside): its values show as they are."""
    decimals = 0
    floats = False
    numbers = False
    for value in values:
        if value is None:
            continue
        if not _is_number(value):
            return None
        numbers = True
        if isinstance(value, int):
            continue
        f = float(value)
        if not math.isfinite(f):
            continue
        floats = True
        shown = f"{abs(f):.{MAX_DECIMALS}f}".rstrip("0")
        needed = len(shown) - shown.index(".") - 1
        if f != 0 and abs(f) < 10**-MAX_DECIMALS:  # 0.0001 is not 0.000: its first significant digits
            needed = min(9, 1 - math.floor(math.log10(abs(f))) + 1)
        decimals = max(decimals, needed)
    return decimals if floats else (0 if numbers else None)


def format_number(value: Any, decimals: int) -> str:
    """``value`` with ``decimals`` decimals (a whole number in a float column too: ``1.000`` beside ``0.818``)."""
    if isinstance(value, int):
        return str(value) + ("." + "0" * decimals if decimals else "")  # exact, however large
    f = float(value)
    if not math.isfinite(f):
        return display_value(value)
    return f"{f:.{decimals}f}"


def sort_key(value: Any) -> tuple[int, Any]:
    """How a header click orders a column's typed values: numbers as numbers, then text (case folded), dates,
    booleans, anything else as its text.  NULLs (and NaN) are put last by the caller, in either direction."""
    if _is_number(value):
        return (0, float(value))
    if isinstance(value, str):
        return (1, value.casefold())
    if isinstance(value, (datetime, date)):
        return (2, value.isoformat())
    if isinstance(value, bool):
        return (3, value)
    return (4, display_value(value))


def _is_null(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def fit_widths(labels: Sequence[int], natural: Sequence[int], room: int, *, pad: int = 2) -> list[int]:
    """Each column's width so that the columns fit ``room`` cells when they can: the widest columns are cut first,
    never below their label (nor :data:`MIN_CELL_CHARS`), so a label is never cut while there is room for it.
    ``pad``: the cells each column adds (DataTable's padding)."""
    widths = list(natural)
    floor = [min(n, max(lab, MIN_CELL_CHARS)) for lab, n in zip(labels, natural)]
    excess = sum(widths) + pad * len(widths) - room
    while excess > 0:
        cuttable = [i for i, w in enumerate(widths) if w > floor[i]]
        if not cuttable:
            break
        widest = max(widths[i] for i in cuttable)
        at_widest = [i for i in cuttable if widths[i] == widest]
        second = max([widths[i] for i in cuttable if widths[i] < widest] + [max(floor[i] for i in at_widest)])
        step = min(widest - second, -(-excess // len(at_widest))) or 1
        for i in at_widest:
            cut = min(step, widths[i] - floor[i], excess)
            widths[i] -= cut
            excess -= cut
            if excess <= 0:
                break
    return widths


class ResultsTable(SafeCells, FreshWidths, DataTable):
    """Columns and rows of a query; the row count (and truncation) in the border subtitle.

    Long values are cut to :data:`CELL_CHARS` characters for display, and the widest columns further so that every
    label fits the table's width when it can; the highlighted cell's full value is the table's tooltip, and
    :meth:`full_cell` (the cell view, copying).  A column of numbers shows every number with the same decimals
    (:func:`column_decimals`), right-aligned.  A click on a column's header sorts every row by that column's typed
    values (▲, again ▼; NULLs last; stable).  :meth:`export_table` gives every row as the query returned it, in the
    query's order (a sort is a view: F9 and the chart read the result, not the order shown).
    """

    COMPONENT_CLASSES = {"results-table--null"}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="cell", zebra_stripes=True, **kwargs)
        self._full: list[list[str]] = []
        # the columns and rows as given to show_rows, with the _full they were shown as (a subclass that
        # fills _full itself leaves them stale: export_table then reads _full)
        self._source: tuple[list[str], Sequence[Sequence[Any]], list[list[str]]] | None = None
        self._sort: tuple[int, bool] | None = None  # (column, descending) of the last header click
        self._truncated = False
        self._widths: list[int] = []  # the cell widths the rows were drawn at
        self._room = 0  # the width those were fitted to
        self._shown: list[Sequence[Any]] = []  # the source rows shown, in the order shown (added up to _full's length)
        self._decimals: list[int | None] = []  # each column's number format
        self._generation = 0  # a new _draw stops the chunks of the one before

    def show_rows(self, columns: Sequence[str], rows: Sequence[Sequence[Any]], *, truncated: bool = False) -> None:
        """Replace the table with these rows; ``truncated`` means the row cap cut the result."""
        self._source = ([str(c) for c in columns], rows, [])
        self._sort = None
        self._truncated = truncated
        self._draw()

    def _order(self) -> list[int]:
        """The indices of the source rows in the order shown (the query's, or the header click's)."""
        assert self._source is not None
        rows = self._source[1]
        if self._sort is None:
            return list(range(min(len(rows), DISPLAY_ROWS)))
        column, descending = self._sort
        cells = [row[column] if column < len(row) else None for row in rows]
        present = [i for i, v in enumerate(cells) if not _is_null(v)]
        present.sort(key=lambda i: sort_key(cells[i]), reverse=descending)  # stable either way
        return (present + [i for i, v in enumerate(cells) if _is_null(v)])[:DISPLAY_ROWS]

    def _draw(self) -> None:
        """Fill the table from the source rows: labels (with the sort's arrow), the rows shown, the widths."""
        assert self._source is not None
        columns, rows, _ = self._source
        order = self._order()
        shown = [rows[i] for i in order]
        decimals = [column_decimals(row[c] for row in shown if c < len(row)) for c in range(len(columns))]
        self._shown, self._decimals = shown, decimals
        full: list[list[str]] = []
        first = [self._texts(row) for row in shown[:FIRST_ROWS]]
        labels = [truncate(name) for name in columns]
        if self._sort is not None:
            arrow = " ▼" if self._sort[1] else " ▲"
            labels[self._sort[0]] += arrow
        natural = [
            max([cell_len(label)] + [min(cell_len(r[c]), CELL_CHARS) for r in first]) for c, label in enumerate(labels)
        ]
        self._room = self._content_width()
        self._widths = fit_widths([cell_len(lab) for lab in labels], natural, self._room) if self._room else natural
        self.clear(columns=True)
        self._full = full
        self._source = (columns, rows, full)
        for label, d in zip(labels, decimals, strict=True):
            self.add_column(Text(label, justify="right" if d is not None else "left"))
        self._generation += 1
        self._add_rows(first)
        if len(shown) > len(first):
            generation = self._generation
            self.call_after_refresh(self._more_rows, generation)
        subtitle = count_rows(len(rows))
        if self._truncated:
            subtitle += " (truncated at the row cap)"
        if len(rows) > DISPLAY_ROWS:
            subtitle += f" · showing the first {DISPLAY_ROWS:,}"
        if self._sort is not None:
            subtitle += f" · sorted by {columns[self._sort[0]]}{' ▼' if self._sort[1] else ' ▲'}"
        self.border_subtitle = subtitle
        self.tooltip = None

    def _texts(self, row: Sequence[Any]) -> list[str]:
        """A row's values as the table shows them (in full: the cells cut them)."""
        return [
            format_number(v, d) if d is not None and _is_number(v) else display_value(v)
            for v, d in zip(row, self._decimals, strict=True)
        ]

    def _add_rows(self, texts: list[list[str]]) -> None:
        """Add the next rows shown, given their texts."""
        null_style = self.get_component_rich_style("results-table--null")
        start = len(self._full)
        for values, row in zip(texts, self._shown[start : start + len(texts)], strict=True):
            self._full.append(values)
            self.add_row(
                *(
                    Text(
                        truncate(text, width),
                        style=null_style if raw is None else "",
                        justify="right" if d is not None else "left",
                    )
                    for text, raw, width, d in zip(values, row, self._widths, self._decimals, strict=True)
                )
            )

    def _more_rows(self, generation: int) -> None:
        """The next chunk of a large result's rows, after a repaint (none when the table was refilled since)."""
        if generation != self._generation or self._source is None or self._source[2] is not self._full:
            return
        start = len(self._full)
        self._add_rows([self._texts(row) for row in self._shown[start : start + ROW_CHUNK]])
        if len(self._full) < len(self._shown):
            self.call_after_refresh(self._more_rows, generation)

    @property
    def filling(self) -> bool:
        """Rows of the result are still being added (a large result, chunk by chunk)."""
        return self._source is not None and self._source[2] is self._full and len(self._full) < len(self._shown)

    def _content_width(self) -> int:
        """The cells the table has for its columns (0 before it is laid out)."""
        width = self.scrollable_content_region.width
        return max(0, width)

    def on_resize(self) -> None:
        """Fit the columns again when the table's width changed what fits."""
        if self._source is None or not self._source[0] or self._source[2] is not self._full:
            return
        if self._content_width() != self._room:
            cursor = self.cursor_coordinate
            self._draw()
            self.move_cursor(row=cursor.row, column=cursor.column, animate=False)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a column's header: sort by it (▲), again: the other way (▼)."""
        if self._source is None or self._source[2] is not self._full:
            return  # a subclass that fills the table itself
        event.stop()
        column = event.column_index
        if self._sort is not None and self._sort[0] == column:
            self._sort = (column, not self._sort[1])
        else:
            self._sort = (column, False)
        self._draw()
        self.move_cursor(row=0, column=column, animate=False)

    def show_nothing(self, subtitle: str = "") -> None:
        """An empty table: no columns, no rows."""
        self.clear(columns=True)
        self._full = []
        self._source = None
        self._sort = None
        self._generation += 1
        self.border_subtitle = subtitle
        self.tooltip = None

    def on_data_table_cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        row, column = event.coordinate
        if 0 <= row < len(self._full) and 0 <= column < len(self._full[row]):
            value = self._full[row][column]
            shown = self._widths[column] if column < len(self._widths) else CELL_CHARS
            self.tooltip = as_text(value) if len(value) > min(shown, CELL_CHARS) else None

    def _column_names(self) -> list[str]:
        if self._source is not None and self._source[2] is self._full:
            return list(self._source[0])
        return [getattr(c.label, "plain", str(c.label)) for c in self.ordered_columns]

    def export_table(self) -> tuple[list[str], list[list[Any]]]:
        """The columns and every row (the values as the engine returned them, all of them, in the query's order)."""
        if self._source is not None and self._source[2] is self._full:
            columns, rows, _ = self._source
            return list(columns), [list(row) for row in rows]
        return self._column_names(), [list(row) for row in self._full]

    def full_cell(self, row: int, column: int) -> str | None:
        """The text of a cell, not cut."""
        if 0 <= row < len(self._full) and 0 <= column < len(self._full[row]):
            return self._full[row][column]
        return None

    def full_row(self, row: int) -> list[tuple[str, str]] | None:
        """A row, not cut: (column, text) pairs."""
        if not 0 <= row < len(self._full):
            return None
        return list(zip(self._column_names(), self._full[row]))


# --- LLM calls: their records and tokens -----------------------------------------------------------


TOKEN_COLUMNS = (("tok in/out", "tokens"),)
"""The calls tables' token column: a call's prompt tokens / reply tokens, and the prompt tokens read from the
prompt cache when there were some (one narrow column: the tables are read in half the screen)."""
TOKEN_WIDTHS = {"tokens": 10}


def call_tokens_text(
    input_tokens: int | None, output_tokens: int | None, cached_input_tokens: int | None, *, estimated: bool = False
) -> str:
    """``1,204/38``, ``≈1,204/38`` for the simulated backend's estimate, ``1,204/38 (1,000 cached)`` when part of
    the prompt came from the prompt cache, ``—`` when the call reported no usage."""
    if input_tokens is None and output_tokens is None:
        return "—"
    a = "≈" if estimated else ""
    cached = f" ({cached_input_tokens:,} cached)" if cached_input_tokens else ""
    return f"{a}{input_tokens or 0:,}/{output_tokens or 0:,}{cached}"


class CallRecords:
    """A mixin for the tables of LLM calls: every call's record in full (for export and the cell view), and
    its tokens in the :data:`TOKEN_COLUMNS`.  The table calls :meth:`record_started`, :meth:`record_finished` or
    :meth:`record_failed` for each call event."""

    EXPORT_COLUMNS = (
        "call",
        "function",
        "row",
        "input",
        "output",
        "evidence",
        "latency_ms",
        "answer_cached",
        "input_tokens",
        "output_tokens",
        "cached_input_tokens",
        "cost_usd",
        "tokens_estimated",
        "model",
        "error",
    )

    @property
    def call_records(self) -> dict[str, dict[str, Any]]:
        """Call id -> its record (the fields of :attr:`EXPORT_COLUMNS`), in the order the calls started."""
        records = self.__dict__.get("_call_records")
        if records is None:
            records = self.__dict__["_call_records"] = {}
        return records

    def clear_records(self) -> None:
        self.call_records.clear()

    def _record(self, event: CallStarted | CallFinished | CallFailed) -> dict[str, Any]:
        """The record of ``event``'s call (made when the call is first seen)."""
        key = str(event.call_id)
        record = self.call_records.get(key)
        if record is None:
            record = self.call_records[key] = dict.fromkeys(self.EXPORT_COLUMNS)
            record.update(call=event.call_id, function=event.function)
        return record

    def record_started(self, event: CallStarted) -> None:
        """A call began: its row and its prompt."""
        self._record(event).update(row=event.row_key, input=event.prompt)

    def record_finished(self, event: CallFinished) -> None:
        """A call answered: its verdict, evidence, latency, tokens and cost."""
        record = self._record(event)
        record.update(
            output=event.verdict,
            evidence=list(event.evidence),
            latency_ms=round(event.latency_s * 1000, 3),
            answer_cached=event.cached,
            input_tokens=event.input_tokens,
            output_tokens=event.output_tokens,
            cached_input_tokens=event.cached_input_tokens,
            cost_usd=event.cost_usd,
            tokens_estimated=event.estimated,
            model=event.model,
        )
        if event.row_key is not None:
            record["row"] = event.row_key

    def record_failed(self, event: CallFailed) -> None:
        """A call failed (or was stopped): its error and latency."""
        self._record(event).update(error=event.error, latency_ms=round(event.latency_s * 1000, 3))

    def show_tokens(self, key: str, event: CallFinished) -> None:
        """Fill the token cell of the call ``key``."""
        table = cast(DataTable, self)
        column = next((c for k, c in table.columns.items() if k.value == "tokens"), None)
        if column is None:
            return
        text = call_tokens_text(
            event.input_tokens, event.output_tokens, event.cached_input_tokens, estimated=event.estimated
        )
        # a fixed-width column keeps its width (measuring on each update is quadratic)
        table.update_cell(key, "tokens", Text(text, justify="right"), update_width=column.auto_width)

    def export_table(self) -> tuple[list[str], list[list[Any]]]:
        return list(self.EXPORT_COLUMNS), [[r[c] for c in self.EXPORT_COLUMNS] for r in self.call_records.values()]

    def full_row(self, row: int) -> list[tuple[str, str]] | None:
        """The call on row ``row`` in full: every field of its record."""
        table = cast(DataTable, self)
        if not 0 <= row < table.row_count:
            return None
        key = table.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value
        record = self.call_records.get(str(key))
        if record is None:
            return None
        return [(name, _record_text(value)) for name, value in record.items()]


def _record_text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return " … ".join(map(str, value)) if value else "—"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


class CallsTable(CallRecords, RowCursor, SafeCells, FreshWidths, DataTable):
    """The LLM calls of a turn, streaming in.

    A row appears on :class:`~engines.events.CallStarted` showing ``…`` and is
    completed on :class:`~engines.events.CallFinished` (or marked failed on
    :class:`~engines.events.CallFailed`).  The highlighted row's full input and output
    are the table's tooltip.
    """

    COMPONENT_CLASSES = {"calls-table--failed"}
    COLUMNS = (
        ("#", "id"),
        ("function", "function"),
        *TOKEN_COLUMNS,
        ("input", "input"),
        ("output", "output"),
        ("latency", "latency"),
        ("cached", "cached"),
    )
    INPUT_CHARS = 18
    OUTPUT_CHARS = 24  # with the token column, latency and cached still show in half a 140-column screen

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._full: dict[str, tuple[str, str]] = {}
        self._cached = 0

    def on_mount(self) -> None:
        for label, key in self.COLUMNS:
            self.add_column(label, key=key)

    def reset(self, subtitle: str = "") -> None:
        """Remove every call."""
        self.clear()
        self._full.clear()
        self.clear_records()
        self._cached = 0
        self.border_subtitle = subtitle
        self.tooltip = None

    def call_started(self, event: CallStarted) -> None:
        key = str(event.call_id)
        self.record_started(event)
        self._full[key] = (event.prompt, "")
        self.follow_row(
            Text(key, justify="right"),
            Text(event.function),
            *(Text("") for _ in TOKEN_COLUMNS),
            Text(truncate(event.prompt, self.INPUT_CHARS)),
            Text("…"),
            Text("…", justify="right"),
            Text(""),
            key=key,
        )
        self._update_subtitle()

    def call_finished(self, event: CallFinished) -> None:
        key = self._ensure_row(event.call_id, event.function)
        self.record_finished(event)
        self._full[key] = (self._full[key][0], event.verdict)
        self._cached += int(event.cached)
        self.show_tokens(key, event)
        self.update_cell(key, "output", Text(truncate(event.verdict, self.OUTPUT_CHARS)), update_width=True)
        self.update_cell(key, "latency", Text(_milliseconds(event.latency_s), justify="right"), update_width=True)
        self.update_cell(key, "cached", Text("✓" if event.cached else "", justify="center"), update_width=True)
        self._update_subtitle()

    def call_failed(self, event: CallFailed) -> None:
        key = self._ensure_row(event.call_id, event.function)
        self.record_failed(event)
        self._full[key] = (self._full[key][0], f"failed: {event.error}")
        style = self.get_component_rich_style("calls-table--failed")
        self.update_cell(
            key, "output", Text(truncate(f"✗ {event.error}", self.OUTPUT_CHARS), style=style), update_width=True
        )
        self.update_cell(key, "latency", Text(_milliseconds(event.latency_s), justify="right"), update_width=True)
        self._update_subtitle()

    def _ensure_row(self, call_id: int, function: str) -> str:
        key = str(call_id)
        if key not in self._full:  # a finish without a start: still show the call
            self.call_started(CallStarted(call_id, function, ""))
        return key

    def _update_subtitle(self) -> None:
        calls = count_rows(self.row_count, "call")
        self.border_subtitle = f"{calls} · {self._cached} cached" if self._cached else calls

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        if key in self._full:
            prompt, verdict = self._full[key]
            self.tooltip = as_text(f"input: {prompt}\noutput: {verdict or '…'}")


def _milliseconds(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"
