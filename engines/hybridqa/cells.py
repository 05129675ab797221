"""How a HybridQA table's cells link to passages: column ``X``'s passages are in ``X_Info``.

The rule of :mod:`worlds.hybridqa`, asked by whoever shows a table (the TUI's rows and
passage panes) instead of being restated there.
"""

from __future__ import annotations

from worlds.hybridqa import INFO_SUFFIX


def is_info(column: str) -> bool:
    """``column`` holds passages (an ``_Info`` column)."""
    return column.endswith(INFO_SUFFIX)


def base_column(column: str) -> str:
    """The column an ``_Info`` column's passages belong to (``Flag Bearer_Info`` → ``Flag Bearer``)."""
    return column.removesuffix(INFO_SUFFIX)


def linked_column(column: str, columns: tuple[str, ...]) -> str | None:
    """The ``_Info`` column holding the passages of ``column``'s cells (itself for an ``_Info`` column);
    ``None`` when ``columns`` has none for it."""
    if is_info(column):
        return column
    info = column + INFO_SUFFIX
    return info if info in columns else None


__all__ = ["INFO_SUFFIX", "base_column", "is_info", "linked_column"]
