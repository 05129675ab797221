"""Reading a person's file whole, within bounds: at most ``limit`` bytes, and JSON nested at most
:data:`MAX_JSON_DEPTH` levels.

    data = read_capped(path, limit)          # TooLarge past the cap; OSError as the OS says
    doc = json.loads(data)                   # (RecursionError far past MAX_JSON_DEPTH)
    if too_deep(doc): ...                    # deeper than MAX_JSON_DEPTH: refuse it before anything walks it

A regular file larger than the cap is refused from its size, without reading it; anything else (a pipe,
``/dev/zero``, a process substitution) is read to one byte past the cap and no further.  A FIFO is opened
without waiting for a writer, so a FIFO nobody writes to reads as empty instead of hanging.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterable
from typing import Any

MAX_JSON_DEPTH = 100
"""Deepest nesting of arrays and objects accepted in a JSON file the app reads whole (a SPARQL JSON result is
5 levels deep, a SPINACH log about 8): deeper documents make ``repr``, ``json.dumps`` and ``copy`` recurse past
Python's limit later, far from the file, so they are refused where they are read."""

MIB = 1 << 20


class TooLarge(Exception):
    """The file holds more than the cap: ``size`` (None when only reading found out: a pipe, a device) and
    ``limit``, in bytes."""

    def __init__(self, size: int | None, limit: int) -> None:
        super().__init__(f"{size} > {limit}")
        self.size = size
        self.limit = limit

    def describe(self) -> str:
        """``"it is 70.0 MiB; the most read is 64 MiB"``, or for a stream ``"it gives more than 64 MiB, the most
        read (nothing past that was read)"``."""
        if self.size is None:
            return f"it gives more than {size_text(self.limit)}, the most read (nothing past that was read)"
        return f"it is {size_text(self.size)}; the most read is {size_text(self.limit)}"


def size_text(n: int) -> str:
    """``"64 MiB"``, ``"1.5 MiB"``, ``"12,345 bytes"``."""
    if n >= MIB:
        value = n / MIB
        return f"{value:.0f} MiB" if value == int(value) else f"{value:.1f} MiB"
    return f"{n:,} bytes"


def read_capped(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of ``path``: :class:`TooLarge` when it holds more than ``limit``; ``OSError`` (missing,
    a folder, no permission, a name too long) as the OS raises it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd)
        if stat.S_ISDIR(mode.st_mode):
            raise IsADirectoryError(21, "Is a directory", os.fspath(path))
        if stat.S_ISREG(mode.st_mode) and mode.st_size > limit:
            raise TooLarge(mode.st_size, limit)
        # O_NONBLOCK only kept the open of a FIFO from waiting for a writer: reads block as usual
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            chunk = os.read(fd, min(limit + 1 - got, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:
            raise TooLarge(None, limit)
        return b"".join(chunks)
    finally:
        os.close(fd)


def too_deep(doc: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``doc`` (parsed JSON) nests lists and dicts more than ``limit`` levels deep (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


__all__ = ["MAX_JSON_DEPTH", "TooLarge", "read_capped", "size_text", "too_deep"]
