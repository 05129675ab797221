"""At 80 × 24 every key the footer offers is on screen (issue 15): none is cut at the right edge or hidden under
the command-palette key docked there — in every tab and view when it opens, after a run, and while a run goes on
(when Esc takes the place of the keys that start one)."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets._footer import FooterKey, FooterLabel

from engines.events import CallStarted
from tests.tui.support import EventGate, drive, make_app, open_tab, settle
from tui.screenshots import HYBRIDQA_QUESTION, KG_QUESTION

SMALL = (80, 24)


def _cut_keys(pilot: Pilot) -> list[str]:
    """The footer entries (keys and group labels) that do not fit left of the palette key, with their columns."""
    screen = pilot.app.screen
    # an editor's Open/Save/Clear are not offered below 110 columns (display: none, tui/editor.py)
    entries = [w for w in screen.query(FooterKey) if not w.has_class("-command-palette") and w.display]
    entries += list(screen.query(FooterLabel))
    palette = [w for w in screen.query(FooterKey) if w.has_class("-command-palette")]
    right = min([SMALL[0], *(w.region.x for w in palette)])
    assert entries, "the footer shows no key"
    return [
        f"{getattr(w, 'key_display', '')} {getattr(w, 'description', '')} at {w.region.x}-{w.region.right}"
        for w in entries
        if w.region.right > right or w.region.width == 0
    ]


@drive
async def test_every_footer_key_fits_in_every_tab_and_view() -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        for tab, views in (
            ("restaurants", ("",)),
            ("suql", ("",)),
            ("hybridqa", ("",)),
            ("kg", ("console", "browser", "stepper")),
            ("lab", ("",)),
        ):
            area = await open_tab(pilot, tab)
            for view in views:
                if view:
                    area.show_view(view)
                await settle(pilot)
                await pilot.pause()
                assert _cut_keys(pilot) == [], (tab, view)


@drive
async def test_every_footer_key_fits_after_a_run() -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        hybrid = await open_tab(pilot, "hybridqa")
        hybrid.choose_question(HYBRIDQA_QUESTION)
        hybrid.run_question()
        await settle(pilot)
        assert _cut_keys(pilot) == [], "hybridqa"
        kg = await open_tab(pilot, "kg")
        kg.show_view("stepper")
        kg.run_question(KG_QUESTION)  # the focus goes to the step view: the stepper's keys show
        await settle(pilot)
        assert kg.steps and _cut_keys(pilot) == [], "kg stepper"


@drive
async def test_every_footer_key_fits_while_a_run_goes_on() -> None:
    from engines.spinach.events import StepTaken

    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        for tab, start, counts in (
            ("suql", lambda area: area.run_query(), lambda e: isinstance(e, CallStarted)),
            ("hybridqa", lambda area: area.run_question(), lambda e: isinstance(e, CallStarted)),
            ("kg", lambda area: area.run_question(KG_QUESTION), lambda e: isinstance(e, StepTaken)),
        ):
            area = await open_tab(pilot, tab)
            if tab == "kg":
                area.show_view("stepper")
                await settle(pilot)
            gate = EventGate(area, 1, counts).install()
            assert start(area)
            await gate.wait(pilot)
            assert area.is_busy
            keys = {w.description for w in app.screen.query(FooterKey)}
            assert "Cancel" in keys or "Stop" in keys, (tab, keys)  # Esc is offered while it runs
            assert _cut_keys(pilot) == [], tab
            area.cancel()
            await settle(pilot)
