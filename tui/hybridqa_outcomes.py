"""What the HybridQA tab does with its workers' outcomes, on the main thread: a source's session opened (its
tables in the select, the first table shown with its questions), the sessions rebuilt for another backend, a
question answered and graded (the card, the SUQL attempts, the plan, the status), and every way a run ends
early — cancelled (what was read stays on screen) or failed (in the error pane).

:class:`HybridOutcomes` is a mixin of :class:`tui.hybridqa.HybridArea`: each job the tab starts with
:meth:`tui.area.WorkArea.run_engine` names one of these methods as its ``done`` or ``failed`` handler."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import OptionList, Select, Static, TabbedContent

from tui.area import describe_error
from tui.hybridqa_card import question_option
from tui.hybridqa_tables import PassagesTable, RowsTable
from tui.hybridqa_work import SOURCES, Answered, Opened
from tui.widgets import as_text, count_rows, truncate

if TYPE_CHECKING:
    from worlds.hybridqa import HybridTable


class HybridOutcomes:
    """The done / failed handlers of the HybridQA tab's jobs (a mixin of :class:`tui.hybridqa.HybridArea`)."""

    def _opened(self, opened: Opened) -> None:
        self._opening = None
        if opened.settings is not None:
            self.settings = opened.settings
        if opened.source == self.source:
            self._adopt_source()

    def _reopened(self, opened: Opened) -> None:
        self._opened(opened)
        self._set_status(f"ready — now using the {self.settings.backend} backend", "idle")

    def _answered(self, answered: Answered) -> None:
        self._cancel = None
        self._finish(answered)

    def _ask_failed(self, error: BaseException) -> None:
        from engines.errors import Cancelled

        self._stop_ticker()
        self._cancel = None
        self._running_question = None
        self._counts["running"] = False
        self._render_counters()
        if isinstance(error, Cancelled):
            self._cancelled()
            return
        self._show_error("Error", describe_error(error))
        self._render_card(state="error")
        self._set_status("error — see the error pane", "error")

    def _open_failed(self, error: BaseException) -> None:
        self._stop_ticker()
        self._opening = None
        self._bring_back_later = None
        self._show_error(f"Could not open the {self.source} tables", describe_error(error))
        if self.source not in self._runner.sessions:  # stay on the tables that are open
            previous = next((s for s in SOURCES if s in self._runner.sessions), None)
            if previous is not None:
                self.source = previous
                self._sync_source_select()
                self._show_notice()
        self._set_status("error — see the error pane", "error")

    def _reopen_failed(self, error: BaseException) -> None:
        self._stop_ticker()
        self._opening = None
        self._show_error("Could not rebuild the session", describe_error(error))
        self._set_status("error — see the error pane", "error")

    def _adopt_source(self) -> None:
        """The current source's session is open: fill the table select and show its table."""
        session = self.session
        assert session is not None
        tables = session.world.tables
        select = self.query_one("#hqa-table", Select)
        with self.prevent(Select.Changed):
            select.set_options([(as_text(t.table_id, one_line=True), t.name) for t in tables])
        name = self._tables.get(self.source) or (tables[0].name if tables else None)
        if name is None:
            self._show_error("No tables", f"The {self.source} source holds no table.")
            return
        self._tables[self.source] = name
        self._table = None
        self._show_table(session.world.table(name))
        self._show_notice()
        later, self._bring_back_later = self._bring_back_later, None
        if later is not None and later[0] == self.source:  # a question of this source was chosen before it opened
            self._bring_back(*later)

    def _show_table(self, table: HybridTable) -> None:
        self._table = table
        self.schema_changed()  # the schema pane follows the table (tui.schema_pane)
        self._question = None
        self._result = None
        self._short = None
        self._sync_table_select()
        rows = self.query_one("#hqa-rows", RowsTable)
        rows.show_table(table)
        row, column = rows.first_linked_cell()
        rows.move_cursor(row=row, column=column, animate=False)
        self._show_passage()
        options = self.query_one("#hqa-questions", OptionList)
        with self.prevent(OptionList.OptionHighlighted):
            options.set_options([question_option(q) for q in table.questions])
        options.border_subtitle = as_text(
            f"{len(table.questions)} questions · {truncate(table.table_id, 32)}", one_line=True
        )
        self._clear_run()
        self.query_one("#hqa-bottom", TabbedContent).active = "hqa-rows-pane"
        chosen = self._questions.get(table.name) or (table.questions[0].question_id if table.questions else None)
        if chosen is not None:
            self.choose_question(chosen)
        else:
            self._render_card()
        if self.simulated_on_real:
            self._set_status(
                f"{truncate(table.table_id, 48)} — browse its rows and passages; the sim backend cannot "
                "run real tables (claude can)",
                "idle",
            )
        elif chosen is None:
            self._set_status(f"{table.table_id} has no questions", "idle")

    def _finish(self, answered: Answered) -> None:
        self._stop_ticker()
        self._running_question = None
        self._result = answered
        answer = answered.answer
        self._short = answer.short
        self._counts.update(elapsed=answered.elapsed_s, running=False)
        self._render_counters()
        self._render_suql()
        calls = self.query_one(PassagesTable)
        self.call_after_refresh(calls.scroll_end, animate=False)
        if answer.final.plan is not None:
            self._show_plan(answer.final.plan, answer.final.number)
        self.query_one("#hqa-readback", Static).update(answer.final.readback or "— (the query could not run)")
        self._render_card()
        score = answered.score
        parts = [f"EM {score.em:.0f}", f"F1 {score.f1:.2f}"]
        if score.judged is not None:
            parts.append("judged correct" if score.judged else "judged wrong")
        reads = f"{count_rows(self._counts['read'], 'passage')} read ({self._counts['fallback']} by the fallback)"
        retries = count_rows(answer.retries, "retry").replace("retrys", "retries")
        self._set_status(f"done — {' · '.join(parts)} · {reads} · {retries}", "done")

    def _cancelled(self) -> None:
        for attempt in self._attempts:
            if attempt["state"] == "running":
                attempt["state"] = "cancelled"
        self._render_suql()
        self.query_one("#hqa-readback", Static).update("— (cancelled)")
        self._render_card(state="cancelled")
        c = self._counts
        self._set_status(
            f"cancelled — {count_rows(c['calls'], 'LLM call')} made, "
            f"{count_rows(c['read'], 'passage')} read; no further calls",
            "cancelled",
        )
