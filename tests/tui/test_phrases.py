"""Lines cut at a phrase's end with "…" at 80 columns, never mid-phrase (issue 28 item 5): the fitting itself,
and the header's subtitle, which drops the server's URL and the model before the session's cost."""

from __future__ import annotations

from rich.cells import cell_len

from tui.app import header_subtitle
from tui.phrases import fit_phrase

STATUS = "running the agent on c7_5 (sim)… — Esc stops it · tokens (estimated) ≈2,689 in · ≈139 out"


def test_a_line_that_fits_is_kept():
    assert fit_phrase(STATUS, 200) == STATUS


def test_a_long_line_is_cut_after_a_whole_phrase():
    assert fit_phrase(STATUS, 78) == "running the agent on c7_5 (sim)… — Esc stops it …"
    assert fit_phrase(STATUS, 40) == "running the agent on c7_5 (sim)…"
    for width in range(3, 100):
        cut = fit_phrase(STATUS, width)
        assert cell_len(cut) <= width
        assert cut == STATUS or cut.endswith("…")


def test_a_first_phrase_too_long_is_cut_between_words():
    assert (
        fit_phrase("no restaurant priced luxury also meets the other conditions", 30) == "no restaurant priced luxury …"
    )
    assert fit_phrase("supercalifragilisticexpialidocious", 10) == "supercali…"


def test_the_header_keeps_the_cost_and_drops_the_url_first():
    label = "openai · gpt-4o-mini · http://127.0.0.1:11434/v1"
    session = "session 12,345 tokens · $0.0123"
    assert header_subtitle(label, session, 200) == f"{label} · {session}"
    assert header_subtitle(label, session, 56) == f"openai · gpt-4o-mini · {session}"
    assert header_subtitle(label, session, 48) == f"openai · {session}"  # 80 columns: the room beside the title
    short = header_subtitle(label, session, 25)
    assert cell_len(short) <= 25 and short.endswith("…") and short.startswith("openai")
