"""Lecture 8 §4.3: actions per question."""

from __future__ import annotations

from engines.lab.core import Chart, RunContext, Series, Table
from engines.lab.lecture8.common import (
    FULL,
    SEED_NOTE,
    main_eval,
    mean_of,
    pct,
    runs_of,
)

# --- §4.3 actions per question -------------------------------------------------------------------------------------


def actions(ctx: RunContext) -> Table:
    from engines.spinach.evaluate import ACTION_BINS

    runs = runs_of(ctx, FULL)
    one = runs[0].scores
    pooled = [s for r in runs for s in r.scores]
    simple = main_eval(ctx).spinach["simple"]

    def hist(scores) -> list[int]:
        return [sum(1 for s in scores if lo <= s.actions <= hi) for _label, lo, hi in ACTION_BINS]

    h1, hp, hs = hist(one), hist(pooled), hist(simple)
    lowest = min((s.actions for s in pooled), default=0)
    labels = [label if i or lowest >= 3 else f"≤{hi}" for i, (label, _lo, hi) in enumerate(ACTION_BINS)]
    rows = []
    for i, label in enumerate(labels):
        rows.append(
            [
                label,
                h1[i],
                pct(h1[i] / max(1, len(one))),
                hp[i],
                pct(hp[i] / max(1, len(pooled))),
                hs[i],
                pct(hs[i] / max(1, len(simple))),
            ]
        )
    share1 = [r[2] for r in rows]
    rollbacks = mean_of([s.rollbacks for s in one])
    ctx.note(
        f"Actions left in the state after rollbacks, per forum question: one run ({len(one)} questions) and {len(runs)} runs pooled; "
        f"the simple set for contrast. Fewest actions: {lowest}. " + SEED_NOTE
    )
    mode = labels[max(range(len(rows)), key=lambda i: rows[i][4])]
    ctx.claim(
        "most forum questions take 6-8 actions (the notes' simulation)",
        mode == "6-8",
        f"the largest bin is {mode}: "
        + ", ".join(f"{l} {r[2]}%" for l, r in zip(labels, rows))
        + " (notes' simulation: 7.1 / 57.1 / 28.6 / 5.4 / 1.8%; paper: 28.6 / 33.8 / 11.0 / 7.1 / 19.5%)",
        "our simulated policy often writes the whole query right after its searches and stops (search, search, execute, stop); "
        "it verifies an assumption only when unsure of a property, so many questions end in five actions or fewer",
    )
    ctx.claim(
        "in the simulation few questions use up the budget, unlike the paper's one in five",
        share1[-1] <= 5,
        f"{share1[-1]}% reach 15 (paper: 19.5%; the notes' simulation: 1.8%)",
    )
    ctx.claim(
        "forum questions need more actions than simple ones",
        mean_of([s.actions for s in one]) > mean_of([s.actions for s in simple]),
        f"mean {mean_of([s.actions for s in one]):.1f} against {mean_of([s.actions for s in simple]):.1f}",
    )
    ctx.claim(
        "about one rollback per question",
        0.5 <= rollbacks <= 1.5,
        f"{rollbacks:.2f} rollbacks per forum question (notes: 1.0)",
    )
    chart = Chart(
        "bar",
        "Actions per forum question",
        "actions",
        "questions (%)",
        tuple(labels),
        (
            Series("one run", tuple(share1)),
            Series(f"{len(runs)} run{'s' if len(runs) != 1 else ''}", tuple(r[4] for r in rows)),
        ),
    )
    k = f"{len(runs)} run{'s' if len(runs) != 1 else ''}"
    return ctx.table(
        (
            "actions",
            "questions (one run)",
            "share (%)",
            f"question-runs ({k})",
            f"share, {k} (%)",
            "simple questions",
            "simple share (%)",
        ),
        rows,
        chart,
    )
