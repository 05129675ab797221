"""What the SUQL tab does with its workers' outcomes, on the main thread: a session opened on a world (its
controls, examples and schema), a finished query (plan, DNF, read-back, results, rows to verify, counters), a
comparison of the modes, a query that needs consent, and every way a run ends early — cancelled (what was decided
stays on screen), refused or wrong (shown at its place in the editor), or failed (in the error pane).

:class:`SuqlOutcomes` is a mixin of :class:`tui.suql.SuqlArea`: each job the tab starts with
:meth:`tui.area.WorkArea.run_engine` names one of these methods as its ``done`` or ``failed`` handler."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import Static

from tui.area import describe_error
from tui.schema_pane import SchemaPane
from tui.suql_keys import PLAN_HINT, SuqlEditor
from tui.suql_tables import CompareTable, SuqlCallsTable
from tui.suql_view import layout_sql
from tui.suql_work import MODE_NAMES, NeedsConsent, Opened, QueryRan
from tui.widgets import ResultsTable, count_rows, location_in

if TYPE_CHECKING:
    from engines.compose import SuqlSession
    from engines.settings import Settings
    from engines.suql.compare import Comparison


class SuqlOutcomes:
    """The done / failed handlers of the SUQL tab's jobs (a mixin of :class:`tui.suql.SuqlArea`)."""

    def _opened_first(self, opened: Opened) -> None:
        self._adopt(opened)
        self._set_status(f"ready — Ctrl+J runs the query in mode {self.mode} · Ctrl+O compares modes", "idle")

    def _reopened(self, result: tuple[Settings, Opened]) -> None:
        settings, opened = result
        self.settings = settings
        changed_world = opened.session.world_name != self.world
        self._adopt(opened)
        if changed_world:
            self._world_changed()
            self._set_status(f"ready — world {self.world} · pick an example or write a query", "idle")
        else:
            self._set_status(f"ready — now using the {settings.backend} backend", "idle")

    def _query_done(self, result: QueryRan | NeedsConsent) -> None:
        self._cancel = None
        if isinstance(result, NeedsConsent):
            self._ask_consent(result)
        else:
            self._finish_query(result)

    def _compare_done(self, comparison: Comparison) -> None:
        self._cancel = None
        self._finish_compare(comparison)

    def _reopen_failed(self, error: BaseException) -> None:
        self._sync_world_select()
        self._failed(error, "Could not open the session")

    def _run_failed(self, error: BaseException, *, compare: bool) -> None:
        """A query or a comparison failed: a refused or wrong query is shown at its place in the editor."""
        from engines.errors import Cancelled
        from engines.sql.sandbox import SqlError, SqlRefused

        self._cancel = None
        if isinstance(error, SqlError) and not isinstance(error, Cancelled):
            self._stop_ticker()
            self._show_query_error(error, refused=isinstance(error, SqlRefused), compare=compare)
            return
        if compare and not isinstance(error, Cancelled):
            self._stop_compare_rows("✗ error")
        self._failed(error, "Error", compare=compare)
        if not isinstance(error, Cancelled):
            self._show_nothing("error")

    def _failed(self, error: BaseException, title: str, *, compare: bool = False) -> None:
        """Any error of the tab's work, shown in the error pane (a cancelled run keeps what it decided)."""
        from engines.errors import Cancelled

        self._stop_ticker()
        if isinstance(error, Cancelled):
            if compare:
                self._cancelled_compare()
            else:
                self._cancelled_query()
            return
        self._show_error(title, describe_error(error))
        self._set_status("error — see the error pane", "error")

    def _adopt(self, opened: Opened) -> None:
        self.world = opened.session.world_name
        self._modes = opened.modes
        self._worlds = opened.worlds
        self._lecture = opened.lecture
        self._paper = opened.paper
        self._mount_controls()
        self._fill_examples()
        self._show_schema(opened.session)

    def _show_schema(self, session: SuqlSession) -> None:
        """The schema browser shows your data's tables while the tab is on them (hidden on a built-in world);
        on first opening them, the editor's lecture example gives way to the first example of your data."""
        pane = self.query_one("#suql-schema", SchemaPane)
        source = getattr(session, "source", None)
        first = pane.subject is None or pane.subject.ready is None  # your data was not showing
        self.schema_changed(default=source is not None)  # your data's shows at first, a world's on Ctrl+T
        if source is not None and first and self.examples:
            from engines.suql.examples import LECTURE

            editor = self.query_one("#suql-editor", SuqlEditor)
            if editor.text == layout_sql(LECTURE[1].sql):
                self.load_example(self.examples[0])

    def _world_changed(self) -> None:
        """Another world: empty the panes; an unedited example gives way to the new world's first."""
        editor = self.query_one("#suql-editor", SuqlEditor)
        unedited = self._loaded is not None and editor.text == layout_sql(self._loaded.sql)
        if (unedited or not editor.text.strip()) and self.examples:
            self.load_example(self.examples[0])
        self._reset_counts()
        self._render_counters()
        self._show_nothing("no query yet")
        self.query_one("#suql-plan", Static).update(PLAN_HINT)
        self.query_one("#suql-readback", Static).update("—")
        self.query_one(SuqlCallsTable).reset("no calls yet")
        self._show_call_detail()
        self._clear_error()

    def _ask_consent(self, needs: NeedsConsent) -> None:
        self._stop_ticker()
        self._counts.update(running=False)
        self._render_counters()
        self._consent = (needs.sql, needs.mode)
        self._set_status(
            f"not run: this query may make up to {needs.expected:,} LLM calls to the paid {self.settings.backend} "
            f"backend (more than {self.settings.suql_confirm_calls:,}) — Ctrl+J again runs it",
            "error",
        )

    def _finish_query(self, ran: QueryRan) -> None:
        self._stop_ticker()
        result = ran.result
        self._show_plan(result.plan)
        self._show_dnf(result.dnf)
        self.query_one("#suql-readback", Static).update(result.readback)
        results = self.query_one("#suql-results", ResultsTable)
        results.show_rows(result.columns, result.rows, truncated=result.truncated)
        if result.approximate:
            results.border_title = "Results ≈ approximate"
            results.border_subtitle = (
                f"{count_rows(len(result.rows))} · cap {result.plan.cap}: not every candidate examined"
            )
        else:
            results.border_title = "Results"
        self._show_to_verify(result)
        s = result.stats
        self._counts.update(
            answer=s.answer_calls,
            summary=s.summary_calls,
            cached=s.cached_calls,
            examined=s.rows_examined,
            elapsed=ran.elapsed_s,
            running=False,
        )
        self._render_counters()
        parts = [count_rows(len(result.rows))]
        if result.to_verify:
            parts.append(f"{len(result.to_verify)} to verify")
        if result.approximate:
            parts.append("approximate")
        if getattr(result, "budget_exhausted", False):
            parts.append(result.message)
        self._set_status(f"done — {' · '.join(parts)} · mode {result.mode}", "done")

    def _finish_compare(self, comparison: Comparison) -> None:
        self._stop_ticker()
        table = self.query_one(CompareTable)
        failed = comparison.failed
        subtitle = f"{len(comparison.modes)} modes"
        best = comparison.fewest_answer_calls()
        if best is not None:
            subtitle += f" · fewest answer() calls: {', '.join(best[0])} ({best[1]:,})"
        if comparison.approximate:
            subtitle += " · ≈ approximate (retrieval cap)"
        table.border_subtitle = subtitle
        if failed:
            self._set_status(f"compared — {', '.join(failed)} failed (see the note column)", "error")
        else:
            self._set_status(f"compared the six modes — {subtitle}", "done")

    def _cancelled_query(self) -> None:
        counts = self._counts
        calls = counts["answer"] + counts["summary"]
        self._counts.update(elapsed=self._now() - self._started, running=False)
        self._render_counters()
        rows = [(label, truth) for label, truth in self._decided]
        results = self.query_one("#suql-results", ResultsTable)
        results.show_rows(("row", "decided"), rows)
        results.border_title = "Results · cancelled"
        results.border_subtitle = f"{count_rows(len(rows))} decided before Esc"
        self.query_one("#suql-verify", ResultsTable).show_nothing("cancelled: no final query ran")
        self.query_one("#suql-readback", Static).update("— (cancelled)")
        stopped = f" ({counts['stopped']} in flight stopped)" if counts["stopped"] else ""
        self._set_status(
            f"cancelled — {count_rows(calls, 'LLM call')} made{stopped}, {count_rows(len(rows))} decided; no further calls",
            "cancelled",
        )

    def _stop_compare_rows(self, current: str) -> None:
        """The comparison ended early: the running mode says ``current``, the ones after it "not run"."""
        table = self.query_one(CompareTable)
        done = [r.mode for r in self._compared]
        for name in MODE_NAMES:
            if name == self._comparing:
                table.stopped(name, current)
            elif name not in done:
                table.stopped(name, "not run")
        table.border_subtitle = "stopped early"

    def _cancelled_compare(self) -> None:
        self._stop_compare_rows("stopped")
        self.query_one(CompareTable).border_subtitle = "cancelled"
        done = [r.mode for r in self._compared]
        ran = f"compared {', '.join(done)}" if done else "no mode finished"
        self._set_status(f"cancelled — {ran}; no further calls", "cancelled")

    def _show_query_error(self, error: Any, *, refused: bool, compare: bool) -> None:
        """A query the engine refused or could not run; the editor keeps its text."""
        editor = self.query_one("#suql-editor", SuqlEditor)
        text = editor.text
        where = ""
        if error.line is not None and error.column is not None:
            if error.sql is not None and _bare(error.sql) != _bare(text):
                where = "in the SQL the compiler generated"
            else:
                where = f"at line {error.line}, column {error.column}"
                editor.cursor_location = location_in(text, error.line, error.column)
        title = "Refused — nothing ran" if refused else "SUQL error"
        if where:
            title = f"{title} {where}"
        self._show_error(title, error.message)
        self._show_nothing("refused" if refused else "error")
        if compare:
            table = self.query_one(CompareTable)
            for name in MODE_NAMES:
                table.stopped(name, "not run")
            table.border_subtitle = "the query cannot run"
        self._set_status(
            "refused — fix the query in the editor"
            if refused
            else "error — fix the query in the editor and run it again",
            "error",
        )


def _bare(sql: str) -> str:
    return sql.strip().rstrip(";").strip()
