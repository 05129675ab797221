"""A cell cut to fit is cut after a whole word when one ends near the edge (the walkthrough's 'cut mid-word')."""

from __future__ import annotations

from tui.widgets import CELL_CHARS, truncate


def test_cut_after_a_whole_word():
    text = "naive: answer() on every row, then filter, summaries for every passing row, then LIMIT"
    cut = truncate(text)
    assert cut == "naive: answer() on every row, then…" and len(cut) <= CELL_CHARS
    assert text.startswith(cut[:-1]) and text[len(cut) - 1] == " "  # the word before … is whole


def test_a_long_word_is_still_cut_to_the_width_and_short_text_is_kept():
    assert truncate("x" * 60) == "x" * (CELL_CHARS - 1) + "…"
    assert truncate("a" * 30 + " " + "b" * 30) == "a" * 30 + "…"
    assert truncate("short  text\n") == "short text"
