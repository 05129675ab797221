"""§2.2: the slides' two examples — a first date in Palo Alto, a laptop with Thunderbolt 3."""

from __future__ import annotations

from engines.lab.core import RunContext, Table
from engines.lab.lecture7.common import engine_of, truth_of

LAPTOP_TB = "answer({column}, 'does this laptop have Thunderbolt 3?') = 'Yes'"


def slide_queries(ctx: RunContext) -> Table:
    """§2.2: the restaurant query on our world and the laptop query on a small laptop catalogue
    (worlds.laptops), whose Thunderbolt 3 port may be written in the blurb, the description or both."""
    from engines.suql.examples import LECTURE
    from engines.suql.execute import SuqlEngine
    from worlds import laptops

    rows = []
    world, _ = ctx.restaurants()
    truth = truth_of(world)
    by_name = {r.name: r for r in world.rows}
    date = next(e for e in LECTURE if e.source == "lecture 7 §2.2")
    ctx.progress(0, 5, "the first-date query")
    r = engine_of(ctx).run(date.sql, mode="E", cancel=ctx.cancel)
    names = [row[list(r.columns).index("name")] for row in r.rows]
    ok = [truth.has(by_name[n]._id, "romantic") for n in names]
    rows.append(
        [
            "restaurants",
            "the slide's query (sushi, Palo Alto, rating ≥ 4, a first date)",
            r.stats.answer_calls,
            len(names),
            sum(ok),
            None,
        ]
    )
    lap_world, lap_truth = laptops.build(ctx["laptop_seed"])
    sandbox = ctx.sandbox(lap_world.load)
    engine = SuqlEngine(
        sandbox, ctx.llm(), pool=1, cap=ctx.settings.suql_cap, call_budget=ctx.settings.suql_call_budget
    )
    ram = ctx["ram"]
    wanted = {x._id for x in lap_world.rows if x.ram >= ram and x._id in lap_truth.thunderbolt}
    big = sum(1 for x in lap_world.rows if x.ram >= ram)
    either = f"({LAPTOP_TB.format(column='about')} OR {LAPTOP_TB.format(column='description')})"
    runs = (
        ("the slide's query: about OR description, LIMIT 3", either, " LIMIT 3"),
        ("every match: about only", LAPTOP_TB.format(column="about"), ""),
        ("every match: description only", LAPTOP_TB.format(column="description"), ""),
        ("every match: about OR description", either, ""),
    )
    found = {}
    for i, (label, cond, limit) in enumerate(runs):
        ctx.progress(i + 1, 5, label)
        res = engine.run(
            f"SELECT _id, name FROM laptops WHERE ram >= {int(ram)} AND {cond}{limit}", mode="E", cancel=ctx.cancel
        )
        ids = {row[0] for row in res.rows}
        found[label] = (ids, res.stats.answer_calls)
        rows.append(
            [
                "laptops",
                label,
                res.stats.answer_calls,
                len(ids),
                len(ids & wanted),
                len(ids & wanted) / len(wanted) if wanted else None,
            ]
        )
    ctx.progress(5, 5, "done")
    ctx.note(
        f"The laptop catalogue: {len(lap_world.rows)} laptops, {big} with at least {ram} GB, {len(wanted)} of them with "
        "Thunderbolt 3 in the hidden truth, written in the blurb (about), the description or both. Recall is over those "
        f"{len(wanted)}; the restaurant row's right ones are checked against the hidden truth (romantic)."
    )
    about, desc, both = (found[label][0] for label, _c, _l in runs[1:])
    ctx.claim(
        "where the answer is written is unclear, so ask every text column with OR: each column alone misses some",
        len(both & wanted) > max(len(about & wanted), len(desc & wanted)),
        f"about only {len(about & wanted)}, description only {len(desc & wanted)}, about OR description {len(both & wanted)} "
        f"of {len(wanted)}",
    )
    ctx.claim(
        "the structured condition runs first: answer() reads only the laptops with enough RAM",
        all(calls <= 2 * big for _ids, calls in found.values()),
        f"at most {max(calls for _ids, calls in found.values())} answer() calls for {big} laptops with ≥ {ram} GB "
        f"({len(lap_world.rows)} in all)",
    )
    left = sum(
        1 for x in world.rows if x.location == "Palo Alto" and "sushi bars" in x.cuisines and float(x.rating) >= 4.0
    )
    ctx.claim(
        "the restaurant query needs few calls: answer() reads only the rows the structured filters leave",
        r.stats.answer_calls <= left and all(ok),
        f"{r.stats.answer_calls} answer() calls for the {left} sushi bars in Palo Alto rated 4 or more; returned "
        f"{', '.join(names) or 'nothing: none of them reads as good for a first date'} (notes: 2 calls)",
    )
    return ctx.table(("table", "query", "answer() calls", "returned", "right", "recall"), rows)
