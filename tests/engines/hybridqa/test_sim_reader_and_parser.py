"""The simulated LLM's HybridQA parts: reading passages, the zero-shot parser, the short answer."""

from __future__ import annotations

import inspect

import pytest

from engines.hybridqa import sim_hybrid
from engines.hybridqa.sim_hybrid import HybridRates
from engines.llm.protocol import Results
from engines.llm.sim import SimBackend
from engines.sql import sim_reader
from engines.suql.tasks import ANSWER, AnswerInput

from .conftest import NO_MISTAKES

BEARER = (
    "Lina Varga (born on 1994-08-09) is a Velorian hurdler. She competed in the women's 400 m hurdles event "
    "at the 2016 Summer Olympics. She won her first national title on 2015-06-12."
)
GAMES = (
    "The 2016 Summer Olympics, officially the Games of the XXXI Olympiad, were held in Rio de Janeiro, Brazil. "
    "Veloria sent 24 athletes to the Games."
)


def read(text: str, question: str):
    return sim_reader.read(text, question)[0]


def test_reads_dates_places_and_events_from_the_stating_sentence():
    assert read(BEARER, "when was this person born?").value == "1994-08-09"
    assert read(BEARER, "which event did this person compete in?").value == "women's 400 m hurdles"
    assert read(GAMES, "where were the games held?").value == "Rio de Janeiro, Brazil"
    assert (
        read("St. Louis, United States hosted the 1904 Summer Olympics. X won.", "where were the games held?").value
        == "St. Louis, United States"
    )
    assert (
        read(
            "Emil Holm is a judoka, born on 1990-01-02 in Brindle. He took part in the men's 81 kg event at the 1992 "
            "Summer Olympics.",
            "on what date was this person born?",
        ).value
        == "1990-01-02"
    )


def test_yes_no_on_what_a_passage_states():
    assert read(GAMES, "were the games held in Rio de Janeiro?").value == "Yes"
    assert read(GAMES, "did London host the games?").value == "No"
    assert read(BEARER, "did this person compete in athletics?").value == "Yes"  # a hurdler: common sense
    assert read(BEARER, "did this person compete in judo?").value == "No"
    assert read(BEARER, "was this person born on 1994-08-09?").value == "Yes"
    assert read(BEARER, "was this person born on 2015-06-12?").value == "No"


def test_unknown_when_the_passage_does_not_state_the_relation():
    # the wrong column: a Games passage says nothing of a birth, a biography nothing of a host city
    assert read(GAMES, "when was this person born?").unknown
    assert read(GAMES, "did this person compete in judo?").unknown
    assert read(BEARER, "where were the games held?").unknown
    assert read(BEARER, "were the games held in Rio de Janeiro?").unknown
    assert sim_reader.read(BEARER, "is it family-friendly?") is None  # not a question for this reader


def test_seeded_misreading_takes_another_date_of_the_passage():
    sim = SimBackend(seed=224)
    values = {
        sim.run(ANSWER, AnswerInput(BEARER.replace("Lina", name), "when was this person born?")).value.value
        for name in (f"P{i}" for i in range(400))
    }
    assert values == {"1994-08-09", "2015-06-12"}  # never invented, sometimes the other date
    sim.misread_rate = 0
    assert {
        sim.run(ANSWER, AnswerInput(BEARER.replace("Lina", f"P{i}"), "when was this person born?")).value.value
        for i in range(100)
    } == {"1994-08-09"}
    assert "misread=0" in sim.model


def test_never_reads_hidden_truth():
    for module in (sim_hybrid, sim_reader):
        source = inspect.getsource(module)
        assert "truth" not in source and "worlds" not in source


def test_the_parser_writes_the_experts_query_for_every_generated_question(world, truth):
    for t in world.tables:
        for q in t.questions:
            sql = sim_hybrid.parse(q.question, t.schema(), seed=1, rates=NO_MISTAKES)
            assert sql.replace(f'"{t.name}"', t.name) == truth.of(q.question_id).suql, q.question


def test_the_parser_reads_any_schema_of_that_kind():
    schema = (
        'CREATE TABLE "delegation" (\n    "Olympiad" TEXT,\n    "Season year" TEXT,\n    "Season year_Info" TEXT,\n'
        '    "Athlete" TEXT,\n    "Athlete_Info" TEXT,\n    "Sex" TEXT\n);'
    )
    sql = sim_hybrid.parse("Which female flag bearer competed in judo?", schema, seed=1, rates=NO_MISTAKES)
    assert sql == (
        'SELECT "Athlete" FROM "delegation" WHERE "Sex" = \'Female\' AND '
        "answer(\"Athlete_Info\", 'did this person compete in judo?') = 'Yes'"
    )
    sql = sim_hybrid.parse("When was the flag bearer of the 1996 Olympics born?", schema, seed=1, rates=NO_MISTAKES)
    assert (
        sql
        == 'SELECT answer("Athlete_Info", \'when was this person born?\') FROM "delegation" WHERE "Season year" = \'1996\''
    )


def test_mistakes_are_seeded_and_a_retry_writes_another_query(world):
    t = world.tables[0]
    qs = [q.question for tb in world.tables for q in tb.questions][:120]
    first = [sim_hybrid.parse(q, t.schema(), seed=5) for q in qs]
    assert first == [sim_hybrid.parse(q, t.schema(), seed=5) for q in qs]  # deterministic
    clean = [sim_hybrid.parse(q, t.schema(), seed=5, rates=NO_MISTAKES) for q in qs]
    assert 0.1 < sum(a != b for a, b in zip(first, clean)) / len(qs) < 0.5
    for q, sql in zip(qs, first):
        again = sim_hybrid.parse(q, t.schema(), (sql,), seed=5)
        assert again != sql


def test_short_answer_one_entity_sometimes_in_another_format():
    rows = Results("", ("c0",), (("1994-08-09",), ("2001-01-01",)), 2)
    assert sim_hybrid.short_answer("q", rows, seed=1, rates=NO_MISTAKES) == "1994-08-09"
    always = HybridRates(format_rate=1.0)
    assert sim_hybrid.short_answer("q", rows, seed=1, rates=always) in ("August 9, 1994", "9 August 1994")
    place = Results("", ("c0",), (("Rio de Janeiro, Brazil",),), 1)
    assert sim_hybrid.short_answer("q", place, seed=1, rates=NO_MISTAKES) == "Rio de Janeiro"
    assert sim_hybrid.short_answer("q", place, seed=1, rates=always) == "Rio de Janeiro, Brazil"
    assert sim_hybrid.short_answer("q", Results("", ("c0",), ((None,),), 1), seed=1) == ""
    changed = sum(sim_hybrid.short_answer(f"q{i}", rows, seed=1) != "1994-08-09" for i in range(300))
    assert 0.2 < changed / 300 < 0.4  # the 30% of §6.5


def test_a_schema_without_a_table_is_a_clear_llm_error():
    from engines.errors import LLMError

    with pytest.raises(LLMError, match="CREATE TABLE"):
        sim_hybrid.parse("Who?", "no schema here", seed=1)
