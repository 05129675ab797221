"""Issue 28.4: Esc stops a Restaurants turn in the middle of an LLM call (simulated latency, a real request to a
stub OpenAI-compatible server on 127.0.0.1), and Ctrl+Q ends the process at once after use, or in the middle of
a turn, leaving no child process (the app run in a pseudo-terminal by benchmarks/startup_bench.py's driver).

The bounds are generous: each is far below what the call or the turn it must not wait for would take."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from engines.events import CallStarted
from tests.engines.llm.openai_stub import StubServer, ok
from tests.loopback_http import Reply
from tests.tui.support import SIZE, drive, make_app, settle
from tui.app import CS224VApp
from tui.restaurants import RestaurantsArea

SIZE_QUIT = (100, 30)


def _bench() -> Any:
    """benchmarks/startup_bench.py (not a package), loaded as the SUQL benchmark's test loads its own."""
    if "startup_bench" not in sys.modules:
        path = Path(__file__).resolve().parents[2] / "benchmarks" / "startup_bench.py"
        spec = importlib.util.spec_from_file_location("startup_bench", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["startup_bench"] = module
        spec.loader.exec_module(module)
    return sys.modules["startup_bench"]


def _area(app: CS224VApp) -> RestaurantsArea:
    area = app.area("restaurants")
    assert isinstance(area, RestaurantsArea)
    return area


def _record_calls(area: RestaurantsArea) -> list[str]:
    """The functions of the LLM calls the tab's engine starts, as they start (in the worker thread)."""
    started: list[str] = []
    inner = area._emit

    def emit(event: Any) -> None:
        if isinstance(event, CallStarted):
            started.append(event.function)
        inner(event)

    area._emit = emit  # type: ignore[method-assign]
    return started


async def _until(pilot: Pilot, condition: Any, seconds: float) -> float:
    """Seconds until ``condition()`` held (the pilot keeps the app running meanwhile); fails after ``seconds``."""
    start = time.perf_counter()
    while not condition():
        assert time.perf_counter() - start < seconds, f"not within {seconds} s"
        await pilot.pause(0.01)
    return time.perf_counter() - start


async def _stop_mid_call(pilot: Pilot, area: RestaurantsArea, started: list[str], call_s: float) -> None:
    """Esc once a call has started: the turn stops long before that call would have ended, saying so."""
    app = pilot.app
    await _until(pilot, lambda: bool(started), 30)
    await pilot.press("escape")
    took = await _until(pilot, lambda: not area.is_busy, call_s)
    assert took < call_s / 3, f"the turn took {took:.2f} s to stop, as if it waited for the call ({call_s} s)"
    await settle(pilot)
    status = str(app.query_one("#status").render())
    assert status.startswith("stopped"), status
    assert app.query(".entry-note")
    assert app.query_one("#question", Input).value == "Show me a cafe in Palo Alto"  # the question is given back


@drive
async def test_escape_stops_a_turn_in_the_middle_of_a_simulated_call() -> None:
    app = make_app(sim_latency_s=10.0)  # the first call (route) waits 3 s, the parse 10 s
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        area = _area(app)
        started = _record_calls(area)
        assert area.ask("Show me a cafe in Palo Alto")
        await _stop_mid_call(pilot, area, started, call_s=3.0 * 3)
        assert started == ["route"]  # stopped inside the first call: no further call was made
        app.use_latency(0.0)
        await settle(pilot)
        assert area.ask("What is dim sum?")  # the next question works
        await settle(pilot)
        assert str(app.query_one("#status").render()).startswith("done")


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = StubServer()
    lock = threading.Lock()
    seen = [0]

    def answer(request: dict) -> Reply:
        with lock:
            seen[0] += 1
            first = seen[0] == 1
        schema = json.dumps(request.get("response_format") or {})
        if "needs_database" in schema:
            body = ok('{"needs_database": false, "reason": "a general question"}').body
        else:
            body = ok("Dim sum is a Cantonese meal of small dishes.").body
        return Reply(body, delay_s=30.0 if first else 0.0)  # the first request hangs: Esc must not wait for it

    server.responder = answer
    yield server
    server.close()


@drive
async def test_escape_stops_a_turn_in_the_middle_of_a_request_to_a_real_server(stub: StubServer) -> None:
    app = make_app(backend="openai", openai_base_url=stub.url, openai_model="M")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        area = _area(app)
        started = _record_calls(area)
        assert area.ask("Show me a cafe in Palo Alto")
        await _until(pilot, lambda: bool(stub.requests), 30)  # the request is on the server, which holds it
        await _stop_mid_call(pilot, area, started, call_s=30.0)
        assert stub.hung_up.wait(10)  # the request in flight was abandoned: its connection closed
        assert len(stub.requests) == 1
        assert area.ask("What is dim sum?")  # the next question works, on the same server
        await settle(pilot)
        assert str(app.query_one("#status").render()).startswith("done")
        assert "Dim sum is a Cantonese meal" in " ".join(str(w.render()) for w in app.query(".entry"))


# --- quit: the app in a terminal, its real exit path (tui.app.run_app) ---------------------------------------------

MID_TURN = """
import asyncio, os
from engines.settings import Settings
from tui.app import run_app
from tui.screenshots import wait_for_workers


async def session(pilot):
    app = pilot.app
    area = await app.open_area("restaurants")
    await wait_for_workers(pilot)
    assert area.ask("Show me a cafe in Palo Alto")  # its first call alone takes 3 s, the parse 10 s
    await asyncio.sleep(0.2)
    assert area.is_busy
    os.write(int(os.environ["READY_FD"]), b"R")


run_app(Settings(sim_latency_s=10.0), auto_pilot=session)
"""


def _quit(code: str) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory(prefix="quit-test-") as scratch:
        return _bench().quit_after(code, SIZE_QUIT, 240.0, pycache=os.path.join(scratch, "pycache"), scratch=scratch)


def test_quit_after_use_ends_the_process_and_leaves_no_child_process() -> None:
    elapsed, children, left = _quit(_bench().session_code(("ask", "kg")))
    assert elapsed < 20, "the session did not end, or the quit did not"
    assert children >= 1  # the SPARQL worker process was running when Ctrl+Q came
    assert left == 0  # and it did not outlive the app


def test_quit_in_the_middle_of_a_turn_does_not_wait_for_the_call() -> None:
    elapsed, _children, left = _quit(MID_TURN)
    assert elapsed < 5, f"quit took {elapsed:.2f} s: it waited for the LLM call (10 s) or the turn"
    assert left == 0
