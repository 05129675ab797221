"""The tabs as components (issue 27 item 3): each tab's state in one class, its parts posting typed past-tense
messages, each engine event a tab shows arriving as its own typed message.

Two kinds of test: the sources read as syntax trees (no widget calls an ancestor, no tab is built from mixins,
no isinstance ladder over engine events, no catch-all engine message), and the app driven through the pilot with
a message hook, which records every message posted: what a box, a picker, a view's keys and a finished run post.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.message_pump import MessagePump
from textual.widgets import Input

from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui import messages as m
from tui.area import WorkArea
from tui.pickers import SearchPicker
from tui.widgets import ResultsTable

TUI = Path(__file__).resolve().parents[2] / "tui"


def _tab_sources() -> Iterator[tuple[Path, ast.Module]]:
    """The app's modules (the headless commands and the CLI aside: they are no tab's parts)."""
    for path in sorted(TUI.rglob("*.py")):
        if "commands" in path.relative_to(TUI).parts or path.name == "cli.py":
            continue
        yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


# --- the sources ------------------------------------------------------------------------------------------------


def test_no_part_of_a_tab_calls_an_ancestor() -> None:
    """A widget tells its tab what happened in a message; it never looks its tab (or the app's widgets) up."""
    found: list[str] = []
    for path, tree in _tab_sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            func = node.func
            reaches_up = func.attr == "query_ancestor" or (
                func.attr in ("query_one", "query")
                and isinstance(func.value, ast.Attribute)
                and func.value.attr == "app"
                and path.name != "app.py"
                and path.name != "screenshots.py"
            )
            if reaches_up:
                found.append(f"{path.relative_to(TUI)}:{node.lineno}")
    assert found == []


def test_no_catch_all_engine_message_is_left() -> None:
    for path, tree in _tab_sources():
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        names |= {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        assert not names & {"EngineReported", "AgentReported"}, path


def _isinstance_target(test: ast.expr) -> str | None:
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and test.args
        and isinstance(test.args[0], ast.Name)
    ):
        return test.args[0].id
    return None


def test_no_isinstance_ladder_over_an_event() -> None:
    """An ``if isinstance(event, A) … elif isinstance(event, B)`` chain over an engine event (or a message) is a
    dispatch the typed messages do instead (a chain over widget kinds, ``put_text``'s, is not one)."""
    ladders: list[str] = []
    for path, tree in _tab_sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.If):
                continue
            first = _isinstance_target(node.test)
            if first not in ("event", "message") or len(node.orelse) != 1 or not isinstance(node.orelse[0], ast.If):
                continue
            if _isinstance_target(node.orelse[0].test) == first:
                ladders.append(f"{path.relative_to(TUI)}:{node.lineno}")
    assert ladders == []


def test_each_tab_is_one_class_on_the_work_area() -> None:
    """No tab is assembled from mixins: its one base is WorkArea."""
    tabs = {cls for cls in _all_subclasses(WorkArea) if cls.__module__.startswith("tui.")}
    assert {c.__name__ for c in tabs} >= {"RestaurantsArea", "SuqlArea", "HybridArea", "KgArea", "LabArea"}
    for cls in tabs:
        assert cls.__bases__ == (WorkArea,), cls


def _all_subclasses(cls: type) -> set[type]:
    import tui.hybridqa
    import tui.kg.tab
    import tui.lab
    import tui.restaurants
    import tui.suql  # noqa: F401  (each tab's module, so its class is a subclass by now)

    out: set[type] = set()
    todo = [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in out:
                out.add(sub)
                todo.append(sub)
    return out


# --- the tables of reports --------------------------------------------------------------------------------------


def _tabs_with_reports() -> list[type[WorkArea]]:
    return [cls for cls in _all_subclasses(WorkArea) if cls.REPORTS is not m.NO_REPORTS]


def test_every_engine_event_a_tab_shows_has_its_typed_message_and_a_handler() -> None:
    tabs = _tabs_with_reports()
    assert {c.__name__ for c in tabs} == {"RestaurantsArea", "SuqlArea", "HybridArea", "KgArea"}
    for tab in tabs:
        table = tab.REPORTS.table
        assert table, tab
        for event_cls, make in table.items():
            assert event_cls.__module__.startswith("engines."), (tab, event_cls)
            if not (inspect.isclass(make) and issubclass(make, m.EngineMessage)):
                continue  # a factory (the KG tab's PolicyAsked): tested below
            event = object.__new__(event_cls)  # the table decides by class; no field is read
            message = tab.REPORTS.message_for(event)
            assert type(message) is make and message.event is event
            assert not message.bubble  # for the tab whose worker ran the engine
            handler = getattr(tab, f"_{make.handler_name}", None) or getattr(tab, make.handler_name, None)
            assert callable(handler), f"{tab.__name__} shows {event_cls.__name__} but has no {make.handler_name}"


def test_events_a_tab_does_not_show_become_no_message() -> None:
    from engines.events import CallStarted, TurnFinished
    from engines.spinach.events import RolledBack
    from tui.kg.tab import KgArea
    from tui.restaurants import RestaurantsArea

    assert RestaurantsArea.REPORTS.message_for(object.__new__(TurnFinished)) is None
    assert KgArea.REPORTS.message_for(RolledBack(to_step=3, discarded=(4,), reason="repeat")) is None
    # the agent's LLM calls: only the policy's is a step being asked for
    policy, other = object.__new__(CallStarted), object.__new__(CallStarted)
    object.__setattr__(policy, "function", "policy")
    object.__setattr__(other, "function", "summarize")
    assert isinstance(KgArea.REPORTS.message_for(policy), m.PolicyAsked)
    assert KgArea.REPORTS.message_for(other) is None
    assert WorkArea.REPORTS.message_for(policy) is None  # a tab without a table shows nothing


# --- what the parts post (pilot) ----------------------------------------------------------------------------------


class Posted:
    """Every message posted to any node of the app while installed, once each (a bubbling message is posted again
    to each parent), in order, with the node it was first posted to: worker threads included."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.messages: list[Message] = []
        self.targets: list[MessagePump] = []
        self._seen: set[int] = set()
        self._kept: list[Message] = []
        post = MessagePump.post_message

        def recording(pump: MessagePump, message: Message) -> bool:
            if id(message) not in self._seen:
                self._seen.add(id(message))
                self.messages.append(message)
                self.targets.append(pump)
            return post(pump, message)

        monkeypatch.setattr(MessagePump, "post_message", recording)

    def of(self, cls: type[Any]) -> list[Any]:
        return [message for message in self.messages if isinstance(message, cls)]

    def target(self, message: Message) -> MessagePump:
        return self.targets[next(i for i, x in enumerate(self.messages) if x is message)]

    def clear(self) -> None:
        """Forget what was posted so far (the messages are kept alive: their ids must not be reused)."""
        self._kept.extend(self.messages)
        self.messages.clear()
        self.targets.clear()


@drive
async def test_a_question_box_posts_question_submitted_and_the_run_its_typed_outcomes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    posted = Posted(monkeypatch)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "restaurants")
        box = app.query_one("#question", Input)
        box.focus()
        box.value = "Show me a café in Palo Alto"
        await pilot.press("enter")
        await settle(pilot)
        submitted = posted.of(m.QuestionSubmitted)
        assert [(s.text, s.box) for s in submitted] == [("Show me a café in Palo Alto", box)]
        kinds = [type(message) for message in posted.of(m.EngineMessage)]
        for kind in (m.TurnStarted, m.InputClassified, m.QueryParsed, m.QueryRewritten, m.QueryExecuted):
            assert kind in kinds
        assert kinds[0] is m.TurnStarted and kinds.index(m.QueryParsed) < kinds.index(m.QueryExecuted)
        assert {m.LlmCallStarted, m.LlmCallFinished} <= set(kinds)
        assert m.QueryFailed not in kinds
        # each carries the engine's own record, and went to the tab that ran the engine
        [executed] = posted.of(m.QueryExecuted)
        assert executed.event.rows and app.query_one(ResultsTable).row_count == len(executed.event.rows)
        assert str(app.query_one("#status").render()).startswith("done")
        assert {posted.target(x) for x in posted.of(m.EngineMessage)} == {area}  # to the tab that ran the engine
        assert posted.target(submitted[0]) is box  # the box posts it; it bubbles to the tab


@drive
async def test_the_pickers_post_example_chosen_and_history_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    posted = Posted(monkeypatch)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "restaurants")
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert isinstance(app.screen, SearchPicker)
        await pilot.press(*"mission", "enter")
        await pilot.pause()
        [chosen] = posted.of(m.ExampleChosen)
        assert "Mission District" in str(chosen.value)
        assert app.query_one("#question", Input).value == "Cheap bbq in the Mission District"

        area.box_history.record("question", "Any coffee shop in Mountain View?")
        app.query_one("#question", Input).value = ""
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, SearchPicker)
        await pilot.press("enter")
        await pilot.pause()
        [entry] = posted.of(m.HistoryChosen)
        assert entry.entry.text == "Any coffee shop in Mountain View?"
        assert app.query_one("#question", Input).value == "Any coffee shop in Mountain View?"


@drive
async def test_the_stepper_and_browser_keys_post_what_was_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.kg.browser import BrowserView
    from tui.kg.stepper import StepperView

    posted = Posted(monkeypatch)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "kg")
        area.show_view("stepper")
        await pilot.pause()
        area.run_question("c1_3")
        await settle(pilot)
        # the run: its typed outcomes, one message per step the stepper shows
        assert len(posted.of(m.AgentStarted)) == 1
        assert len(posted.of(m.StepTaken)) == len(area.steps) == 12
        assert len(posted.of(m.PolicyAsked)) >= 12
        posted.clear()

        await pilot.press("home", "right", "left", "end", "v")
        assert [type(x) for x in posted.of(Message) if type(x).__qualname__.startswith("StepperView.")] == [
            StepperView.EdgeRequested,
            StepperView.StepRequested,
            StepperView.StepRequested,
            StepperView.EdgeRequested,
            StepperView.FullObservationRequested,
        ]
        assert [s.delta for s in posted.of(StepperView.StepRequested)] == [1, -1]
        assert [e.last for e in posted.of(StepperView.EdgeRequested)] == [False, True]
        assert area.position == 11  # the tab decided: the last step

        area.show_view("browser")
        await pilot.pause()
        app.query_one("#kg-search", Input).focus()
        app.query_one("#kg-search", Input).value = "Q1190"
        await pilot.press("enter")
        await settle(pilot)
        assert area._page is not None and area._page.id == "Q1190"
        await pilot.press("o")
        await settle(pilot)
        await pilot.press("backspace")
        await settle(pilot)
        assert len(posted.of(BrowserView.PropertyRequested)) == 1
        assert len(posted.of(BrowserView.BackRequested)) == 1
        assert area._page.id == "Q1190"
