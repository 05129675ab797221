"""The course assistant (notes 002-003): three-valued verdicts, interval conflicts, metamorphic tests."""

from __future__ import annotations

import json

import pytest

from engines.courses import COUNT_COURSES_SQL, COUNT_ROWS_SQL, plan, top_k_trap
from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.sql.sandbox import Sandbox
from engines.suql.execute import SuqlEngine
from worlds.courses import build, hm


def run_plan(**knobs):
    world = build(**knobs)
    with Sandbox.create(world.load) as sandbox:
        return plan(world, sandbox, LLM(SimBackend()))


def test_the_notes_outcome():
    p = run_plan()
    assert p.confirmed == ("C1",)
    assert set(p.to_verify) == {"C3", "C6"}
    assert "prerequisite B" in p.to_verify["C3"] and "practical" in p.to_verify["C6"]
    assert set(p.excluded) == {"C2", "C4", "C5"}
    assert "overlaps" in p.excluded["C2"] and "spring" in p.excluded["C4"] and "not practical" in p.excluded["C5"]
    # unknown is never shown as satisfied or failed
    assert p.verdicts["C3"].conditions["prerequisites"] is None
    assert p.verdicts["C6"].conditions["practical"] is None


def test_text_is_not_asked_where_a_hard_condition_already_fails():
    p = run_plan()
    assert p.answer_calls == 4  # C1, C3, C5, C6: C2 and C4 are already False (F AND U = F)


def test_metamorphic_c2_moved_to_16_passes_the_time_check():
    p = run_plan(c2_start=hm(16))
    assert p.verdicts["C2"].conditions["time"] is True  # [14, 16) and [16, 18) do not meet
    assert "C2" in p.confirmed


def test_metamorphic_credit_cap_6_leaves_nothing():
    p = run_plan(credit_cap=6)
    assert p.confirmed == () and p.to_verify == {}
    assert all("above your cap of 6" in why for why in p.excluded.values())


def test_metamorphic_a_second_review_for_c1_adds_no_candidate():
    one, two = run_plan(), run_plan(second_c1_review=True)
    assert one.to_json() == two.to_json()
    world = build(second_c1_review=True)
    with Sandbox.create(world.load) as sandbox:
        assert sandbox.run(COUNT_COURSES_SQL).rows[0][0] == 6  # courses, not review rows
        assert sandbox.run(COUNT_ROWS_SQL).rows[0][0] == 7


def test_metamorphic_or_query_keeps_c4():
    world = build()
    with Sandbox.create(world.load) as sandbox:
        r = SuqlEngine(sandbox, LLM(SimBackend())).run(
            "SELECT DISTINCT o.course_id FROM offerings o JOIN course_reviews r ON r.course_id = o.course_id "
            "WHERE (o.term = 'autumn' AND answer(r.reviews, 'is it practical?') = 'Yes') OR o.course_id = 'C4' ORDER BY 1"
        )
    got = [row[0] for row in r.rows]
    assert "C4" in got  # a structured predicate was not pushed into the branch it does not belong to
    assert "C5" not in got and "C6" not in got


def test_any_conflicting_meeting_excludes():
    world = build()
    with Sandbox.create(world.load) as sandbox:
        from engines.courses import TIME_SQL

        fits = {r["course_id"]: r["ok"] for r in sandbox.run(TIME_SQL).records()}
    assert fits["C2"] is False  # its Monday meeting fits, its Wednesday one does not
    assert fits["C1"] is True  # Wed 16-18 starts when the busy slot 14-16 ends


def test_the_top_k_trap_loses_c1():
    world = build()
    with Sandbox.create(world.load) as sandbox:
        trap = top_k_trap(world, sandbox, LLM(SimBackend()), k=2)
    assert [c for c, _ in trap.ranking[:2]] == ["C2", "C4"]
    assert trap.rank_then_filter == () and trap.filter_then_rank == ("C1",)


def test_cli_plan_json(capsys):
    from tui.cli import main

    assert main(["courses", "--plan", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    usage = data.pop("usage")  # every --json output of a command that calls a model carries its usage
    assert usage["input_tokens"] > 0 and usage["estimated"] is True  # the sim's tokens are an estimate
    assert data == {"confirmed": ["C1"], "to_verify": data["to_verify"], "excluded": data["excluded"]}
    assert set(data["to_verify"]) == {"C3", "C6"} and set(data["excluded"]) == {"C2", "C4", "C5"}


@pytest.mark.parametrize("world", ["restaurants", "courses"])
def test_worlds_are_selectable_in_suql(world):
    from engines.compose import WORLDS, open_suql
    from engines.settings import Settings

    s = open_suql(Settings(cache_enabled=False), world=world)
    try:
        for ex in WORLDS[world].examples:
            s.engine.run(ex.sql, mode="E")
    finally:
        s.close()
