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
