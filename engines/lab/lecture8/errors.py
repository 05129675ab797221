"""Lecture 8 §4.4: error analysis of the failed forum questions (the taxonomy is engines.spinach.error_analysis)."""

from __future__ import annotations

from collections import Counter

from engines.lab.core import RunContext, Table
from engines.lab.lecture8.common import (
    FULL,
    SEED_NOTE,
    Summary,
    pct,
    runs_of,
    sets_of,
)


def errors(ctx: RunContext) -> Table:
    from engines.spinach.error_analysis import ERROR_CLASSES, LECTURE_CLASSES, classify_error, saw_no_error
    from worlds.kg import CATEGORIES

    runs = runs_of(ctx, FULL)
    sets = sets_of(ctx)
    gold = {q.id: q.gold_sparql for q in sets.forum}
    threshold = ctx["threshold"]
    cats = list(CATEGORIES)
    table: dict[str, Counter[str]] = {c: Counter() for c in ERROR_CLASSES}  # class -> category -> failures
    silent: Counter[str] = Counter()
    failed = 0
    ok_silent = ok = 0
    for r in runs:
        for s in r.scores:
            t = r.trajectories[s.id]
            if s.f1 < threshold:
                cls = classify_error(t, gold[s.id])
                table[cls][s.category] += 1
                silent[cls] += saw_no_error(t)
                failed += 1
            else:
                ok += 1
                ok_silent += saw_no_error(t)
    rows = []
    for cls in ERROR_CLASSES:
        n = sum(table[cls].values())
        if n == 0 and cls not in LECTURE_CLASSES:
            continue
        rows.append(
            [cls] + [table[cls].get(c, 0) for c in cats] + [n, pct(n / failed) if failed else None, silent[cls]]
        )
    rows.append(
        [f"failed (F1 < {threshold})"]
        + [sum(table[x].get(c, 0) for x in ERROR_CLASSES) for c in cats]
        + [failed, 100.0 if failed else None, sum(silent.values())]
    )
    by_cat = Summary.of(runs).by_category
    overall = Summary.of(runs).f1
    rows.append(["mean F1 (%)"] + [by_cat.get(c) for c in cats] + [overall, None, None])
    ctx.note(
        f"{len(runs)} run{'s' if len(runs) > 1 else ''} of SPINACH on the {len(sets.forum)} forum-style questions; every question-run "
        f"with F1 < {threshold} is classified by comparing the trajectory's final query with the gold query (the evaluator's side): "
        "budget used up → ran out of actions; the answer is a fragment smaller than a query run before it (a check or a debugging "
        "probe run last: the agent answers with the last query that returned rows) → a probe as the answer; only label columns → format; a gold entity missing → wrong entity; only steps of a modified path missing (the P131* of the chain) → complex clause; gold properties plus more → extra "
        "condition; other properties → property / structure; other property paths, qualifiers, ORDER BY / LIMIT / COUNT / "
        "GROUP BY / FILTER → complex clause; other columns → format. 'silent' counts the failures whose trajectory never saw a query fail (no empty result, no "
        "error). " + SEED_NOTE
    )
    share = {cls: sum(table[cls].values()) / failed if failed else 0.0 for cls in ERROR_CLASSES}
    top2 = sorted(LECTURE_CLASSES, key=lambda c: -share[c])[:2]
    ctx.claim(
        "complex clauses and wrong properties / structure are the two largest classes",
        set(top2) == {"complex clause", "property / structure"},
        ", ".join(f"{c} {share[c]:.0%}" for c in ERROR_CLASSES if share[c]) + f" of {failed} failures "
        "(notes' simulation: complex clause 40%, property / structure 34%, format 16%, extra condition 8%, ran out of actions 2%)",
        "our simulated policy's complex-clause errors are its seeded slips (p_clause_slip: a sort turned round, a LIMIT "
        "left out, a path's modifier dropped) and the P131* chain left out; its property errors are the silent ones "
        "(a sibling property, the one-sided P185); a label-only answer (a format slip) scores 0",
    )
    ranked = sorted(cats, key=lambda c: by_cat.get(c, 100.0))
    per_cat = {c: sum(1 for r in runs for x in r.scores if x.category == c) for c in cats}
    ctx.claim(
        "C2 (country of birth: a silent error) is among the two weakest categories",
        "C2" in ranked[:2],
        "weakest: " + ", ".join(f"{c} {by_cat.get(c)}" for c in ranked[:3]) + " (notes: C2 and C3 lowest)",
        f"a category here has {min(per_cat.values())}-{max(per_cat.values())} question-runs, so one question moves its "
        f"F1 by {100 / max(1, min(per_cat.values())):.0f} points or more; C2's silent error shows over more runs",
    )
    loud = [by_cat.get(c, 0.0) for c in ("C1", "C5")]
    ctx.claim(
        "the quirks that fail loudly (C1 subclass, C5 qualifier: the naive query returns nothing) are mostly debugged",
        min(loud) >= overall,
        f"C1 {loud[0]}, C5 {loud[1]} against {overall} overall",
    )
    if failed and ok:
        ctx.claim(
            "failures are mostly silent: the trajectory never saw a query fail",
            sum(silent.values()) / failed > ok_silent / ok,
            f"{sum(silent.values())} of {failed} failures silent, against {ok_silent} of {ok} successes",
            "our policy runs fragments and probes whose empty results count as seen failures also on the way to a right "
            "answer, and a failure it did see is often one it could not debug (a budget or an early stop after an empty "
            "result)",
        )
    return ctx.table(("class",) + tuple(cats) + ("total", "share (%)", "silent"), rows)
