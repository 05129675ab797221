"""Usage in sight in the app (issue 13 part 3): the session's tokens and cost in the header, the run's on
each tab's stats (or status) line, each call's input/output/cached tokens in the calls tables; the sim's
figures are estimates and say so (≈, "estimated"), and it costs nothing: no dollar figure (issue 26)."""

from __future__ import annotations

from typing import Any

from textual.widgets import DataTable, Static

from engines.events import CallFinished
from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.area import RunUsage
from tui.screenshots import HYBRIDQA_QUESTION, RESTAURANTS_QUESTION, SUQL_EXAMPLE
from tui.widgets import call_tokens_text


def _records(app: Any, selector: str) -> list[dict[str, Any]]:
    return list(app.query_one(selector, DataTable).call_records.values())


def _usage(records: list[dict[str, Any]]) -> RunUsage:
    """What the calls of a table add up to (each record's own figures, summed here)."""
    total = RunUsage()
    for r in records:
        if r["output"] is not None:
            total.add(
                CallFinished(
                    r["call"],
                    r["function"],
                    r["output"],
                    input_tokens=r["input_tokens"],
                    output_tokens=r["output_tokens"],
                    cached_input_tokens=r["cached_input_tokens"],
                    cost_usd=r["cost_usd"],
                    estimated=r["tokens_estimated"],
                )
            )
    return total


def _text(app: Any, selector: str) -> str:
    content = app.query_one(selector, Static).content
    return getattr(content, "plain", str(content))


def test_run_usage_lines() -> None:
    usage = RunUsage()
    assert (usage.calls, usage.cost_text()) == (0, "")
    # the sim's tokens are estimates and cost nothing: no dollar figure (a price on an estimate is not counted)
    usage.add(CallFinished(1, "answer", "Yes", input_tokens=1204, output_tokens=38, cost_usd=0.0042, estimated=True))
    assert usage.line() == "tokens (estimated) ≈1,204 in · ≈38 out"
    assert usage.short() == "≈1,242 tokens (est.)" and usage.cost_text() == "" and usage.unpriced == 0
    # a real backend's call after it: its cost is shown (the tokens still carry ≈: some are estimates)
    usage.add(
        CallFinished(2, "answer", "No", input_tokens=800, output_tokens=2, cached_input_tokens=700, cost_usd=0.001)
    )
    assert usage.line() == "tokens ≈2,004 in (700 cached) · ≈40 out · $0.0010"
    assert usage.short() == "≈2,044 tokens · $0.0010"
    real = RunUsage()
    real.add(CallFinished(1, "answer", "Yes", input_tokens=10, output_tokens=5, cost_usd=0.5))
    assert real.line() == "tokens 10 in · 5 out · $0.5000"  # the API's own counts: no ≈
    unpriced = RunUsage()
    unpriced.add(CallFinished(1, "answer", "Yes", input_tokens=10, output_tokens=5))
    assert unpriced.cost_text() == "$?" and unpriced.unpriced == 1
    # one call's cell in the calls tables
    assert call_tokens_text(1204, 38, 1000) == "1,204/38 (1,000 cached)"
    assert call_tokens_text(412, 12, 0, estimated=True) == "≈412/12"
    assert call_tokens_text(None, None, None) == "—"


@drive
async def test_header_status_and_calls_table_show_tokens_and_cost() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "restaurants")
        assert "session" not in app.sub_title  # no call yet: the backend only
        area.ask(RESTAURANTS_QUESTION)
        await settle(pilot)
        first = _records(app, "#calls")
        assert first and all(r["input_tokens"] and r["tokens_estimated"] for r in first)
        run = _usage(first)
        assert run.cost_usd is None and all(r["cost_usd"] is None for r in first)  # the sim costs nothing
        assert app.sub_title == f"sim · seed 224 · session {run.short()}"
        assert app.sub_title.endswith(" tokens (est.)") and "$" not in app.sub_title
        assert _text(app, "#status").endswith(f" · {run.line()}") and "≈" in run.line()
        assert "tokens (estimated)" in _text(app, "#status") and "$" not in _text(app, "#status")

        # each call's tokens, in its row (≈: the sim's estimate; no prompt cache in the sim)
        calls = app.query_one("#calls", DataTable)
        labels = [c.label.plain for c in calls.ordered_columns]
        assert labels[:3] == ["#", "function", "tok in/out"]
        for n, record in enumerate(first):
            assert calls.get_row_at(n)[2].plain == f"≈{record['input_tokens']:,}/{record['output_tokens']:,}"

        # a second turn: the status line speaks of that run, the header of the session
        area.ask("Which of them are open now?")
        await settle(pilot)
        second = _usage(_records(app, "#calls"))
        assert second.calls and _text(app, "#status").endswith(f" · {second.line()}")
        session = _usage(first + _records(app, "#calls"))
        assert app.sub_title == f"sim · seed 224 · session {session.short()}"


@drive
async def test_suql_and_hybridqa_stats_lines_carry_the_runs_usage() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "suql")
        assert "tokens" not in _text(app, "#suql-counters")  # before any call
        area.load_example(area.example(SUQL_EXAMPLE))
        area.run_query()
        await settle(pilot)
        suql = _usage(_records(app, "#suql-calls"))
        counters = _text(app, "#suql-counters")
        assert f"tokens (estimated) {suql.tokens_text()}" in counters
        assert "cost" not in counters and "$" not in counters  # the sim costs nothing
        assert "tokens" not in _text(app, "#suql-status")  # said once, on the stats line

        hqa = await open_tab(pilot, "hybridqa")
        hqa.choose_question(HYBRIDQA_QUESTION)
        hqa.run_question()
        await settle(pilot)
        run = _usage(_records(app, "#hqa-calls"))
        assert run.calls and f"tokens (estimated) {run.tokens_text()}" in _text(app, "#hqa-counters")
        assert "$" not in _text(app, "#hqa-counters")
        passages = app.query_one("#hqa-calls", DataTable)
        tokens = [c.key.value for c in passages.ordered_columns].index("tokens")
        assert passages.get_row_at(0)[tokens].plain.startswith("≈")
        both = _usage(_records(app, "#suql-calls") + _records(app, "#hqa-calls"))
        assert app.sub_title == f"sim · seed 224 · session {both.short()}"  # the session: both tabs' calls
