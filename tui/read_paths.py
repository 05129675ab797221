"""The files a ``--db`` option names, for the rule that no output (``--out``, F9) replaces what the app reads; shared
by the command line and the app (no textual here)."""

from __future__ import annotations

import os
from pathlib import Path


def db_files(spec: str | None) -> list[Path]:
    """``--db``'s file, or every file directly in its folder (each is a table); none for a URL or no ``--db``.  A
    folder that cannot be listed gives none: the command itself says why the source cannot be read."""
    if not isinstance(spec, str) or "://" in spec or "\x00" in spec or not spec.strip():
        return []
    db = Path(spec.strip()).expanduser()
    try:
        if db.is_dir():
            return [Path(entry.path) for entry in os.scandir(db)]
    except OSError:
        return []
    return [db]


__all__ = ["db_files"]
