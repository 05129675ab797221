"""Text that is safe to show on a terminal: the one place that decides which characters of data may reach it.

A value from a file, a database, a server or a model may hold characters a terminal obeys instead of showing:
``ESC`` starts escape sequences (``\\x1b]0;…`` retitles the window, ``\\x1b[2J`` clears it), C1 controls
(``\\x9b`` is a one-byte CSI on some terminals), and bidirectional controls reorder what is shown (U+202E makes
``exe.txt`` read as ``txt.exe``).  :func:`terminal_safe` shows each of them as a visible escape, the way Python
writes it (``\\x1b``, ``\\x9b``, ``\\u202e``; a lone surrogate as ``\\udcff``), consistent with how
:func:`tui.commands.shown` writes bytes of a file name that are not UTF-8.  Everything else passes unchanged.

Where it applies: the command line's text output (:func:`escaped_output` around a command: everything it prints
to the terminal) and every text of the app that holds data (``tui.widgets``: the tables' cells, ``TextView`` panes,
``as_text`` for border titles, list entries and tooltips; the app's notifications, header and command palette),
where markup is never read from data either.  A box that edits text (an editor, an input) draws each such
character as one visible picture instead (``␛``), so its cursor stays on its character.  Never to ``--json``
output, ``--out`` files, exports or the clipboard: those keep the data as it is.

This module imports nothing heavy (the command line uses it without loading the app).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""C0 controls (tab and line feed included: a caller keeps them with ``keep``), DEL, C1 controls, the bidi
controls (ALM U+061C, LRM/RLM U+200E/F, the embeddings and overrides U+202A-E, the isolates U+2066-9) and lone
surrogates (which a UTF-8 terminal cannot be sent)."""

MULTILINE = "\n\t"
"""What a multi-line view keeps (line feeds and tabs); a one-line cell keeps nothing."""


def escape_char(ch: str) -> str:
    """``"\\x1b"`` for ESC, ``"\\u202e"`` for RIGHT-TO-LEFT OVERRIDE: how a character is shown instead."""
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def terminal_safe(text: str, *, keep: str = "") -> str:
    """``text`` with every :data:`UNSAFE` character shown as its escape (``\\x1b``), except those in ``keep``
    (:data:`MULTILINE` for a view of several lines).  Text without such characters is returned as it is."""
    if UNSAFE.search(text) is None:
        return text
    return UNSAFE.sub(lambda m: m.group() if m.group() in keep else escape_char(m.group()), text)


class EscapingStream:
    """A text stream that passes what is written through :func:`terminal_safe` (line feeds and tabs kept) to
    ``stream``.  A write of carriage returns alone passes as it is: ``print(…, end="\\r")`` redraws a progress
    line, while a carriage return inside data is shown as ``\\r``."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if text and text.strip("\r") == "":
            self._stream.write(text)
        else:
            self._stream.write(terminal_safe(text, keep=MULTILINE))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding, buffer…
        return getattr(self._stream, name)


SURROGATE = re.compile("[\ud800-\udfff]")


class JsonStream(EscapingStream):
    """A stream for a JSON document: the text passes as it is, except lone surrogates (a ``\\udcff`` read from a
    file), which no UTF-8 stream can carry; they are written as the JSON escape ``\\udcff``, which reads back as
    the same string.  (In a JSON document they can only stand inside strings.)"""

    def write(self, text: str) -> int:
        self._stream.write(SURROGATE.sub(lambda m: escape_char(m.group()), text))
        return len(text)


@contextmanager
def escaped_output(*, stdout: bool = True) -> Iterator[None]:
    """Within the block, what is printed to stderr, and to stdout unless ``stdout=False``, is escaped by
    :class:`EscapingStream`.  ``stdout=False`` is for ``--json``: its document keeps its characters as they are
    (:class:`JsonStream`)."""
    saved = sys.stdout, sys.stderr
    sys.stdout = (EscapingStream if stdout else JsonStream)(sys.stdout)  # type: ignore[assignment]
    sys.stderr = EscapingStream(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


__all__ = ["MULTILINE", "UNSAFE", "EscapingStream", "JsonStream", "escape_char", "escaped_output", "terminal_safe"]
