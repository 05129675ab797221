"""Writing a file whole or not at all (exports, query files)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def replace_atomically(
    target: Path, write: Callable[[Path], object], *, prefix: str, check: Callable[[], None] | None = None
) -> None:
    """Write ``target`` whole or not at all: ``write(temp)`` fills a temporary file beside it (a short name, so
    any name the folder can hold can be written), ``check()`` may still refuse (raising), then the temporary file
    gets the usual permissions (mkstemp makes it private) and is renamed over ``target`` (a symbolic link there is
    replaced, never written through).  The folder is made when missing.  OSError propagates; the temporary file
    never remains."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=prefix, suffix=".part", dir=target.parent)
    os.close(fd)
    temp = Path(temp_name)
    try:
        write(temp)
        if check is not None:
            check()
        os.chmod(temp, 0o666 & ~umask())
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)


def umask() -> int:
    """The process's file-creation mask (read without changing it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


__all__ = ["replace_atomically", "umask"]
