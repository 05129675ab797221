"""The companion notes' experiments: the course assistant (note 003) and the top-k trap (note 002).

Note 003 goes with lecture 6 (structured-data agents), note 002 with lecture 7 (SUQL's semantics),
so the experiments are listed under those lectures.  Each runs the course world in a fresh sandbox
with the settings' LLM: the hard conditions in SQL, "is it practical?" through SUQL's answer().
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engines.lab.core import Chart, Experiment, RunContext, Series, Table

if TYPE_CHECKING:
    from engines.courses import CoursePlan
    from engines.sql.sandbox import Sandbox
    from engines.suql.execute import SuqlResult
    from worlds.courses import CourseWorld

CONDITIONS = ("term", "time", "prerequisites", "credits", "practical")
VERDICT_WORDS = {True: "confirmed", None: "to verify", False: "excluded"}
CELL = {True: "yes", False: "no", None: "unknown"}


def _plan(ctx: RunContext, **knobs: Any) -> tuple[CourseWorld, Sandbox, CoursePlan]:
    from engines.courses import plan
    from worlds.courses import build

    world = build(**knobs)
    sandbox = ctx.sandbox(world.load)
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

    variants: tuple[tuple[str, dict[str, Any]], ...] = (
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
    score = dict(ranking)
    above = [c for c, _ in ranking[: (position or 1) - 1]]
    ctx.claim(
        "the trap comes from the ranking: C1's reviews do match the question, only less than courses that fail a hard "
        "condition",
        score.get("C1", 0.0) > 0 and bool(above) and not set(above) & set(p.confirmed),
        f"C1's score {score.get('C1', 0.0):.2f}, below " + ", ".join(f"{c} {score[c]:.2f}" for c in above),
    )
    opposed = [c for c, v in p.verdicts.items() if v.conditions.get("practical") is False and score.get(c, 0.0) > 0]
    ctx.claim(
        "similarity is not support: a review that says the course is not practical still scores",
        bool(opposed),
        ", ".join(f"{c} {score[c]:.2f} (its reviews say no)" for c in opposed) or "none",
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


# --- note 003: schedule_complete ------------------------------------------------------------------------------


def course_schedule(ctx: RunContext) -> Table:
    from engines.courses import NAIVE_TIME_SQL, CourseVerdict

    course = ctx["unrecorded"]
    rows, verdicts = [], {}
    for i, (label, knobs) in enumerate(
        (("as the notes have it", {}), (f"{course}'s meetings not recorded", {"unrecorded": (course,)}))
    ):
        ctx.progress(i, 2, label)
        _, sandbox, p = _plan(ctx, **knobs)
        naive = {r["course_id"]: r["ok"] for r in sandbox.run(NAIVE_TIME_SQL).records()}
        v = p.verdicts[course]
        # the verdict the notes' NOT EXISTS alone would give: the same conditions, its time check instead
        alone = CourseVerdict(course, {**v.conditions, "time": naive[course]}, dict(v.details))
        verdicts[label] = (naive[course], v, alone)
        rows.append(
            [
                label,
                course,
                CELL[naive[course]],
                VERDICT_WORDS[alone.truth],
                CELL[v.conditions["time"]],
                VERDICT_WORDS[v.truth],
            ]
        )
    ctx.progress(2, 2, "done")
    (base_naive, base, _), (lost_naive, lost, lost_alone) = verdicts.values()
    ctx.claim(
        f"with every meeting recorded, {course} conflicts with a busy slot and is excluded",
        base_naive is False and base.conditions["time"] is False and base.truth is False,
        f"time check {CELL[base.conditions['time']]}, verdict {VERDICT_WORDS[base.truth]}",
    )
    ctx.claim(
        "with its meetings missing, the notes' NOT EXISTS finds no conflict and passes it: an empty table reads as 'no class'",
        lost_naive is True and lost_alone.truth is not False,
        f"NOT EXISTS alone: time {CELL[lost_naive]}, verdict {VERDICT_WORDS[lost_alone.truth]}",
    )
    ctx.claim(
        "schedule_complete turns the missing meetings into an unknown: the course waits to be verified instead",
        lost.conditions["time"] is None and lost.truth is None,
        f"time {CELL[lost.conditions['time']]}: {lost.details['time']}",
    )
    return ctx.table(("world", "course", "NOT EXISTS alone", "its verdict", "with schedule_complete", "verdict"), rows)


def _literal(value: str) -> str:
    """A parameter as an SQL string literal, quoted by sqlglot."""
    from sqlglot import exp

    return exp.Literal.string(str(value)).sql(dialect="duckdb")


# --- note 002: three-valued logic, through the SUQL compiler --------------------------------------------------

KLEENE_AND = {
    (a, b): (False if False in (a, b) else None if None in (a, b) else True)
    for a in (True, False, None)
    for b in (True, False, None)
}
KLEENE_OR = {
    (a, b): (True if True in (a, b) else None if None in (a, b) else False)
    for a in (True, False, None)
    for b in (True, False, None)
}


def _statuses(result: SuqlResult, key: tuple[str, ...]) -> dict[tuple[Any, ...], bool | None]:
    """What a SUQL result says of each row: returned (True), to verify (Unknown) or absent (False)."""
    out: dict[tuple[Any, ...], bool | None] = {tuple(r[: len(key)]): True for r in result.rows}
    for row in result.to_verify:
        out[tuple(row[k] for k in key)] = None
    return out


def three_valued(ctx: RunContext) -> Table:
    from engines.suql.execute import SuqlEngine

    _, sandbox, _ = _plan(ctx)
    engine = SuqlEngine(sandbox, ctx.llm())
    question = ctx["question"]
    t, f, u = ctx["courses"]
    asked = _literal(question)

    def ask(alias: str) -> str:
        return f"answer({alias}.reviews, {asked}) = 'Yes'"

    among = "IN (" + ", ".join(_literal(c) for c in (t, f, u)) + ")"
    pair = f"SELECT x.course_id AS a, y.course_id AS b FROM course_reviews x, course_reviews y WHERE x.course_id {among} AND y.course_id {among} AND "
    ctx.progress(0, 4, "each course's answer alone")
    alone = _statuses(
        engine.run(
            f"SELECT course_id FROM course_reviews WHERE course_id {among} AND {ask('course_reviews')}",
            cancel=ctx.cancel,
        ),
        ("course_id",),
    )
    truth = {c: alone.get((c,), False) for c in (t, f, u)}
    ctx.progress(1, 4, "AND")
    conj = _statuses(engine.run(pair + f"({ask('x')} AND {ask('y')})", cancel=ctx.cancel), ("a", "b"))
    ctx.progress(2, 4, "OR")
    disj = _statuses(engine.run(pair + f"({ask('x')} OR {ask('y')})", cancel=ctx.cancel), ("a", "b"))
    ctx.progress(3, 4, "NOT")
    neg = _statuses(
        engine.run(
            f"SELECT course_id FROM course_reviews WHERE course_id {among} AND NOT ({ask('course_reviews')})",
            cancel=ctx.cancel,
        ),
        ("course_id",),
    )
    ctx.progress(4, 4, "done")
    name = {True: "T", False: "F", None: "U"}
    rows, wrong = [], []
    for x in (t, f, u):
        for y in (t, f, u):
            a, b = truth[x], truth[y]
            got_and, got_or = conj.get((x, y), False), disj.get((x, y), False)
            got_not = neg.get((x,), False) if y == x else None
            rows.append(
                [f"{x} ({name[a]})", f"{y} ({name[b]})", name[got_and], name[got_or], name[got_not] if y == x else ""]
            )
            if got_and != KLEENE_AND[(a, b)] or got_or != KLEENE_OR[(a, b)]:
                wrong.append(f"{name[a]}, {name[b]}")
            if y == x and got_not != (None if a is None else not a):
                wrong.append(f"NOT {name[a]}")
    ctx.note(
        f"T, F and U are what answer(reviews, {question!r}) says of {t}, {f} and {u} (the settings' LLM reads their reviews), "
        "and each cell is what SUQL did with the pair of rows: returned (T), listed to verify (U) or dropped (F)."
    )
    ctx.claim(
        "the three courses read as T, F and U",
        [truth[c] for c in (t, f, u)] == [True, False, None],
        ", ".join(f"{c}: {name[truth[c]]}" for c in (t, f, u)),
    )
    note = {("T", "U", "AND"): "U", ("F", "U", "AND"): "F", ("T", "U", "OR"): "T", ("F", "U", "OR"): "U"}
    by_pair = {(name[truth[r[0].split()[0]]], name[truth[r[1].split()[0]]]): r for r in rows}
    seen = [
        f"{a} {op} {b} = {by_pair[(a, b)][2 if op == 'AND' else 3]}" for (a, b, op) in note if (a, b) in by_pair
    ] + [f"NOT U = {next((r[4] for r in rows if r[0] == r[1] and r[0].endswith('(U)')), '?')}"]
    ctx.claim(
        "the notes' five entries hold: T AND U = U, F AND U = F, T OR U = T, F OR U = U, NOT U = U",
        all(by_pair[(a, b)][2 if op == "AND" else 3] == want for (a, b, op), want in note.items() if (a, b) in by_pair)
        and seen[-1] == "NOT U = U",
        "; ".join(seen),
    )
    ctx.claim(
        "every cell of the table is Kleene's (strong three-valued logic), not two-valued logic with U read as F",
        not wrong and truth[u] is None,
        "all 21 cells agree" if not wrong else "differs at " + ", ".join(wrong),
    )
    return ctx.table(("row x", "row y", "x AND y", "x OR y", "NOT x"), rows)


# --- note 002: the cost model's worked example ----------------------------------------------------------------


def cost_model(ctx: RunContext) -> Table:
    from engines.suql.compiler.cost import CostModel, PredicateEstimate
    from engines.suql.execute import SuqlEngine

    c_h, s_h, c_t, s_t = ctx["structured_cost"], ctx["structured_pass"], ctx["text_cost"], ctx["text_pass"]
    h = PredicateEstimate("structured", 0, c_h, s_h, "the notes")
    p = PredicateEstimate("text", 1, c_t, s_t, "the notes")
    formula = {"structured first": CostModel.expected_cost((h, p)), "text first": CostModel.expected_cost((p, h))}
    chosen = [("structured", "text")[i] for i in CostModel.order((h, p), by_rank=True)]

    world, sandbox = ctx.restaurants()
    engine = SuqlEngine(sandbox, ctx.llm(), pool=1)
    where_h = "location = " + _literal(ctx["location"])
    where_t = "answer(reviews, " + _literal(ctx["question"]) + ") = 'Yes'"
    n = sandbox.run("SELECT COUNT(*) FROM restaurants").rows[0][0]
    passed_h = sandbox.run(f"SELECT COUNT(*) FROM restaurants WHERE {where_h}").rows[0][0]
    measured = {}
    for i, (label, where) in enumerate(
        (("structured first", f"{where_h} AND {where_t}"), ("text first", f"{where_t} AND {where_h}"))
    ):
        ctx.progress(i, 3, f"mode B, {label}")
        r = engine.run(f"SELECT _id FROM restaurants WHERE {where}", mode="B", cancel=ctx.cancel)
        measured[label] = r.stats.answer_calls
    ctx.progress(2, 3, "mode C, text written first")
    reordered = engine.run(
        f"SELECT _id FROM restaurants WHERE {where_t} AND {where_h}", mode="C", cancel=ctx.cancel
    ).stats.answer_calls
    ctx.progress(3, 3, "done")
    everyone = engine.run(f"SELECT _id FROM restaurants WHERE {where_t}", mode="B", cancel=ctx.cancel)
    s_text = len(everyone.rows) / n
    s_struct = passed_h / n
    ours = {
        "structured first": CostModel.expected_cost(
            (PredicateEstimate("h", 0, c_h, s_struct, "measured"), PredicateEstimate("t", 1, c_t, s_text, "measured"))
        ),
        "text first": CostModel.expected_cost(
            (PredicateEstimate("t", 0, c_t, s_text, "measured"), PredicateEstimate("h", 1, c_h, s_struct, "measured"))
        ),
    }
    rows = [
        [label, round(formula[label], 3), round(ours[label], 3), round(measured[label] / n, 3), measured[label]]
        for label in formula
    ]
    ctx.note(
        f"The notes' example: a structured check costing {c_h} that passes {s_h:.0%} of rows, a text check costing {c_t} that "
        f"passes {s_t:.0%}. On our world: {where_h} passes {s_struct:.1%} of the {n} restaurants and {where_t} says Yes for "
        f"{s_text:.1%}; mode B runs the WHERE as written with short-circuit, and each answer() call is one text check "
        "(the structured checks cost no LLM call, so only the text checks are counted)."
    )
    ctx.claim(
        f"A then B costs cA + sA·cB: structured first {formula['structured first']:.2f}, text first {formula['text first']:.2f}",
        abs(formula["structured first"] - (c_h + s_h * c_t)) < 1e-9
        and abs(formula["text first"] - (c_t + s_t * c_h)) < 1e-9,
        f"{formula['structured first']:.2f} against {formula['text first']:.2f} (notes: 1.1 against 5.04)",
    )
    ctx.claim(
        "the compiler's rank (c / (1 − s)) puts the cheap, selective check first",
        chosen == ["structured", "text"],
        " then ".join(chosen),
    )
    ctx.claim(
        "measured: the text checks written first are asked of every row, written second only of the rows the structured check passes",
        measured["text first"] == n and measured["structured first"] == passed_h,
        f"{measured['text first']} and {measured['structured first']} answer() calls on {n} rows ({passed_h} pass {where_h})",
    )
    ctx.claim(
        "predicate ordering (mode C) makes the cheap order of a query written the expensive way",
        reordered == measured["structured first"],
        f"mode C on the text-first query: {reordered} calls",
    )
    return ctx.table(
        (
            "order",
            "notes' cost per row",
            "our world's cost per row (model)",
            "answer() calls per row (measured)",
            "answer() calls",
        ),
        rows,
    )


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
    Experiment(
        "l6-course-schedule",
        6,
        "The course assistant: a schedule that is not completely recorded",
        "note 003",
        "Inputs: the notes' course world, and the same world with the meetings of {unrecorded} missing (its offering's "
        "schedule_complete false). Measured: the notes' NOT EXISTS time check alone and the verdict it leads to, against the "
        "check that reads schedule_complete.",
        course_schedule,
        full={"unrecorded": "C2"},
    ),
    Experiment(
        "l7-three-valued",
        7,
        "Three-valued logic: True, False, Unknown through AND, OR and NOT",
        "note 002",
        "Inputs: the course world's reviews of {courses_text} and the question {question!r}. Measured: each course's answer, "
        "then what the SUQL compiler does with every pair under AND and OR and with each under NOT: returned, to verify, dropped.",
        three_valued,
        full={"courses": ("C1", "C5", "C6"), "question": "is it practical?"},
    ),
    Experiment(
        "l7-cost-model",
        7,
        "The cost model's worked example: which predicate first",
        "note 002",
        "Inputs: the notes' costs and pass rates (structured {structured_cost} passing {structured_pass:.0%}, text {text_cost} "
        "passing {text_pass:.0%}); on our world, {location!r} and answer(reviews, {question!r}). Measured: the cost of each "
        "order from the model, and answer() calls of the query written both ways in mode B and in mode C.",
        cost_model,
        full={
            "structured_cost": 0.1,
            "structured_pass": 0.2,
            "text_cost": 5.0,
            "text_pass": 0.4,
            "location": "Palo Alto",
            "question": "is it romantic?",
        },
    ),
)
