"""§3.3: one query in the six execution modes."""

from __future__ import annotations

from engines.lab.core import Chart, RunContext, Series, Table
from engines.lab.lecture7.common import (
    cost_follows_calls,
    engine_of,
    truth_of,
    usage_cells,
    usage_columns,
    usage_note,
    usage_since,
)

FAMILY_QUERY = (
    "SELECT name, summary(reviews) FROM restaurants WHERE answer(reviews, 'is it family-friendly?') = 'Yes' "
    "AND location = 'Palo Alto' LIMIT 1"
)
FAMILY_QUERY_SWAPPED = (
    "SELECT name, summary(reviews) FROM restaurants WHERE location = 'Palo Alto' "
    "AND answer(reviews, 'is it family-friendly?') = 'Yes' LIMIT 1"
)


def six_modes(ctx: RunContext) -> Table:
    from engines.suql.plan import DUCKDB_UDF, MODES

    world, _ = ctx.restaurants()
    truth = truth_of(world)
    engine = engine_of(ctx)
    by_name = {r.name: r for r in world.rows}
    runs = [(m, FAMILY_QUERY) for m in MODES] + [("B′", FAMILY_QUERY_SWAPPED), (DUCKDB_UDF.name, FAMILY_QUERY)]
    titles = {"B′": "B with location written first", DUCKDB_UDF.name: DUCKDB_UDF.title}
    rows, stats, spent = [], {}, {}
    for i, (mode, sql) in enumerate(runs):
        ctx.progress(i, len(runs), f"mode {mode}")
        before = engine.llm.usage.as_json()
        r = engine.run(sql, mode=mode.rstrip("′"), cancel=ctx.cancel)
        spent[mode] = usage_since(before, engine.llm.usage.as_json())
        names = [row[0] for row in r.rows]
        correct = all(
            by_name[n].location == "Palo Alto" and truth.has(by_name[n]._id, "family_friendly") for n in names
        )
        title = MODES[mode].title if mode in MODES else titles[mode]
        stats[mode] = r.stats
        rows.append(
            [
                mode,
                title,
                r.stats.answer_calls,
                r.stats.summary_calls,
                r.stats.rows_examined,
                *usage_cells(ctx, spent[mode]),
                ", ".join(names),
                correct if names else None,
            ]
        )
    ctx.progress(len(runs), len(runs), "done")
    a = {m: s.answer_calls for m, s in stats.items()}
    palo_alto = sum(1 for r in world.rows if r.location == "Palo Alto")
    ctx.claim(
        "the naive plan reads every row and summarises every match",
        a["A"] == len(world.rows) and stats["A"].summary_calls > 1,
        f"A: {a['A']} answer() calls, {stats['A'].summary_calls} summary() calls (notes: 600 and 22)",
    )
    ctx.claim(
        "the compiler does not depend on the written order; C reads every Palo Alto row",
        a["C"] == palo_alto,
        f"C: {a['C']} calls for {palo_alto} Palo Alto restaurants (notes: 95)",
    )
    ctx.claim(
        "lazy evaluation stops at LIMIT; retrieval ordering finds a match first",
        a["D"] < a["C"] and a["E"] <= a["D"],
        f"D {a['D']}, E {a['E']} (notes: E 1)",
    )
    ctx.claim("E makes far fewer calls than A", a["E"] * 20 <= a["A"], f"E {a['E']} against A {a['A']}")
    ctx.claim(
        "mode B depends on the written order (B′ only swaps the two conditions)",
        a["B′"] < a["B"],
        f"B {a['B']}, B′ {a['B′']} (notes: 50 and 4; how many rows B asks depends on where the first family-friendly "
        "Palo Alto restaurant sits in the table)",
    )
    duck = DUCKDB_UDF.name
    ctx.claim(
        "an unmodified engine does not stop at LIMIT when it evaluates whole vectors (DuckDB, answer() as a "
        "per-row function)",
        a[duck] == palo_alto,
        f"{duck}: {a[duck]} calls — DuckDB runs the cheap location test first by itself, then asks every Palo Alto "
        "row (not in the notes, which use SQLite)",
    )
    ctx.claim(
        "every mode returns a correct restaurant: the order of execution changes the cost, not the verdicts",
        all(row[-1] for row in rows),
        "; ".join(f"{row[0]}: {row[7]}" for row in rows),
    )
    short = {DUCKDB_UDF.name: "Duck"}  # the chart's axis has room for a few characters a bar
    chart = Chart(
        "bar",
        "answer() calls per execution mode",
        "mode",
        "answer() calls",
        tuple(short.get(m, m) for m, _ in runs),
        (Series("answer()", tuple(float(a[m]) for m, _ in runs)),),
    )
    ctx.claim(
        "the cost follows the calls: every mode's tokens grow with its answer() and summary() calls",
        cost_follows_calls([(stats[m].answer_calls + stats[m].summary_calls, spent[m]["tokens"]) for m, _ in runs]),
        "; ".join(f"{m}: {spent[m]['tokens']:,} tokens" for m, _ in runs),
    )
    ctx.note(usage_note(ctx, engine.llm))
    return ctx.table(
        (
            "mode",
            "execution",
            "answer() calls",
            "summary() calls",
            "rows examined",
            *usage_columns(ctx),
            "result",
            "correct",
        ),
        rows,
        chart,
    )
