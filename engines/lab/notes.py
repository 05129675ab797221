"""The companion notes' experiments: the course assistant (note 003) and the top-k trap (note 002).

Note 003 goes with lecture 6 (structured-data agents), note 002 with lecture 7 (SUQL's semantics),
so the experiments are listed under those lectures.  Each runs the course world in a fresh sandbox
with the settings' LLM: the hard conditions in SQL, "is it practical?" through SUQL's answer().
"""

from __future__ import annotations

from typing import Any

from engines.lab.core import Chart, Experiment, RunContext, Series, Table

CONDITIONS = ("term", "time", "prerequisites", "credits", "practical")
VERDICT_WORDS = {True: "confirmed", None: "to verify", False: "excluded"}
CELL = {True: "yes", False: "no", None: "unknown"}


def _plan(ctx: RunContext, **knobs: Any):
    from engines.courses import plan
    from engines.sql.sandbox import Limits, Sandbox
    from worlds.courses import build

    world = build(**knobs)
    sandbox = ctx.enter(
        Sandbox.create(
            world.load,
            row_cap=ctx.settings.row_cap,
            timeout_s=ctx.settings.query_timeout_s,
            limits=Limits.from_settings(ctx.settings),
        )
    )
    return world, sandbox, plan(world, sandbox, ctx.llm())


# --- note 003: every course confirmed, to verify or excluded --------------------------------------------


def course_plan(ctx: RunContext) -> Table:
    ctx.progress(0, 1, "the hard conditions in SQL, then answer() where they leave it a say")
    _, _, p = _plan(ctx)
    ctx.progress(1, 1, "done")
    rows = []
    for course, v in sorted(p.verdicts.items()):
        why = p.excluded.get(course) or (
            f"unknown: {p.to_verify[course]}" if course in p.to_verify else "every condition holds"
        )
        cells = [
            "not asked"
            if v.details.get(c, "").startswith("not asked")
            else CELL[v.conditions[c]]
            if c in v.conditions
            else "—"
            for c in CONDITIONS
        ]
        rows.append([course, *cells, VERDICT_WORDS[v.truth], why])
    ctx.note(
        f"answer() ran {p.answer_calls} times: only for courses no hard condition had already excluded (F AND U = F; "
        "'not asked' in the table)."
    )
    ctx.claim(
        "on hard conditions alone C1, C5 and C6 pass; C2 conflicts in time, C3's prerequisite is unknown, C4 is in the wrong term",
        {c for c, v in p.verdicts.items() if all(v.conditions.get(k) is True for k in CONDITIONS[:4])}
        == {"C1", "C5", "C6"}
        and p.verdicts["C2"].conditions["time"] is False
        and p.verdicts["C3"].conditions["prerequisites"] is None
        and p.verdicts["C4"].conditions["term"] is False,
        "; ".join(
            f"{c}: " + ", ".join(f"{k} {CELL[v.conditions[k]]}" for k in CONDITIONS[:4])
            for c, v in sorted(p.verdicts.items())
        ),
    )
    ctx.claim(
        "C1 is confirmed; C3 waits on its prerequisite and C6 on its practicality; C2, C4 and C5 are excluded",
        p.confirmed == ("C1",) and set(p.to_verify) == {"C3", "C6"} and set(p.excluded) == {"C2", "C4", "C5"},
        f"confirmed {', '.join(p.confirmed) or 'none'}; to verify {', '.join(p.to_verify) or 'none'}; "
        f"excluded {', '.join(p.excluded) or 'none'}",
    )
    ctx.claim(
        "unknown is never shown as satisfied or failed: it stays unknown and the course waits",
        all(v.truth is None for c, v in p.verdicts.items() if c in p.to_verify),
        f"{len(p.to_verify)} course(s) to verify, each with what is unknown",
    )
    return ctx.table(("course", *CONDITIONS, "verdict", "why"), rows)


# --- note 003: the metamorphic tests ---------------------------------------------------------------------------


def course_metamorphic(ctx: RunContext) -> Table:
    from engines.courses import COUNT_COURSES_SQL, COUNT_ROWS_SQL
    from engines.suql.execute import SuqlEngine
    from worlds.courses import hm

    variants = (
        ("as the notes have it", {}),
        ("C2's Wednesday meeting moved to 16:00", {"c2_start": hm(16)}),
        ("credit cap 6 instead of 10", {"credit_cap": 6}),
        ("a second review for C1", {"second_c1_review": True}),
    )
    total = len(variants) + 1
    rows, plans = [], {}
    for i, (label, knobs) in enumerate(variants):
        ctx.progress(i, total, label)
        _, sandbox, p = _plan(ctx, **knobs)
        plans[label] = (p, sandbox)
        rows.append([label, ", ".join(p.confirmed) or "—", ", ".join(p.to_verify) or "—", ", ".join(p.excluded) or "—"])
    base, base_sandbox = plans[variants[0][0]]
    moved, _ = plans[variants[1][0]]
    capped, _ = plans[variants[2][0]]
    second, second_sandbox = plans[variants[3][0]]
    courses, review_rows = (second_sandbox.run(sql).rows[0][0] for sql in (COUNT_COURSES_SQL, COUNT_ROWS_SQL))
    relations = [
        (
            "[14:00, 16:00) and [16:00, 18:00) do not overlap: C2 passes the time check",
            moved.verdicts["C2"].conditions["time"] is True,
            f"C2's time check: {CELL[moved.verdicts['C2'].conditions['time']]}",
        ),
        (
            "a cap of 6 credits leaves nothing to confirm or verify",
            capped.confirmed == () and capped.to_verify == {},
            f"{len(capped.excluded)} excluded, all above the cap",
        ),
        (
            "a second review adds no candidate: courses are counted, not review rows",
            second.to_json() == base.to_json() and courses == 6,
            f"COUNT(DISTINCT course) {courses}, COUNT(*) over the join {review_rows}",
        ),
    ]
    ctx.progress(len(variants), total, "the OR query")
    or_query = (
        "SELECT DISTINCT o.course_id FROM offerings o JOIN course_reviews r ON r.course_id = o.course_id "
        "WHERE (o.term = 'autumn' AND answer(r.reviews, 'is it practical?') = 'Yes') OR o.course_id = 'C4' ORDER BY 1"
    )
    result = SuqlEngine(base_sandbox, ctx.llm()).run(or_query, cancel=ctx.cancel)
    got = [r[0] for r in result.rows]
    unknown = sorted({str(v.get("course_id")) for v in result.to_verify})
    rows.append(
        ["OR query: (autumn and practical) or exactly C4", ", ".join(got) or "—", ", ".join(unknown) or "—", "—"]
    )
    relations.append(
        (
            "the OR keeps C4: a structured predicate is never pushed into the branch it does not belong to",
            "C4" in got,
            f"returned {', '.join(got)}",
        )
    )
    ctx.progress(total, total, "done")
    for claim, holds, measured in relations:
        ctx.claim(claim, holds, measured)
    return ctx.table(("change", "confirmed", "to verify", "excluded"), rows)


# --- note 002: rank by similarity, keep k, then filter ------------------------------------------------------


def top_k_trap(ctx: RunContext) -> Table:
    from engines.courses import top_k_trap as trap_of

    world, sandbox, p = _plan(ctx)
    ks = list(ctx["ks"])
    rows = []
    found_rank_first, found_filter_first = [], []
    ranking: tuple[tuple[str, float], ...] = ()
    for i, k in enumerate(ks):
        ctx.progress(i, len(ks), f"k = {k}")
        trap = trap_of(world, sandbox, ctx.llm(), k=k, planned=p)
        ranking = trap.ranking
        rows.append(
            [
                k,
                ", ".join(c for c, _ in trap.ranking[:k]),
                ", ".join(trap.rank_then_filter) or "— (nothing)",
                ", ".join(trap.filter_then_rank) or "—",
            ]
        )
        found_rank_first.append(float(len(trap.rank_then_filter)))
        found_filter_first.append(float(len(trap.filter_then_rank)))
    ctx.progress(len(ks), len(ks), "done")
    position = next((i + 1 for i, (c, _) in enumerate(ranking) if c in p.confirmed), None)
    ctx.note(
        "Similarity ranking (BM25 of 'is it practical?' over each course's reviews): "
        + ", ".join(f"{c} {s:.2f}" for c, s in ranking)
        + "."
    )
    small = [k for k in ks if position is not None and k < position]
    ctx.claim(
        "ranking by similarity, keeping k, then filtering loses C1 whenever k is smaller than C1's similarity rank; "
        "filtering first keeps it at every k",
        bool(small) and all(r[2].startswith("—") for r in rows if r[0] in small) and all("C1" in r[3] for r in rows),
        f"C1 ranks {position} by similarity; rank-then-filter finds nothing for k in {small}",
    )
    chart = Chart(
        "bar",
        "Confirmed courses found",
        "k",
        "courses",
        tuple(str(k) for k in ks),
        (
            Series("rank, keep k, then filter", tuple(found_rank_first)),
            Series("filter, then rank", tuple(found_filter_first)),
        ),
    )
    return ctx.table(("k", "top k by similarity", "rank, keep k, then filter", "filter, then rank"), rows, chart)


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "l6-course-plan",
        6,
        "The course assistant: confirmed, to verify, excluded",
        "note 003",
        "Inputs: the notes' course world (C1-C6, the student's busy slots, completed courses and credit cap). Measured: each "
        "condition's truth (SQL for term, time, prerequisites and credits; SUQL's answer() for 'is it practical?') and the verdict.",
        course_plan,
    ),
    Experiment(
        "l6-course-metamorphic",
        6,
        "The course assistant's metamorphic tests",
        "note 003",
        "Inputs: the notes' changes to the world (C2 moved to 16:00, a credit cap of 6, a second review for C1) and the OR "
        "query. Measured: the plan after each change and whether the expected relation holds.",
        course_metamorphic,
    ),
    Experiment(
        "l7-top-k-trap",
        7,
        "The top-k trap: rank by similarity, then filter",
        "note 002",
        "Inputs: the course world and the values of k (parameters). Measured: the BM25 similarity ranking of the courses' reviews "
        "to 'is it practical?', and which confirmed courses survive ranking-then-filtering against filtering-then-ranking.",
        top_k_trap,
        full={"ks": (1, 2, 3, 4, 5, 6)},
        small={"ks": (1, 2, 6)},
    ),
)
