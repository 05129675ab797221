"""The agent tab's course world: a SUQL dialogue over the notes' C1-C6 (issue 6)."""

from __future__ import annotations

import pytest

from engines.courses import open_courses_agent
from engines.settings import Settings


@pytest.fixture
def session():
    s = open_courses_agent(Settings(backend="sim", sim_latency_s=0.0))
    yield s
    s.close()


def ids(turn) -> set[str]:
    return {r["course_id"] for r in turn.records()}


def test_fit_and_practical_confirms_c1_c3_and_leaves_c6_to_verify(session):
    turn = session.agent.ask("Which autumn courses fit my schedule and are practical?")
    assert turn.error is None
    assert "NOT EXISTS" in turn.sql and "answer(" in turn.sql
    assert ids(turn) == {"C1", "C3"}  # prerequisites are not part of this query
    assert [r["course_id"] for r in turn.to_verify] == ["C6"]
    for excluded in ("C2", "C4", "C5"):
        assert excluded not in ids(turn) and excluded not in turn.reply
    assert "C1" in turn.reply and "C3" in turn.reply


def test_a_greeting_on_the_first_turn_is_about_courses(session):
    """The reply is shown the schema, so even before any query it knows the database holds courses."""
    turn = session.agent.ask("hello")
    assert not turn.needs_database and "courses" in turn.reply and "restaurant" not in turn.reply.lower()


def test_fit_without_term_uses_the_profile(session):
    turn = session.agent.ask("Which courses fit my schedule?")
    assert "profile" in turn.sql
    assert ids(turn) == {"C1", "C3", "C5", "C6"}  # C2 conflicts, C4 is in spring


def test_unknown_practicality_is_said_plainly(session):
    turn = session.agent.ask("Is C6 practical?")
    assert turn.rows == (("C6", None),)
    assert "unknown" in turn.reply.lower() and "do not say" in turn.reply


def test_counts_courses_not_review_rows(session):
    turn = session.agent.ask("How many courses have reviews?")
    assert "COUNT(DISTINCT" in turn.sql
    assert turn.rows == ((6,),)


def test_counting_with_a_second_review_stays_at_courses():
    from worlds import courses

    s = open_courses_agent(Settings(backend="sim"), world=courses.build(second_c1_review=True))
    try:
        assert s.agent.ask("How many courses have reviews?").rows == ((6,),)
    finally:
        s.close()


def test_meetings_prerequisites_and_small_talk(session):
    meets = session.agent.ask("When does C1 meet?")
    assert "Mon 10:00-12:00" in meets.reply and "Wed 16:00-18:00" in meets.reply
    prereq = session.agent.ask("What are the prerequisites of C3?")
    assert prereq.records() == [{"course_id": "C3", "prerequisite_id": "B", "status": "unknown"}]
    assert "unknown" in prereq.reply
    thanks = session.agent.ask("thanks")
    assert not thanks.needs_database and "courses" in thanks.reply


def test_the_chosen_ranker_reaches_the_course_agent_s_engine():
    from engines.llm import sentence_vectors

    if sentence_vectors.missing() is not None:
        pytest.skip("the sentence ranker's extra is not installed: pip install 'cs224v-tui[sentence]'")
    s = open_courses_agent(Settings(backend="sim", sim_latency_s=0.0, suql_ranker="sentence"))
    try:
        assert s.agent.engine.ranker == "sentence"
    finally:
        s.close()


def test_the_course_dialogue_has_no_mark_and_a_dropped_condition_is_named(session):
    """The check runs on the course assistant too: the notes' dialogue ("fit my schedule" is what the schema
    says the busy slots are for) has no mark; a day the parser does not read is named, not answered."""
    from engines.sql.dialogue import COURSE_DIALOGUE

    assert [session.agent.ask(u).not_understood for u in COURSE_DIALOGUE] == [()] * len(COURSE_DIALOGUE)
    turn = session.agent.ask("Which courses fit my schedule and meet on Fridays?")
    assert "NOT EXISTS" in turn.sql and "Fri" not in turn.sql
    assert turn.not_understood == ("Fridays",)
    assert turn.reply.startswith("I could not use 'Fridays'.")
