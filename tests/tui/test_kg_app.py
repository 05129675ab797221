"""The Knowledge-graph tab driven headless through the pilot: behaviour, not pixels."""

from __future__ import annotations

import json
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input, Static

from engines.settings import Settings
from engines.spinach.events import StepTaken
from tests.tui.support import SIZE, EventGate, drive, make_app, settle
from tests.tui.support import open_tab as show_tab
from tui.app import CS224VApp
from tui.kg import EXAMPLES, ClaimsTable, FeedbackBar, KgArea, KgResultsTable, SparqlEditor, StepView, sparql_tokens

FIXTURES = Path(__file__).parent / "fixtures"
TRAJECTORY = FIXTURES / "spinach_c3_3.json"
"""SPINACH on c3_3 (the highest mountain in Quintara), saved by ``cs224v-tui spinach --save``:
10 steps, a premature stop rolled back at step 4 and a repeat at step 8, row-F1 1.0."""
ROLLBACK_QUESTION = "c1_3"
"""A live sim run with both kinds of rollback: 12 steps, a repeat rolled back at step 6 and a premature stop at
step 8, row-F1 1.0 (c3_3's run has none since the policy builds its query a piece at a time)."""


def StepGate(area: KgArea, after: int) -> EventGate:
    """Holds the agent after its ``after``-th step, until Esc (or the app closing)."""
    return EventGate(area, after, lambda event: isinstance(event, StepTaken))


async def open_tab(pilot: Pilot, view: str = "console") -> KgArea:
    """Wait for the sessions, show the Knowledge-graph tab and one of its views, return its area."""
    area = await show_tab(pilot, "kg")
    assert isinstance(area, KgArea)
    area.show_view(view)
    await pilot.pause()
    return area


def _text(app: CS224VApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


# --- the console --------------------------------------------------------------------------------------


@drive
async def test_console_shows_which_of_the_four_feedbacks_came_back() -> None:
    app = make_app(query_timeout_s=1.5)
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        feedback = app.query_one(FeedbackBar)
        results = app.query_one("#kg-results", KgResultsTable)
        editor = app.query_one("#kg-editor", SparqlEditor)

        await pilot.press("ctrl+j")  # the first example, as the editor opens
        await settle(pilot)
        assert feedback.feedback == "rows" and results.row_count == 25
        assert "25 rows" in _text(app, "#kg-feedback") and "emulated SERVICE wikibase:label" in _text(
            app, "#kg-feedback"
        )
        first = results.entity_at(0, 0)
        assert first is not None and str(results.get_cell_at((0, 0))) == first  # entities as their IDs
        results.focus()
        await pilot.press("enter")  # opens the page of the highlighted ID
        await settle(pilot)
        assert area.view == "browser" and area._page is not None and area._page.id == first
        area.show_view("console")
        await pilot.pause()

        for key, expected in (
            ("P279 without", "empty"),
            ("missing brace", "syntax_error"),
            ("cross product", "timeout"),
        ):
            area.load_example(area.example(key))
            editor.focus()
            await pilot.press("ctrl+j")
            await settle(pilot)
            assert feedback.feedback == expected, key
        error = app.query_one("#kg-console-error", Static)
        assert error.display and "timed out after 1.5 s" in _text(app, "#kg-console-error")

        area.load_example(area.example("missing brace"))
        await pilot.press("ctrl+j")
        await settle(pilot)
        assert "line 4, column 1" in _text(app, "#kg-console-error")
        assert editor.cursor_location == (3, 0)  # the editor points at the error

        refused = area.example("an update").query
        area.load_example(area.example("an update"))
        await pilot.press("ctrl+j")
        await settle(pilot)
        assert feedback.feedback == "refused"
        assert "read-only" in _text(app, "#kg-console-error")
        assert editor.text == refused  # the editor keeps the text
        assert "refused" in _text(app, "#kg-status")


@drive
async def test_on_a_users_rdf_file_the_console_offers_examples_for_any_graph(tmp_path: Path) -> None:
    """--rdf: the built-in world's quirks would answer nothing there; the list holds what means something on any
    graph, and the first one runs as the editor opens."""
    from engines.kg.examples import RDF_EXAMPLES

    ttl = tmp_path / "people.ttl"
    ttl.write_text(
        "@prefix ex: <http://example.org/> .\nex:ada a ex:Person ; ex:knows ex:bob .\nex:bob a ex:Person .\n",
        encoding="utf-8",
    )
    app = make_app(kg_rdf=(ttl,))
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        examples = app.query_one("#kg-examples")
        assert examples.option_count == len(RDF_EXAMPLES) and "for any graph" in str(examples.border_subtitle)
        assert app.query_one("#kg-editor", SparqlEditor).text == RDF_EXAMPLES[0].query
        await pilot.press("ctrl+j")
        await settle(pilot)
        assert app.query_one(FeedbackBar).feedback == "rows"
        assert str(app.query_one("#kg-results", KgResultsTable).get_cell_at((0, 0))) == "ex:Person"  # the file's prefix
        assert [i.text for i in area.example_items()[: len(RDF_EXAMPLES)]] == [e.title for e in RDF_EXAMPLES]
        # its IRIs are pages: Enter on one opens it in the browser (on the built-in world only QIDs and PIDs are)
        area.load_example(area.example("a sample of statements"))
        await pilot.press("ctrl+j")
        await settle(pilot)
        results = app.query_one("#kg-results", KgResultsTable)
        first = results.entity_at(0, 0)
        assert first is not None and first.startswith("http://example.org/")
        assert "IRI opens its page" in str(results.border_subtitle)
        results.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert area.view == "browser" and area._page is not None and area._page.id == "ex:" + first.rsplit("/", 1)[1]


def test_every_example_gets_the_feedback_it_promises() -> None:
    from engines.kg import SparqlRefused, open_kg

    endpoint = open_kg(Settings(query_timeout_s=1.5))
    for example in EXAMPLES:
        try:
            got = endpoint.execute(example.query).feedback.value
        except SparqlRefused:
            got = "refused"
        assert got == example.expect, example.title
    naive = endpoint.execute(next(e for e in EXAMPLES if "P17 only" in e.title).query)
    chain = endpoint.execute(next(e for e in EXAMPLES if "P131 chain" in e.title).query)
    assert 0 < len(naive) < len(chain)  # quirk 6: the naive query is silently short


def test_sparql_tokens_mark_keywords_variables_entities_and_strings() -> None:
    line = 'SELECT ?x WHERE { ?x wdt:P31 wd:Q5 ; rdfs:label "a # b"@en . } # note'
    kinds = {line[s:e]: k for s, e, k in sparql_tokens(line)}
    assert kinds["SELECT"] == kinds["WHERE"] == "keyword"
    assert kinds["?x"] == "variable" and kinds["wdt:P31"] == kinds["wd:Q5"] == "pname"
    assert kinds['"a # b"@en'] == "string" and kinds["# note"] == "comment"
    include = "INCLUDE %mountains ."
    assert [(include[s:e], k) for s, e, k in sparql_tokens(include)] == [
        ("INCLUDE", "keyword"),
        ("%mountains", "named"),
    ]


# --- the entity browser ---------------------------------------------------------------------------------


@drive
async def test_search_open_a_page_follow_a_link_and_go_back() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await show_tab(pilot, "kg")  # built once shown: its commands are in the palette from then on
        await show_tab(pilot, "restaurants")
        assert app.active_area.AREA_ID == "restaurants"
        command = next(c for c in app.palette_commands() if c.title == "Knowledge graph: show the entity browser")
        command.callback()  # from another tab, as the palette does
        await pilot.pause()
        await pilot.pause()
        area = app.active_area
        assert isinstance(area, KgArea) and area.view == "browser"
        assert isinstance(app.focused, Input) and app.focused.id == "kg-search"
        app.query_one("#kg-search", Input).insert_text_at_cursor("Whitlock")
        await settle(pilot)
        assert [h.id for h in area._hits] == ["Q1190", "Q1199", "Q1289"]
        await pilot.press("enter")  # the first hit
        await settle(pilot)
        claims = app.query_one(ClaimsTable)
        assert area._page is not None and area._page.label == "Ilse Whitlock"
        assert app.focused is claims
        award = next(i for i, p in enumerate(claims.properties) if p == "P166")
        assert "P585 point in time: 1994" in str(claims.get_row_at(award)[1])  # the qualifier, under the value

        advisor = claims.properties.index("P184")
        claims.move_cursor(row=advisor)
        await pilot.press("enter")  # follow the value
        await settle(pilot)
        assert area._page.id == "Q1192" and area._page.label == "Kasimir Falk"
        assert "back to Q1190" in _text(app, "#kg-page-head")

        await pilot.press("o")  # the property of the highlighted claim
        await settle(pilot)
        assert area._page.datatype is not None
        await pilot.press("backspace", "b")
        await settle(pilot)
        assert area._page.id == "Q1190"

        box = app.query_one("#kg-search", Input)
        box.focus()
        box.clear()
        await pilot.press(*"Q9999", "enter")  # an ID opens directly
        await settle(pilot)
        assert "no entity Q9999" in _text(app, "#kg-browser-error")


# --- the trajectory stepper -------------------------------------------------------------------------------


@drive
async def test_stepper_keys_move_through_a_run_with_rollbacks() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "stepper")
        area.run_question(ROLLBACK_QUESTION)
        await settle(pilot)
        steps = area.steps
        assert len(steps) == 12 and [s.index for s in steps if s.rolled_back] == [6, 8]
        assert area.position == 11  # a live run follows the last step
        assert app.query_one("#kg-answer").display
        assert "row-F1 1.00" in _text(app, "#kg-answer-head") and "EM 1" in _text(app, "#kg-answer-head")
        assert isinstance(app.focused, StepView)

        await pilot.press("home")
        assert area.position == 0 and not app.query_one("#kg-answer").display
        await pilot.press("right", *["n"] * 6)
        assert area.position == 7 and area.current_step is not None and area.current_step.rolled_back
        banner = _text(app, "#kg-step-banner")
        assert "ROLLED BACK" in banner and "premature stop" in banner and "after step 7" in banner
        assert "6/15" in _text(app, "#kg-budget") and "8/30" in _text(app, "#kg-budget")
        await pilot.press("left", "p")
        assert area.position == 5
        await pilot.press("end")
        assert area.position == 11
        await pilot.press("right")  # no step after the last
        assert area.position == 11

        area.step_to_edge(False)
        await pilot.press(*["right"] * 9)  # step 10: get_wikidata_entry Q1034 (the instrument's page)
        observation = app.query_one("#kg-step-observation", Static)
        assert not observation.has_class("-full")
        await pilot.press("v")
        assert observation.has_class("-full")
        await pilot.press("v")
        assert not observation.has_class("-full")

        await pilot.press("e")  # explore: the entity's page in the browser
        await settle(pilot)
        assert area.view == "browser" and area._page is not None and area._page.id == "Q1034"

        area.show_view("stepper")
        await pilot.pause()
        await pilot.press("g")  # the question's gold query, run in the console
        await settle(pilot)
        assert area.view == "console" and app.query_one(FeedbackBar).feedback == "rows"
        assert app.query_one("#kg-editor", SparqlEditor).border_subtitle == "gold query of c1_3"


@drive
async def test_a_run_ends_on_its_result_not_on_the_question_list_hint(monkeypatch) -> None:
    """Running a question moves the list's highlight to it; that move is not the user's, so its
    "Enter runs it" hint never reaches the status line (a fast run used to finish before it did)."""
    hints: list[str] = []
    handler = KgArea.on_option_list_option_highlighted

    def spy(self: KgArea, event) -> None:
        if event.option_list.id == "kg-questions":
            hints.append(event.option.id or "")
        handler(self, event)

    monkeypatch.setattr(KgArea, "on_option_list_option_highlighted", spy)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "stepper")
        hints.clear()  # the list's first highlight, as it fills
        assert area.run_question(ROLLBACK_QUESTION)
        await settle(pilot)
        await pilot.pause()
        assert hints == []
        assert "stopped after 12 steps" in _text(app, f"#{area.STATUS_ID}")


@drive
async def test_steps_stream_in_while_the_agent_runs_and_esc_stops_it() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "stepper")
        gate = StepGate(area, after=3).install()
        area.run_question(ROLLBACK_QUESTION)
        await gate.wait(pilot)
        assert area.is_running and len(area.steps) == 3 and area.position == 2
        assert "so far" in str(app.query_one(StepView).border_title)
        assert "(Esc stops)" in _text(app, "#kg-run-head")
        assert not app.query_one("#kg-answer").display

        await pilot.press("escape")
        await settle(pilot)
        assert not area.is_running
        assert len(area.steps) == 3  # no further action was taken
        assert area._scored is not None and area._scored.trajectory.finish == "cancelled"
        assert "stopped by Esc after 3 steps" in _text(app, "#kg-status")
        assert app.query_one("#kg-answer").display  # what the agent had: no rows yet, F1 0
        assert "row-F1 0.00" in _text(app, "#kg-answer-head")


@drive
async def test_load_a_trajectory_file_ours_and_a_spinach_log(tmp_path: Path) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "stepper")
        titles = [c.title for c in app.palette_commands()]
        assert "Knowledge graph: show the trajectory stepper" in titles
        assert "Knowledge graph: examples…" in titles  # the examples are in their picker, not in the palette
        examples = area.example_items()
        assert any(i.text.startswith("award years") for i in examples)
        assert any(i.value == ("question", "c3_3") and i.text.startswith("What is the highest") for i in examples)

        box = app.query_one("#kg-load", Input)
        box.focus()
        box.value = str(TRAJECTORY)
        await pilot.press("enter")
        await settle(pilot)
        assert len(area.steps) == 10 and area.position == 0  # a loaded trajectory starts at its first step
        assert isinstance(app.focused, StepView)
        assert "c3_3" in _text(app, "#kg-run-head") and "spinach_c3_3.json" in _text(app, "#kg-run-head")
        await pilot.press("end")
        assert "row-F1 1.00" in _text(app, "#kg-answer-head")

        # SPINACH's own log: a list of states; the final query is run here for the answer rows
        saved = json.loads(TRAJECTORY.read_text(encoding="utf-8"))
        log = [
            {
                "question": saved["question"],
                "final_sparql": {"sparql": saved["final_sparql"]},
                "actions": [
                    {
                        "thought": s["thought"],
                        "action_name": s["action"],
                        "action_argument": s["argument"],
                        "observation": s["observation"],
                    }
                    for s in saved["steps"]
                    if not s["rolled_back"]
                ],
            }
        ]
        path = tmp_path / "spinach_log.json"
        path.write_text(json.dumps(log), encoding="utf-8")
        area.load_trajectory(str(path))
        await settle(pilot)
        assert len(area.steps) == 8 and not any(s.rolled_back for s in area.steps)
        area.step_to_edge(True)
        await pilot.pause()
        assert "row-F1 1.00" in _text(app, "#kg-answer-head")

        area.load_trajectory(str(tmp_path / "missing.json"))
        await settle(pilot)
        assert app.query_one("#kg-stepper-error", Static).display
        assert "Cannot read" in _text(app, "#kg-stepper-error")
        assert len(area.steps) == 8  # the trajectory on screen stays


@drive
async def test_a_run_stopped_without_an_answer_says_so(tmp_path: Path) -> None:
    """Issue 26: the sim policy on a graph it cannot use stops once, with no answer (finish "declined"); saved with
    --save and loaded, the stepper says it stopped without an answer and why, not "no rows" of a failed query."""
    from tui.cli import main

    ttl = tmp_path / "people.ttl"
    ttl.write_text(
        "@prefix ex: <http://example.org/> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        'ex:ada rdfs:label "Ada Lovelace" ; ex:knows ex:bob .\n',
        encoding="utf-8",
    )
    saved = tmp_path / "declined.json"
    assert main(["spinach", "Who did Ada Lovelace know?", "--save", str(saved), "--rdf", str(ttl)]) == 0
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "stepper")
        box = app.query_one("#kg-load", Input)
        box.focus()
        box.value = str(saved)
        await pilot.press("enter")
        await settle(pilot)
        assert len(area.steps) == 2
        await pilot.press("end")
        await settle(pilot)
        status = _text(app, f"#{area.STATUS_ID}")
        assert "stopped without an answer after 2 steps" in status and "rolled back" not in status
        assert "none: the policy stopped without an answer" in _text(app, "#kg-answer-head")


@drive
async def test_a_question_id_not_in_the_sets_is_an_error_in_the_tab(tmp_path: Path) -> None:
    """``session.question`` raises EngineError for an id not in the question sets: the tab shows it in the stepper's
    error pane and on its status line and starts no run; it neither crashes nor says nothing.  On a user's graph
    (no question sets) the error says so."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "stepper")
        assert area._session is not None
        assert area.run_question("c9_99") is False
        await settle(pilot)
        assert not area.is_running and not area.steps and area.view == "stepper"
        assert app.query_one("#kg-stepper-error").display
        error = _text(app, "#kg-stepper-error")
        assert "No question 'c9_99'" in error and "simple_01" in error
        assert "No question 'c9_99'" in _text(app, f"#{area.STATUS_ID}")
        assert area.run_question("simple_01")  # a good id afterwards runs, and the error pane goes
        await settle(pilot)
        assert not app.query_one("#kg-stepper-error").display and area.steps

    ttl = tmp_path / "people.ttl"
    ttl.write_text("@prefix ex: <http://example.org/> .\nex:ada ex:knows ex:bob .\n", encoding="utf-8")
    app = make_app(kg_rdf=(ttl,))
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "stepper")
        assert area.run_question(ROLLBACK_QUESTION) is False
        await settle(pilot)
        error = _text(app, "#kg-stepper-error")
        assert "people.ttl has no question sets" in error and not area.is_running
