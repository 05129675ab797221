"""What the user ran, per tab: questions and queries, kept in the user data folder, walked with ↑/↓ and searched
with Ctrl+R.

The store (:class:`HistoryStore`) is one JSON Lines file per tab, ``<history_dir>/<tab>.jsonl`` (the setting
``history_dir``, ``CS224V_HISTORY_DIR``; by default ``history/`` in platformdirs' user data folder of
``cs224v-tui``). Each line is one run: ``{"box": "question", "text": "...", "meta": {...}}`` — ``box`` names
the box or editor it ran from, ``meta`` is what a tab needs to bring a run back that is not text (HybridQA's
table and question). A run repeated right after itself is kept once; the file keeps the newest
:data:`MAX_ENTRIES`, in at most ``history_max_bytes`` (:data:`MAX_BYTES`, 8 MiB): past it, the oldest are dropped
(down to half of it). A file that cannot be read (not UTF-8, a line that is not such an object or is nested past
Python's recursion limit, a file bigger than the bound — of which only the last ``history_max_bytes`` are read)
never stops the app: the file as it was is renamed aside, whole, to a name that is free (``<tab>.jsonl.bad``, else
``<tab>.jsonl.bad.2``, ...), the entries that could be read are kept in a new file, and a warning says so. A
history file is only ever a regular file: it is opened without following a symbolic link and without waiting (a
FIFO or a device in its place is never read or written, and neither is a symbolic link's target), and it is
rewritten through a new temporary file and a rename. A file that cannot be read that way, or a folder that cannot
be written, keeps the history for the session only, with one warning.

Several app instances may share the folder: a line is appended in one write, and appends and rewrites hold an
exclusive ``flock`` on the folder (a read, a shared one), so a rewrite (the trim to the newest entries, a setting
aside) starts from the file as it is then, never from an instance's stale copy: no instance's entry is lost.
Before it writes, an instance whose file was changed by another reads it again (its ↑/↓ then walks both's runs).

:class:`BoxWalker` is ↑/↓ in one box: it walks the box's runs, newest first, when the box is empty or holds
text the app or the history put there, unedited (an example loaded, an entry walked to, the query just run).
In an editor ↑ walks only from its first (visual) line and ↓ only from its last, so they never take a cursor
move away from a query being written; the text the walk started from comes back after the newest entry.

:class:`BoxHistory` is a tab's history and examples, an object the tab owns (composition, not a base class):
a tab that keeps one starts its BINDINGS with :data:`HISTORY_BINDINGS` — ↑/↓ (in its boxes, as above), Ctrl+R
(the history picker: type to filter, Enter puts the entry in its box, Esc closes) and Ctrl+L (the tab's
examples picker) — whose actions :class:`~tui.area.WorkArea` hands to it.  The tab names its boxes, records
what runs (:meth:`BoxHistory.record`) and gives what it knows as functions (its examples, the text it put in a
box); the pickers tell the tab what was chosen in messages (:class:`~tui.messages.HistoryChosen`,
:class:`~tui.messages.ExampleChosen`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.widgets import Input, TextArea
from textual_textarea import TextEditor

from engines.api import JsonShape, fields_json
from tui.area import PaletteCommand

if TYPE_CHECKING:
    from textual.widget import Widget

    from engines.api import Settings
    from tui.pickers import PickItem

log = logging.getLogger(__name__)

MAX_ENTRIES = 500
"""Runs a tab's history file keeps (the newest)."""
MAX_TEXT = 100_000
"""Characters of one entry kept (a longer query is not recorded)."""
MAX_BYTES = 8 * 1024 * 1024
"""Bytes of a history file read, and the most the store lets it grow to (the ``history_max_bytes`` setting)."""
LOCK_TIMEOUT_S = 5.0
"""Seconds a store waits for another instance's lock on the history folder."""
ASIDE_NAMES = 100
"""Names tried for a file set aside (``.bad``, ``.bad.2``, ...): past them it is left as it is."""
HISTORY_KEY = "ctrl+r"
EXAMPLES_KEY = "ctrl+l"
"""Ctrl+L: a control character every terminal sends and tmux passes; no Textual input or editor binds it
(Ctrl+E would have been the mnemonic, but it is End of line in Textual's Input and TextArea)."""


@dataclass(frozen=True)
class HistoryEntry:
    """One run: the box it ran from, its text, and what else a tab needs to bring it back."""

    __json__ = JsonShape(omit_empty=frozenset({"meta"}))

    box: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self, *, ensure_ascii: bool = False) -> str:
        """Its fields as one line of JSON text (``meta`` only when it holds something)."""
        return json.dumps(fields_json(self), ensure_ascii=ensure_ascii)

    def to_line(self) -> bytes:
        """The entry as one line of UTF-8 (a lone surrogate, which UTF-8 cannot hold, as a JSON escape)."""
        try:
            return (self.to_json() + "\n").encode("utf-8")
        except UnicodeEncodeError:
            return (self.to_json(ensure_ascii=True) + "\n").encode("ascii")

    @classmethod
    def from_json(cls, line: str) -> HistoryEntry:
        """Raises ValueError for a line that is not ``{"box": str, "text": str, "meta"?: object}``."""
        try:
            data = json.loads(line)
        except RecursionError:
            raise ValueError("nested too deeply") from None
        if not isinstance(data, dict):
            raise ValueError("not an object")
        box, text, meta = data.get("box"), data.get("text"), data.get("meta", {})
        if not isinstance(box, str) or not isinstance(text, str) or not isinstance(meta, dict):
            raise ValueError("box and text must be strings, meta an object")
        return cls(box, text, meta)


class _NotRegular(OSError):
    """A history path that is not a regular file (a symbolic link, a FIFO, a device, a folder)."""


@dataclass
class _Read:
    """What a history file held when it was read."""

    entries: list[HistoryEntry] = field(default_factory=list)
    bad: int = 0  # lines that are not entries
    not_text: bool = False  # not UTF-8
    over: bool = False  # bigger than the bound: only its tail was read
    key: tuple[int, int, int, int] | None = None  # (device, inode, size, mtime) of the file read; None: no file

    @property
    def damaged(self) -> bool:
        return bool(self.bad or self.not_text or self.over)


def _file_key(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class HistoryStore:
    """A tab's runs, oldest first, read from and appended to ``<folder>/<tab>.jsonl``.

    Never raises for the file's sake: :attr:`warnings` collects what a person should be told (the tab shows
    them as notifications).  ``max_bytes`` bounds what is read of the file and how big it may grow.
    """

    def __init__(
        self,
        folder: Path,
        tab: str,
        *,
        limit: int = MAX_ENTRIES,
        max_bytes: int = MAX_BYTES,
        lock_timeout_s: float = LOCK_TIMEOUT_S,
    ) -> None:
        self.path = Path(folder).expanduser() / f"{tab}.jsonl"
        self.limit = limit
        self.max_bytes = max_bytes
        self.lock_timeout_s = lock_timeout_s
        self.entries: list[HistoryEntry] = []
        self.warnings: list[str] = []
        self._writable = True
        self._known: tuple[int, int, int, int] | None = None  # the file as this store last read or wrote it
        self._load()

    # --- the folder lock -----------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self, *, exclusive: bool) -> Iterator[bool | None]:
        """An advisory lock on the folder (``flock``; a shared one to read, an exclusive one to write).

        Yields True while held, False if another instance held it past :attr:`lock_timeout_s`, None when there
        is no folder or the system cannot lock it (then nothing is shared to protect, or nothing can be).
        """
        try:
            import fcntl
        except ImportError:  # not POSIX
            yield None
            return
        try:
            fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            yield None
            return
        try:
            operation = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
            deadline = time.monotonic() + self.lock_timeout_s
            pause = 0.001
            while True:
                try:
                    fcntl.flock(fd, operation)
                except OSError as e:
                    if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EINTR):
                        yield None
                        return
                else:
                    break
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
            yield True  # (closing the descriptor releases the lock)
        finally:
            os.close(fd)

    # --- reading -------------------------------------------------------------------------------

    def _open(self, flags: int) -> int:
        """A descriptor of the history file: never through a symbolic link, never waiting (a FIFO), only a
        regular file (raises :class:`_NotRegular` for anything else)."""
        try:
            fd = os.open(self.path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.EMLINK) and self.path.is_symlink():
                raise _NotRegular(e.errno, "it is a symbolic link, which is not followed") from None
            raise
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise _NotRegular(errno.EINVAL, "it is not a regular file")
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _read_fd(self, fd: int) -> _Read:
        """The entries of the file open at ``fd``: its last :attr:`max_bytes` at most."""
        st = os.fstat(fd)
        got = _Read(key=_file_key(st))
        start = max(0, st.st_size - self.max_bytes)
        got.over = start > 0
        raw = bytearray(st.st_size - start)
        size = 0
        with memoryview(raw) as view:
            while size < len(raw):  # (pread: the offset of an O_APPEND descriptor does not matter)
                n = os.preadv(fd, [view[size:]], start + size)
                if n <= 0:
                    break
                size += n
        del raw[size:]
        if got.over:  # its first line is cut: only the lines after it
            del raw[: raw.find(b"\n") + 1 or len(raw)]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            got.not_text = True
            return got
        del raw
        at = 0
        while at < len(text):  # lines split at "\n" only (an entry may hold U+2028, \r, \x1c...)
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            line = text[at:end]
            at = end + 1
            if not line.strip():
                continue
            try:
                got.entries.append(HistoryEntry.from_json(line))
            except ValueError:
                got.bad += 1
        return got

    def _read(self) -> _Read:
        """Read the file (raises OSError, _NotRegular); no file: an empty :class:`_Read`."""
        try:
            fd = self._open(os.O_RDONLY)
        except FileNotFoundError:
            return _Read()
        try:
            return self._read_fd(fd)
        finally:
            os.close(fd)

    def _load(self) -> None:
        try:
            with self._locked(exclusive=False):
                got = self._read()
            if got.damaged or len(got.entries) > self.limit:
                with self._locked(exclusive=True) as held:
                    if held is not False:
                        got = self._read()  # again, now that no other instance writes
                        self._mend(got)
                        return
                    if got.damaged:  # busy: set right another time, never overwritten meanwhile
                        raise OSError(errno.EWOULDBLOCK, f"the folder is locked past {self.lock_timeout_s} s")
        except (OSError, _NotRegular) as e:
            self._unreadable(e)
            return
        self.entries = got.entries[-self.limit :]
        self._known = got.key

    def _unreadable(self, e: OSError) -> None:
        self._warn(
            f"The history file {self.path} cannot be read ({e.strerror or e}): it is ignored, and what you run "
            "is kept for this session only."
        )
        self._writable = False  # do not write over what could not be read

    def _mend(self, got: _Read, extra: HistoryEntry | None = None) -> None:
        """Under the exclusive lock: set a damaged file aside and keep its readable entries (and ``extra``)
        in a new one; or trim a file of too many entries."""
        self.entries = [*got.entries, *([extra] if extra is not None else [])]
        if not got.damaged:
            self._rewrite()
            return
        if got.not_text:
            why, self.entries = "it is not UTF-8 text", [*([extra] if extra is not None else [])]
        elif got.over:
            why = f"it is bigger than {self.max_bytes} bytes (history_max_bytes), so only its end was read"
        else:
            why = "1 of its lines is" if got.bad == 1 else f"{got.bad} of its lines are"
            why += " not a history entry"
        aside = self._free_aside_name()
        try:
            if aside is None:
                raise OSError(errno.EEXIST, f"no free name for a copy ({self.path.name}.bad ... are taken)")
            os.rename(self.path, aside)  # the file as it was, whole (a rename: nothing is copied or followed)
        except OSError as e:
            self._writable = False
            self.entries = self.entries[-self.limit :]
            self._warn(
                f"The history file {self.path} could not be read: {why}; it is ignored "
                f"(and left as it is: {e.strerror or e}); what you run is kept for this session only."
            )
            return
        self._known = None
        if self.entries:
            self._rewrite()
        kept = sum(1 for e in self.entries if e is not extra)
        kept_text = f"The {kept} readable entries are kept; the" if kept else "The"
        self._warn(f"The history file {self.path} could not be read: {why}. {kept_text} file as it was is in {aside}.")

    def _free_aside_name(self) -> Path | None:
        for n in range(1, ASIDE_NAMES + 1):
            candidate = self.path.with_name(self.path.name + (".bad" if n == 1 else f".bad.{n}"))
            try:
                os.lstat(candidate)
            except FileNotFoundError:
                return candidate
            except OSError:
                continue
        return None

    # --- writing -------------------------------------------------------------------------------

    def add(self, box: str, text: str, meta: dict[str, Any] | None = None) -> bool:
        """Record a run; False when it is not kept (blank, too long, or the same as the last run of ``box``)."""
        if not text.strip() or len(text) > MAX_TEXT:
            return False
        entry = HistoryEntry(box, text, dict(meta or {}))
        line = entry.to_line()
        if len(line) > self.max_bytes // 2:
            return False  # (only with a very small bound: an entry the file could not keep)
        last = next((e for e in reversed(self.entries) if e.box == box), None)
        if last is not None and last.text == text and last.meta == entry.meta:
            return False
        if not self._writable:
            self.entries = [*self.entries, entry][-self.limit :]
            return True
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._locked(exclusive=True) as held:
                if held is False:
                    raise OSError(
                        errno.EWOULDBLOCK, f"another instance holds the folder's lock past {self.lock_timeout_s} s"
                    )
                self._append(entry, line)
        except (OSError, _NotRegular) as e:
            if not self.entries or self.entries[-1] is not entry:
                self.entries = [*self.entries, entry][-self.limit :]
            self._cannot_write(e)
        return True

    def _append(self, entry: HistoryEntry, line: bytes) -> None:
        """Under the exclusive lock: append ``line`` in one write, or rewrite the file when it must be trimmed."""
        fd = self._open(os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            st = os.fstat(fd)
            if self._known != _file_key(st) and (self._known is not None or st.st_size > 0):
                got = self._read_fd(fd)  # another instance wrote to it since: start from what it holds now
                if got.damaged:
                    os.close(fd)
                    fd = -1
                    self._mend(got, entry)
                    return
                self.entries = got.entries
            self.entries.append(entry)
            if len(self.entries) > self.limit or st.st_size + len(line) > self.max_bytes:
                self._rewrite()
                return
            written = 0
            while written < len(line):
                written += os.write(fd, line[written:])
            self._known = _file_key(os.fstat(fd))
        finally:
            if fd >= 0:
                os.close(fd)

    def _rewrite(self) -> None:
        """Write the newest entries (at most :attr:`limit`, in half of :attr:`max_bytes`) to a new temporary
        file and rename it over the history file (under the exclusive lock, or when nothing is shared)."""
        budget = self.max_bytes // 2
        lines: list[bytes] = []
        for entry in reversed(self.entries[-self.limit :]):
            line = entry.to_line()
            if len(line) > budget:
                break
            budget -= len(line)
            lines.append(line)
        lines.reverse()
        self.entries = self.entries[len(self.entries) - len(lines) :] if lines else []
        if not self._writable:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(b"".join(lines))
                    f.flush()
                    os.fsync(f.fileno())
                    self._known = _file_key(os.fstat(f.fileno()))
                os.replace(name, self.path)  # (replaces a symbolic link itself, never its target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(name)
                raise
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
        if isinstance(box, Input):
            return box.value
        return box.text if isinstance(box, (TextArea, TextEditor)) else ""

    @staticmethod
    def at_edge(box: Widget, step: int) -> bool:
        """An editor's cursor on its first (``step`` -1) or last (+1) visual line; always true for an Input.
        Never while an editor's completion list is open (↑/↓ are the list's)."""
        if isinstance(box, TextEditor):
            if getattr(box, "completing", False) or box.text_input is None:
                return False
            box = box.text_input
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
    elif isinstance(box, (TextArea, TextEditor)):
        box.text = text  # a query editor's (textual-textarea's) is one undoable edit
        area = box.text_input if isinstance(box, TextEditor) else box
        if area is None:
            return
        if at_start:
            area.cursor_location = (0, 0)
        else:
            lines = text.split("\n")
            area.cursor_location = (len(lines) - 1, len(lines[-1]))


HISTORY_BINDINGS: list[Binding] = [
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
"""The keys of a tab that keeps a history (its BINDINGS start with them; :class:`tui.area.WorkArea` has the
actions, which hand each key to the tab's :class:`BoxHistory`)."""


def _no_origin(box_id: str) -> str | None:
    return None


def _no_examples() -> list[PickItem]:
    return []


def _box_label(entry: HistoryEntry, several: bool) -> str:
    return entry.box if several else ""


class BoxHistory:
    """A tab's history of runs and its examples picker (see the module docstring): one the tab owns.

    ``tab`` is the tab's widget (its boxes are in it; the pickers' choices are posted to it as
    :class:`~tui.messages.HistoryChosen` and :class:`~tui.messages.ExampleChosen`), ``settings`` name the folder
    and its bound, ``name`` the file (the tab's id) and ``title`` what notices and pickers say.  ``boxes`` maps
    the id of each box or editor whose runs are kept to the name its entries are stored under.  What the tab
    knows, it gives as functions: ``origin(box_id)`` is the text the app itself put in a box (↑ may replace
    it), ``examples()`` the tab's examples for the picker, ``label(entry, several)`` what the history picker
    says beside an entry.
    """

    def __init__(
        self,
        tab: Widget,
        settings: Settings,
        *,
        name: str,
        title: str,
        boxes: Mapping[str, str],
        origin: Callable[[str], str | None] = _no_origin,
        examples: Callable[[], list[PickItem]] = _no_examples,
        label: Callable[[HistoryEntry, bool], str] = _box_label,
    ) -> None:
        self.tab = tab
        self.folder = settings.history_dir
        self.max_bytes = settings.history_max_bytes
        self.name = name
        self.title = title
        self.boxes = dict(boxes)
        self.origin = origin
        self.examples = examples
        self.label = label
        self._store: HistoryStore | None = None
        self._walkers: dict[str, BoxWalker] = {}

    # --- the store -------------------------------------------------------------------------------

    @property
    def store(self) -> HistoryStore:
        """The tab's history, read the first time it is needed (warnings shown as notifications)."""
        if self._store is None:
            self._store = HistoryStore(self.folder, self.name, max_bytes=self.max_bytes)
            self._show_warnings()
        return self._store

    def _show_warnings(self) -> None:
        store = self._store
        if store is None:
            return
        while store.warnings:
            self.tab.notify(store.warnings.pop(0), title=f"{self.title}: history", severity="warning", timeout=10)

    def record(self, box_id: str, text: str, meta: dict[str, Any] | None = None) -> None:
        """Keep a run of ``box_id`` (an id of :attr:`boxes`) in the history."""
        self.store.add(self.boxes[box_id], text, meta)
        self._walkers.pop(box_id, None)
        self._show_warnings()

    def put_back(self, entry: HistoryEntry) -> None:
        """Put ``entry`` back the plain way: its text into its box (focused)."""
        box_id = next((i for i, name in self.boxes.items() if name == entry.box), None)
        if box_id is None:
            return
        box = self.tab.query_one(f"#{box_id}")
        put_text(box, entry.text)
        box.focus()

    def commands(self) -> Iterable[PaletteCommand]:
        """The palette's two entries: the examples picker and the history picker."""
        yield PaletteCommand(
            f"{self.title}: examples…",
            "A searchable list of this tab's examples; Enter loads one (Ctrl+L).",
            lambda: self._when_shown(self.open_examples),
        )
        yield PaletteCommand(
            f"{self.title}: history…",
            "Search what you ran in this tab; Enter puts it back (Ctrl+R).",
            lambda: self._when_shown(self.open_history),
        )

    def _when_shown(self, open_picker: Callable[[], bool]) -> None:
        """Open a picker once the tab shows and has the focus (a palette command of another tab shows the tab
        first: a picker opened before that would give the focus back to the other tab when it closes)."""
        self.tab.call_after_refresh(lambda: self.tab.call_after_refresh(open_picker))

    # --- ↑ / ↓ -----------------------------------------------------------------------------------

    def _focused_box(self) -> tuple[str, Widget] | None:
        tab = self.tab
        focused = tab.screen.focused if tab.is_mounted else None
        if isinstance(focused, TextArea):  # a query editor's text area: the editor is the box
            editor = next((w for w in focused.ancestors if isinstance(w, TextEditor)), None)
            focused = editor if editor is not None else focused
        if focused is not None and focused.id in self.boxes and tab in focused.ancestors:
            return focused.id, focused
        return None

    def _walk_target(self, step: int) -> tuple[str, Widget, list[str], int] | None:
        found = self._focused_box()
        if found is None:
            return None
        box_id, box = found
        if not isinstance(box, (Input, TextArea, TextEditor)) or not BoxWalker.at_edge(
            box, step
        ):  # a list keeps its ↑/↓
            return None
        texts = self.store.texts(self.boxes[box_id])
        walker = self._walkers.setdefault(box_id, BoxWalker())
        to = walker.target(texts, BoxWalker.text_of(box), self.origin(box_id), step)
        return None if to is None else (box_id, box, texts, to)

    def can_walk(self, step: int) -> bool:
        """Whether ↑ (``step`` -1) or ↓ (+1) walks the focused box's history now (else the key is the box's)."""
        return self._walk_target(step) is not None

    def walk(self, step: int) -> None:
        found = self._walk_target(step)
        if found is not None:
            box_id, box, texts, to = found
            self._walkers[box_id].move(box, texts, to, step)

    # --- the pickers -----------------------------------------------------------------------------

    def open_history(self) -> bool:
        """Ctrl+R: the history picker of the focused box (else of the tab's boxes, the default one first)."""
        from textual.screen import ModalScreen

        from tui.messages import HistoryChosen
        from tui.pickers import PickItem, SearchPicker

        tab = self.tab
        if isinstance(tab.app.screen, ModalScreen):
            return False
        found = self._focused_box()
        if found is not None:
            boxes = [self.boxes[found[0]]]
        else:
            boxes = list(dict.fromkeys(self.boxes.values()))
        entries = self.store.of_boxes(boxes)
        if not entries:
            tab.notify(
                "Nothing run in this tab yet: what you run is kept here (↑ in an empty box, Ctrl+R to search).",
                title=f"{self.title}: history",
            )
            return False
        several = len(boxes) > 1
        items = [PickItem(e.text, self.label(e, several), e) for e in entries]

        def chosen(entry: Any) -> None:
            if isinstance(entry, HistoryEntry):
                tab.post_message(HistoryChosen(entry))

        tab.app.push_screen(
            SearchPicker(
                f"{self.title} · history",
                items,
                placeholder="words of a question or a query",
                hint="type to filter · ↑/↓ · Enter puts it in the box · Esc closes",
                id="history-picker",
            ),
            chosen,
        )
        return True

    def open_examples(self) -> bool:
        """Ctrl+L: the examples picker of the tab."""
        from textual.screen import ModalScreen

        from tui.messages import ExampleChosen
        from tui.pickers import SearchPicker

        tab = self.tab
        if isinstance(tab.app.screen, ModalScreen):
            return False
        items = self.examples()
        if not items:
            tab.notify("No examples here yet: the tab is still opening.", title=f"{self.title}: examples")
            return False

        def chosen(value: Any) -> None:
            if value is not None:
                tab.post_message(ExampleChosen(value))

        tab.app.push_screen(
            SearchPicker(
                f"{self.title} · examples",
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
    "HISTORY_BINDINGS",
    "HISTORY_KEY",
    "MAX_BYTES",
    "MAX_ENTRIES",
    "BoxHistory",
    "BoxWalker",
    "HistoryEntry",
    "HistoryStore",
    "put_text",
]
