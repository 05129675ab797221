"""The HybridQA tab driven headless through the pilot: behaviour, not pixels."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Checkbox, OptionList, Select, Static

from engines.hybridqa.session import SIM_KNOWS_GENERATED_ONLY
from engines.hybridqa.tasks import HYBRID_PARSE
from engines.llm.protocol import Output
from engines.llm.sim import SimBackend
from tests.tui.support import SIZE, EventGate, drive, finished_answer_call, make_app, settle
from tests.tui.support import open_tab as show_tab
from tui.app import CS224VApp
from tui.hybridqa import HybridArea, PassagesTable, RowsTable
from worlds.hybridqa import TYPE_TITLES

TABLE = "veloria_flag_bearers"  # the first generated table, shown when the tab opens
COMPARISON = "veloria_flag_bearers-V"
"""Type V: "Who is younger, the flag bearer of the XX Olympics or the flag bearer of the IX Olympics?"
The parser orders by a birth date read from ``Event year_Info`` (the Games' passage, which does not say);
only the fallback to ``Flag Bearer_Info`` finds the dates: 4 passages read with it (2 by the fallback,
answer Karel Brask = the gold), 2 without (both say nothing; the answer is the other bearer)."""
AMSTERDAM = "veloria_flag_bearers-III"
"""Type III: an answer() condition on every row (27 passages read): a long run to cancel."""


def EmitGate(area: HybridArea, after: int) -> EventGate:
    """Holds the engine after ``after`` finished answer() calls, until Esc."""
    return EventGate(area, after, finished_answer_call)


async def open_tab(pilot: Pilot) -> HybridArea:
    """Wait for the sessions, show the HybridQA tab, return its area."""
    area = await show_tab(pilot, "hybridqa")
    assert isinstance(area, HybridArea)
    return area


def _text(app: CS224VApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


@drive
async def test_the_tab_opens_on_the_first_generated_table_and_its_first_question() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        assert area.source == "generated" and area.table is not None and area.table.name == TABLE
        assert app.query_one("#hqa-table", Select).value == TABLE
        assert app.query_one("#hqa-questions", OptionList).option_count == 6
        rows = app.query_one("#hqa-rows", RowsTable)
        assert rows.row_count == len(area.table.rows)
        assert app.focused is app.query_one("#hqa-questions", OptionList)
        # The cursor starts on the first linked cell: its passage shows.
        assert "Event year_Info" in str(app.query_one("#hqa-passage-pane").border_title)
        assert "took place in Stockholm" in _text(app, "#hqa-passage")


@drive
async def test_choosing_a_question_shows_its_type_and_gold() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        await pilot.press("down", "down")  # I → II → III
        assert area.question is not None and area.question.question_id == AMSTERDAM
        card = app.query_one("#hqa-card", Static)
        assert card.border_title == "Question · type III"
        text = _text(app, "#hqa-card")
        assert TYPE_TITLES["III"] in text
        assert "gold women's road race" in text and "not run yet" in text
        assert _text(app, "#hqa-status").startswith("type III")


@drive
async def test_running_a_question_fills_the_suql_the_calls_the_answer_and_the_scores() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        area.choose_question(COMPARISON)
        await pilot.press("ctrl+j")
        await settle(pilot)

        assert area.result is not None
        assert area.result.answer.short == "Karel Brask"
        card = _text(app, "#hqa-card")
        assert "answer Karel Brask" in card and "gold Karel Brask" in card
        assert "EM 1" in card and "F1 1.00" in card and "human judgement ✓ correct" in card
        suql = _text(app, "#hqa-suql")
        assert suql.startswith("attempt 1 · ✓ 1 row: Karel Brask · final")
        assert 'ORDER BY answer("Event year_Info"' in suql
        assert "mode E" in _text(app, "#hqa-plan")
        assert _text(app, "#hqa-readback").startswith("I searched for veloria_flag_bearers whose Name is XX or IX")

        calls = app.query_one(PassagesTable)
        assert app.query_one("#hqa-bottom").active == "hqa-calls-pane"
        steps = [line.step for line in calls.lines.values()]
        assert steps == ["parse", "answer()", "fallback", "answer()", "fallback", "short"]
        fallbacks = [line for line in calls.lines.values() if line.step == "fallback"]
        assert {line.column for line in fallbacks} == {"Flag Bearer_Info"}
        assert all(line.reason == "fallback: Event year_Info did not say" for line in fallbacks)
        assert area.counts["read"] == 4 and area.counts["fallback"] == 2 and area.counts["silent"] == 2
        assert area.counts["calls"] == calls.row_count == 6
        assert "passages read 4 (2 by the fallback, 2 said nothing)" in _text(app, "#hqa-counters")
        assert "elapsed 0.00 s" in _text(app, "#hqa-counters")
        assert _text(app, "#hqa-status").startswith("done — EM 1 · F1 1.00 · judged correct")

        await pilot.press("up")  # another question: the panes no longer show this run
        assert area.question is not None and area.question.qtype == "IV"
        assert calls.row_count == 0 and area.counts["read"] == 0
        assert "not run yet" in _text(app, "#hqa-card") and "EM" not in _text(app, "#hqa-card")
        assert _text(app, "#hqa-suql").startswith("The parser sees the question")


@drive
async def test_switching_the_fallback_off_reads_fewer_passages_and_misses() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        area.choose_question(COMPARISON)
        area.run_question()
        await settle(pilot)
        with_fallback = area.counts
        assert area.result is not None and area.result.answer.fallback_calls == 2

        await pilot.press("f")
        assert area.fallback is False
        assert app.query_one("#hqa-fallback", Checkbox).value is False
        await pilot.press("ctrl+j")
        await settle(pilot)
        without = area.counts

        assert (with_fallback["read"], with_fallback["fallback"]) == (4, 2)
        assert (without["read"], without["fallback"], without["silent"]) == (2, 0, 2)
        assert without["calls"] < with_fallback["calls"]
        assert area.result is not None and area.result.answer.answer_calls == 2
        assert area.result.answer.improvements.fallback is False
        assert area.result.score.judged is False and area.result.score.error == "wrong column"
        card = _text(app, "#hqa-card")
        assert "EM 0" in card and "✗ wrong" in card and "wrong column" in card
        assert "fallback" not in [line.step for line in app.query_one(PassagesTable).lines.values()]

        await pilot.press("f")  # and back on
        assert area.fallback is True and app.query_one("#hqa-fallback", Checkbox).value is True


@drive
async def test_a_real_table_with_the_sim_backend_can_be_browsed_but_not_run() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        await pilot.press("s")
        await settle(pilot)

        assert area.source == "real" and area.simulated_on_real
        assert app.query_one("#hqa-source", Select).value == "real"
        notice = app.query_one("#hqa-notice", Static)
        assert notice.display and _text(app, "#hqa-notice") == SIM_KNOWS_GENERATED_ONLY
        assert area.table is not None and area.table.source == "real"
        assert app.query_one("#hqa-rows", RowsTable).row_count == len(area.table.rows)
        assert app.query_one("#hqa-card", Static).border_title == "Question · real HybridQA"
        assert "gold Akame Valley" in _text(app, "#hqa-card")

        await pilot.press("ctrl+j")
        await settle(pilot)
        assert area.result is None and area.counts["calls"] == 0
        assert _text(app, "#hqa-status").startswith("not run — the simulated LLM knows only the generated tables")

        # Browsing: an _Info cell shows its passage.
        rows = app.query_one("#hqa-rows", RowsTable)
        rows.focus()
        info = area.table.columns.index("Municipality_Info") + 1
        rows.move_cursor(row=1, column=info)
        await pilot.pause()
        assert app.query_one("#hqa-passage-pane").border_title.startswith("Passage · Municipality_Info · row 1")
        assert "Kuwana" in _text(app, "#hqa-passage")

        await pilot.press("s")  # back to the generated tables: they run again
        await settle(pilot)
        assert area.source == "generated" and not app.query_one("#hqa-notice", Static).display
        assert area.run_question()
        await settle(pilot)
        assert area.result is not None


@drive
async def test_esc_cancels_the_running_question() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        area.choose_question(AMSTERDAM)
        gate = EmitGate(area, after=3).install()
        area.run_question()
        await gate.wait(pilot)
        assert area.is_busy
        assert "running" in _text(app, "#hqa-suql")

        await pilot.press("escape")
        await settle(pilot)

        assert not area.is_busy and area.result is None
        assert area.counts["read"] == 3
        assert _text(app, "#hqa-status").startswith("cancelled — ")
        assert "cancelled (Esc)" in _text(app, "#hqa-card")
        assert "attempt 1 · cancelled" in _text(app, "#hqa-suql")
        assert app.query_one(PassagesTable).row_count <= 5  # parse + 3 reads (+ at most one stopped)


@drive
async def test_without_real_data_the_tab_says_why_and_stays_on_the_generated_tables(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CS224V_SHARED_DATA", str(tmp_path))  # a data folder without hybridqa/
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        area.set_source("real")
        await settle(pilot)
        error = app.query_one("#hqa-error", Static)
        assert error.display and error.border_title == "Could not open the real tables"
        assert "No HybridQA data found" in _text(app, "#hqa-error")
        assert area.source == "generated" and app.query_one("#hqa-source", Select).value == "generated"
        assert area.table is not None and area.table.name == TABLE
        assert area.run_question()
        await settle(pilot)
        assert area.result is not None


class ClaudeStandIn(SimBackend):
    """Offline stand-in for the claude backend on a real table: its parser writes one fixed query."""

    name = "claude"

    def run(self, task, input):
        if task is not HYBRID_PARSE:
            return super().run(task, input)
        return Output(
            'SELECT "Site" FROM "list_of_places_of_scenic_beauty_of_japan_mie_0" WHERE "Municipality" = \'Nabari\''
        )


@drive
async def test_with_a_real_llm_real_tables_run_and_are_scored_without_a_judgement(monkeypatch) -> None:
    from engines.hybridqa.session import open_hybridqa
    from engines.llm.client import LLM
    from tui.hybridqa_work import HybridRunner

    def open_with_stand_in(self, settings, source):
        llm = LLM(ClaudeStandIn()) if source == "real" else None
        return open_hybridqa(settings, source=source, llm=llm, clock=self.clock)

    monkeypatch.setattr(HybridRunner, "_open", open_with_stand_in)  # the tab's sessions are its runner's
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        area.set_source("real")
        await settle(pilot)
        assert not area.simulated_on_real and not app.query_one("#hqa-notice", Static).display
        assert area.run_question()
        await settle(pilot)
        assert area.result is not None and area.result.answer.short.startswith("Akame Valley")
        card = _text(app, "#hqa-card")
        assert "gold Akame Valley" in card and "EM 0" in card and "F1 0.67" in card
        assert "human judgement — (real tables have no hidden truth)" in card
        assert _text(app, "#hqa-status").startswith("done — EM 0 · F1 0.67 · 0 passages read")
