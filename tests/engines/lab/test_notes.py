"""The companion notes' experiments at their reduced size: the course assistant and the top-k trap."""

from __future__ import annotations

from engines import lab


def run(name: str, **params):
    return lab.get(name).run("small", params or None)


def test_course_plan_every_course_ends_confirmed_to_verify_or_excluded():
    t = run("l6-course-plan")
    verdicts = {r[0]: t.row(r[0])["verdict"] for r in t.rows}
    assert verdicts == {
        "C1": "confirmed",
        "C2": "excluded",
        "C3": "to verify",
        "C4": "excluded",
        "C5": "excluded",
        "C6": "to verify",
    }
    assert t.row("C3")["prerequisites"] == "unknown" and t.row("C6")["practical"] == "unknown"
    assert t.row("C2")["practical"] == "not asked"  # a hard condition already fails: F AND U = F
    assert all(n.startswith(("holds", "answer()")) for n in t.notes)


def test_course_metamorphic_relations_hold():
    t = run("l6-course-metamorphic")
    assert [r[0] for r in t.rows][:4] == [
        "as the notes have it",
        "C2's Wednesday meeting moved to 16:00",
        "credit cap 6 instead of 10",
        "a second review for C1",
    ]
    assert "C2" in t.rows[1][1] and t.rows[2][1] == "—" and t.rows[3][1:] == t.rows[0][1:]
    assert "C4" in t.rows[4][1]
    assert sum(n.startswith("holds") for n in t.notes) == 4 and not any(n.startswith("differs") for n in t.notes)


def test_top_k_trap_loses_c1_for_small_k_only():
    t = run("l7-top-k-trap")
    assert [r[0] for r in t.rows] == [1, 2, 6]
    assert t.row(1)["rank, keep k, then filter"].startswith("—") and t.row(6)["rank, keep k, then filter"] == "C1"
    assert all(r[3] == "C1" for r in t.rows)
    assert t.chart is not None and len(t.chart.series) == 2
    # the trap comes from retrieval: C1's reviews match the question (a positive BM25 score, third as in the notes),
    # below C2 and C4, which fail hard conditions; C5's review uses the word to say no and still scores
    assert t.row(6)["top k by similarity"].startswith("C2, C4, C1")
    ranking = next(n for n in t.notes if n.startswith("Similarity ranking"))
    assert "C1 0.00" not in ranking and "C5 0.00" not in ranking
    assert len(_claims(t)) == 3 and all(n.startswith("holds") for n in _claims(t))


def _claims(t) -> list[str]:
    return [n for n in t.notes if n.startswith(("holds", "differs"))]


def test_schedule_complete_turns_missing_meetings_into_an_unknown():
    t = run("l6-course-schedule")
    lost = t.rows[1]
    assert lost[2:] == ("yes", "confirmed", "unknown", "to verify")  # NOT EXISTS alone passes C2; the guard does not
    assert t.rows[0][2:] == ("no", "excluded", "no", "excluded")
    assert len(_claims(t)) == 3 and all(n.startswith("holds") for n in _claims(t))


def test_schedule_complete_unknown_is_only_for_the_course_that_lost_its_meetings():
    from engines.courses import NAIVE_TIME_SQL, TIME_SQL
    from engines.sql.sandbox import Sandbox
    from worlds.courses import build

    for knobs in ({}, {"unrecorded": ("C5",)}):
        with Sandbox.create(build(**knobs).load) as sb:
            naive = {r["course_id"]: r["ok"] for r in sb.run(NAIVE_TIME_SQL).records()}
            guarded = {r["course_id"]: r["ok"] for r in sb.run(TIME_SQL).records()}
        unknown = {c for c, ok in guarded.items() if ok is None}
        assert unknown == set(knobs.get("unrecorded", ()))
        assert all(guarded[c] == naive[c] for c in guarded if c not in unknown)


def test_three_valued_table_is_kleenes_computed_by_the_compiler():
    t = run("l7-three-valued")
    cells = {(r[0][-2], r[1][-2]): r for r in t.rows}  # "C1 (T)" -> "T"
    assert cells[("T", "U")][2] == "U" and cells[("F", "U")][2] == "F"
    assert cells[("T", "U")][3] == "T" and cells[("F", "U")][3] == "U"
    assert cells[("U", "U")][4] == "U" and cells[("T", "T")][4] == "F" and cells[("F", "F")][4] == "T"
    assert len(t.rows) == 9 and all(n.startswith("holds") for n in _claims(t))


def test_cost_model_worked_example_and_its_measurement():
    t = run("l7-cost-model")
    first, second = t.row("structured first"), t.row("text first")
    assert first["notes' cost per row"] == 1.1 and second["notes' cost per row"] == 5.04
    assert second["answer() calls per row (measured)"] == 1.0 > first["answer() calls per row (measured)"]
    assert all(n.startswith("holds") for n in _claims(t)) and len(_claims(t)) == 4
