"""Opening and saving a query file from an editor, within bounds.

    text = read_query(path, limit)        # QueryFileError: too large, not UTF-8, a folder, missing …
    written = save_query(path, text, suffixes=(".sql",), overwrite=False)   # QueryFileExists: ask first

A file larger than the cap (the ``editor_max_file_bytes`` setting) is refused from its size before it is read
(:func:`engines.reading.read_capped`), and so is one that is not UTF-8 text or holds a NUL.  A query is saved only
to a query file — a name ending in one of the editor's suffixes (``.sql``, ``.suql``, ``.rq``, ``.sparql``,
``.txt``); a bare name gets the first — never over a file of another kind (a source file, a data file), never
through a symbolic link, and over an existing query file only when asked.  The text is written beside its place
and moved there when complete (as :func:`engines.export.export_rows` writes), so a failed save leaves the old file
as it was."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from engines.errors import EngineError
from engines.reading import TooLarge, read_capped
from engines.writing import replace_atomically

QUERY_SUFFIXES: tuple[str, ...] = (".sql", ".suql", ".rq", ".sparql", ".txt")
"""The names a query may be saved under (and opened from: any name opens if it is small UTF-8 text)."""


class QueryFileError(EngineError):
    """A query file could not be opened or saved: the message says why, in one line."""


class QueryFileExists(QueryFileError):
    """The query file exists and ``overwrite`` was not asked for: nothing was written."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} exists: save again to replace it, or change the name.")
        self.path = path


def _short(path: Path | str, width: int = 80) -> str:
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return text if len(text) <= width else text[: width // 2 - 1] + "…" + text[-(width // 2) :]


def _target(path: str) -> Path:
    path = path.strip()
    if not path:
        raise QueryFileError("Type a file name.")
    if "\x00" in path:
        raise QueryFileError("A file name cannot hold a NUL character.")
    return Path(path).expanduser()


def read_query(path: str, limit: int) -> str:
    """The text of the query file ``path``: at most ``limit`` bytes of UTF-8 (a BOM dropped, CRLF read as LF)."""
    target = _target(path)
    try:
        data = read_capped(target, limit)
    except TooLarge as e:
        raise QueryFileError(f"{_short(target)} is not opened: {e.describe()}.") from None
    except OSError as e:
        raise QueryFileError(f"Cannot open {_short(target)}: {e.strerror or e}.") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise QueryFileError(f"{_short(target)} is not UTF-8 text (byte {e.start + 1} is not): not opened.") from None
    if "\x00" in text:
        raise QueryFileError(f"{_short(target)} holds a NUL character: it is not a query file; not opened.")
    return text.replace("\r\n", "\n")


def save_query(path: str, text: str, *, suffixes: Sequence[str] = QUERY_SUFFIXES, overwrite: bool = False) -> Path:
    """Write ``text`` to the query file ``path`` (see the module's doc); returns where it went.  Raises
    :class:`QueryFileExists` when it exists and ``overwrite`` is false, :class:`QueryFileError` otherwise."""
    target = _target(path)
    if not target.suffix:
        target = target.with_name(target.name + suffixes[0])
    if target.suffix.lower() not in suffixes:
        raise QueryFileError(
            f"A query is saved only as {', '.join(suffixes)}: {_short(target.name)} is another kind of file."
        )
    try:
        if target.is_symlink():
            raise QueryFileError(f"{_short(target)} is a symbolic link: a query is never written through one.")
        if target.is_dir():
            raise QueryFileError(f"{_short(target)} is a folder: give a file name.")
        exists = target.exists()
        if exists and not target.is_file():
            raise QueryFileError(f"{_short(target)} is not a regular file (a FIFO, a device…): not written.")
    except OSError as e:
        raise QueryFileError(f"Cannot write {_short(target)}: {e.strerror or e}.") from None
    if exists and not overwrite:
        raise QueryFileExists(target)

    def not_a_link_meanwhile() -> None:
        if target.is_symlink():  # appeared meanwhile: replaced by the rename, never written through
            raise QueryFileError(f"{_short(target)} became a symbolic link: not written.")

    try:
        replace_atomically(
            target,
            lambda temp: temp.write_text(text, encoding="utf-8", newline=""),
            prefix=".cs224v-query-",
            check=not_a_link_meanwhile,
        )
    except OSError as e:
        raise QueryFileError(f"Cannot write {_short(target)}: {e.strerror or e}.") from None
    return target


__all__ = ["QUERY_SUFFIXES", "QueryFileError", "QueryFileExists", "read_query", "save_query"]
