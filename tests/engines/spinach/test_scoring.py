"""Scoring a trajectory and the agent's answer rule read back from it (engines.spinach.scoring)."""

from __future__ import annotations

import pytest

from engines.settings import Settings
from engines.spinach.agent import BUDGET, TOTAL_BUDGET
from engines.spinach.scoring import (
    answer_step,
    answered_by,
    budgets,
    find_question,
    score_loaded,
    score_run,
)
from engines.spinach.session import open_spinach
from engines.spinach.trajectory import Step, Trajectory

MOUNTAINS = "SELECT ?m WHERE { ?m wdt:P31 wd:Q1007 . } LIMIT 3"
PROBE = "SELECT ?m WHERE { ?m wdt:P31 wd:Q1007 . } LIMIT 1"
NOTHING = "SELECT ?x WHERE { ?x wdt:P31 wd:Q424242 }"


def sparql(index: int, query: str, feedback: str, *, rolled_back: bool = False) -> Step:
    return Step(
        index, "", "execute_sparql", query, "…", feedback, 3 if feedback == "rows" else 0, rolled_back=rolled_back
    )


def stop(index: int, argument: str = "", *, rolled_back: bool = False) -> Step:
    return Step(
        index,
        "",
        "stop",
        argument,
        "",
        rolled_back=rolled_back,
        rollback_reason="premature stop" if rolled_back else None,
    )


def test_a_named_stop_answers_with_its_query_not_with_a_later_probe_that_returned_rows():
    steps = (sparql(1, MOUNTAINS, "rows"), sparql(2, PROBE, "rows"), stop(3, MOUNTAINS))
    trajectory = Trajectory("q", steps, final_sparql=MOUNTAINS, finish="stop")
    assert answer_step(trajectory) is steps[0]  # "the last query with rows" would be the probe, step 2
    assert answered_by(steps[2], steps[:2]) is steps[0]


def test_a_bare_stop_answers_with_the_last_query_that_ran_and_rolled_back_steps_are_not_in_the_state():
    steps = (
        sparql(1, MOUNTAINS, "rows"),
        sparql(2, NOTHING, "empty"),
        stop(3, rolled_back=True),
        sparql(4, PROBE, "rows"),
        sparql(5, NOTHING, "empty", rolled_back=True),
        stop(6),
    )
    assert answered_by(steps[5], steps[:5]) is steps[3]
    assert answer_step(Trajectory("q", steps, finish="stop")) is steps[3]


def test_after_the_budget_the_answer_is_what_the_last_stop_named_and_with_no_stop_the_last_query_with_rows():
    named = (sparql(1, MOUNTAINS, "rows"), stop(2, NOTHING, rolled_back=True), sparql(3, PROBE, "rows"))
    assert answer_step(Trajectory("q", named, finish="budget")) is None  # it meant a query that returned nothing
    unnamed = (sparql(1, MOUNTAINS, "rows"), sparql(2, PROBE, "rows"), sparql(3, NOTHING, "empty"))
    assert answer_step(Trajectory("q", unnamed, finish="budget")) is unnamed[1]
    assert answer_step(Trajectory("q", (sparql(1, NOTHING, "empty"),), finish="cancelled")) is None


def test_the_replayed_rule_agrees_with_the_agent_on_its_own_runs():
    """A scripted run (the agent's tests' ``run``, and their PolicyAction, wherever the LLM layer puts it)."""
    from engines.kg import Endpoint
    from tests.engines.spinach.test_agent import PolicyAction, run
    from worlds import kg as K

    endpoint = Endpoint.from_world(K.build().world)
    plan = [
        PolicyAction("the whole query", "execute_sparql", MOUNTAINS),
        PolicyAction("verify", "execute_sparql", PROBE),
        PolicyAction("my query answers it", "stop", MOUNTAINS),
    ]
    trajectory, _, _ = run(endpoint, lambda h, s: plan[len(h)])
    step = answer_step(trajectory)
    assert step is not None and step.argument == trajectory.final_sparql == MOUNTAINS


def test_budgets_come_from_the_run_else_from_the_agent():
    assert budgets() == (BUDGET, TOTAL_BUDGET)
    assert budgets(Trajectory("q", meta={"budget": 5, "total_budget": 9})) == (5, 9)
    assert budgets(Trajectory("q", finish="imported")) == (BUDGET, TOTAL_BUDGET)


@pytest.fixture(scope="module")
def session():
    return open_spinach(Settings(backend="sim", cache_enabled=False))


def test_a_spinach_log_is_matched_by_its_text_and_its_final_query_is_run_for_the_rows(session):
    question = session.question("c3_3")
    shouted = "  " + question.question.upper().replace(" ", "   ") + " "
    log = Trajectory(shouted, (), final_sparql=question.gold_sparql, finish="imported")
    assert find_question(session.questions, shouted) == question
    scored = score_loaded(session, log, source="log.json", others=2)
    assert scored.question == question and (scored.source, scored.others) == ("log.json", 2)
    assert len(scored.trajectory.answer) == scored.gold_rows == len(session.gold("c3_3")) > 0
    assert scored.f1 == 1.0 and scored.em == 1.0


def test_a_refused_or_empty_final_query_leaves_the_answer_empty_and_an_unknown_question_is_unscored(session):
    question = session.question("c3_3")
    refused = Trajectory(question.question, (), final_sparql='INSERT DATA { wd:Q1 rdfs:label "x" . }')
    scored = score_loaded(session, refused, source="x.json")
    assert scored.trajectory.answer == () and scored.f1 == 0.0 and scored.question == question
    empty = Trajectory(question.question, (), final_sparql=NOTHING)
    assert score_loaded(session, empty, source="x.json").trajectory.answer == ()
    unknown = score_run(session, Trajectory("What is not in the sets?"), None)
    assert (unknown.question, unknown.em, unknown.f1, unknown.gold_rows) == (None, None, None, None)
    assert score_loaded(session, Trajectory("What is not in the sets?"), source="y.json").f1 is None
