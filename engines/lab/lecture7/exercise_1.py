"""Exercise 1: two answer() conditions, in both written orders."""

from __future__ import annotations

from collections import Counter
from typing import Any

from engines.lab.core import Chart, RunContext, Series, Table
from engines.lab.lecture7.common import engine_of, literal, truth_of

EXERCISE_1 = (
    "SELECT name, rating FROM restaurants WHERE location = {location} AND {first} AND {second} "
    "ORDER BY rating DESC LIMIT 1"
)


def exercise_1(ctx: RunContext) -> Table:
    """Exercise 1: the date-and-parking query with its two answer() conditions written in both orders, run as
    written (mode B), by the notes' compiler (structured first, answer() in the written order, lazy: mode D without
    answer() ordering) and by ours (D and E, answer() ordered by cost × selectivity)."""
    from engines.events import CallStarted, Event
    from engines.suql.plan import MODES

    world, _ = ctx.restaurants()
    truth = truth_of(world)
    engine = engine_of(ctx)
    location = ctx["location"]
    (q1, f1), (q2, f2) = ctx["conditions"]
    cond = {q: f"answer(reviews, {literal(q)}) = 'Yes'" for q in (q1, q2)}
    orders = ((q1, q2), (q2, q1))
    executions = (
        ("B", None, MODES["B"].title),
        (
            "D",
            False,
            "the notes' compiler: structured first, answer() in the written order, lazy (D without answer() ordering)",
        ),
        ("D", True, MODES["D"].title + "; answer() ordered by cost × selectivity"),
        ("E", True, MODES["E"].title),
    )
    by_name = {r.name: r for r in world.rows}
    feature = {q1: f1, q2: f2}
    satisfying = [
        r for r in world.rows if r.location == location and all(truth.has(r._id, f) for f in feature.values())
    ]
    best = max((r.rating for r in satisfying), default=None)
    rows: list[list[Any]] = []  # a table's rows: cells of several types
    calls: dict[tuple[str, str], int] = {}
    second_asked: dict[tuple[str, str], int] = {}
    total = len(orders) * len(executions)
    for i, (first, second) in enumerate(orders):
        sql = EXERCISE_1.format(location=literal(location), first=cond[first], second=cond[second])
        for j, (mode, ordered, title) in enumerate(executions):
            ctx.progress(i * len(executions) + j, total, f"{first} first, mode {mode}")
            asked: Counter[str] = Counter()

            def seen(event: Event, asked: Counter[str] = asked) -> None:
                if isinstance(event, CallStarted) and event.function == "answer":
                    asked[event.prompt] += 1

            r = engine.run(sql, mode=mode, order_predicates=ordered, emit=seen, cancel=ctx.cancel)
            label = mode if ordered is not False else "notes"
            calls[(first, label)] = r.stats.answer_calls
            second_asked[(first, label)] = asked[second]
            names = [row[0] for row in r.rows]
            correct = bool(names) and all(by_name[n] in satisfying and float(by_name[n].rating) == best for n in names)
            rows.append(
                [
                    f"{first!r} first",
                    label,
                    title,
                    r.stats.answer_calls,
                    asked[q1],
                    asked[q2],
                    ", ".join(names),
                    correct if names else None,
                ]
            )
    ctx.progress(total, total, "done")
    verdicts = {}
    for q in (q1, q2):
        r = engine.run(
            f"SELECT answer(reviews, {literal(q)}) AS v, COUNT(*) AS n FROM restaurants "
            f"WHERE location = {literal(location)} GROUP BY v",
            mode="C",
            cancel=ctx.cancel,
        )
        verdicts[q] = {v: n for v, n in r.rows}
    ctx.note(
        f"Over {location}'s {sum(verdicts[q1].values())} restaurants (mode C, every row asked): "
        + "; ".join(
            f"{q!r} Yes {verdicts[q].get('Yes', 0)}, No {verdicts[q].get('No', 0)}, unknown {verdicts[q].get(None, 0)}"
            for q in (q1, q2)
        )
        + f". {len(satisfying)} satisfy both in the hidden truth, the best rated at {best}. The calls columns count answer() "
        "per question: with short-circuit the second condition is asked only of the rows the first did not rule out "
        "(a Yes, or unknown: the reviews do not say)."
    )
    ctx.claim(
        "as written, the order of the two answer() conditions changes the calls",
        calls[(q1, "notes")] != calls[(q2, "notes")] and calls[(q1, "B")] != calls[(q2, "B")],
        f"the notes' compiler: {q1!r} first {calls[(q1, 'notes')]}, {q2!r} first {calls[(q2, 'notes')]}; mode B: "
        f"{calls[(q1, 'B')]} and {calls[(q2, 'B')]} (notes: 74 and 70)",
    )
    cheaper = q1 if calls[(q1, "notes")] < calls[(q2, "notes")] else q2
    other = q2 if cheaper == q1 else q1
    first_passed = {q: second_asked[(q, "notes")] for q in (q1, q2)}  # the rows the first condition let through
    ctx.claim(
        "the condition that rules out more rows belongs first: it lets fewer rows through to the second",
        first_passed[cheaper] < first_passed[other] and verdicts[cheaper].get("No", 0) > verdicts[other].get("No", 0),
        f"{cheaper!r} (No for {verdicts[cheaper].get('No', 0)}) first let {first_passed[cheaper]} rows through in rating "
        f"order, {other!r} (No for {verdicts[other].get('No', 0)}) first {first_passed[other]}; the two say Yes equally "
        f"often ({verdicts[q1].get('Yes', 0)} and {verdicts[q2].get('Yes', 0)}), and what matters is how often each says No "
        "(notes: parking first is cheaper, 70 against 74)",
    )
    ctx.claim(
        "our compiler decides the order itself (cost × selectivity, the exercise's rule): the same calls either way",
        calls[(q1, "D")] == calls[(q2, "D")],
        f"mode D: {calls[(q1, 'D')]} and {calls[(q2, 'D')]}; mode E (retrieval ordering too): {calls[(q1, 'E')]} and "
        f"{calls[(q2, 'E')]}",
    )
    ctx.claim(
        "every run returns a right answer: the order changes the cost, not the result",
        all(row[-1] for row in rows),
        "; ".join(sorted({row[6] for row in rows})),
    )
    chart = Chart(
        "bar",
        "answer() calls, both written orders",
        "execution",
        "answer() calls",
        tuple(label for label in ("B", "notes", "D", "E")),
        tuple(
            Series(f"{first} first", tuple(float(calls[(first, label)]) for label in ("B", "notes", "D", "E")))
            for first, _ in orders
        ),
    )
    return ctx.table(
        ("written order", "mode", "execution", "answer() calls", f"calls: {q1}", f"calls: {q2}", "result", "correct"),
        rows,
        chart,
    )
