"""The trajectory stepper as data (tui.kg.stepper_model), driven without Textual: position, keys, what is shown."""

from __future__ import annotations

import subprocess
import sys

from engines.spinach.agent import BUDGET, TOTAL_BUDGET
from engines.spinach.scoring import Scored
from engines.spinach.trajectory import Step, Trajectory
from tui.kg.stepper_model import OBSERVATION_LINES, StepperModel

MOUNTAINS = "SELECT ?m WHERE { ?m wdt:P31 wd:Q1007 . }"
PROBE = "SELECT ?m WHERE { ?m wdt:P31 wd:Q1007 . } LIMIT 1"


def _steps() -> tuple[Step, ...]:
    """search · query (rows, 20 lines) · premature stop ↺ · probe (rows) · the same probe again ↺ · stop(MOUNTAINS)."""
    rows = "\n".join(f"Q{1300 + i}" for i in range(20))
    return (
        Step(1, "look", "search_wikidata", "mountain", "mountain (Q1007)", in_state=1, total=1),
        Step(2, "query", "execute_sparql", MOUNTAINS + " LIMIT 10", rows, "rows", 20, in_state=2, total=2),
        Step(
            3,
            "done?",
            "stop",
            "",
            "(rolled back)",
            in_state=2,
            total=3,
            rolled_back=True,
            rollback_reason="premature stop",
        ),
        Step(4, "verify", "execute_sparql", PROBE, "Q1300", "rows", 1, in_state=3, total=4),
        Step(
            5,
            "verify",
            "execute_sparql",
            PROBE,
            "(not run)",
            in_state=3,
            total=5,
            rolled_back=True,
            rollback_reason="repeat",
        ),
        Step(6, "done", "stop", MOUNTAINS + " LIMIT 10", "", in_state=4, total=6),
    )


def _scored(source: str = "run", **meta: int) -> Scored:
    trajectory = Trajectory(
        "Which mountains?",
        _steps(),
        final_sparql=MOUNTAINS,
        answer=({"m": {}},),
        finish="stop",
        policy="sim",
        meta=meta,
    )
    return Scored(trajectory, None, 1.0, 1.0, 1, source)


def _stream(model: StepperModel, steps: tuple[Step, ...]) -> None:
    for step in steps:
        model.asking_policy()
        assert model.thinking == len(model.steps) + 1
        model.took(step)


def test_a_live_run_follows_each_step_until_the_user_steps_back():
    model = StepperModel()
    assert model.budget == (BUDGET, TOTAL_BUDGET) and model.current_step is None and model.budget_view() is None
    model.begin("Which mountains?", None, policy="sim")
    model.running = True
    model.started("sim", 5, 9)
    _stream(model, _steps()[:3])
    assert model.pos == 2 and model.thinking is None and model.step_title() == "Step 3 of 3 so far"
    assert model.step(-1) and model.pos == 1 and not model.follow
    model.took(_steps()[3])
    assert model.pos == 1  # stepped back: the new step does not pull the view
    assert model.to_edge(last=True) and model.follow
    model.took(_steps()[4])
    assert model.pos == 4
    view = model.budget_view()
    assert view is not None and (view.in_state, view.limit, view.total, view.total_limit, view.rollbacks) == (
        3,
        5,
        5,
        9,
        2,
    )
    assert model.answer_view() is None  # nothing scored yet


def test_keys_stop_at_the_ends_and_a_finished_run_shows_its_answer_at_the_last_step():
    model = StepperModel()
    assert not model.step(1) and not model.to_edge(last=True)  # no trajectory: nothing moves
    model.begin("Which mountains?", None, policy="sim")
    model.running = True
    _stream(model, _steps())
    model.running = False
    model.finish(_scored(budget=15, total_budget=30))
    assert model.pos == 5 and model.at_end and model.step_title() == "Step 6 of 6"
    assert model.step(1) and model.pos == 5  # no step after the last
    assert not model.goto(6) and not model.goto(-1) and model.pos == 5
    answer = model.answer_view()
    assert answer is not None and answer.answer_step is not None and answer.answer_step.index == 2  # not the probe
    assert model.to_edge(last=False) and model.pos == 0 and model.answer_view() is None
    assert model.step(-3) and model.pos == 0


def test_a_loaded_trajectory_starts_at_its_first_step_with_its_budgets_or_the_agents():
    model = StepperModel()
    model.load(_scored("c3_3.json", budget=7, total_budget=11))
    assert model.pos == 0 and model.budget == (7, 11) and model.scored is not None and model.text == "Which mountains?"
    model.load(_scored("spinach_log.json"))  # a SPINACH log has no budgets of its own
    assert model.pos == 0 and model.budget == (BUDGET, TOTAL_BUDGET) and model.policy == "sim"


def test_rolled_back_steps_say_why_and_which_state_they_left():
    model = StepperModel()
    model.load(_scored("t.json"))
    model.goto(2)
    premature = model.rollback_view()
    assert premature is not None and premature.reason == "premature stop" and premature.state_after == 2
    assert "returned no rows" in premature.why
    model.goto(4)
    repeat = model.rollback_view()
    assert repeat is not None and repeat.why == "it repeats step 4, still in the state, so it was not run"
    assert repeat.state_after == 4
    model.goto(3)
    assert model.rollback_view() is None


def test_long_observations_are_cut_until_v_and_a_stop_shows_the_query_it_answers_with():
    model = StepperModel()
    model.load(_scored("t.json"))
    model.goto(1)
    cut = model.observation_view()
    assert (
        cut is not None and cut.text.count("\n") == OBSERVATION_LINES - 1 and cut.hidden_lines == 20 - OBSERVATION_LINES
    )
    model.toggle_full()
    whole = model.observation_view()
    assert whole is not None and whole.text.count("\n") == 19 and whole.hidden_lines == 0
    model.to_edge(last=True)
    final = model.observation_view()
    assert final is not None and final.answer is not None and final.answer.index == 2  # the query the stop named
    assert final.query == MOUNTAINS and final.note == " (SPINACH drops its final LIMIT 10)"
    model.goto(2)  # a rolled-back stop answers with nothing
    rolled = model.observation_view()
    assert rolled is not None and rolled.answer is None and rolled.text == "(rolled back)"


def test_the_model_imports_without_textual():
    code = (
        "import sys\nimport tui.kg.stepper_model\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\nassert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_stop_in_a_spinach_log_answers_with_the_last_query_that_ran():
    """SPINACH's logs have no feedbacks: its stop() marks the last executed query as the answer, as the agent's does."""
    steps = (
        Step(1, "", "execute_sparql", PROBE, "Q1300", in_state=1, total=1),
        Step(2, "", "execute_sparql", MOUNTAINS, "Q1300\nQ1301", in_state=2, total=2),
        Step(3, "", "stop", "", "", in_state=3, total=3),
    )
    model = StepperModel()
    model.load(
        Scored(
            Trajectory("Which mountains?", steps, final_sparql=MOUNTAINS, finish="imported", policy="spinach-log"),
            None,
            source="log.json",
        )
    )
    model.to_edge(last=True)
    shown = model.observation_view()
    assert shown is not None and shown.answer is steps[1] and shown.query == MOUNTAINS and shown.note == ""
