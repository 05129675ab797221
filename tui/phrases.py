"""Fitting a line of text to a width by whole phrases: a status line, the header's subtitle and the warning line
are cut where a phrase ends (" · ", " — ", "; ", ", ") and end in "…", never in the middle of a word."""

from __future__ import annotations

import re

from rich.cells import cell_len

ELLIPSIS = "…"
BOUNDARY = re.compile(r" · | — | – |; |, |: ")
"""Where one phrase ends and the next begins (the cut keeps what is before it)."""


def fit_phrase(text: str, width: int) -> str:
    """``text`` when it fits in ``width`` cells; else its longest run of whole phrases that fits with " …" after it;
    when even the first phrase is too long, its whole words that fit, then "…"; a single long word is cut."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    room = width - cell_len(" " + ELLIPSIS)
    best = None
    for m in BOUNDARY.finditer(text):
        head = text[: m.start()].rstrip()
        if head and cell_len(head) <= room:
            best = head
        elif cell_len(head) > room:
            break
    if best is not None:
        return best if best.endswith(ELLIPSIS) else f"{best} {ELLIPSIS}"
    words = text[: max(room, 0) + 1].rsplit(" ", 1)[0].rstrip(" ,;:·—")
    if words and cell_len(words) <= room and " " in text[: max(room, 0) + 1]:
        return f"{words} {ELLIPSIS}"
    cut = ""
    for ch in text:  # no space to cut at: as many cells as fit
        if cell_len(cut + ch) > width - 1:
            break
        cut += ch
    return cut + ELLIPSIS


__all__ = ["ELLIPSIS", "fit_phrase"]
