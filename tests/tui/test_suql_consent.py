"""With a paid backend the SUQL tab does not send a query expected to exceed CS224V_SUQL_CONFIRM_CALLS until
the user runs it a second time.  Hermetic: the claude backend has a dummy key and a closed port on 127.0.0.1."""

from __future__ import annotations

import socket

import pytest
from textual.widgets import Static

from engines.settings import Settings
from tests.tui.support import SIZE, drive, open_tab, settle, zero_clock
from tui.app import CS224VApp
from tui.suql import SuqlArea, SuqlCallsTable

EVERY_ROW = "SELECT name FROM restaurants WHERE answer(reviews, 'is it romantic?') = 'Yes'"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def paid_app(monkeypatch: pytest.MonkeyPatch) -> CS224VApp:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{_closed_port()}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-for-tests")
    settings = Settings(backend="claude", claude_max_retries=0, cache_enabled=False, suql_confirm_calls=50, suql_pool=1)
    app = CS224VApp(settings, clock=zero_clock, cursor_blink=False)
    app.animation_level = "none"
    return app


def test_a_large_run_waits_for_consent_and_runs_when_asked_again(paid_app: CS224VApp) -> None:
    @drive
    async def scenario() -> None:
        app = paid_app
        async with app.run_test(size=SIZE) as pilot:
            area = await open_tab(pilot, "suql")
            assert isinstance(area, SuqlArea)
            area.run_query(EVERY_ROW)
            await settle(pilot)
            status = str(app.query_one("#suql-status", Static).render())
            error = app.query("#suql-error").first(Static) if app.query("#suql-error") else None
            assert "not run: this query may make up to" in status and "Ctrl+J again runs it" in status, (
                status,
                error and str(error.render()),
            )
            calls = app.query_one(SuqlCallsTable)
            assert calls.row_count == 0  # nothing was sent
            area.run_query(EVERY_ROW)  # the same query again: consent
            await settle(pilot)
            status = str(app.query_one("#suql-status", Static).render())
            assert "not run" not in status  # it went ahead (and could not reach the closed port)
            assert calls.row_count > 0 or "reach" in status.lower() or "error" in status.lower(), status

    scenario()
