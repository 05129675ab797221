"""Mode G in the SUQL tab (issue 29.2): on the 5,000-restaurant world a list-all query with one answer() condition
is cascaded; the plan pane states the cascade, the results say which rows the proxy matched (never shown as the
LLM's verdict), and the counters show the calls saved against mode E."""

from __future__ import annotations

from textual.widgets import DataTable, Select, Static

from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.suql import SuqlArea
from tui.suql_tables import SuqlCallsTable

ROMANTIC = (
    "SELECT _id, name FROM restaurants WHERE location = 'Palo Alto' AND answer(reviews, 'is it romantic?') = 'Yes'"
)


@drive
async def test_mode_g_states_its_cascade_marks_proxy_rows_and_counts_the_calls_saved() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "suql")
        assert isinstance(area, SuqlArea)
        app.query_one("#suql-world", Select).value = "restaurants-5000"
        await settle(pilot)
        area.set_mode("G")
        assert area.run_query(ROMANTIC)
        await settle(pilot)
        result = area._result
        assert result is not None and result.plan.cascade is not None
        report = result.plan.cascade
        assert not report.fallback and report.accepted + report.rejected > 0
        # the LLM was asked the sample and the band only: fewer calls than candidates, the rest decided by the proxy
        assert result.stats.answer_calls < report.candidates
        results = app.query_one("#suql-results", DataTable)
        labels = [c.label.plain for c in results.ordered_columns]
        assert labels[-1] == "decided by"
        marks = [str(results.get_row_at(r)[-1]) for r in range(results.row_count)]
        assert set(marks) <= {"proxy", "llm"} and marks.count("proxy") == result.decided_by.count("proxy")
        assert "matched by the proxy, not the LLM" in str(results.border_title)
        counters = str(app.query_one("#suql-counters", Static).render())
        assert f"saved vs E ≥ {report.accepted + report.rejected:,}" in counters
        plan = str(app.query_one("#suql-plan", Static).render())
        assert "cascade" in plan and "against the LLM's answers" in plan and "sample:" in plan
        # every call in the calls table says which step of the cascade asked it
        calls = app.query_one(SuqlCallsTable)
        steps = {row.split(" · ")[0] for row, *_ in calls._details.values()}
        assert steps == {"pilot", "sample", "band"}
