"""What the user ran, per tab: questions and queries, kept in the user data folder, walked with ↑/↓ and searched
with Ctrl+R.

The store (:class:`HistoryStore`) is one JSON Lines file per tab, ``<history_dir>/<tab>.jsonl`` (the setting
``history_dir``, ``CS224V_HISTORY_DIR``; by default ``history/`` in platformdirs' user data folder of
``cs224v-tui``). Each line is one run: ``{"box": "question", "text": "...", "meta": {...}}`` — ``box`` names
the box or editor it ran from, ``meta`` is what a tab needs to bring a run back that is not text (HybridQA's
table and question). A run repeated right after itself is kept once; the file keeps the newest
:data:`MAX_ENTRIES`. A file that cannot be read (not UTF-8, a line that is not such an object, a folder in its
place) never stops the app: what can be read is kept, the rest is set aside in ``<tab>.jsonl.bad`` and a warning
says so; a folder that cannot be written keeps the history for the session only, with one warning.

:class:`BoxWalker` is ↑/↓ in one box: it walks the box's runs, newest first, when the box is empty or holds
text the app or the history put there, unedited (an example loaded, an entry walked to, the query just run).
In an editor ↑ walks only from its first (visual) line and ↓ only from its last, so they never take a cursor
move away from a query being written; the text the walk started from comes back after the newest entry.

:class:`HistoryArea` is a :class:`~tui.area.WorkArea` with these keys: ↑/↓ (in its boxes, as above), Ctrl+R
(the history picker: type to filter, Enter puts the entry in its box, Esc closes) and Ctrl+L (the tab's
examples picker).  A tab names its boxes (:attr:`HistoryArea.HISTORY_BOXES`), records what runs
(:meth:`HistoryArea.record_run`) and lists its examples (:meth:`HistoryArea.example_items`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.binding import Binding
from textual.widgets import Input, TextArea

from tui.area import PaletteCommand, WorkArea

if TYPE_CHECKING:
    from textual.widget import Widget

    from tui.pickers import PickItem

log = logging.getLogger(__name__)

MAX_ENTRIES = 500
"""Runs a tab's history file keeps (the newest)."""
MAX_TEXT = 100_000
"""Characters of one entry kept (a longer query is not recorded)."""
HISTORY_KEY = "ctrl+r"
EXAMPLES_KEY = "ctrl+l"
"""Ctrl+L: a control character every terminal sends and tmux passes; no Textual input or editor binds it
(Ctrl+E would have been the mnemonic, but it is End of line in Textual's Input and TextArea)."""


@dataclass(frozen=True)
class HistoryEntry:
    """One run: the box it ran from, its text, and what else a tab needs to bring it back."""

    box: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        data: dict[str, Any] = {"box": self.box, "text": self.text}
        if self.meta:
            data["meta"] = self.meta
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> HistoryEntry:
        """Raises ValueError for a line that is not ``{"box": str, "text": str, "meta"?: object}``."""
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        box, text, meta = data.get("box"), data.get("text"), data.get("meta", {})
        if not isinstance(box, str) or not isinstance(text, str) or not isinstance(meta, dict):
            raise ValueError("box and text must be strings, meta an object")
        return cls(box, text, meta)


class HistoryStore:
    """A tab's runs, oldest first, read from and appended to ``<folder>/<tab>.jsonl``.

    Never raises for the file's sake: :attr:`warnings` collects what a person should be told (the tab shows
    them as notifications).
    """

    def __init__(self, folder: Path, tab: str, *, limit: int = MAX_ENTRIES) -> None:
        self.path = Path(folder).expanduser() / f"{tab}.jsonl"
        self.limit = limit
        self.entries: list[HistoryEntry] = []
        self.warnings: list[str] = []
        self._writable = True
        self._load()

    # --- reading -------------------------------------------------------------------------------

    def _load(self) -> None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as e:
            self._warn(
                f"The history file {self.path} cannot be read ({e.strerror or e}): it is ignored, and what you run "
                "is kept for this session only."
            )
            self._writable = False  # do not write over what could not be read
            return
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            self._set_aside(raw, "it is not UTF-8 text")
            return
        bad = 0
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                self.entries.append(HistoryEntry.from_json(line))
            except ValueError:
                bad += 1
        if bad:
            lines = "1 of its lines is" if bad == 1 else f"{bad} of its lines are"
            self._set_aside(raw, f"{lines} not a history entry", keep=True)
        elif len(self.entries) > self.limit:
            self.entries = self.entries[-self.limit :]
            self._rewrite()

    def _set_aside(self, raw: bytes, why: str, *, keep: bool = False) -> None:
        """Keep an unreadable file as ``<tab>.jsonl.bad``, and the readable entries (``keep``) in a new file."""
        aside = self.path.with_name(self.path.name + ".bad")
        if not keep:
            self.entries = []
        self.entries = self.entries[-self.limit :]
        try:
            aside.write_bytes(raw)
            self._rewrite()
            kept = f"The {len(self.entries)} readable entries are kept; the" if keep else "The"
            self._warn(f"The history file {self.path} could not be read: {why}. {kept} file as it was is in {aside}.")
        except OSError as e:
            self._writable = False
            self._warn(
                f"The history file {self.path} could not be read: {why}; it is ignored "
                f"(and left as it is: {e.strerror or e})."
            )

    # --- writing -------------------------------------------------------------------------------

    def add(self, box: str, text: str, meta: dict[str, Any] | None = None) -> bool:
        """Record a run; False when it is not kept (blank, too long, or the same as the last run of ``box``)."""
        if not text.strip() or len(text) > MAX_TEXT:
            return False
        entry = HistoryEntry(box, text, dict(meta or {}))
        last = next((e for e in reversed(self.entries) if e.box == box), None)
        if last is not None and last.text == text and last.meta == entry.meta:
            return False
        self.entries.append(entry)
        if len(self.entries) > self.limit:
            self.entries = self.entries[-self.limit :]
            self._rewrite()
        else:
            self._append(entry)
        return True

    def _append(self, entry: HistoryEntry) -> None:
        if not self._writable:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(entry.to_json() + "\n")
        except OSError as e:
            self._cannot_write(e)

    def _rewrite(self) -> None:
        if not self._writable:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_name(self.path.name + ".tmp")
            partial.write_text("".join(e.to_json() + "\n" for e in self.entries), encoding="utf-8")
            os.replace(partial, self.path)
        except OSError as e:
            self._cannot_write(e)

    def _cannot_write(self, error: OSError) -> None:
        self._writable = False
        self._warn(
            f"The history cannot be saved to {self.path} ({error.strerror or error}): it is kept for this session only."
        )

    def _warn(self, message: str) -> None:
        log.warning(message)
        self.warnings.append(message)

    # --- queries ---------------------------------------------------------------------------------

    def texts(self, box: str) -> list[str]:
        """The texts run from ``box``, oldest first."""
        return [e.text for e in self.entries if e.box == box]

    def of_boxes(self, boxes: Iterable[str]) -> list[HistoryEntry]:
        """The entries run from any of ``boxes``, newest first."""
        wanted = set(boxes)
        return [e for e in reversed(self.entries) if e.box in wanted]


class BoxWalker:
    """↑/↓ through one box's history (see the module docstring).  The box is an Input or a TextArea."""

    def __init__(self) -> None:
        self.index: int | None = None  # the entry shown, while walking
        self.draft = ""  # the text the walk started from

    @staticmethod
    def text_of(box: Widget) -> str:
        return box.value if isinstance(box, Input) else box.text if isinstance(box, TextArea) else ""

    @staticmethod
    def at_edge(box: Widget, step: int) -> bool:
        """An editor's cursor on its first (``step`` -1) or last (+1) visual line; always true for an Input."""
        if not isinstance(box, TextArea):
            return True
        navigator = box.navigator
        location = box.cursor_location
        return navigator.is_first_wrapped_line(location) if step < 0 else navigator.is_last_wrapped_line(location)

    def target(self, texts: Sequence[str], text: str, origin: str | None, step: int) -> int | None:
        """The index of the entry ↑ (``step`` -1) or ↓ (+1) shows now, ``len(texts)`` for the draft, or None
        when the key is the box's own (the text was edited, or there is nowhere to go)."""
        walking = self.index is not None and self.index < len(texts) and texts[self.index] == text
        if walking:
            assert self.index is not None
            to = self.index + step
            return to if 0 <= to <= len(texts) else None
        pristine = not text.strip() or text == origin or text in texts
        if step > 0 or not pristine or not texts:
            return None
        to = len(texts) - 1
        if texts[to] == text:  # the query just run is still in the editor: the one before it
            to -= 1
        return to if to >= 0 else None

    def move(self, box: Widget, texts: Sequence[str], to: int, step: int) -> None:
        """Show entry ``to`` (or the draft) in ``box``; the cursor where the next ↑ (↓) walks on: after ↑ at
        an editor's start, after ↓ at its end (an Input's cursor is at the end)."""
        text = self.text_of(box)
        if self.index is None or self.index >= len(texts) or texts[self.index] != text:
            self.draft = text
        self.index = to if to < len(texts) else None
        put_text(box, texts[to] if to < len(texts) else self.draft, at_start=step < 0)

    def reset(self) -> None:
        self.index = None


def put_text(box: Widget, text: str, *, at_start: bool = False) -> None:
    """Replace ``box``'s text; the cursor at its end (``at_start``: an editor's at its start)."""
    if isinstance(box, Input):
        box.value = text
        box.cursor_position = len(text)
    elif isinstance(box, TextArea):
        box.text = text
        if at_start:
            box.cursor_location = (0, 0)
        else:
            lines = text.split("\n")
            box.cursor_location = (len(lines) - 1, len(lines[-1]))


class HistoryArea(WorkArea):
    """A tab with a history of runs and an examples picker (see the module docstring)."""

    HISTORY_BOXES: ClassVar[dict[str, str]] = {}
    """The id of each box or editor whose runs are kept -> the name its entries are stored under."""
    HISTORY_DEFAULT: ClassVar[str] = ""
    """The box Ctrl+R fills when the focus is in none of them (the tab's question box or editor)."""

    BINDINGS = [
        # priority, so an editor's own ↑/↓ comes after; check_action lets them through unless the walk applies
        Binding("up", "history(-1)", "Older", show=False, priority=True, tooltip="The previous run in this box."),
        Binding("down", "history(1)", "Newer", show=False, priority=True, tooltip="The next run in this box."),
        Binding(
            HISTORY_KEY,
            "history_picker",
            "History",
            key_display="^R",
            priority=True,
            show=False,
            tooltip="Search what you ran in this tab; Enter puts it in the box.",
        ),
        Binding(
            EXAMPLES_KEY,
            "examples_picker",
            "Examples",
            key_display="^L",
            priority=True,
            show=False,  # the boxes' titles say ^L (the footer holds the tab's keys first at 80 columns)
            tooltip="Search this tab's examples; Enter loads one (it does not run it).",
        ),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._history_store: HistoryStore | None = None
        self._walkers: dict[str, BoxWalker] = {}

    # --- the store -------------------------------------------------------------------------------

    @property
    def history(self) -> HistoryStore:
        """The tab's history, read the first time it is needed (warnings shown as notifications)."""
        if self._history_store is None:
            self._history_store = HistoryStore(self.settings.history_dir, self.AREA_ID)
            self._show_history_warnings()
        return self._history_store

    def _show_history_warnings(self) -> None:
        store = self._history_store
        if store is None:
            return
        while store.warnings:
            self.notify(store.warnings.pop(0), title=f"{self.TITLE}: history", severity="warning", timeout=10)

    def record_run(self, box_id: str, text: str, meta: dict[str, Any] | None = None) -> None:
        """Keep a run of ``box_id`` (an id of :attr:`HISTORY_BOXES`) in the history."""
        self.history.add(self.HISTORY_BOXES[box_id], text, meta)
        self._walkers.pop(box_id, None)
        self._show_history_warnings()

    # --- what a tab provides ----------------------------------------------------------------------

    def history_origin(self, box_id: str) -> str | None:
        """The text the app itself put in ``box_id`` (an example, the sample query): ↑ may replace it."""
        return None

    def example_items(self) -> list[PickItem]:
        """The tab's examples for the picker (each item's value is handed to :meth:`example_chosen`)."""
        return []

    def example_chosen(self, value: Any) -> None:
        """Load the example ``value`` into its box or editor (without running it)."""

    def history_chosen(self, entry: HistoryEntry) -> None:
        """Put ``entry`` back: by default, its text into its box (focused)."""
        box_id = next((i for i, name in self.HISTORY_BOXES.items() if name == entry.box), None)
        if box_id is None:
            return
        box = self.query_one(f"#{box_id}")
        put_text(box, entry.text)
        box.focus()

    def history_commands(self) -> Iterable[PaletteCommand]:
        """The palette's two entries: the examples picker and the history picker."""
        yield PaletteCommand(
            f"{self.TITLE}: examples…",
            "A searchable list of this tab's examples; Enter loads one (Ctrl+L).",
            lambda: self._when_shown(self.open_examples),
        )
        yield PaletteCommand(
            f"{self.TITLE}: history…",
            "Search what you ran in this tab; Enter puts it back (Ctrl+R).",
            lambda: self._when_shown(self.open_history),
        )

    def _when_shown(self, open_picker: Any) -> None:
        """Open a picker once this tab shows and has the focus (a palette command of another tab shows the tab
        first: a picker opened before that would give the focus back to the other tab when it closes)."""
        self.call_after_refresh(lambda: self.call_after_refresh(open_picker))

    # --- ↑ / ↓ -----------------------------------------------------------------------------------

    def _focused_box(self) -> tuple[str, Widget] | None:
        focused = self.screen.focused if self.is_mounted else None
        if focused is not None and focused.id in self.HISTORY_BOXES and self in focused.ancestors:
            return focused.id, focused
        return None

    def _walk_target(self, step: int) -> tuple[str, Widget, list[str], int] | None:
        found = self._focused_box()
        if found is None:
            return None
        box_id, box = found
        if not isinstance(box, (Input, TextArea)) or not BoxWalker.at_edge(box, step):  # a list keeps its ↑/↓
            return None
        texts = self.history.texts(self.HISTORY_BOXES[box_id])
        walker = self._walkers.setdefault(box_id, BoxWalker())
        to = walker.target(texts, BoxWalker.text_of(box), self.history_origin(box_id), step)
        return None if to is None else (box_id, box, texts, to)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "history":
            step = parameters[0] if parameters else -1
            return self._walk_target(int(step)) is not None  # type: ignore[call-overload]
        return super().check_action(action, parameters)

    def action_history(self, step: int) -> None:
        found = self._walk_target(step)
        if found is not None:
            box_id, box, texts, to = found
            self._walkers[box_id].move(box, texts, to, step)

    # --- the pickers -----------------------------------------------------------------------------

    def action_history_picker(self) -> None:
        self.open_history()

    def action_examples_picker(self) -> None:
        self.open_examples()

    def open_history(self) -> bool:
        """Ctrl+R: the history picker of the focused box (else of the tab's boxes, the default one first)."""
        from textual.screen import ModalScreen

        from tui.pickers import PickItem, SearchPicker

        if isinstance(self.app.screen, ModalScreen):
            return False
        found = self._focused_box()
        if found is not None:
            boxes = [self.HISTORY_BOXES[found[0]]]
        else:
            boxes = list(dict.fromkeys(self.HISTORY_BOXES.values()))
        entries = self.history.of_boxes(boxes)
        if not entries:
            self.notify(
                "Nothing run in this tab yet: what you run is kept here (↑ in an empty box, Ctrl+R to search).",
                title=f"{self.TITLE}: history",
            )
            return False
        several = len(boxes) > 1
        items = [PickItem(e.text, self._history_label(e, several), e) for e in entries]

        def chosen(entry: Any) -> None:
            if isinstance(entry, HistoryEntry):
                self.history_chosen(entry)

        self.app.push_screen(
            SearchPicker(
                f"{self.TITLE} · history",
                items,
                placeholder="words of a question or a query",
                hint="type to filter · ↑/↓ · Enter puts it in the box · Esc closes",
                id="history-picker",
            ),
            chosen,
        )
        return True

    def _history_label(self, entry: HistoryEntry, several: bool) -> str:
        return entry.box if several else ""

    def open_examples(self) -> bool:
        """Ctrl+L: the examples picker of this tab."""
        from textual.screen import ModalScreen

        from tui.pickers import SearchPicker

        if isinstance(self.app.screen, ModalScreen):
            return False
        items = self.example_items()
        if not items:
            self.notify("No examples here yet: the tab is still opening.", title=f"{self.TITLE}: examples")
            return False

        def chosen(value: Any) -> None:
            if value is not None:
                self.example_chosen(value)

        self.app.push_screen(
            SearchPicker(
                f"{self.TITLE} · examples",
                items,
                placeholder="words of an example, its source or its kind",
                hint="type to filter · ↑/↓ · Enter loads it (not run) · Esc closes",
                id="examples-picker",
            ),
            chosen,
        )
        return True


__all__ = [
    "EXAMPLES_KEY",
    "HISTORY_KEY",
    "MAX_ENTRIES",
    "BoxWalker",
    "HistoryArea",
    "HistoryEntry",
    "HistoryStore",
    "put_text",
]
