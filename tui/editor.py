"""The query editors' common machinery, on textual-textarea (the editor harlequin uses).

:class:`QueryEditor` is a ``textual_textarea.TextEditor`` (a container: its text area, its completion list, a
footer for the path typed to open or save a file) whose text area is a :class:`QueryArea`: our highlighting (the
subclass's :meth:`QueryEditor.line_highlights`), control characters drawn as pictures, Tab leaving the editor when
no completion list is open (as ``tab_behavior="focus"`` did), and Esc left to the tab (cancel a run) unless it
closes the list.  Its subclasses (``SqlEditor`` and ``SuqlEditor`` in ``tui/widgets.py`` and ``tui/suql_keys.py``,
``SparqlEditor`` in ``tui/kg/sparql.py``) say what completes a word (:meth:`QueryEditor.suggestions`, run in a
worker thread; a key typed meanwhile drops the answer).

The keys (each shown in the help; none is a bare letter):

- Ctrl+Enter / Ctrl+J run (``RunRequested``); Tab or Enter take the highlighted completion, Esc closes the list;
- Ctrl+A selects all, Ctrl+K clears (undoable), Ctrl+Z undoes, Ctrl+Y or Ctrl+Shift+Z redoes;
- Ctrl+O opens a query file (in the SUQL editor Ctrl+E: its Ctrl+O compares the modes), Ctrl+S saves one;
  Ctrl+F finds, Ctrl+G goes to a line.  Opening and saving go through :func:`engines.query_files.read_query` and
  :func:`~engines.query_files.save_query`: a file over the ``editor_max_file_bytes`` setting or not UTF-8 is
  refused and the editor keeps its text; a query is saved only as a query file, never through a symbolic link,
  and over an existing one only after a second Enter.  Every refusal is one line under the path.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.css.scalar import Scalar, Unit
from textual.widgets import Input, TextArea
from textual.worker import get_current_worker
from textual_textarea import TextEditor
from textual_textarea.autocomplete import CompletionList
from textual_textarea.cancellable_input import CancellableInput
from textual_textarea.containers import FooterContainer, TextContainer
from textual_textarea.messages import TextAreaHideCompletionList, TextAreaSaved
from textual_textarea.text_editor import TextAreaPlus

if TYPE_CHECKING:
    from engines.api import Suggestion

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
LABEL_CHARS = 48
"""Characters of a completion's label shown (a longer one is cut with an ellipsis)."""
KIND_CHARS = 12
"""Characters of its kind shown at least (more when the label leaves room on the line)."""
LINE_CHARS = 60


def _plain(text: str, width: int) -> str:
    """``text`` as one safe line: control characters as U+FFFD, cut at ``width``."""
    text = _CONTROL.sub("\ufffd", text)
    return text if len(text) <= width else text[: width - 1] + "…"


WIDE_ONLY_ACTIONS = frozenset({"editor_open", "editor_open_e", "editor_save", "editor_clear"})
"""The editor's keys the footer shows only where there is room (the app's ``-wide`` screens: 110 columns and more;
at 80 columns it holds the tab's keys first).  ``tui.app.AppFooter`` marks them; ``app.tcss`` hides them."""


def editor_bindings(open_key: str = "ctrl+o") -> list[BindingType]:
    """The editing keys every query editor has (the run key is each editor's own)."""
    return [
        Binding("ctrl+a", "select_all", "Select all", key_display="^A", show=False, tooltip="Select the whole query."),
        Binding(
            "ctrl+k",
            "editor_clear",
            "Clear",
            key_display="^K",
            tooltip="Clear the editor (Ctrl+Z brings the text back).",
        ),
        Binding("ctrl+z", "undo", "Undo", key_display="^Z", show=False, tooltip="Undo the last edit."),
        Binding(
            "ctrl+y,ctrl+shift+z",
            "redo",
            "Redo",
            key_display="^Y",
            show=False,
            tooltip="Redo what Ctrl+Z undid (Ctrl+Shift+Z where the terminal sends it).",
        ),
        Binding(
            open_key,
            "editor_open",
            "Open",
            key_display="^" + open_key.rsplit("+", 1)[-1].upper(),
            tooltip="Open a query file into the editor (the editor keeps its text if the file is refused).",
        ),
        Binding("ctrl+s", "editor_save", "Save", key_display="^S", tooltip="Save the query to a query file."),
        Binding("ctrl+f", "find", "Find", key_display="^F", show=False, tooltip="Find text in the query."),
        Binding("ctrl+g", "goto_line", "Go to line", key_display="^G", show=False, tooltip="Go to a line."),
    ]


EDITOR_HELP = """\
## Query editors

The Restaurants tab's SQL editor, the SUQL console and the SPARQL console are textual-textarea's editor (the one
harlequin uses). **Completion** opens as you type: in SQL and SUQL the tables and columns of the tab's data (what the
schema pane shows), SQL's keywords, DuckDB's functions, and in SUQL `answer(column, 'question')` and
`summary(column)`; in SPARQL the graph's prefixes first (`wd:`, `wdt:` …, or your files' own), then its entities and
properties found by label, with their IDs (`wdt:P31 — instance of`, `wd:Q1000 — human`; `wdt:inst` looks among
properties only). The lookup is one query to the graph, bounded in time (3 s, `CS224V_EDITOR_LOOKUP_TIMEOUT_S`) and
rows, sent after a short pause; a key typed meanwhile drops it. **Tab** or **Enter** puts the highlighted entry in,
**↑/↓** move in the list, **Esc** closes it (with no list open, Esc is the tab's: it cancels a run). The line under
the SPARQL editor names the QID or PID under the cursor (looked up once a session).

**Ctrl+A** selects all, **Ctrl+K** clears the editor, **Ctrl+Z** undoes (a clear, an opened file, a completion),
**Ctrl+Y** (or Ctrl+Shift+Z) redoes, **Ctrl+F** finds, **Ctrl+G** goes to a line. **Ctrl+O** opens a query file and
**Ctrl+S** saves one (in the SUQL editor **Ctrl+E** opens: there Ctrl+O compares the modes): type the path under the
editor, Enter, Esc cancels. A file over 1 MiB (`CS224V_EDITOR_MAX_FILE_BYTES`) or not UTF-8 is refused and the editor
keeps its text; a query is saved only as a query file (.sql, .suql, .rq, .sparql, .txt; a bare name gets the
editor's own), never through a symbolic link, and over an existing file only on a second Enter.

"""


class QueryCompletionList(CompletionList):
    """textual-textarea's completion list, wider, whose answers are dropped when a later key started another
    lookup (its worker is exclusive: the later one cancels it) and whose completer's errors become no list."""

    DEFAULT_CSS = """
    QueryCompletionList {
        width: 64;
        max-height: 8;
        background: $panel;
        scrollbar-size-vertical: 1;
    }
    """
    INNER_CONTENT_WIDTH = 62
    MAX_ROWS = 8

    @on(CompletionList.CompletionsReady)
    def _drop_stale(self, event: CompletionList.CompletionsReady) -> None:
        """An answer that comes after the list was closed (a space typed, Esc, the cursor moved) is not shown."""
        editor = next((a for a in self.ancestors if isinstance(a, QueryEditor)), None)
        if editor is None or editor.text_input is None or editor.text_input.completer_active is None:
            event.stop()
            event.prevent_default()
            return
        self.call_after_refresh(self._place)  # once the answer's entries are in

    def watch_is_open(self, is_open: bool) -> None:
        super().watch_is_open(is_open)
        if is_open:
            self._place()

    def on_resize(self, event: events.Resize) -> None:
        """textual-textarea shrinks the list a row per resize until it fits, so where it ends (and whether the
        last entry is hidden under the editor's edge) depends on how the resizes interleave with the layout.
        Placed here in one step instead: its entries' height up to 8 rows, below the cursor if they fit there,
        else above, else on the larger side with a scrollbar; closed when neither side has a row."""
        self._place()

    def _place(self) -> None:
        if not self.is_open or not self.is_mounted:
            return
        cursor_y = self.cursor_offset[1]
        below, above = self.parent_height - cursor_y - 1, cursor_y
        want = min(self.MAX_ROWS, max(1, self.option_count))
        if want <= below:
            rows, y = want, cursor_y + 1
        elif want <= above:
            rows, y = want, cursor_y - want
        elif max(below, above) >= 1:
            rows = max(below, above)
            y = cursor_y + 1 if below >= above else cursor_y - rows
        else:
            self.post_message(TextAreaHideCompletionList())
            return
        if self.styles.max_height != Scalar(rows, Unit.CELLS, Unit.PERCENT):
            self.styles.max_height = Scalar(rows, Unit.CELLS, Unit.PERCENT)
        if self.y_offset != y:
            self.set_offset(self.x_offset, y)

    @work(thread=True, exclusive=True, group="completers")
    def show_completions(self, prefix: str, completer: Any) -> None:
        worker = get_current_worker()
        try:
            matches = completer(prefix) if completer is not None else []
        except Exception:  # a lookup that failed is no list (the editor's status line says why)
            matches = []
        if worker.is_cancelled:
            return
        if matches:
            self.post_message(self.CompletionsReady(prefix=prefix, items=matches))
        else:
            self.post_message(TextAreaHideCompletionList())


_PREFIXED_NAME = re.compile(r"(?<![\w:-])([A-Za-z][\w-]*:)[\w-]*$")
"""A SPARQL prefixed name ending at the cursor (its prefix, with the colon, is group 1)."""


class QueryArea(TextAreaPlus):
    """The text area of a :class:`QueryEditor` (see the module docstring)."""

    def __init__(self, editor: QueryEditor, text: str, *, soft_wrap: bool) -> None:
        self.editor = editor  # before TextArea's __init__, which builds the highlight map
        super().__init__(text, use_system_clipboard=False)
        self.set_reactive(TextAreaPlus.soft_wrap, soft_wrap)
        self.set_reactive(TextAreaPlus.show_line_numbers, False)
        # focus: Tab and Esc are not the text area's (Tab is handled below, Esc goes to the tab)
        self.tab_behavior = "focus"

    def replace_current_word(self, new_word: str) -> None:
        """A prefixed name (``wdt:inst`` taken as ``wdt:P31``) is replaced whole.  textual-textarea replaces the
        word its completer state matched, and a plain word's state (``\\w+``) would leave the prefix in front:
        ``wdt:wdt:P31`` (seen when keys outran the completion list)."""
        row, column = self.cursor_location
        before = self.get_text_range(start=(row, 0), end=(row, column))
        m = _PREFIXED_NAME.search(before)
        if m is not None and new_word.startswith(m.group(1)):
            self.replace(
                new_word, start=(row, column - len(m.group(0))), end=(row, column), maintain_selection_offset=False
            )
            self.scroll_cursor_visible()
            return
        super().replace_current_word(new_word)

    # --- drawing ---------------------------------------------------------------------------------

    def get_line(self, line_index: int) -> Text:
        """A line as drawn: control characters as visible pictures (the editor's text is not changed)."""
        line = super().get_line(line_index)
        drawn = self.editor.drawn_line(line.plain)
        if drawn != line.plain:
            line.plain = drawn
        return line

    def _build_highlight_map(self) -> None:
        super()._build_highlight_map()  # clears the map and the line cache
        for row, line in enumerate(self.text.split("\n")):
            spans = self.editor.line_highlights(line)
            if spans:
                self._highlights[row].extend(spans)

    # --- keys: the list's only while it is open ---------------------------------------------------

    @property
    def list_open(self) -> bool:
        return bool(self.editor.completion_list.is_open)

    def _handle_tab(self, event: events.Key) -> None:
        if self.list_open:
            super()._handle_tab(event)
            return
        event.stop()
        event.prevent_default()
        self.post_message(TextAreaHideCompletionList())
        self.screen.focus_next()

    def _handle_shift_tab(self, event: events.Key) -> None:
        if self.list_open:
            super()._handle_shift_tab(event)
            return
        event.stop()
        event.prevent_default()
        self.post_message(TextAreaHideCompletionList())
        self.screen.focus_previous()

    def _handle_enter(self, event: events.Key) -> None:
        if not self.list_open:
            self.completer_active = None
            self.post_message(TextAreaHideCompletionList())
        super()._handle_enter(event)

    def _handle_up_down(self, event: events.Key) -> None:
        if self.list_open:
            super()._handle_up_down(event)

    def _handle_escape(self, event: events.Key) -> None:
        """Esc closes an open list; otherwise it is the tab's (a SUQL run's cancel, …)."""
        if not self.list_open:
            self.completer_active = None
            return
        event.stop()
        event.prevent_default()
        self.post_message(TextAreaHideCompletionList())

    def _handle_slash(self, event: events.Key) -> None:
        """``/`` divides (SQL) or joins a property path (SPARQL): no file names are completed in a query."""
        self.completer_active = None
        self.post_message(TextAreaHideCompletionList())


class QueryPathInput(CancellableInput):
    """The path typed to open or save a query file (no suggestions: nothing reads the file system as you type)."""


class QueryEditor(TextEditor, inherit_bindings=False):
    """A query editor (see the module docstring).  Subclasses give :meth:`line_highlights`, :meth:`suggestions`
    and :attr:`SUFFIXES`, and a run binding."""

    DEFAULT_CSS = """
    QueryEditor {
        height: 10;
    }
    QueryEditor TextContainer {
        height: 1fr;
    }
    QueryEditor TextContainer > QueryArea {
        background: transparent;
        padding: 0;
        scrollbar-size-vertical: 1;
        scrollbar-size-horizontal: 1;
    }
    QueryEditor .editor-status {
        dock: bottom;
        height: 1;
        color: $text-muted;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = []  # a subclass lists its run key, then editor_bindings()

    SUFFIXES: ClassVar[tuple[str, ...]] = (".sql", ".txt")
    """The names a query of this editor is saved under (a bare name gets the first)."""
    WHAT: ClassVar[str] = "query"

    def __init__(
        self,
        text: str = "",
        *,
        id: str | None = None,
        classes: str | None = None,
        soft_wrap: bool = True,
        tab_behavior: str = "focus",
        read_only: bool = False,
    ) -> None:
        super().__init__(
            id=id,
            classes=classes,
            text=text,
            read_only=read_only,
            use_system_clipboard=False,
            path_completer=None,
            member_completer=self._complete_member,
            word_completer=self._complete_word,
        )
        self._soft_wrap = soft_wrap
        self.cursor_blink = True
        self._confirm: str | None = None  # a path whose save was asked once: Enter again replaces the file
        self.max_file_bytes: int | None = None  # None: the app's settings' editor_max_file_bytes

    # --- what subclasses give ----------------------------------------------------------------------

    def line_highlights(self, line: str) -> list[tuple[int, int, str]]:
        return []

    def drawn_line(self, line: str) -> str:
        return line

    def suggestions(self, word: str) -> Sequence[Suggestion]:
        """What completes ``word`` (run in a worker thread)."""
        return ()

    # --- the parts ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        self.text_container = TextContainer()
        self.text_input = QueryArea(self, self._initial_text, soft_wrap=self._soft_wrap)
        self.text_input.cursor_blink = self.cursor_blink
        self.text_input.read_only = self.read_only
        self.completion_list = QueryCompletionList()
        self.footer = FooterContainer(classes="hide")
        from textual.widgets import Label

        self.footer_label = Label("", id="textarea__save_open_input_label")
        with self.text_container:
            yield self.text_input
            yield self.completion_list
        with self.footer:
            yield self.footer_label
        yield from self.compose_status()

    def compose_status(self) -> ComposeResult:
        """Lines under the text (the SPARQL editor's label line)."""
        yield from ()

    @property
    def area(self) -> QueryArea:
        """The text area (after compose)."""
        assert isinstance(self.text_input, QueryArea)
        return self.text_input

    @property
    def cursor_location(self) -> tuple[int, int]:
        return self.area.cursor_location if self.text_input is not None else (0, 0)

    @cursor_location.setter
    def cursor_location(self, location: tuple[int, int]) -> None:
        if self.text_input is not None:
            self.text_input.cursor_location = location

    @property
    def document(self) -> Any:
        """The text area's document (``document.end``, ``get_line`` …)."""
        return self.area.document

    @property
    def completing(self) -> bool:
        """Whether the completion list is open (↑/↓ are then the list's, not the history's)."""
        return self.text_input is not None and bool(self.completion_list.is_open)

    # --- completion ----------------------------------------------------------------------------------

    @on(TextArea.Changed)
    def _changed_as_editor(self, event: TextArea.Changed) -> None:
        """The text area's change, told as the editor's (the tabs know the editor by its id and text)."""
        if event.text_area is self.text_input:
            event.stop()
            self.post_message(TextArea.Changed(cast(TextArea, self)))

    @on(TextAreaHideCompletionList)
    def _cancel_lookups(self, event: TextAreaHideCompletionList) -> None:
        """The list closed: a lookup still running is cancelled (its answer dropped; textual-textarea's own
        handler then closes the list)."""
        self.completion_list.workers.cancel_group(self.completion_list, "completers")

    def _items(self, word: str) -> list[tuple[tuple[str, str], str]]:
        """The list's entries: the label, then its kind in the room left on the line (at least 12 characters)."""
        out = []
        for s in self.suggestions(word):
            if s.text:
                label = _plain(s.label, LABEL_CHARS)
                out.append(((label, _plain(s.kind, max(KIND_CHARS, LINE_CHARS - len(label)))), s.text))
        return out

    def _complete_word(self, word: str) -> list[tuple[tuple[str, str], str]]:
        return self._items(word)

    def _complete_member(self, word: str) -> list[tuple[tuple[str, str], str]]:
        return self._items(word)

    # --- actions -----------------------------------------------------------------------------------

    def action_run(self) -> None:
        """Post the subclass's ``RunRequested`` (its own class: the tabs' handlers are named after it)."""
        run_requested = getattr(self, "RunRequested", None)
        if run_requested is not None:
            self.post_message(run_requested(self, self.text))

    async def action_editor_open(self) -> None:
        await self.action_load()

    async def action_editor_open_e(self) -> None:
        """Open a query file (the SUQL editor's Ctrl+E: its Ctrl+O is the tab's Compare)."""
        await self.action_load()

    async def action_editor_save(self) -> None:
        await self.action_save()

    def action_select_all(self) -> None:
        self.area.action_select_all()

    def action_editor_clear(self) -> None:
        if self.read_only or self.text_input is None:
            return
        area = self.area
        area.history.checkpoint()
        area.replace("", (0, 0), area.document.end, maintain_selection_offset=False)
        area.history.checkpoint()
        area.focus()

    def action_undo(self) -> None:
        self.area.action_undo()

    def action_redo(self) -> None:
        self.area.action_redo()

    async def _mount_footer_path_input(self, name: str) -> None:
        self._confirm = None
        verb = "Open" if name == "open" else "Save as"
        kinds = ", ".join(self.SUFFIXES)
        path_input = QueryPathInput(
            id=f"textarea__{name}_input",
            placeholder=f"{verb}: a {self.WHAT} file ({kinds}) · Enter · Esc cancels",
            classes="textarea--footer-input",
        )
        await self._mount_footer_input(input_widget=path_input)

    def _say(self, text: str, *, error: bool) -> None:
        self.footer_label.update(_plain(text, 300))
        self.footer_label.set_class(error, "validation-error")

    def _limit(self) -> int:
        if self.max_file_bytes is not None:
            return self.max_file_bytes
        settings = getattr(self.app, "settings", None)
        return int(getattr(settings, "editor_max_file_bytes", 1024 * 1024))

    @on(Input.Submitted, "#textarea__save_input")
    async def save_file(self, message: Input.Submitted) -> None:
        message.stop()
        message.prevent_default()  # not textual-textarea's save (it writes anywhere, through links)
        from engines.api import QueryFileError, QueryFileExists, save_query

        path = message.value.strip()
        try:
            written = save_query(path, self.text, suffixes=self.SUFFIXES, overwrite=self._confirm == path)
        except QueryFileExists as e:
            self._confirm = path
            self._say(f"{e.path} exists: Enter again replaces it, or change the name.", error=True)
            return
        except QueryFileError as e:
            self._confirm = None
            self._say(str(e), error=True)
            return
        self._confirm = None
        await self._clear_footer_input()
        self.post_message(TextAreaSaved(path=written))
        self.notify(f"Saved to {_plain(str(written), 200)}", title="Editor")

    @on(Input.Submitted, "#textarea__open_input")
    async def open_file(self, message: Input.Submitted) -> None:
        message.stop()
        message.prevent_default()  # not textual-textarea's open (no bound on the size, any bytes)
        path = message.value
        limit = self._limit()
        self._say("opening…", error=False)
        self.run_worker(lambda: self._read(path, limit), thread=True, group="editor-file", exclusive=True)

    @staticmethod
    def _read(path: str, limit: int) -> tuple[str, str | None, str | None]:
        from engines.api import QueryFileError, read_query

        try:
            return path, read_query(path, limit), None
        except QueryFileError as e:
            return path, None, str(e)

    async def on_worker_state_changed(self, event: Any) -> None:
        worker = event.worker
        if worker.group != "editor-file" or not worker.is_finished or worker.result is None:
            return
        event.stop()
        _path, text, error = worker.result
        if error is not None or text is None:
            self._say(error or "not opened", error=True)
            return
        self.text = text
        await self._clear_footer_input()
        self.area.focus()


__all__ = [
    "EDITOR_HELP",
    "WIDE_ONLY_ACTIONS",
    "QueryArea",
    "QueryCompletionList",
    "QueryEditor",
    "QueryPathInput",
    "editor_bindings",
]
